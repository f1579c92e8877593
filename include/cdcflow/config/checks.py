"""The checks a config key's value passes: each takes (origin, dotted key, value) and returns the
value parsed, or raises a ConfigError that names the key, what it holds and what it takes; and what
they read: TiCDC's event names, Go durations, Airflow's schedules."""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from cdcflow.core import sink_params
from cdcflow.core.duration import go_duration_ns as _duration_ns
from cdcflow.core.errors import ConfigError
from cdcflow.core.sql_mode import SQL_MODES, TIDB_DEFAULT_SQL_MODE
from cdcflow.core.suggest import closest, did_you_mean
from cdcflow.ddl import types as ddl_types

# tiflow pkg/filter SupportedEventTypes(): the DML types, `all dml`/`all ddl`,
# `alter table`, and the event names of every DDL type (ddl.types), aliases included.
EVENT_TYPES: frozenset[str] = frozenset({
    "all dml", "all ddl",
    "insert", "update", "delete",
    "alter table",
}) | ddl_types.EVENT_NAMES
# The binlog filter maps these aliases before matching; stored canonical.
EVENT_TYPE_ALIASES: dict[str, str] = ddl_types.EVENT_NAME_ALIASES
# Names users reach for that TiCDC spells differently (a hint only: they stay invalid).
_EVENT_TYPE_HINTS = {
    **ddl_types.EVENT_NAME_HINTS,
    "alter table add index": "create index", "modify default value": "set default value",
    "alter database": "modify schema charset and collate",
    "all": "all dml", "dml": "all dml", "ddl": "all ddl",
}
# TiCDC refuses a changefeed-error-stuck-duration below 30m (minChangeFeedErrorStuckDuration).
MIN_ERROR_STUCK_SECONDS = 30 * 60
# cdcflow's own preset: a run each time the upstream's binlog moves past what the changefeed applied (an
# Airflow asset watched by a trigger on the triggerer: plugins/cdcflow_airflow/binlog_trigger.py).
BINLOG_SCHEDULE = "@binlog"
# Airflow's schedule presets and cdcflow's; "none" (no schedule: trigger only) is handled apart.
SCHEDULE_PRESETS = frozenset({"@once", "@continuous", "@hourly", "@daily", "@weekly",
                              "@monthly", "@quarterly", "@yearly", BINLOG_SCHEDULE})
# A cron field's name and, for messages, the values it takes (croniter decides what is valid).
_CRON_FIELDS = (("minute", "0-59"), ("hour", "0-23"), ("day of month", "1-31 or L"),
                ("month", "1-12 or jan-dec"), ("day of week", "0-7 or sun-sat, mon#2 for the second"))


# --- durations --------------------------------------------------------------

DURATION_EXAMPLES = "a Go duration such as '30m', '1h30m' or '45s'"


def parse_duration(text: str | int) -> int:
    """A duration in whole seconds: a Go duration string ('30m', '1h30m', '1.5h') or an int of seconds."""
    if isinstance(text, bool) or not isinstance(text, (str, int)):
        raise ConfigError(f"invalid duration {show(text)}: expected {DURATION_EXAMPLES} or a number of seconds")
    if isinstance(text, int):
        seconds = text
    else:
        try:
            ns = _duration_ns(text.strip())
        except ValueError as e:
            raise ConfigError(f"invalid duration {show(text)} ({e}): expected {DURATION_EXAMPLES}") from None
        if ns % 10**9:
            raise ConfigError(f"invalid duration {show(text)}: it must be a whole number of seconds")
        seconds = ns // 10**9
    if seconds < 0:
        raise ConfigError(f"invalid duration {show(text)}: it must not be negative")
    return seconds


def format_duration(seconds: int) -> str:
    """Seconds as a compact Go duration ('1h30m', '45s', '0s') that parse_duration reads back."""
    h, rest = divmod(int(seconds), 3600)
    m, s = divmod(rest, 60)
    text = (f"{h}h" if h else "") + (f"{m}m" if m else "") + (f"{s}s" if s else "")
    return text or "0s"


# --- value checks -----------------------------------------------------------
# Each takes (origin, dotted key, value) and returns the parsed value or raises.

class Origin:
    """Where the values being checked come from (the config file's name, or a changefeed's), for the
    errors the checks raise."""

    def __init__(self, source: str):
        self.source = source

    def bad(self, key: str, value: Any, expected: str, hint: str | None = None) -> ConfigError:
        return ConfigError(f"{self.source}: {key} = {show(value)} is invalid: expected {expected}", hint=hint)


