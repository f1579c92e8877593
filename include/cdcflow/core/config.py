"""A changefeed's config file: TiCDC's TOML keys, validated into frozen dataclasses.

The keys, their spelling (kebab-case) and their defaults follow TiCDC's
changefeed configuration (tiflow `pkg/config/replica_config.go`, `filter.go`,
`sink.go`); `[cdcflow]` holds what only a batch, Airflow-scheduled changefeed
needs.  Nothing unknown is ignored: a misspelt key or a TiCDC setting cdcflow
does not implement is an error naming the full dotted key, because a filter
that silently does not apply replicates data the user meant to keep out.

What is validated here is the shape of each value.  Table-filter rules and the
four value expressions are only stored: `table_filter` and the expression
filter check their syntax.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import Field, dataclass, field, fields
from typing import Any, Callable, Mapping

from croniter import CroniterError, croniter

from cdcflow.core import sink_params
from cdcflow.core.duration import go_duration_ns as _duration_ns
from cdcflow.core.errors import ConfigError
from cdcflow.core.sink_params import SinkOptions
from cdcflow.core.sql_mode import SQL_MODES, TIDB_DEFAULT_SQL_MODE
from cdcflow.core.suggest import closest, did_you_mean
from cdcflow.ddl import types as ddl_types

# --- tables -----------------------------------------------------------------

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

DEFAULT_ERROR_STUCK_SECONDS = 30 * 60
# TiCDC refuses a changefeed-error-stuck-duration below 30m (minChangeFeedErrorStuckDuration).
MIN_ERROR_STUCK_SECONDS = 30 * 60
DEFAULT_GC_TTL_SECONDS = 24 * 3600
DEFAULT_SCHEDULE = "*/5 * * * *"
# [cdcflow] index-wait: the DAG's wait_index sensor defers to the triggerer, or reschedules itself
INDEX_WAIT_MODES = ("deferrable", "reschedule")
ENGINES = ("auto", "local", "spark")  # where the row steps run (stages.engine)
# DM's defaults (dm/config DefaultShadowTableRules / DefaultTrashTableRules): gh-ost's _t_gho and
# pt-online-schema-change's _t_new are shadow tables; gh-ost's _t_ghc, _t_del and pt-osc's _t_old trash
DEFAULT_SHADOW_TABLE_RULE = r"^_(.+)_(?:new|gho)$"
DEFAULT_TRASH_TABLE_RULE = r"^_(.+)_(?:ghc|del|old)$"

# Airflow's schedule presets; "none" (no schedule: trigger only) is handled apart.
SCHEDULE_PRESETS = frozenset({"@once", "@continuous", "@hourly", "@daily", "@weekly",
                              "@monthly", "@quarterly", "@yearly"})
# A cron field's name and, for messages, the values it takes (croniter decides what is valid).
_CRON_FIELDS = (("minute", "0-59"), ("hour", "0-23"), ("day of month", "1-31 or L"),
                ("month", "1-12 or jan-dec"), ("day of week", "0-7 or sun-sat, mon#2 for the second"))

# TiCDC settings cdcflow does not implement: named as such rather than as typos.
_TICDC_UNSUPPORTED = frozenset({
    "enable-old-value", "enable-sync-point", "sync-point-interval", "sync-point-retention",
    "bdr-mode", "memory-quota", "check-gc-safe-point", "enable-table-monitor",
    "mounter", "scheduler", "consistent", "integrity",
    "ddl-allow-list", "do-dbs", "do-tables", "ignore-dbs", "ignore-tables",
    "protocol", "dispatchers", "column-selectors", "csv", "date-separator", "encoder-concurrency",
    "terminator", "enable-partition-separator", "schema-registry", "kafka-config", "mysql-config",
    "cloud-storage-config", "delete-only-output-handle-key-columns", "content-compatible",
    "advance-timeout", "send-bootstrap-interval-in-sec", "debezium-disable-schema",
})


# --- durations --------------------------------------------------------------

_DURATION_EXAMPLES = "a Go duration such as '30m', '1h30m' or '45s'"


def parse_duration(text: str | int) -> int:
    """A duration in whole seconds: a Go duration string ('30m', '1h30m', '1.5h') or an int of seconds."""
    if isinstance(text, bool) or not isinstance(text, (str, int)):
        raise ConfigError(f"invalid duration {_show(text)}: expected {_DURATION_EXAMPLES} or a number of seconds")
    if isinstance(text, int):
        seconds = text
    else:
        try:
            ns = _duration_ns(text.strip())
        except ValueError as e:
            raise ConfigError(f"invalid duration {_show(text)} ({e}): expected {_DURATION_EXAMPLES}") from None
        if ns % 10**9:
            raise ConfigError(f"invalid duration {_show(text)}: it must be a whole number of seconds")
        seconds = ns // 10**9
    if seconds < 0:
        raise ConfigError(f"invalid duration {_show(text)}: it must not be negative")
    return seconds


def format_duration(seconds: int) -> str:
    """Seconds as a compact Go duration ('1h30m', '45s', '0s') that parse_duration reads back."""
    h, rest = divmod(int(seconds), 3600)
    m, s = divmod(rest, 60)
    text = (f"{h}h" if h else "") + (f"{m}m" if m else "") + (f"{s}s" if s else "")
    return text or "0s"


# --- value checks -----------------------------------------------------------
# Each takes (ctx, dotted key, value) and returns the parsed value or raises.

class _Ctx:
    def __init__(self, source: str):
        self.source = source

    def bad(self, key: str, value: Any, expected: str, hint: str | None = None) -> ConfigError:
        return ConfigError(f"{self.source}: {key} = {_show(value)} is invalid: expected {expected}", hint=hint)


def _show(value: Any) -> str:
    """A value as the user wrote it in TOML (true, "text", [1, 2])."""
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def _bool(ctx: _Ctx, key: str, v: Any) -> bool:
    if not isinstance(v, bool):
        raise ctx.bad(key, v, "true or false")
    return v


def _int_between(low: int, high: int | None = None) -> Callable:
    """An integer >= low (and <= high)."""
    def check(ctx: _Ctx, key: str, v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or v < low or (high is not None and v > high):
            upper = f" and at most {high}" if high is not None else ""
            raise ctx.bad(key, v, f"an integer of at least {low}{upper}")
        return v
    return check


def _one_of(*choices: str) -> Callable:
    """One of `choices` (a string)."""
    def check(ctx: _Ctx, key: str, v: Any) -> str:
        if v not in choices:
            raise ctx.bad(key, v, "one of " + ", ".join(f'"{c}"' for c in choices))
        return v
    return check


def _text(ctx: _Ctx, key: str, v: Any) -> str:
    if not isinstance(v, str) or not v.strip():
        raise ctx.bad(key, v, "a non-empty string")
    return v


def _optional_text(ctx: _Ctx, key: str, v: Any) -> str | None:
    # null only comes from JSON (to_dict); TOML cannot write it.
    return None if v is None else _text(ctx, key, v)


def _jvm_memory(ctx: _Ctx, key: str, v: Any) -> str | None:
    """A JVM memory size as spark.driver.memory takes it: a number with k, m, g or t ('2g', '1536m')."""
    if v is None:  # from JSON (to_dict): the default
        return None
    if not isinstance(v, str) or not re.fullmatch(r"[1-9][0-9]*[kmgt]", v.strip().lower()):
        raise ctx.bad(key, v, "a JVM memory size such as \"2g\" or \"1536m\"")
    return v.strip().lower()


def _connect_url(ctx: _Ctx, key: str, v: Any) -> str | None:
    if v is None:
        return None
    if not isinstance(v, str) or not v.startswith("sc://") or len(v) <= len("sc://"):
        raise ctx.bad(key, v, 'a Spark Connect URL, e.g. "sc://127.0.0.1:15002"')
    return v


def _expr(ctx: _Ctx, key: str, v: Any) -> str | None:
    # An empty expression means no expression, as in TiCDC.
    if v is None or (isinstance(v, str) and not v.strip()):
        return None
    if not isinstance(v, str):
        raise ctx.bad(key, v, "a string holding a SQL expression, e.g. \"id >= 100\"")
    return v


def _str_list(ctx: _Ctx, key: str, v: Any, what: str = "strings") -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(x, str) and x.strip() for x in v):
        raise ctx.bad(key, v, f"an array of non-empty {what}")
    return tuple(v)


def _rules(ctx: _Ctx, key: str, v: Any) -> tuple[str, ...]:
    rules = _str_list(ctx, key, v, "table-filter rules such as 'test.*'")
    if not rules:
        raise ctx.bad(key, v, "at least one table-filter rule; write ['*.*'] to replicate every table")
    return rules


def _matcher(ctx: _Ctx, key: str, v: Any) -> tuple[str, ...]:
    rules = _str_list(ctx, key, v, "table-filter rules such as 'test.worker'")
    if not rules:
        raise ctx.bad(key, v, "at least one table-filter rule naming the tables this event filter applies to")
    return rules


def _start_ts_list(ctx: _Ctx, key: str, v: Any) -> tuple[int, ...]:
    if not isinstance(v, list) or not all(
            isinstance(x, int) and not isinstance(x, bool) and 0 < x < 2**64 for x in v):
        raise ctx.bad(key, v, "an array of transaction start-ts (positive integers)")
    return tuple(v)


def _event_types(ctx: _Ctx, key: str, v: Any) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ctx.bad(key, v, "an array of event types such as [\"insert\", \"drop table\"]")
    out: list[str] = []
    for name in v:
        if name not in EVENT_TYPES:
            guess = _EVENT_TYPE_HINTS.get(name.lower().strip())
            if guess is None:
                guess = closest(name.lower().strip(), EVENT_TYPES)
            allowed = ", ".join(f"'{t}'" for t in sorted(EVENT_TYPES))
            raise ConfigError(
                f"{ctx.source}: {key} has unknown event type {name!r}; the allowed event types are {allowed}",
                hint=f"did you mean '{guess}'?" if guess else None)
        canonical = EVENT_TYPE_ALIASES.get(name, name)
        if canonical not in out:
            out.append(canonical)
    return tuple(out)


def _gtid_list(ctx: _Ctx, key: str, v: Any) -> tuple[str, ...]:
    return _str_list(ctx, key, v, "GTIDs such as '0-1-42'")


def _regex_list(ctx: _Ctx, key: str, v: Any) -> tuple[str, ...]:
    patterns = _str_list(ctx, key, v, "regular expressions")
    for p in patterns:
        try:
            re.compile(p, re.IGNORECASE)
        except re.error as e:
            raise ConfigError(f"{ctx.source}: {key} has an invalid regular expression {p!r}: {e}",
                              hint="fix or remove the pattern; ignore-sql patterns are searched, case-insensitive") from None
    return patterns


def _table_rules(ctx: _Ctx, key: str, v: Any) -> tuple[str, ...]:
    """Regular expressions over a table's name whose first group is the real table's name."""
    patterns = _str_list(ctx, key, v, "regular expressions")
    for p in patterns:
        try:
            groups = re.compile(p).groups
        except re.error as e:
            raise ConfigError(f"{ctx.source}: {key} has an invalid regular expression {p!r}: {e}",
                              hint="fix or remove the pattern") from None
        if not groups:
            raise ConfigError(f"{ctx.source}: {key} pattern {p!r} has no group for the real table's name",
                              hint="capture the real table's name in the first group, as "
                                   f"{DEFAULT_SHADOW_TABLE_RULE!r} does")
    return patterns


def _sql_mode(ctx: _Ctx, key: str, v: Any) -> str:
    if not isinstance(v, str):
        raise ctx.bad(key, v, "a comma-separated list of SQL modes")
    modes: list[str] = []
    for part in v.split(","):
        mode = part.strip().upper()
        if not mode:
            continue
        if mode not in SQL_MODES:
            raise ConfigError(f"{ctx.source}: {key} has unknown SQL mode {part.strip()!r}",
                              hint=did_you_mean(mode, SQL_MODES) or f"the default is \"{TIDB_DEFAULT_SQL_MODE}\"")
        if mode not in modes:
            modes.append(mode)
    return ",".join(modes)


def _stuck_duration(ctx: _Ctx, key: str, v: Any) -> int:
    # An int would mean nanoseconds to TiCDC's TOML decoder; only the string form is unambiguous.
    if not isinstance(v, str):
        raise ctx.bad(key, v, f"{_DURATION_EXAMPLES} (a quoted string)")
    seconds = _wrap_duration(ctx, key, v)
    if seconds < MIN_ERROR_STUCK_SECONDS:
        raise ctx.bad(key, v, f"at least {format_duration(MIN_ERROR_STUCK_SECONDS)} (TiCDC's minimum)")
    return seconds


def _gc_ttl(ctx: _Ctx, key: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise ctx.bad(key, v, f"a number of seconds or {_DURATION_EXAMPLES}")
    seconds = _wrap_duration(ctx, key, v)
    if seconds <= 0:
        raise ctx.bad(key, v, "a duration greater than zero (the default is 86400 seconds, 24h)")
    return seconds


def _wrap_duration(ctx: _Ctx, key: str, v: str | int) -> int:
    try:
        return parse_duration(v)
    except ConfigError as e:
        raise ConfigError(f"{ctx.source}: {key}: {e.message}") from None


def _sink_param(name: str) -> Callable:
    def check(ctx: _Ctx, key: str, v: Any) -> Any:
        try:
            return sink_params.read(name, v, f"{ctx.source}: {key}", text=False)
        except ValueError as e:
            raise ctx.bad(key, v, str(e)) from None
    return check


def _schedule(ctx: _Ctx, key: str, v: Any) -> str | None:
    if not isinstance(v, str):
        raise ctx.bad(key, v, "a cron expression such as \"*/5 * * * *\", an Airflow preset such as "
                              "\"@hourly\", or \"none\"")
    text = " ".join(v.split())
    if text.lower() == "none":
        return None
    if text.startswith("@"):
        if text.lower() not in SCHEDULE_PRESETS:
            raise ctx.bad(key, v, "one of " + ", ".join(sorted(SCHEDULE_PRESETS)))
        return text.lower()
    problem = cron_problem(text)
    if problem:
        raise ctx.bad(key, v, f"a cron expression of 5 fields (minute hour day-of-month month day-of-week), "
                              f"an Airflow preset such as \"@hourly\", or \"none\" ({problem})")
    return text


def cron_problem(expr: str) -> str | None:
    """Why a 5-field cron expression is malformed, or None when it is well formed.

    croniter is the judge, the library Airflow schedules with, so `L` (last day of
    the month), `mon#2` or a range that wraps (`22-2`) pass as Airflow takes them.
    The 6th and 7th fields croniter would read (seconds, year) are not Airflow's.
    """
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


# --- the keys ----------------------------------------------------------------
# Every key is declared once, as the field of the dataclass that holds its value: its TOML name,
# its section, what it takes (`kind`, for people), its check, what it means, and how to_dict writes
# it back.  The key tables the reader walks, to_dict and the config reference
# (docs/reference/config.md, generated by cdcflow_devtools.docs_reference) are read off the fields.

TOP, FILTER, EVENT_FILTER, CDCFLOW = "", "filter", "filter.event-filters", "cdcflow"


def _key(name: str, section: str, default: Any, kind: str, check: Callable | None, meaning: str,
         dump: Callable[[Any], Any] | None = None) -> Any:
    """A config field and its key.  `check` None: a table read by a function of its own."""
    factory = {"default": default} if not isinstance(default, (list, dict, set)) else {"default_factory": lambda: default}
    return field(**factory, metadata={"key": name, "section": section, "kind": kind, "check": check,
                                      "meaning": meaning, "dump": dump})


def _as_list(value: tuple) -> list:
    return list(value)


@dataclass(frozen=True)
class EventFilterRule:
    """One `[[filter.event-filters]]` table."""
    matcher: tuple[str, ...] = _key(
        "matcher", EVENT_FILTER, (), "array of table-filter rules", _matcher,
        "the tables this rule applies to (required)", _as_list)
    ignore_event: tuple[str, ...] = _key(
        "ignore-event", EVENT_FILTER, (), "array of event names", _event_types,
        "TiCDC's event types to leave out: insert, update, delete, all dml, all ddl, alter table, "
        "and each DDL type's name", _as_list)
    ignore_sql: tuple[str, ...] = _key(
        "ignore-sql", EVENT_FILTER, (), "array of regular expressions", _regex_list,
        "DDL statements to leave out, searched case-insensitive in their text", _as_list)
    ignore_insert_value_expr: str | None = _key(
        "ignore-insert-value-expr", EVENT_FILTER, None, "SQL expression", _expr,
        "leave out an INSERT whose new row makes it 1")
    ignore_update_new_value_expr: str | None = _key(
        "ignore-update-new-value-expr", EVENT_FILTER, None, "SQL expression", _expr,
        "leave out an UPDATE whose new row makes it 1")
    ignore_update_old_value_expr: str | None = _key(
        "ignore-update-old-value-expr", EVENT_FILTER, None, "SQL expression", _expr,
        "leave out an UPDATE whose old row makes it 1")
    ignore_delete_value_expr: str | None = _key(
        "ignore-delete-value-expr", EVENT_FILTER, None, "SQL expression", _expr,
        "leave out a DELETE whose old row makes it 1")

    def sql_pattern(self) -> re.Pattern[str] | None:
        """`ignore-sql` as TiCDC's binlog filter applies it: any pattern, searched, case-insensitive."""
        if not self.ignore_sql:
            return None
        return re.compile("|".join(f"(?:{p})" for p in self.ignore_sql), re.IGNORECASE)

    def to_dict(self) -> dict:
        return _dump(self, EVENT_FILTER)


