"""The MySQL sink's parameters: one table, one check, for both places they are given.

TiCDC reads them from the sink URI's query string (`?worker-count=8&safe-mode=true`);
cdcflow also takes them from the config's `[sink]` section, and the URI wins.  A URI
gives every value as text; TOML gives typed values: `read` accepts both and checks
them against the same row of the table.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cdcflow.core.credentials import CREDENTIAL_PARAMS
from cdcflow.core.duration import go_duration_seconds
from cdcflow.core.errors import ConfigError
from cdcflow.core.suggest import did_you_mean

log = logging.getLogger(__name__)


def _param(name: str, default: Any, meaning: str, *, low: int | None = None, cap: int | None = None,
           choices: tuple[str, ...] = (), duration: bool = False) -> Any:
    """A SinkOptions field and its parameter: name, default, what it means (the config reference
    says it), lowest value, the cap above which TiCDC's MySQL sink lowers a value (with a warning)
    rather than refusing it, the choices, or whether it is a Go duration ('2m', '30s', '500ms';
    kept as written, above zero)."""
    return dataclasses.field(default=default, metadata={"name": name, "meaning": meaning, "low": low, "cap": cap,
                                                        "choices": choices, "duration": duration})


@dataclass(frozen=True)
class SinkOptions:
    safe_mode: bool = _param("safe-mode", False, "true: the rows a segment created are written as REPLACE too, never "
                             "INSERT (a first cycle, a backfill and the cycle after an unfinished one always are)")
    # TiCDC: 16; Spark partitions share the load
    worker_count: int = _param("worker-count", 4, "Spark partitions (downstream connections) that write rows",
                               low=1, cap=1024)
    max_txn_row: int = _param("max-txn-row", 256, "rows per multi-row statement", low=1, cap=2048)
    cache_prep_stmts: bool = _param("cache-prep-stmts", True, "true: multi-row statements of max-txn-row rows, and "
                                    "the statement of each change written in commit order (foreign keys, no valid "
                                    "index), go as prepared statements each connection keeps, their values as binary "
                                    "parameters (the downstream parses each once); false: every statement as text")
    transaction_atomicity: str = _param("transaction-atomicity", "none", "table: each upstream transaction's changes "
                                        "to a table as one downstream transaction; none: rows written per key",
                                        choices=("none", "table"))
    # TiCDC's connection timeouts (go-sql-driver's readTimeout, writeTimeout, timeout), its defaults
    read_timeout: str = _param("read-timeout", "2m", "how long a read on a connection may wait", duration=True)
    write_timeout: str = _param("write-timeout", "2m", "how long a write on a connection may wait", duration=True)
    timeout: str = _param("timeout", "2m", "how long a connection may take to open", duration=True)
    # cdcflow's: how long one DDL statement may run (an ADD INDEX on a big table legitimately
    # outlasts read-timeout; TiCDC puts no limit on such DDL, which leaves a frozen downstream hanging)
    ddl_timeout: str = _param("ddl-timeout", "1h", "how long one DDL statement may run", duration=True)

    def to_dict(self) -> dict:
        return {f.metadata["name"]: getattr(self, f.name) for f in dataclasses.fields(self)}

    def connect_args(self) -> dict[str, float]:
        """pymysql's timeouts for a connection that writes rows or reads the catalogue."""
        return {"connect_timeout": go_duration_seconds(self.timeout),
                "read_timeout": go_duration_seconds(self.read_timeout),
                "write_timeout": go_duration_seconds(self.write_timeout)}

    def ddl_read_timeout(self) -> float:
        return go_duration_seconds(self.ddl_timeout)


# parameter name -> SinkOptions field
PARAMS: dict[str, dataclasses.Field] = {f.metadata["name"]: f for f in dataclasses.fields(SinkOptions)}
# TiCDC sink URI parameters cdcflow accepts but does not use, and why (said in a warning).
IGNORED: dict[str, str] = {
    "time-zone": "rows are written in a UTC session, which keeps every TIMESTAMP the instant the upstream "
                 "stored; the downstream's own time zone is not changed",
}
URI_PARAMS: tuple[str, ...] = tuple(PARAMS) + tuple(IGNORED)
# the connection timeouts, which a source URI takes too
TIMEOUT_PARAMS: tuple[str, ...] = ("read-timeout", "write-timeout", "timeout")

# Go's strconv.ParseBool, which TiCDC reads a URI's booleans with.
_GO_BOOLS = {"1": True, "t": True, "T": True, "true": True, "TRUE": True, "True": True,
             "0": False, "f": False, "F": False, "false": False, "FALSE": False, "False": False}


def expected(name: str, text: bool) -> str:
    """What the parameter takes, in the syntax of a URI (text) or of TOML."""
    meta = PARAMS[name].metadata
    if meta["choices"]:
        return " or ".join(c if text else json.dumps(c) for c in meta["choices"])
    if isinstance(PARAMS[name].default, bool):
        return "true or false"
    if meta["duration"]:
        return ("a duration above zero such as " + " or ".join(f"{t}" if text else json.dumps(t)
                                                                 for t in ("2m", "30s", "500ms")))
    return f"an integer of at least {meta['low']}"


def read(name: str, value: Any, where: str, *, text: bool) -> Any:
    """The value to use for parameter `name`, given as URI text or as a TOML value; a value above
    the parameter's cap is lowered to it with a warning naming `where`.  ValueError otherwise."""
    param = PARAMS[name]
    low, cap, choices = param.metadata["low"], param.metadata["cap"], param.metadata["choices"]
    if choices:
        ok = value in choices
    elif param.metadata["duration"]:
        try:
            ok = isinstance(value, str) and go_duration_seconds(value) > 0
        except ValueError:
            ok = False
    elif isinstance(param.default, bool):
        if text:
            ok, value = value in _GO_BOOLS, _GO_BOOLS.get(value)
        else:
            ok = isinstance(value, bool)
    else:
        if text and re.fullmatch(r"[+-]?\d+", value):
            value = int(value)
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= low
        if ok and cap is not None and value > cap:
            log.warning("%s = %d is above the limit, using %d", where, value, cap)
            value = cap
    if not ok:
        raise ValueError(expected(name, text))
    return value


def merge_sink_options(base: SinkOptions, uri_params: Mapping[str, str]) -> SinkOptions:
    """Sink URI parameters override the config's [sink] (TiCDC reads these from the sink URI)."""
    changes: dict[str, Any] = {}
    for name, text in uri_params.items():
        text = text if isinstance(text, str) else str(text)
        if name in CREDENTIAL_PARAMS:
            continue  # where the password comes from (core.credentials), not a sink option
        if name in IGNORED:
            log.warning("sink URI parameter %s=%s has no effect: %s", name, text, IGNORED[name])
            continue
        if name not in PARAMS:
            raise ConfigError(f"unknown sink URI parameter {name!r}",
                              hint=did_you_mean(name, URI_PARAMS) or "sink parameters: " + ", ".join(URI_PARAMS))
        if text == "":
            continue  # TiCDC: an empty parameter keeps the default
        try:
            changes[PARAMS[name].name] = read(name, text, f"sink URI parameter {name}", text=True)
        except ValueError as e:
            raise ConfigError(f"sink URI parameter {name}={text!r} is invalid: expected {e}") from None
    return dataclasses.replace(base, **changes)
