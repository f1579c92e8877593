"""Source and sink URIs (`mysql://user:password@host:port/?param=value`, `tidb://...`).

The shape is TiCDC's sink URI: the password percent-encoded, the parameters in
the query string.  A source is a MySQL/MariaDB server read through its binlog
(`mysql://` only: a TiDB upstream has no binlog).  A sink is MySQL, MariaDB or
TiDB.  Every parameter is checked when the URI is parsed, so a typo fails when
the changefeed is created, not in the middle of a cycle.  The password appears
in no message, repr or redacted form.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote, unquote_plus, urlsplit

from cdcflow.core import credentials, sink_params, tls
from cdcflow.core.errors import ConfigError
from cdcflow.core.sink_params import TIMEOUT_PARAMS, URI_PARAMS, SinkOptions, merge_sink_options
from cdcflow.core.suggest import did_you_mean

if TYPE_CHECKING:
    import pymysql.connections

DEFAULT_PORTS = {"mysql": 3306, "tidb": 4000}
SOURCE_SCHEMES = ("mysql",)
SINK_SCHEMES = ("mysql", "tidb")
SOURCE_PARAMS = ("server-id",) + TIMEOUT_PARAMS + credentials.CREDENTIAL_PARAMS
SINK_PARAMS = URI_PARAMS + credentials.CREDENTIAL_PARAMS
MAX_SERVER_ID = 2**32 - 1

# tiflow cdc/model ValidateChangefeedID: this pattern, at most 128 characters.
CHANGEFEED_ID_PATTERN = r"^[a-zA-Z0-9]+(\-[a-zA-Z0-9]+)*$"
CHANGEFEED_ID_MAX_LEN = 128
_CHANGEFEED_ID_RE = re.compile(r"[a-zA-Z0-9]+(?:-[a-zA-Z0-9]+)*")


class Params(Mapping[str, str]):
    """URI query parameters: a read-only str -> str mapping that is hashable and picklable,
    so a DbUri stays a frozen value that can travel to Spark executors."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, str] | Iterable[tuple[str, str]] = ()):
        pairs = dict(items)
        for k, v in pairs.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise TypeError(f"URI parameters are str -> str, got {k!r}: {v!r}")
        self._items = tuple(sorted(pairs.items()))

    def __getitem__(self, key: str) -> str:
        for k, v in self._items:
            if k == key:
                return v
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return (k for k, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(self._items)

    def __repr__(self) -> str:
        return f"Params({dict(self._items)!r})"


@dataclass(frozen=True)
class DbUri:
    scheme: str  # 'mysql' | 'tidb'
    host: str
    port: int
    user: str
    password: str = field(default="", repr=False)
    # any mapping given is stored as Params (read-only, hashable)
    params: Params = field(default_factory=Params)
    role: str = field(default="", compare=False)  # 'source' or 'sink', for messages

    def __post_init__(self):
        if not isinstance(self.params, Params):
            object.__setattr__(self, "params", Params(self.params))

    @property
    def is_tidb(self) -> bool:
        return self.scheme == "tidb"

    @property
    def server_id(self) -> int | None:
        """The source's `server-id` parameter, when given."""
        text = self.params.get("server-id")
        return int(text) if text else None

    def redacted(self) -> str:
        """The URI with the password replaced by ***: safe for logs, errors and the UI."""
        user = quote(self.user, safe="")
        auth = f"{user}:***@" if self.password else f"{user}@"
        host = f"[{self.host}]" if ":" in self.host else self.host
        query = "&".join(f"{quote(k, safe='-')}={quote(v, safe='-/:')}" for k, v in self.params.items())
        return f"{self.scheme}://{auth}{host}:{self.port}/" + (f"?{query}" if query else "")

    def __str__(self) -> str:
        return self.redacted()

    def connection_args(self, options: SinkOptions | None = None) -> dict:
        """pymysql's host, port, user, password (a reference resolved now: core.credentials) and
        timeouts: the sink's `options` (its URI merged over the config's [sink]), else the URI's
        own read-timeout / write-timeout / timeout, else TiCDC's defaults.  Plain values, so
        they travel to Spark executors."""
        if options is None:
            options = merge_sink_options(SinkOptions(), {k: v for k, v in self.params.items() if k in TIMEOUT_PARAMS})
        user, password = self.user, self.password
        resolved = credentials.resolve(self.params, self.role or "database")
        if resolved is not None:
            user, password = resolved[0] or user, resolved[1]
        return {"host": self.host, "port": self.port, "user": user, "password": password,
                **options.connect_args()}

    def connect(self, database: str | None = None, autocommit: bool = True,
                **kw) -> "pymysql.connections.Connection":
        """A pymysql connection (utf8mb4, the URI's timeouts, LOAD DATA LOCAL off).
        pymysql's errors propagate: callers decide whether a failure is retryable."""
        import pymysql  # lazy: the DAG parse imports this module; pymysql loads when a connection opens

        if kw.get("local_infile"):
            raise ValueError("cdcflow never enables LOAD DATA LOCAL INFILE")
        args = {**self.connection_args(), "database": database, "charset": "utf8mb4", "autocommit": autocommit}
        args.update(kw)
        args["local_infile"] = False
        tls.install()
        return pymysql.connect(**args)


def parse_source_uri(text: str) -> DbUri:
    """The upstream: `mysql://user:password@host:port/?server-id=N`."""
    uri = _parse(text, "source", SOURCE_SCHEMES, SOURCE_PARAMS)
    sid = uri.params.get("server-id")
    if sid is not None and not (sid.isdigit() and 1 <= int(sid) <= MAX_SERVER_ID):
        raise ConfigError(f"source URI parameter server-id={sid!r} is invalid: "
                          f"expected an integer from 1 to {MAX_SERVER_ID}",
                          hint="pick an id no other replica or binlog reader of the upstream uses")
    return uri


def parse_sink_uri(text: str) -> DbUri:
    """The downstream: `mysql://` or `tidb://`, with TiCDC's MySQL-sink parameters."""
    uri = _parse(text, "sink", SINK_SCHEMES, SINK_PARAMS)
    merge_sink_options(SinkOptions(), uri.params)  # raises on a bad value now rather than at apply
    return uri


def _parse(text: str, kind: str, schemes: tuple[str, ...], allowed: tuple[str, ...]) -> DbUri:
    example = f"{schemes[0]}://user:password@host:{DEFAULT_PORTS[schemes[0]]}/"
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(f"the {kind} URI is empty", hint=f"write it like {example}")
    parts = urlsplit(text.strip())
    scheme = parts.scheme.lower()
    if "://" not in text or scheme not in schemes:
        shown = f"'{scheme}'" if "://" in text else "missing"
        why = " (a TiDB upstream has no binlog to read)" if kind == "source" and scheme == "tidb" else ""
        raise ConfigError(f"the {kind} URI scheme is {shown}{why}: expected "
                          + " or ".join(f"{s}://" for s in schemes), hint=f"write it like {example}")
    if "@" in parts.path + parts.query + parts.fragment:
        # The user info held an unencoded '/', '?' or '#': what follows is part of the password,
        # so say nothing about it.
        raise ConfigError(f"the {kind} URI cannot be parsed: the password (or user) holds a '/', '?' or '#'",
                          hint="percent-encode them in the password: '/' as %2F, '?' as %3F, '#' as %23")
    hostport = parts.netloc.rpartition("@")[2]
    if not parts.hostname:
        raise ConfigError(f"the {kind} URI has no host", hint=f"write it like {example}")
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port is not None and not 1 <= port <= 65535:
        raw = hostport.rpartition(":")[2]
        raise ConfigError(f"the {kind} URI port {raw!r} is invalid: expected a number from 1 to 65535")
    if parts.path not in ("", "/"):
        raise ConfigError(f"the {kind} URI path {parts.path!r} is not supported",
                          hint="end the URI at host:port/; [filter] rules choose the databases")
    if parts.fragment:
        raise ConfigError(f"the {kind} URI has a #fragment, which is not supported",
                          hint="percent-encode '#' in the password as %23")
    params = _query(parts.query, kind, allowed)
    password = unquote(parts.password or "")
    credentials.check_reference(params, bool(password), kind)
    for name in TIMEOUT_PARAMS:  # a sink's are checked with its other parameters
        if kind == "source" and name in params:
            try:
                sink_params.read(name, params[name], f"source URI parameter {name}", text=True)
            except ValueError as e:
                raise ConfigError(f"source URI parameter {name}={params[name]!r} is invalid: expected {e}") from None
    return DbUri(
        scheme=scheme,
        host=parts.hostname,
        port=port or DEFAULT_PORTS[scheme],
        user=unquote(parts.username or "") or "root",  # TiCDC's default user
        password=password,
        params=params,
        role=kind,
    )


def _query(query: str, kind: str, allowed: tuple[str, ...]) -> Params:
    params: dict[str, str] = {}
    for item in query.split("&"):
        if not item:
            continue
        raw_name, eq, raw_value = item.partition("=")
        name = unquote_plus(raw_name)
        if name not in allowed:
            other = SINK_PARAMS if kind == "source" else SOURCE_PARAMS
            if name in other:
                hint = f"{name} is a {'sink' if kind == 'source' else 'source'} URI parameter"
            else:
                hint = did_you_mean(name, allowed) or f"{kind} URI parameters: " + ", ".join(allowed)
            raise ConfigError(f"unknown {kind} URI parameter {name!r}", hint=hint)
        if not eq:
            raise ConfigError(f"{kind} URI parameter {name!r} has no value", hint=f"write {name}=value")
        if name in params:
            raise ConfigError(f"{kind} URI parameter {name!r} is given twice")
        params[name] = unquote_plus(raw_value)
    return Params(params)


def default_server_id(changefeed_id: str) -> int:
    """The binlog server id a changefeed uses unless its source URI sets one: stable for the
    changefeed, far above the small ids servers are usually given."""
    return 1_000_000 + zlib.crc32(changefeed_id.encode("utf-8")) % 1_000_000_000


def validate_changefeed_id(changefeed_id: str) -> str:
    """TiCDC's rule: letters and digits in groups joined by single hyphens, at most 128 long."""
    if (not isinstance(changefeed_id, str) or not _CHANGEFEED_ID_RE.fullmatch(changefeed_id)
            or len(changefeed_id) > CHANGEFEED_ID_MAX_LEN):
        raise ConfigError(
            f"bad changefeed id {changefeed_id!r}: it must match {CHANGEFEED_ID_PATTERN} "
            f"and be at most {CHANGEFEED_ID_MAX_LEN} characters",
            hint="use letters, digits and single hyphens between them, e.g. 'orders-to-tidb'")
    return changefeed_id