@dataclass(frozen=True)
class ChangefeedConfig:
    """A validated changefeed config.  Build it with parse_config / config_from_dict."""
    case_sensitive: bool = _key(
        "case-sensitive", TOP, False, "boolean", _bool,
        "whether table-filter rules and matchers match schema and table names case-sensitively")
    force_replicate: bool = _key(
        "force-replicate", TOP, False, "boolean", _bool,
        "replicate tables without a valid index (primary key or NOT NULL unique key) too, matching whole rows")
    sql_mode: str = _key(
        "sql-mode", TOP, TIDB_DEFAULT_SQL_MODE, "comma-separated SQL modes", _sql_mode,
        "the SQL mode DDL statements are parsed in")
    error_stuck_seconds: int = _key(
        "changefeed-error-stuck-duration", TOP, DEFAULT_ERROR_STUCK_SECONDS, "Go duration, at least 30m",
        _stuck_duration, "how long a changefeed in warning may make no progress before it fails (⑤)",
        lambda seconds: format_duration(seconds))
    gc_ttl_seconds: int = _key(
        "gc-ttl", TOP, DEFAULT_GC_TTL_SECONDS, "seconds, or a Go duration", _gc_ttl,
        "how long a stopped or failed changefeed holds its start; past it, it fails with ErrGCTTLExceeded (⑧)")
    rules: tuple[str, ...] = _key(
        "rules", FILTER, ("*.*",), "array of table-filter rules", _rules,
        "the tables replicated: TiDB's table-filter syntax, the last match wins", _as_list)
    ignore_txn_start_ts: tuple[int, ...] = _key(
        "ignore-txn-start-ts", FILTER, (), "array of integers", _start_ts_list,
        "transactions to leave out by start ts (a binlog carries none: TiCDC's key, accepted)", _as_list)
    # a binlog carries no start ts: its transactions are named by commit ts or GTID instead
    ignore_txn_commit_ts: tuple[int, ...] = _key(
        "ignore-txn-commit-ts", FILTER, (), "array of integers", _start_ts_list,
        "transactions to leave out by commit ts", _as_list)
    ignore_txn_gtid: tuple[str, ...] = _key(
        "ignore-txn-gtid", FILTER, (), "array of GTIDs", _gtid_list,
        "transactions to leave out by GTID, e.g. ['0-1-42']", _as_list)
    event_filters: tuple[EventFilterRule, ...] = _key(
        "event-filters", FILTER, (), "array of tables", None,
        "the `[[filter.event-filters]]` rules, below", lambda rules: [r.to_dict() for r in rules])
    sink: SinkOptions = _key(
        "sink", TOP, SinkOptions(), "table", None, "the `[sink]` parameters, below",
        lambda options: options.to_dict())
    schedule: str | None = _key(
        "schedule", CDCFLOW, DEFAULT_SCHEDULE, "cron expression, Airflow preset, or \"none\"", _schedule,
        "when Airflow runs the changefeed's DAG: a 5-field cron, @continuous (back to back), @hourly, ..., "
        "or none (only when triggered)", lambda schedule: "none" if schedule is None else schedule)
    event_store: str | None = _key(
        "event-store", CDCFLOW, None, "path or URI", _optional_text,
        "where pull writes a cycle's events (Parquet); unset: events/ under CDCFLOW_HOME; on a cluster a URI "
        "every executor reaches (hdfs://, s3a://, file:///mnt/shared/...)")
    spark_master: str | None = _key(
        "spark-master", CDCFLOW, None, "Spark master URL", _optional_text,
        "run the stages on this master (spark://, yarn, k8s://, local[N]); in Airflow as spark-submit jobs")
    spark_remote: str | None = _key(
        "spark-remote", CDCFLOW, None, "Spark Connect URL", _connect_url,
        "run the stages in sessions on this Spark Connect server (sc://host:port); exclusive with spark-master")
    index_wait: str = _key(
        "index-wait", CDCFLOW, "deferrable", " or ".join(f'"{m}"' for m in INDEX_WAIT_MODES),
        _one_of(*INDEX_WAIT_MODES),
        "how the DAG's wait_index task waits for TiDB's index builds: deferred to the triggerer, or a sensor "
        "that reschedules itself")
    shuffle_partitions: int = _key(
        "shuffle-partitions", CDCFLOW, 4, "integer ≥ 1", _int_between(1),
        "Spark's shuffle partitions for the stages; verify's threads")
    pull_parallelism: int = _key(
        "pull-parallelism", CDCFLOW, 0, "integer 0-1024", _int_between(0, 1024),
        "the most ranges a large window's binlog is read in at once; 0: the machine's cores; 1: one process")
    pull_parallel_min_bytes: int = _key(
        "pull-parallel-min-bytes", CDCFLOW, 256 * 1024 * 1024, "integer ≥ 0 (bytes)", _int_between(0),
        "the binlog bytes from which a window is read in parallel ranges (with the compiled reader, the "
        "sequential read still won a 2-core cycle at 68 MiB)")
    fast_path_max_events: int = _key(
        "fast-path-max-events", CDCFLOW, 1_000_000, "integer ≥ 0", _int_between(0),
        "a DAG run on Spark Connect runs filter, barrier and apply in its pull task for a window of at most "
        "this many events (the fast path); 0: a task per stage always")
    engine: str = _key(
        "engine", CDCFLOW, "auto", " or ".join(f'"{m}"' for m in ENGINES), _one_of(*ENGINES),
        "where the row steps of filter, barrier and apply run: auto, in the stage's process for a window and "
        "segments within the local-* bounds and in Spark tasks beyond them; local, in the stage's process "
        "whatever the rows (a segment over local-segment-bytes still in Spark); spark, in Spark tasks always "
        "(CDCFLOW_ENGINE overrides it)")
    local_max_events: int = _key(
        "local-max-events", CDCFLOW, 20_000_000, "integer ≥ 0", _int_between(0),
        "engine auto: filter and barrier read a window of at most this many events in their own process, a "
        "batch at a time")
    local_segment_rows: int = _key(
        "local-segment-rows", CDCFLOW, 1_000_000, "integer ≥ 0", _int_between(0),
        "engine auto: apply writes a segment of at most this many row changes from its own process; a larger "
        "one of a window read there in slices of whole transactions within this bound")
    local_segment_bytes: int = _key(
        "local-segment-bytes", CDCFLOW, 256 * 1024 * 1024, "integer ≥ 0 (bytes)", _int_between(0),
        "engine auto and local: apply writes a segment (or a slice of one) of at most this many bytes of row "
        "images from its own process (it holds one and reads one more ahead): the memory bound")
    max_window_bytes: int = _key(
        "max-window-bytes", CDCFLOW, 1024 * 1024 * 1024, "integer ≥ 0 (bytes)", _int_between(0),
        "a cycle reads at most about this many binlog bytes (whole transactions), the next cycle the rest; "
        "0: up to the upstream's head")
    pull_batch_rows: int = _key(
        "pull-batch-rows", CDCFLOW, 50_000, "integer ≥ 1", _int_between(1),
        "the events pull holds before it writes them to the event store (or 32 MiB of them)")
    spark_driver_memory: str | None = _key(
        "spark-driver-memory", CDCFLOW, None, "JVM memory size (\"2g\", \"1536m\")", _jvm_memory,
        "the heap of a JVM cdcflow starts for its session (spark.driver.memory); unset: CDCFLOW_DRIVER_MEMORY, "
        "else 2g")
    snapshot_chunk_size: int = _key(
        "snapshot-chunk-size", CDCFLOW, 100000, "integer ≥ 1", _int_between(1),
        "upstream rows per copied chunk (create --snapshot, the DAG's mode snapshot)")
    snapshot_workers: int = _key(
        "snapshot-workers", CDCFLOW, 4, "integer 1-1024", _int_between(1, 1024),
        "chunks copied at once")
    table_copy_seconds: int = _key(
        "table-copy-seconds", CDCFLOW, 20, "integer ≥ 1", _int_between(1),
        "how long each cycle copies the rows of tables added to the running changefeed (add-tables, "
        "resync-tables) after its apply; the copy goes on in the next cycle, the other tables' lag grows by "
        "at most this much")
    snapshot_point: str = _key(
        "snapshot-point", CDCFLOW, "auto", "\"auto\", \"consistent-snapshot\" or \"ftwrl\"",
        _one_of("auto", "consistent-snapshot", "ftwrl"),
        "how the snapshot's consistent point is taken; auto: consistent-snapshot on MariaDB, ftwrl on MySQL")
    # online schema change tools (filter/online_ddl.py): DM's online-ddl, shadow-table-rules, trash-table-rules
    online_ddl: bool = _key(
        "online-ddl", CDCFLOW, True, "boolean", _bool,
        "follow pt-online-schema-change's and gh-ost's shadow tables (DM's online-ddl)")
    shadow_table_rules: tuple[str, ...] = _key(
        "shadow-table-rules", CDCFLOW, (DEFAULT_SHADOW_TABLE_RULE,), "array of regular expressions", _table_rules,
        "names of the tools' shadow tables; the first group is the real table's name", _as_list)
    trash_table_rules: tuple[str, ...] = _key(
        "trash-table-rules", CDCFLOW, (DEFAULT_TRASH_TABLE_RULE,), "array of regular expressions", _table_rules,
        "names of the tools' trash tables; the first group is the real table's name", _as_list)

    def to_dict(self) -> dict:
        """The config file's shape (kebab-case keys), JSON-able; config_from_dict reads it back."""
        out = _dump(self, TOP)
        out[FILTER] = _dump(self, FILTER)
        out["sink"] = out.pop("sink")  # after [filter], as a file writes it
        out[CDCFLOW] = _dump(self, CDCFLOW)
        return out