def show(value: Any) -> str:
    """A value as the user wrote it in TOML (true, "text", [1, 2])."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def boolean(origin: Origin, key: str, v: Any) -> bool:
    if not isinstance(v, bool):
        raise origin.bad(key, v, "true or false")
    return v


def int_between(low: int, high: int | None = None) -> Callable:
    """An integer >= low (and <= high)."""
    def check(origin: Origin, key: str, v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or v < low or (high is not None and v > high):
            upper = f" and at most {high}" if high is not None else ""
            raise origin.bad(key, v, f"an integer of at least {low}{upper}")
        return v
    return check


def one_of(*choices: str) -> Callable:
    """One of `choices` (a string)."""
    def check(origin: Origin, key: str, v: Any) -> str:
        if v not in choices:
            raise origin.bad(key, v, "one of " + ", ".join(f'"{c}"' for c in choices))
        return v
    return check


def text(origin: Origin, key: str, v: Any) -> str:
    if not isinstance(v, str) or not v.strip():
        raise origin.bad(key, v, "a non-empty string")
    return v


def optional_text(origin: Origin, key: str, v: Any) -> str | None:
    # null only comes from JSON (to_dict); TOML cannot write it.
    return None if v is None else text(origin, key, v)


def jvm_memory(origin: Origin, key: str, v: Any) -> str | None:
    """A JVM memory size as spark.driver.memory takes it: a number with k, m, g or t ('2g', '1536m')."""
    if v is None:  # from JSON (to_dict): the default
        return None
    if not isinstance(v, str) or not re.fullmatch(r"[1-9][0-9]*[kmgt]", v.strip().lower()):
        raise origin.bad(key, v, "a JVM memory size such as \"2g\" or \"1536m\"")
    return v.strip().lower()


def connect_url(origin: Origin, key: str, v: Any) -> str | None:
    if v is None:
        return None
    if not isinstance(v, str) or not v.startswith("sc://") or len(v) <= len("sc://"):
        raise origin.bad(key, v, 'a Spark Connect URL, e.g. "sc://127.0.0.1:15002"')
    return v


def expression(origin: Origin, key: str, v: Any) -> str | None:
    # An empty expression means no expression, as in TiCDC.
    if v is None or (isinstance(v, str) and not v.strip()):
        return None
    if not isinstance(v, str):
        raise origin.bad(key, v, "a string holding a SQL expression, e.g. \"id >= 100\"")
    return v


def _str_list(origin: Origin, key: str, v: Any, what: str = "strings") -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(x, str) and x.strip() for x in v):
        raise origin.bad(key, v, f"an array of non-empty {what}")
    return tuple(v)


def filter_rules(origin: Origin, key: str, v: Any) -> tuple[str, ...]:
    rules = _str_list(origin, key, v, "table-filter rules such as 'test.*'")
    if not rules:
        raise origin.bad(key, v, "at least one table-filter rule; write ['*.*'] to replicate every table")
    return rules


def matcher(origin: Origin, key: str, v: Any) -> tuple[str, ...]:
    rules = _str_list(origin, key, v, "table-filter rules such as 'test.worker'")
    if not rules:
        raise origin.bad(key, v, "at least one table-filter rule naming the tables this event filter applies to")
    return rules


def ts_list(origin: Origin, key: str, v: Any) -> tuple[int, ...]:
    if not isinstance(v, list) or not all(
            isinstance(x, int) and not isinstance(x, bool) and 0 < x < 2**64 for x in v):
        raise origin.bad(key, v, "an array of transaction start-ts (positive integers)")
    return tuple(v)


def event_types(origin: Origin, key: str, v: Any) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise origin.bad(key, v, "an array of event types such as [\"insert\", \"drop table\"]")
    out: list[str] = []
    for name in v:
        if name not in EVENT_TYPES:
            guess = _EVENT_TYPE_HINTS.get(name.lower().strip())
            if guess is None:
                guess = closest(name.lower().strip(), EVENT_TYPES)
            allowed = ", ".join(f"'{t}'" for t in sorted(EVENT_TYPES))
            raise ConfigError(
                f"{origin.source}: {key} has unknown event type {name!r}; the allowed event types are {allowed}",
                hint=f"did you mean '{guess}'?" if guess else None)
        canonical = EVENT_TYPE_ALIASES.get(name, name)
        if canonical not in out:
            out.append(canonical)
    return tuple(out)


def gtid_list(origin: Origin, key: str, v: Any) -> tuple[str, ...]:
    return _str_list(origin, key, v, "GTIDs such as '0-1-42'")


def regex_list(origin: Origin, key: str, v: Any) -> tuple[str, ...]:
    patterns = _str_list(origin, key, v, "regular expressions")
    for p in patterns:
        try:
            re.compile(p, re.IGNORECASE)
        except re.error as e:
            raise ConfigError(f"{origin.source}: {key} has an invalid regular expression {p!r}: {e}",
                              hint="fix or remove the pattern; ignore-sql patterns are searched, case-insensitive") from None
    return patterns


def name_rules(example: str) -> Callable:
    """Regular expressions over a table's name whose first group is the real table's name; `example`
    is the one the hint shows."""
    def check(origin: Origin, key: str, v: Any) -> tuple[str, ...]:
        patterns = _str_list(origin, key, v, "regular expressions")
        for p in patterns:
            try:
                groups = re.compile(p).groups
            except re.error as e:
                raise ConfigError(f"{origin.source}: {key} has an invalid regular expression {p!r}: {e}",
                                  hint="fix or remove the pattern") from None
            if not groups:
                raise ConfigError(f"{origin.source}: {key} pattern {p!r} has no group for the real table's name",
                                  hint=f"capture the real table's name in the first group, as {example!r} does")
        return patterns
    return check


def sql_mode(origin: Origin, key: str, v: Any) -> str:
    if not isinstance(v, str):
        raise origin.bad(key, v, "a comma-separated list of SQL modes")
    modes: list[str] = []
    for part in v.split(","):
        mode = part.strip().upper()
        if not mode:
            continue
        if mode not in SQL_MODES:
            raise ConfigError(f"{origin.source}: {key} has unknown SQL mode {part.strip()!r}",
                              hint=did_you_mean(mode, SQL_MODES) or f"the default is \"{TIDB_DEFAULT_SQL_MODE}\"")
        if mode not in modes:
            modes.append(mode)
    return ",".join(modes)


def stuck_duration(origin: Origin, key: str, v: Any) -> int:
    # An int would mean nanoseconds to TiCDC's TOML decoder; only the string form is unambiguous.
    if not isinstance(v, str):
        raise origin.bad(key, v, f"{DURATION_EXAMPLES} (a quoted string)")
    seconds = _wrap_duration(origin, key, v)
    if seconds < MIN_ERROR_STUCK_SECONDS:
        raise origin.bad(key, v, f"at least {format_duration(MIN_ERROR_STUCK_SECONDS)} (TiCDC's minimum)")
    return seconds


def gc_ttl(origin: Origin, key: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise origin.bad(key, v, f"a number of seconds or {DURATION_EXAMPLES}")
    seconds = _wrap_duration(origin, key, v)
    if seconds <= 0:
        raise origin.bad(key, v, "a duration greater than zero (the default is 86400 seconds, 24h)")
    return seconds


def _wrap_duration(origin: Origin, key: str, v: str | int) -> int:
    try:
        return parse_duration(v)
    except ConfigError as e:
        raise ConfigError(f"{origin.source}: {key}: {e.message}") from None


def sink_param(name: str) -> Callable:
    def check(origin: Origin, key: str, v: Any) -> Any:
        try:
            return sink_params.read(name, v, f"{origin.source}: {key}", text=False)
        except ValueError as e:
            raise origin.bad(key, v, str(e)) from None
    return check


def schedule(origin: Origin, key: str, v: Any) -> str | None:
    if not isinstance(v, str):
        raise origin.bad(key, v, "a cron expression such as \"*/5 * * * *\", an Airflow preset such as "
                              "\"@hourly\", \"@binlog\" (a run when the upstream's binlog moves), or \"none\"")
    text = " ".join(v.split())
    if text.lower() == "none":
        return None
    if text.startswith("@"):
        if text.lower() not in SCHEDULE_PRESETS:
            raise origin.bad(key, v, "one of " + ", ".join(sorted(SCHEDULE_PRESETS)),
                             hint=did_you_mean(text.lower(), SCHEDULE_PRESETS))
        return text.lower()
    problem = cron_problem(text)
    if problem:
        raise origin.bad(key, v, f"a cron expression of 5 fields (minute hour day-of-month month day-of-week), "
                              f"an Airflow preset such as \"@hourly\", or \"none\" ({problem})")
    return text


def cron_problem(expr: str) -> str | None:
    """Why a 5-field cron expression is malformed, or None when it is well formed.

    croniter is the judge, the library Airflow schedules with, so `L` (last day of
    the month), `mon#2` or a range that wraps (`22-2`) pass as Airflow takes them.
    The 6th and 7th fields croniter would read (seconds, year) are not Airflow's.
    """
    from croniter import CroniterError, croniter  # lazy: 50-90 ms a process, only for a config with a cron schedule

    fields = expr.split()
    if len(fields) != 5:
        return f"found {len(fields)} field{'s' if len(fields) != 1 else ''}"
    try:
        croniter(expr)
        return None
    except CroniterError as e:
        reason = str(e)
    for i, (name, allowed) in enumerate(_CRON_FIELDS):  # the first field croniter refuses alone
        try:
            croniter(" ".join(fields[i] if j == i else "*" for j in range(5)))
        except CroniterError:
            return f"{fields[i]!r} is not a valid {name} ({allowed}): {reason}"
    return reason
