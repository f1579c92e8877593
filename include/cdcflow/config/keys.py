"""A changefeed's config file: TiCDC's TOML keys, declared as the fields of frozen dataclasses.

The keys, their spelling (kebab-case) and their defaults follow TiCDC's
changefeed configuration (tiflow `pkg/config/replica_config.go`, `filter.go`,
`sink.go`); `[cdcflow]` holds what only a batch, Airflow-scheduled changefeed
needs.  Each key is declared once, as the field that holds its value: its TOML name, its
section, what it takes, its check (config.checks), what it means and how to_dict writes it
back.  The reader (config.parsing), to_dict and the generated config reference
(docs/reference/config.md, cdcflow_devtools.docs_reference) are read off the fields.
"""

from __future__ import annotations

import re
from dataclasses import Field, dataclass, field, fields
from typing import Any, Callable

from cdcflow.config import checks
from cdcflow.core.sink_params import SinkOptions
from cdcflow.core.sql_mode import TIDB_DEFAULT_SQL_MODE

DEFAULT_ERROR_STUCK_SECONDS = 30 * 60
DEFAULT_GC_TTL_SECONDS = 24 * 3600
DEFAULT_SCHEDULE = "*/5 * * * *"
# [cdcflow] index-wait: the DAG's wait_index sensor defers to the triggerer, or reschedules itself
INDEX_WAIT_MODES = ("deferrable", "reschedule")
ENGINES = ("auto", "local", "spark")  # where the row steps run (stages.engine)
# DM's defaults (dm/config DefaultShadowTableRules / DefaultTrashTableRules): gh-ost's _t_gho and
# pt-online-schema-change's _t_new are shadow tables; gh-ost's _t_ghc, _t_del and pt-osc's _t_old trash
DEFAULT_SHADOW_TABLE_RULE = r"^_(.+)_(?:new|gho)$"
DEFAULT_TRASH_TABLE_RULE = r"^_(.+)_(?:ghc|del|old)$"