def key_fields(holder: type, section: str) -> list[Field]:
    """The fields of `holder` declaring a key of `section`, in their order."""
    return [f for f in fields(holder) if f.metadata.get("section") == section]


def _dump(obj: Any, section: str) -> dict:
    out = {}
    for f in key_fields(type(obj), section):
        value, dump = getattr(obj, f.name), f.metadata["dump"]
        out[f.metadata["key"]] = dump(value) if dump else value
    return out


def _keys(holder: type, section: str) -> dict[str, tuple[str, Callable]]:
    """TOML key -> (dataclass field, check) of the keys a section's reader checks one by one."""
    return {f.metadata["key"]: (f.name, f.metadata["check"]) for f in key_fields(holder, section)
            if f.metadata["check"] is not None}


_TOP_KEYS = _keys(ChangefeedConfig, TOP)
_FILTER_KEYS = _keys(ChangefeedConfig, FILTER)
_EVENT_FILTER_KEYS = _keys(EventFilterRule, EVENT_FILTER)
_SINK_KEYS: dict[str, tuple[str, Callable]] = {
    name: (f.name, _sink_param(name)) for name, f in sink_params.PARAMS.items()}
_CDCFLOW_KEYS = _keys(ChangefeedConfig, CDCFLOW)

# Where each known key lives, for "belongs in [sink]" hints: label -> keys.
_SECTIONS: dict[str, set[str]] = {
    "the top level (before any [section])": set(_TOP_KEYS) | {"filter", "sink", "cdcflow"},
    "[filter]": set(_FILTER_KEYS) | {"event-filters"},
    "a [[filter.event-filters]] table": set(_EVENT_FILTER_KEYS),
    "[sink]": set(_SINK_KEYS),
    "[cdcflow]": set(_CDCFLOW_KEYS),
}


