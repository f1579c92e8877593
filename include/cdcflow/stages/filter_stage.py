"""filter: the stage that asks the changefeed's Filter (filter.assembled) about the window.

It reads the window's events, writes ddl.json (each DDL's entry: kept, skipped or a failing
barrier), keys.json and the rows it kept.  DDL events are few, so they are classified in the
driver; row events stay in Spark and are kept by a join against the (small) set of tables
that pass.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from msgspec.structs import replace

from cdcflow.core.ddl_session import DdlSession
from cdcflow.core.errors import CdcflowError
from cdcflow.core.event import Event
from cdcflow.ddl.classify import classify
from cdcflow.ddl.shadow_log import ShadowLog
from cdcflow.ddl.tracker import disagreements
from cdcflow.filter.assembled import Filter
from cdcflow.filter import table_joins
from cdcflow.filter.row_rules import RowRules
from cdcflow.filter.system_versioning import period_spans
from cdcflow.source import gtid
from cdcflow.source.binlog import Position
from cdcflow.stages import contracts, rows
from cdcflow.stages.contracts import DdlEntry, DdlError, DdlLog, TableKeys
from cdcflow.stages.cycle import Cycle
from cdcflow.store import ddl_replacements, schema_versions, shadow_ddls, table_copies
from cdcflow.store.engine import transaction
from cdcflow.store.events import EVENT_SCHEMA, FIELDS


SKIPPED = "skipped by operator (skip-ddl)"


def gate_ddl(cycle: Cycle, ev: Event, flt: Filter, tracker, skipped: bool,
             replacement: list[str] | None = None, shadows: ShadowLog | None = None) -> DdlEntry:
    """The ddl.json entry of one DDL event: classified, applied to the tracked schema (whatever
    becomes of it downstream), then decided by the cycle's filter `flt` (built once per cycle);
    `keep` says whether it is a barrier.  `shadows`: what online schema change tools ran on
    their shadow tables (filter.online_ddl), added to here."""
    ts = ev.commit_ts
    # the mode the statement ran under, as the binlog recorded it; the config's sql-mode where
    # the source recorded none (TiCDC's DDL-replication doc)
    mode = flt.sql_mode(ev.sql_mode)
    entry = DdlEntry(
        commit_ts=ts, query=ev.ddl_query, default_schema=ev.ddl_schema, sql_mode=mode,
        start_pos=Position(ev.start_file, ev.start_pos, ev.gtid_position),
        end_pos=Position(ev.end_file, ev.end_pos, gtid.after(ev.gtid_position, ev.gtid)),
        session=DdlSession.of(ev),
    )
    if replacement is not None and not skipped:
        return _replaced(entry, replacement, tracker)
    try:
        info = classify(ev.ddl_query, ev.ddl_schema, mode)
        entry.type, entry.name, entry.sub_types = info.type, info.statement_name, list(info.sub_types)
        entry.tables = [(t.schema, t.table) for t in info.tables]
        if info.kind == "dml":
            return replace(entry, keep=False, why=flt.statement_rows(info))
        changes = tracker.apply(info, ev.ddl_query, mode, ts)
        if skipped:
            return replace(entry, keep=flt.key_changed(changes), schema_only=True, why=SKIPPED)
        step = flt.online_step(info, ev.ddl_query, mode, ts, shadows)
        if step is not None:
            return _online(entry, step, flt, changes, tracker)
        verdict = flt.decide_ddl(info, ev.ddl_query, mode, ts, changes, tracker.current)  # raises: a failing barrier
    except CdcflowError as e:
        if skipped:
            return replace(entry, keep=False, why=SKIPPED)
        # A DDL that breaks a rule is a barrier that fails: everything before it is still
        # applied, and the checkpoint stops just below it.
        hint = (e.hint or "").replace("<changefeed>", cycle.changefeed_id).replace("<ts>", str(ts))
        return replace(entry, keep=True, why=e.message, error=_error(e, hint))
    if verdict.error is not None:
        entry.error = _error(verdict.error, verdict.error.hint)
    entry.query, entry.notes, entry.why = verdict.query, verdict.notes, verdict.why
    if not verdict.keep and verdict.schema_only:
        # not run downstream, but a replicated table's key changed: rows on either side of it
        # must land in different segments
        return replace(entry, keep=True, schema_only=True)
    return replace(entry, keep=verdict.keep)


def _online(entry: DdlEntry, step, flt: Filter, changes, tracker) -> DdlEntry:
    """A DDL on an online schema change tool's tables: not run, or at the cut-over the ALTERs
    recorded on the shadow table, run on the real table (raises a rule they break)."""
    if step.error is not None:
        raise step.error
    if not step.cut_over:
        return replace(entry, keep=False, why=step.why)
    cut = flt.decide_cut_over(step, entry.default_schema, entry.sql_mode, entry.commit_ts, changes, tracker.current)
    if cut.error is not None:
        raise cut.error
    if not cut.statements:  # the real table is filtered out, or its ALTERs ignored
        return replace(entry, keep=flt.key_changed(changes), schema_only=True, why=cut.why, notes=cut.notes)
    return replace(entry, keep=True, why=cut.why, notes=cut.notes, query="; ".join(cut.statements),
                   statements=cut.statements, name=cut.infos[0].statement_name, type=cut.infos[0].type,
                   sub_types=sorted({s for i in cut.infos for s in i.sub_types}),
                   tables=list(dict.fromkeys((t.schema, t.table) for i in cut.infos for t in i.tables)))


def _error(e: CdcflowError, hint: str | None) -> DdlError:
    return DdlError(message=e.message, code=e.code, retryable=e.retryable, hint=hint)


def _replaced(entry: DdlEntry, statements: list[str], tracker) -> DdlEntry:
    """An operator replaced this DDL (replace-ddl): the statements run downstream instead, and
    no rule decides on it.  The tracker follows the original, or the replacement where the
    original cannot be read (see store.ddl_replacements)."""
    ts, schema, mode = entry.commit_ts, entry.default_schema, entry.sql_mode
    try:
        info = classify(entry.query, schema, mode)
        entry.name, entry.tables = info.statement_name, [(t.schema, t.table) for t in info.tables]
        tracker.apply(info, entry.query, mode, ts)
    except CdcflowError:
        for q in statements:
            try:
                info = classify(q, schema, mode)
            except CdcflowError:
                continue
            entry.tables += [(t.schema, t.table) for t in info.tables]
            tracker.apply(info, q, mode, ts)
    return replace(entry, replacement=statements, keep=True, why="replaced by operator (replace-ddl)")


# What filter reads of a window besides the rows it keeps: each a step over a batch of the
# window's events and what the driver makes of the steps' outputs (rows.window_map), the same
# code whether the batches are read here or in Spark's tasks.

_NARROW = [c for c in FIELDS if c not in ("before", "after")]  # a DDL event carries no row image
_NARROW_SCHEMA = pa.schema([EVENT_SCHEMA.field(c) for c in _NARROW])
_LATEST = pa.schema([("schema", pa.string()), ("table", pa.string()), ("pk", pa.string()), ("commit_ts", pa.int64())])
_KEYS_SEEN = pa.schema([*_LATEST, ("first_ts", pa.int64())])  # the latest step's: each key's first commit ts too
_SAMPLES = pa.schema([*_LATEST, ("image", pa.string())])


def _ddl_events(cycle: Cycle, window: contracts.Window) -> list[Event]:
    """The window's DDL events, in commit order; the wide columns are not read.  Read by this
    process with pyarrow wherever the row steps run, as rows.has_rows reads: Parquet's
    statistics of `op` leave out every row group without a DDL, so only the few that hold one
    are read, while a Spark job for them cost 0.5 s of a cycle forced to Spark."""
    scan = rows.window_events_arrow(cycle, window, rows.Wanted(ddl=True).arrow(), _NARROW)
    found = pa.Table.from_batches(scan.to_batches(), schema=_NARROW_SCHEMA).to_pylist()
    # few: sorted here, which spares Spark a sampling job for the range partitioning of a sort
    return sorted((Event(**r) for r in found), key=lambda e: (e.commit_ts, e.seq))


def _latest_of(table: pa.Table) -> pa.Table:
    """(schema, table, binlog key, the latest commit ts, the first) of row events (_KEYS_SEEN),
    or of such rows (the batches' outputs, whose first ts are taken as the first)."""
    first = "first_ts" if "first_ts" in table.column_names else "commit_ts"
    found = table.group_by(["schema", "table", "pk"]).aggregate([("commit_ts", "max"), (first, "min")])
    return found.rename_columns({"commit_ts_max": "commit_ts", f"{first}_min": "first_ts"})


def _latest(spark, cycle: Cycle, window: contracts.Window) -> tuple[list[tuple], dict]:
    """(schema, table, binlog key, commit ts of its latest row change) of the window's row
    events, and per table the commit ts of its first and last row change, from the narrow
    columns alone: each batch's latest, then the latest of those."""
    parts = rows.window_map(spark, cycle, window, rows.ROW_EVENTS, _LATEST.names,
                            lambda b: rows.as_batch(_latest_of(pa.Table.from_batches([b])), _KEYS_SEEN),
                            _KEYS_SEEN)
    found = _latest_of(parts)
    spans = found.group_by(["schema", "table"]).aggregate([("first_ts", "min"), ("commit_ts", "max")])
    return (list(zip(*(found[c].to_pylist() for c in _LATEST.names))),
            {(s, t): (lo, hi) for s, t, lo, hi in zip(*(spans[c].to_pylist() for c in spans.column_names))})


def _first_images(table: pa.Table) -> pa.Table:
    """One image per (schema, table, binlog key, commit ts): the first, in the batches' order."""
    found = table.group_by(_LATEST.names, use_threads=False).aggregate([("image", "first")])
    return found.rename_columns({"image_first": "image"})


def _sample_of(batch) -> pa.RecordBatch:
    t = pa.Table.from_batches([batch])
    return rows.as_batch(_first_images(t.append_column("image", pc.coalesce(t["after"], t["before"]))), _SAMPLES)


def _latest_images(spark, cycle: Cycle, window: contracts.Window, latest: list[tuple]) -> list[tuple]:
    """The schema-drift check's samples (tracker.disagreements): for each (schema, table, binlog
    key, latest commit ts) of `latest`, one row image of that transaction.  Only the row groups
    holding those commit ts are read (Parquet's statistics), and one image per group comes back."""
    wanted = set(latest)
    if not wanted:
        return []
    stamps = tuple(sorted({w[3] for w in wanted}))
    parts = rows.window_map(spark, cycle, window, rows.Wanted(ddl=False, stamps=stamps),
                            (*_LATEST.names, "before", "after"), _sample_of, _SAMPLES)
    found = _first_images(parts)
    images = zip(*(found[c].to_pylist() for c in _SAMPLES.names))
    return [(s, t, ts, pk, image) for s, t, pk, ts, image in images if (s, t, pk, ts) in wanted]


def _with_rows(no_key: dict, seen: dict) -> dict:
    """The spans of `no_key` ((lo, hi] commit ts spans per table, hi None: open) that may hold a
    row of their table: those meeting the commit ts of its first and last row change (`seen`).
    A table created or dropped inside the window has no valid key where it does not exist (the
    tracker's None), and no row there: such a span drops nothing, and reading it as a rule
    made filter rewrite the whole window (a copy) to drop none, and log rows skipped that were
    never there."""
    out = {}
    for t, spans in no_key.items():
        first, last = seen.get(t, (None, None))
        kept = [sp for sp in spans if first is not None and last > sp[0] and (sp[1] is None or first <= sp[1])]
        if kept:
            out[t] = kept
    return out


def _row_rules(cycle: Cycle, window: contracts.Window, flt: Filter, tracker, tables, keep_tables, joins,
               ranges: dict, seen: dict) -> RowRules:
    """What filter.row_rules needs to know of this window, decided here once, and logged.
    `ranges`: each kept table's valid key over the window (SchemaTracker.key_ranges); `seen`:
    the commit ts of each table's first and last row change in it."""
    lo, hi = window.start_ts, window.pulled.resolved_ts
    joining = {t: p for t, p in joins.items() if t in keep_tables and (p is None or window.start_pos.file is None
                                                                         or window.start_pos.key() < p)}
    if joining:
        cycle.log_event("rows skipped", tables=sorted(f"{s}.{t}" for s, t in joining),
                        why="before the table's join point: its copy holds them")
    ignored_ops = flt.ignored_ops(keep_tables)
    if ignored_ops:
        cycle.log_event("rows ignored by event filter", kinds=[f"{s}.{t} {op}" for s, t, op in ignored_ops])
    values = flt.value_tests(tracker, lo, hi, cycle.source.connect, cycle.changefeed_id, keep_tables,
                             lambda s, t, a, b: rows.has_rows(cycle, window, s, t, a, b))
    if values:
        cycle.log_event("rows tested by value expressions", tables=sorted({f"{v.schema}.{v.table}" for v in values}))
    no_key = _with_rows(flt.ineligible(ranges), seen)
    for (s, t), spans in no_key.items():
        cycle.log_event("rows skipped", table=f"{s}.{t}", commit_ts_ranges=spans,
                    why="no valid index (primary key or NOT NULL unique key) and force-replicate is false")
    # a versioned table's rows as a replica writes them, before any rule reads their op or images
    periods = period_spans({t: tracker.period_ranges(*t, lo, hi) for t in keep_tables})
    return RowRules(tables=None if len(keep_tables) == len(tables) else frozenset(keep_tables), joins=joining,
                    periods=periods, ignored_ops=tuple(ignored_ops), values=tuple(values), ineligible=no_key)


def _gate_ddls(cycle: Cycle, window: contracts.Window, flt: Filter, joins: dict):
    """Each of the window's DDLs gated (gate_ddl), from the schema versions and shadow marks the
    store holds, and those brought up to date in the store.  Returns (kept, skipped, tracker)."""
    feed = cycle.feed()
    kept_ddl, skipped_ddl = [], []
    tracker = schema_versions.load(cycle.changefeed_id)
    versions_gone = tracker.gc(feed.checkpoint_ts)
    tracker.rewind(window.start_ts)
    shadows = shadow_ddls.load(cycle.changefeed_id)
    marks_gone = shadows.gc(feed.checkpoint_ts)
    shadows.rewind(window.start_ts)
    operator_skips = set(feed.skip_ddl)
    replaced = ddl_replacements.load(cycle.changefeed_id, window.start_ts)
    for ev in _ddl_events(cycle, window):
        entry = gate_ddl(cycle, ev, flt, tracker, skipped=ev.commit_ts in operator_skips,
                         replacement=replaced.get(ev.commit_ts), shadows=shadows)
        held = entry.keep and not entry.schema_only and table_joins.ddl_before_join(
            joins, entry.tables, entry.start_pos.key(), flt.replicates_rows)
        if held:  # kept as a barrier only: the rows on either side of it stay apart
            entry = replace(entry, schema_only=True, error=None, why=held)
        (kept_ddl if entry.keep else skipped_ddl).append(entry)
        cycle.log_event("ddl kept" if entry.keep else "ddl skipped", commit_ts=ev.commit_ts, name=entry.name,
                    why=entry.why)
    # what the checkpoint left behind and what this window's DDLs made, in one commit (a filter
    # that fails before it leaves the versions and marks behind the checkpoint to the next one)
    with transaction() as c:
        schema_versions.forget(cycle.changefeed_id, versions_gone, conn=c)
        schema_versions.save(cycle.changefeed_id, tracker.added, conn=c)
        shadow_ddls.forget(cycle.changefeed_id, marks_gone, conn=c)
        shadow_ddls.save(cycle.changefeed_id, shadows, window.start_ts, conn=c)
    return kept_ddl, skipped_ddl, tracker


def filter_events(spark, cycle: Cycle) -> contracts.FilterResult:
    window = contracts.WINDOW.read(cycle.folder)
    flt = Filter.build(cycle.config)
    joins = table_copies.joins(cycle.changefeed_id)  # tables joining with a copy (add-tables, resync-tables)
    kept_ddl, skipped_ddl, tracker = _gate_ddls(cycle, window, flt, joins)

    # the tables, and per table and binlog key the commit ts of its latest row change, from
    # the narrow columns alone: the row images are read only for the schema-drift check's samples
    latest, seen = _latest(spark, cycle, window)
    tables = sorted({(s, t) for s, t, _pk, _ts in latest})
    keep_tables = [t for t in tables if flt.replicates_rows(*t)]
    shadow_tables = [f"{s}.{t}" for s, t in tables if flt.match_table(s, t) and (s, t) not in keep_tables]
    if shadow_tables:
        cycle.log_event("rows skipped", tables=shadow_tables,
                        why="shadow or trash tables of an online schema change (online-ddl)")
    ranges = {t: tracker.key_ranges(*t, window.start_ts, window.pulled.resolved_ts) for t in keep_tables}
    rules = _row_rules(cycle, window, flt, tracker, tables, keep_tables, joins, ranges, seen)
    contracts.KEYS.write(cycle.folder, [TableKeys(schema=s, table=t, ranges=rs) for (s, t), rs in ranges.items()])
    kept_set = set(keep_tables)
    kept_latest = [r for r in latest if (r[0], r[1]) in kept_set]
    for note in disagreements(tracker, _latest_images(spark, cycle, window, kept_latest)):
        cycle.log_event("schema drift", detail=note,
                    hint="keys follow the tracked schema; if it is wrong, re-create the changefeed so a new "
                         "catalogue snapshot is taken")
    copied = rows.copy_kept(spark, cycle, window, rules)
    named = [contracts.SkippedDdl(commit_ts=e.commit_ts, statement=e.query, why=e.why)
             for e in skipped_ddl[:contracts.SKIPPED_DDL_KEPT]]
    counts = contracts.FilterResult(kept_ddl=len(kept_ddl), skipped_ddl=len(skipped_ddl), tables=len(tables),
                                    kept_tables=len(keep_tables), skipped=named, rows_copied=copied,
                                    ran_in=cycle.engine.place(rows.read_in_process(cycle, window)))
    contracts.DDLS.write(cycle.folder, DdlLog(kept=kept_ddl, skipped=skipped_ddl))
    cycle.log_event("filtered", **{k: v for k, v in contracts.plain(counts).items() if k != "skipped"},
                dropped_tables=sorted(f"{s}.{t}" for s, t in set(tables) - set(keep_tables)))
    return counts