# the sections, as key_fields names them
TOP, FILTER, EVENT_FILTER, CDCFLOW = "", "filter", "filter.event-filters", "cdcflow"
# the online schema change tools' shadow and trash table names, shown with DM's shadow rule
_name_rules = checks.name_rules(DEFAULT_SHADOW_TABLE_RULE)


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
        "matcher", EVENT_FILTER, (), "array of table-filter rules", checks.matcher,
        "the tables this rule applies to (required)", _as_list)
    ignore_event: tuple[str, ...] = _key(
        "ignore-event", EVENT_FILTER, (), "array of event names", checks.event_types,
        "TiCDC's event types to leave out: insert, update, delete, all dml, all ddl, alter table, "
        "and each DDL type's name", _as_list)
    ignore_sql: tuple[str, ...] = _key(
        "ignore-sql", EVENT_FILTER, (), "array of regular expressions", checks.regex_list,
        "DDL statements to leave out, searched case-insensitive in their text", _as_list)
    ignore_insert_value_expr: str | None = _key(
        "ignore-insert-value-expr", EVENT_FILTER, None, "SQL expression", checks.expression,
        "leave out an INSERT whose new row makes it 1")
    ignore_update_new_value_expr: str | None = _key(
        "ignore-update-new-value-expr", EVENT_FILTER, None, "SQL expression", checks.expression,
        "leave out an UPDATE whose new row makes it 1")
    ignore_update_old_value_expr: str | None = _key(
        "ignore-update-old-value-expr", EVENT_FILTER, None, "SQL expression", checks.expression,
        "leave out an UPDATE whose old row makes it 1")
    ignore_delete_value_expr: str | None = _key(
        "ignore-delete-value-expr", EVENT_FILTER, None, "SQL expression", checks.expression,
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
        "case-sensitive", TOP, False, "boolean", checks.boolean,
        "whether table-filter rules and matchers match schema and table names case-sensitively")
    force_replicate: bool = _key(
        "force-replicate", TOP, False, "boolean", checks.boolean,
        "replicate tables without a valid index (primary key or NOT NULL unique key) too, matching whole rows")
    sql_mode: str = _key(
        "sql-mode", TOP, TIDB_DEFAULT_SQL_MODE, "comma-separated SQL modes", checks.sql_mode,
        "the SQL mode DDL statements are parsed in")
    error_stuck_seconds: int = _key(
        "changefeed-error-stuck-duration", TOP, DEFAULT_ERROR_STUCK_SECONDS, "Go duration, at least 30m",
        checks.stuck_duration, "how long a changefeed in warning may make no progress before it fails (⑤)",
        lambda seconds: checks.format_duration(seconds))
    gc_ttl_seconds: int = _key(
        "gc-ttl", TOP, DEFAULT_GC_TTL_SECONDS, "seconds, or a Go duration", checks.gc_ttl,
        "how long a stopped or failed changefeed holds its start; past it, it fails with ErrGCTTLExceeded (⑧)")
    rules: tuple[str, ...] = _key(
        "rules", FILTER, ("*.*",), "array of table-filter rules", checks.filter_rules,
        "the tables replicated: TiDB's table-filter syntax, the last match wins", _as_list)
    ignore_txn_start_ts: tuple[int, ...] = _key(
        "ignore-txn-start-ts", FILTER, (), "array of integers", checks.ts_list,
        "transactions to leave out by start ts (a binlog carries none: TiCDC's key, accepted)", _as_list)
    # a binlog carries no start ts: its transactions are named by commit ts or GTID instead
    ignore_txn_commit_ts: tuple[int, ...] = _key(
        "ignore-txn-commit-ts", FILTER, (), "array of integers", checks.ts_list,
        "transactions to leave out by commit ts", _as_list)
    ignore_txn_gtid: tuple[str, ...] = _key(
        "ignore-txn-gtid", FILTER, (), "array of GTIDs", checks.gtid_list,
        "transactions to leave out by GTID, e.g. ['0-1-42']", _as_list)
    event_filters: tuple[EventFilterRule, ...] = _key(
        "event-filters", FILTER, (), "array of tables", None,
        "the `[[filter.event-filters]]` rules, below", lambda rules: [r.to_dict() for r in rules])
    sink: SinkOptions = _key(
        "sink", TOP, SinkOptions(), "table", None, "the `[sink]` parameters, below",
        lambda options: options.to_dict())
    schedule: str | None = _key(
        "schedule", CDCFLOW, DEFAULT_SCHEDULE, "cron expression, Airflow preset, \"@binlog\" or \"none\"",
        checks.schedule,
        "when Airflow runs the changefeed's DAG: a 5-field cron, @continuous (back to back), @binlog (when the "
        "upstream's binlog moves past the checkpoint: an asset watched on the triggerer), @hourly, ..., "
        "or none (only when triggered)", lambda schedule: "none" if schedule is None else schedule)
    event_store: str | None = _key(
        "event-store", CDCFLOW, None, "path or URI", checks.optional_text,
        "where pull writes a cycle's events (Parquet); unset: events/ under CDCFLOW_HOME; on a cluster a URI "
        "every executor reaches (hdfs://, s3a://, file:///mnt/shared/...)")
    spark_master: str | None = _key(
        "spark-master", CDCFLOW, None, "Spark master URL", checks.optional_text,
        "run the stages on this master (spark://, yarn, k8s://, local[N]); in Airflow as spark-submit jobs")
    spark_remote: str | None = _key(
        "spark-remote", CDCFLOW, None, "Spark Connect URL", checks.connect_url,
        "run the stages in sessions on this Spark Connect server (sc://host:port); exclusive with spark-master")
    index_wait: str = _key(
        "index-wait", CDCFLOW, "deferrable", " or ".join(f'"{m}"' for m in INDEX_WAIT_MODES),
        checks.one_of(*INDEX_WAIT_MODES),
        "how the DAG's wait_index task waits for TiDB's index builds: deferred to the triggerer, or a sensor "
        "that reschedules itself")
    shuffle_partitions: int = _key(
        "shuffle-partitions", CDCFLOW, 4, "integer ≥ 1", checks.int_between(1),
        "Spark's shuffle partitions for the stages; verify's threads")
    pull_parallelism: int = _key(
        "pull-parallelism", CDCFLOW, 0, "integer 0-1024", checks.int_between(0, 1024),
        "the most ranges a large window's binlog is read in at once; 0: the machine's cores; 1: one process")
    pull_parallel_min_bytes: int = _key(
        "pull-parallel-min-bytes", CDCFLOW, 256 * 1024 * 1024, "integer ≥ 0 (bytes)", checks.int_between(0),
        "the binlog bytes from which a window is read in parallel ranges (with the compiled reader, the "
        "sequential read still won a 2-core cycle at 68 MiB)")
    fast_path_max_events: int = _key(
        "fast-path-max-events", CDCFLOW, 1_000_000, "integer ≥ 0", checks.int_between(0),
        "a DAG run on Spark Connect runs filter, barrier and apply in its pull task for a window of at most "
        "this many events (the fast path); 0: a task per stage always")
    follow_seconds: int = _key(
        "follow-seconds", CDCFLOW, 0, "integer 0-86400 (seconds)", checks.int_between(0, 86_400),
        "a DAG run of mode catch-up follows the binlog this long after its cycle: cycles back to back in its "
        "follow task, each as soon as the binlog moves past the checkpoint (as `changefeed run --follow`); "
        "0: a run is one cycle")
    engine: str = _key(
        "engine", CDCFLOW, "auto", " or ".join(f'"{m}"' for m in ENGINES), checks.one_of(*ENGINES),
        "where the row steps of filter, barrier and apply run: auto, in the stage's process for a window and "
        "segments within the local-* bounds and in Spark tasks beyond them; local, in the stage's process "
        "whatever the rows (a segment over local-segment-bytes still in Spark); spark, in Spark tasks always "
        "(CDCFLOW_ENGINE overrides it)")
    local_max_events: int = _key(
        "local-max-events", CDCFLOW, 20_000_000, "integer ≥ 0", checks.int_between(0),
        "engine auto: filter and barrier read a window of at most this many events in their own process, a "
        "batch at a time")
    local_segment_rows: int = _key(
        "local-segment-rows", CDCFLOW, 500_000, "integer ≥ 0", checks.int_between(0),
        "engine auto: apply writes a segment of at most this many row changes from its own process; a larger "
        "one of a window read there in slices of whole transactions within this bound. Where Spark writes a "
        "segment within this bound and local-segment-bytes, it writes it in one task")
    local_segment_bytes: int = _key(
        "local-segment-bytes", CDCFLOW, 128 * 1024 * 1024, "integer ≥ 0 (bytes)", checks.int_between(0),
        "engine auto and local: apply writes a segment (or a slice of one) of at most this many bytes of row "
        "images from its own process (it holds one and reads one more ahead): the memory bound. A window within it "
        "and local-segment-rows is kept in memory by pull instead of written (with filter's copy of it) for the "
        "stages after it in the same process; written where another process reads it")
    max_window_bytes: int = _key(
        "max-window-bytes", CDCFLOW, 1024 * 1024 * 1024, "integer ≥ 0 (bytes)", checks.int_between(0),
        "a cycle reads at most about this many binlog bytes (whole transactions), the next cycle the rest; "
        "0: up to the upstream's head")
    pull_batch_rows: int = _key(
        "pull-batch-rows", CDCFLOW, 50_000, "integer ≥ 1", checks.int_between(1),
        "the events pull holds before it writes them to the event store (or 32 MiB of them)")
    spark_driver_memory: str | None = _key(
        "spark-driver-memory", CDCFLOW, None, "JVM memory size (\"2g\", \"1536m\")", checks.jvm_memory,
        "the heap of a JVM cdcflow starts for its session (spark.driver.memory); unset: CDCFLOW_DRIVER_MEMORY, "
        "else 2g")
    snapshot_chunk_size: int = _key(
        "snapshot-chunk-size", CDCFLOW, 100000, "integer ≥ 1", checks.int_between(1),
        "upstream rows per copied chunk (create --snapshot, the DAG's mode snapshot)")
    snapshot_workers: int = _key(
        "snapshot-workers", CDCFLOW, 4, "integer 1-1024", checks.int_between(1, 1024),
        "chunks copied at once")
    table_copy_seconds: int = _key(
        "table-copy-seconds", CDCFLOW, 20, "integer ≥ 1", checks.int_between(1),
        "how long each cycle copies the rows of tables added to the running changefeed (add-tables, "
        "resync-tables) after its apply; the copy goes on in the next cycle, the other tables' lag grows by "
        "at most this much")
    snapshot_point: str = _key(
        "snapshot-point", CDCFLOW, "auto", "\"auto\", \"consistent-snapshot\" or \"ftwrl\"",
        checks.one_of("auto", "consistent-snapshot", "ftwrl"),
        "how the snapshot's consistent point is taken; auto: consistent-snapshot on MariaDB, ftwrl on MySQL")
    # online schema change tools (filter/online_ddl.py): DM's online-ddl, shadow-table-rules, trash-table-rules
    online_ddl: bool = _key(
        "online-ddl", CDCFLOW, True, "boolean", checks.boolean,
        "follow pt-online-schema-change's and gh-ost's shadow tables (DM's online-ddl)")
    shadow_table_rules: tuple[str, ...] = _key(
        "shadow-table-rules", CDCFLOW, (DEFAULT_SHADOW_TABLE_RULE,), "array of regular expressions", _name_rules,
        "names of the tools' shadow tables; the first group is the real table's name", _as_list)
    trash_table_rules: tuple[str, ...] = _key(
        "trash-table-rules", CDCFLOW, (DEFAULT_TRASH_TABLE_RULE,), "array of regular expressions", _name_rules,
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