def _check_keys(ctx: _Ctx, table: Mapping[str, Any], known: set[str], prefix: str, here: str) -> None:
    for key in table:
        if key in known:
            continue
        dotted = f"{prefix}{key}"
        elsewhere = [label for label, keys in _SECTIONS.items() if label != here and key in keys]
        guess = did_you_mean(key, known, prefix)
        if elsewhere:
            hint = f"'{key}' belongs in {elsewhere[0]}"
        elif guess:
            hint = guess
        elif key in _TICDC_UNSUPPORTED:
            hint = f"'{key}' is a TiCDC setting cdcflow does not support; remove it"
        else:
            hint = "known keys here: " + ", ".join(sorted(known))
        raise ConfigError(f"{ctx.source}: unknown key {dotted}", hint=hint)


def _read(ctx: _Ctx, table: Mapping[str, Any], keys: dict[str, tuple[str, Callable]], prefix: str) -> dict:
    return {fname: check(ctx, prefix + key, table[key]) for key, (fname, check) in keys.items() if key in table}


def _table(ctx: _Ctx, data: Mapping[str, Any], key: str, prefix: str = "") -> Mapping[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise ctx.bad(prefix + key, value, f"a table: write [{prefix}{key}] on its own line, then its keys")
    return value


def _check_cluster_store(source: str, master: str | None, store: str | None) -> None:
    """The executors of a cluster master run on other machines: they read the event store by
    its URI, so a folder only this machine has (the default under CDCFLOW_HOME) is refused."""
    if not master or master == "local" or master.startswith("local["):
        return
    if store and "://" in store:
        return
    where = f"the folder {store!r}" if store else "the default folder under CDCFLOW_HOME"
    raise ConfigError(
        f"{source}: cdcflow.spark-master = {master!r} runs executors on other machines, which cannot read "
        f"{where} of this one (cdcflow.event-store)",
        hint='set cdcflow.event-store to a URI every executor reaches: "hdfs://namenode/cdcflow", '
             '"s3a://bucket/cdcflow", or "file:///mnt/shared/cdcflow" for a mount every node has')


def config_from_dict(data: Mapping[str, Any], source: str = "<config>") -> ChangefeedConfig:
    """Validate an already-decoded config (TOML's or to_dict's shape)."""
    ctx = _Ctx(source)
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: the config must be a table of keys, not {_show(data)}")
    _check_keys(ctx, data, _SECTIONS["the top level (before any [section])"], "",
                "the top level (before any [section])")
    fields = _read(ctx, data, _TOP_KEYS, "")

    filt = _table(ctx, data, "filter")
    _check_keys(ctx, filt, _SECTIONS["[filter]"], "filter.", "[filter]")
    fields.update(_read(ctx, filt, _FILTER_KEYS, "filter."))
    fields["event_filters"] = _event_filters(ctx, filt.get("event-filters", []))

    sink = _table(ctx, data, "sink")
    _check_keys(ctx, sink, _SECTIONS["[sink]"], "sink.", "[sink]")
    fields["sink"] = SinkOptions(**_read(ctx, sink, _SINK_KEYS, "sink."))

    own = _table(ctx, data, "cdcflow")
    _check_keys(ctx, own, _SECTIONS["[cdcflow]"], "cdcflow.", "[cdcflow]")
    fields.update(_read(ctx, own, _CDCFLOW_KEYS, "cdcflow."))
    _check_cluster_store(source, fields.get("spark_master"), fields.get("event_store"))
    if fields.get("spark_master") and fields.get("spark_remote"):
        raise ConfigError(
            f"{source}: cdcflow.spark-master and cdcflow.spark-remote are both set",
            hint="set spark-remote to run the stages on a Spark Connect server, or spark-master to run "
                 "them in a Spark of their own (spark-submit in Airflow), not both")
    return ChangefeedConfig(**fields)


def _event_filters(ctx: _Ctx, value: Any) -> tuple[EventFilterRule, ...]:
    if not isinstance(value, list) or not all(isinstance(t, Mapping) for t in value):
        raise ctx.bad("filter.event-filters", value,
                      "an array of tables: start each rule with [[filter.event-filters]] (two brackets)")
    rules = []
    for i, table in enumerate(value):
        prefix = f"filter.event-filters[{i}]."
        _check_keys(ctx, table, set(_EVENT_FILTER_KEYS), prefix, "a [[filter.event-filters]] table")
        if "matcher" not in table:
            raise ConfigError(f"{ctx.source}: {prefix}matcher is missing",
                              hint="give the tables the rule applies to, e.g. matcher = [\"test.worker\"]")
        rules.append(EventFilterRule(**_read(ctx, table, _EVENT_FILTER_KEYS, prefix)))
    return tuple(rules)


# --- entry points -----------------------------------------------------------

def parse_config(text: str, source: str = "<config>") -> ChangefeedConfig:
    """Parse a changefeed config file's TOML text; an empty text gives the defaults."""
    try:
        data = tomllib.loads(text or "")
    except tomllib.TOMLDecodeError as e:
        # the message ends with "(at line L, column C)"
        raise ConfigError(f"{source}: not valid TOML: {e}",
                          hint="check quoting and brackets; arrays of tables use [[...]]") from None
    return config_from_dict(data, source)
