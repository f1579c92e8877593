"""apply: segment by segment, the rows (compacted, in parallel), then the DDL, then the checkpoint."""

from __future__ import annotations

import bisect
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress

import pyarrow as pa
import pyarrow.compute as pc
import pymysql
from msgspec.structs import replace

from cdcflow.core.errors import (
    DOWNSTREAM_UNREACHABLE,
    EXEC_DDL_FAILED,
    TABLE_NOT_EXISTS,
    CdcflowError,
)
from cdcflow.ddl import tidb_only
from cdcflow.ddl.tracker import lookup_key
from cdcflow.sink import connection
from cdcflow.sink.async_index import IndexDDL
from cdcflow.sink.collation_key import KeyFolder
from cdcflow.sink.compaction import KEYED_SCHEMA, keyed_changes
from cdcflow.sink.ddl_exec import execute_ddl
from cdcflow.sink.downstream_errors import is_retryable, is_timeout
from cdcflow.sink.downstream_tables import catalogue_key, generated_columns, key_indexed, table_exists
from cdcflow.sink.foreign_keys import ForeignKeys, applied_up_to, marker_id, write_group
from cdcflow.sink.partitions import COUNTS_SCHEMA, apply_partition, apply_partition_txns
from cdcflow.sink.row_writer import apply_ordered
from cdcflow.snapshot import deferred_indexes
from cdcflow.stages import contracts
from cdcflow.stages.barrier import with_segment
from cdcflow.stages.contracts import DdlEntry, IndexWait, PlannedDdl, PlannedSegment, Segment
from cdcflow.stages.cycle import Cycle, as_cdcflow_error
from cdcflow.stages.rows import kept_rows
from cdcflow.store import metastore

ROW_COLUMNS = ("schema", "table", "commit_ts", "seq", "op", "before", "after")
# A segment of at most this many row events is written from the driver, its rows fetched
# with those of the window's other small segments in one Spark job (_small_segments), up to
# SMALL_SEGMENTS_ROWS in all: a Spark job per segment cost 0.3-0.5 s, which over a thousand
# DDLs with rows between them was most of the cycle.
SMALL_SEGMENT_ROWS = 2_000
SMALL_SEGMENTS_ROWS = 50_000
# Changes written in commit order (keyless tables, tables foreign keys bind) reach this process
# a Spark partition at a time, which the JVM holds whole: a segment's are cut into range
# partitions of about this many rows, so a huge transaction never sits in the heap at once.
ORDERED_ROWS = 100_000
# the lease (an hour long) is renewed this often during apply, not at every segment
LEASE_RENEWAL_SECONDS = 30.0


def _key(keys: dict, conn, table: tuple[str, str], ts: int) -> tuple[list[str] | None, bool, dict]:
    """(the valid key, whether the tracked schema knows the table, the collations of the key's
    string columns): the key as the tracked schema has it for rows up to `ts` (the segment's
    barrier: no DDL changes a replicated table's key inside a segment); the downstream's
    catalogue where the tracker does not know the table or a key column's collation."""
    if table in keys:
        key, known, collations = lookup_key(keys[table], ts)
        if known:
            if None in collations.values():  # no clause named it: as the downstream created it
                down = catalogue_key(conn, *table)[1]
                collations = {c: coll or down.get(c) for c, coll in collations.items()}
            return key, True, collations
    key, collations = catalogue_key(conn, *table)
    return key, False, collations


def may_replay(cycle: Cycle, window: contracts.Window) -> bool:
    """Whether rows above the checkpoint may already be downstream, so that safe mode is
    needed whatever `safe-mode` says (TiCDC, too, writes safely for a while after a start):
    a backfill, a changefeed's first cycle (a snapshot loaded after start-ts may hold its
    rows), or a previous cycle that did not finish cleanly (it may have written rows)."""
    if window.replay_until:
        return True
    previous = [r for r in metastore.recent_runs(cycle.changefeed_id, 5) if r.run_id != cycle.run_id]
    return not previous or previous[0].status != "done"


def _write_in_spark(spark, rows_df, keys: dict, tables: int, folder: KeyFolder, by, order, passes,
                    workers: int) -> list[dict]:
    """A segment's keyed rows written by `workers` Spark partitions: the counts of each pass's."""
    from pyspark.sql import functions as F

    keyed_rows = rows_df
    if len(keys) < tables:
        keyed = spark.createDataFrame([k.split(".", 1) for k in keys], "schema string, table string")
        keyed_rows = rows_df.join(F.broadcast(keyed), ["schema", "table"], "left_semi")
    changes = (keyed_rows.select(*ROW_COLUMNS)
               .mapInArrow(lambda it: keyed_changes(it, keys, folder), KEYED_SCHEMA))
    ordered = changes.repartition(workers, *by).sortWithinPartitions(*order)
    if len(passes) > 1:
        from pyspark import StorageLevel

        # on local disk, not in the JVM heap: a segment may hold a huge transaction
        ordered = ordered.persist(StorageLevel.DISK_ONLY)
    counts = [r.asDict() for body in passes for r in ordered.mapInArrow(body, COUNTS_SCHEMA).collect()]
    if len(passes) > 1:
        ordered.unpersist()
    return counts


def _small_segments(rows, segments: list[Segment], checkpoint_ts: int) -> dict[int, pa.Table]:
    """The rows of the segments not applied yet that hold at most SMALL_SEGMENT_ROWS each
    (up to SMALL_SEGMENTS_ROWS in all), fetched in one Spark job: {segment index: its rows}."""
    from pyspark.sql import functions as F

    picked, total = [], 0
    for i, seg in enumerate(segments):
        if 0 < seg.rows <= SMALL_SEGMENT_ROWS and seg.hi > checkpoint_ts and total + seg.rows <= SMALL_SEGMENTS_ROWS:
            picked.append(i)
            total += seg.rows
    if not picked:
        return {}
    # the ts range they span first: Parquet skips the row groups outside it
    span = (F.col("commit_ts") > segments[picked[0]].lo) & (F.col("commit_ts") <= segments[picked[-1]].hi)
    fetched = (with_segment(rows.where(span).select(*ROW_COLUMNS), [s.hi for s in segments])
               .where(F.col("segment").isin(picked)).toArrow().sort_by("segment"))
    ids = fetched["segment"].to_pylist()
    out = {}
    for i in picked:
        a, b = bisect.bisect_left(ids, i), bisect.bisect_right(ids, i)
        if b > a:
            out[i] = fetched.slice(a, b - a)
    return out


def _write_here(local: pa.Table, keys: dict, folder: KeyFolder, by, order, passes, workers: int) -> list[dict]:
    """A small segment's keyed rows (already in this process: _small_segments) written from
    here, without a Spark job: spread over `workers` threads by the columns Spark partitions
    them by, each sorted as a Spark partition is and written by the same partition bodies."""
    names = pc.binary_join_element_wise(local["schema"], local["table"], ".")
    local = local.filter(pc.is_in(names, pa.array(list(keys), pa.string())))
    batches = list(keyed_changes(iter(local.select(list(ROW_COLUMNS)).to_batches()), keys, folder))
    if not batches:
        return []
    ordered = pa.Table.from_batches(batches).sort_by([(c, "ascending") for c in order])
    # crc32, not hash(): the same rows spread alike in every process (a launcher's results compare)
    spread = pa.array([zlib.crc32(repr(k).encode()) % workers for k in zip(*(ordered[c].to_pylist() for c in by))],
                      pa.int32())
    parts = [p for p in (ordered.filter(pc.equal(spread, w)) for w in range(workers)) if p.num_rows]
    counts = []
    with ThreadPoolExecutor(len(parts)) as pool:
        for body in passes:  # a pass ends in every part before the next begins, as a Spark job does
            for out in pool.map(lambda part, body=body: list(body(iter(part.to_batches()))), parts):
                counts += [r for b in out for r in b.to_pylist()]
    return counts


def _apply_rows(spark, cycle: Cycle, rows_df, tables: list[tuple[str, str]], keys_known: dict, conn, sink: dict,
                stats: contracts.ApplyResult, hi: int, foreign_keys: ForeignKeys, safe: bool = True,
                replay_until: int = 0, local: pa.Table | None = None, rows: int = 0) -> None:
    """Write one segment's rows (`rows` of them at most): in Spark tasks, or from this process
    when `local` holds them (a small segment)."""
    from pyspark.sql import functions as F

    opts = cycle.sink_options
    keys, collations, unkeyed = {}, {}, []
    for t in tables:
        k, known, colls = _key(keys_known, conn, t, hi)
        if k:
            keys[f"{t[0]}.{t[1]}"] = k
            collations[f"{t[0]}.{t[1]}"] = colls
        elif not table_exists(conn, *t):
            raise CdcflowError(
                f"table {t[0]}.{t[1]} does not exist downstream", code=TABLE_NOT_EXISTS,
                hint="the downstream must hold every replicated table as of the start-ts: load a snapshot, "
                     "or exclude the table with a filter rule",
            )
        elif known or cycle.config.force_replicate:
            # filter judged the rows of a table the tracker knows, and kept these (force-replicate)
            unkeyed.append(t)
        else:
            # The tracker does not know the table, so its key comes from the downstream's catalogue,
            # which filter cannot see (and which the DDLs run before this segment may change).
            cycle.log_event("rows skipped", table=f"{t[0]}.{t[1]}",
                        why="the tracked schema does not know the table, the downstream's has no valid index "
                            "(primary key or NOT NULL unique key), and force-replicate is false")
            stats.skipped_tables.append(f"{t[0]}.{t[1]}")
    # the columns the downstream computes, as it has them now: the DDLs before this segment ran
    generated = generated_columns(conn, tables)
    # tables bound by a foreign key that changes rows: in commit order, apart (sink.foreign_keys)
    group = foreign_keys.group(tables)
    bound = {t: keys.get(t) for t in group.tables if t in keys or tuple(t.split(".", 1)) in unkeyed}
    if bound:
        keys = {t: k for t, k in keys.items() if t not in bound}
        unkeyed = [t for t in unkeyed if f"{t[0]}.{t[1]}" not in bound]
    if keys:
        folder = KeyFolder(collations, sink)
        batch = opts.max_txn_row
        if opts.transaction_atomicity == "table":
            # a table's transactions stay whole and in commit order: one partition per table;
            # rows are REPLACEd (each transaction is atomic downstream, so a replay converges)
            by, order = ("schema", "table"), ("schema", "table", "commit_ts", "part", "key", "seq", "sub")
            passes = [lambda it: apply_partition_txns(it, sink, batch, keys, generated)]
        else:
            by, order = ("schema", "table", "part"), ("schema", "table", "part", "key", "commit_ts", "seq", "sub")
            indexed = key_indexed(conn, keys)
            passes = [lambda it, ph=ph: apply_partition(it, sink, batch, keys, ph, generated, indexed)
                      for ph in ([None] if safe else ["existing", "new"])]
        if local is not None:
            counts = _write_here(local, keys, folder, by, order, passes, max(1, opts.worker_count))
        else:
            counts = _write_in_spark(spark, rows_df, keys, len(tables), folder, by, order, passes,
                                     max(1, opts.worker_count))
        stats.rows_written += sum(r["rows"] for r in counts)
        stats.statements += sum(r["statements"] for r in counts)
        stats.workers = max(stats.workers or 0, len(counts) // len(passes))
        stats.rows_held = max([stats.rows_held, *(r["held"] for r in counts)])
        stats.upsert_fallbacks += sum(r["fallbacks"] for r in counts)
    for s, t in unkeyed:  # force-replicate: whole rows matched, in commit order
        changes = (_in_commit_order(rows_df.where((F.col("schema") == s) & (F.col("table") == t)), rows)
                   .select("op", "before", "after").toLocalIterator())
        stats.rows_written += apply_ordered(conn, s, t, changes, generated.get(f"{s}.{t}", frozenset()))
    if bound:
        _apply_bound(spark, cycle, rows_df, bound, group, generated, conn, stats, hi, safe, replay_until, rows)


def _in_commit_order(rows_df, rows: int):
    """`rows_df` (at most `rows` changes) in commit order, in range partitions of about
    ORDERED_ROWS changes each (toLocalIterator brings one at a time)."""
    parts = max(1, -(-rows // ORDERED_ROWS))
    return rows_df.repartitionByRange(parts, "commit_ts", "seq").sortWithinPartitions("commit_ts", "seq")


def _apply_bound(spark, cycle: Cycle, rows_df, bound: dict, group, generated: dict, conn,
                 stats: contracts.ApplyResult, hi: int, safe: bool, replay_until: int, seg_rows: int) -> None:
    """The segment's changes to the tables its foreign keys bind: in commit order across them, in
    one downstream transaction, after what the marker says is there already (a marker at or below
    a backfill's replay_until is the earlier pass's: those rows are written again)."""
    from pyspark.sql import functions as F

    marker = marker_id(cycle.changefeed_id, cycle.spec.created_at)
    done = applied_up_to(conn, marker)
    if done >= hi and done > replay_until:
        return
    names = spark.createDataFrame([t.split(".", 1) for t in bound], "schema string, table string")
    rows = rows_df.join(F.broadcast(names), ["schema", "table"], "left_semi")
    if done > replay_until:
        rows = rows.where(F.col("commit_ts") > done)
    changes = (r.asDict() for r in _in_commit_order(rows, seg_rows)
               .select("schema", "table", "op", "before", "after", "fk_checks_off").toLocalIterator())
    stats.rows_written += write_group(conn, changes, bound, generated, group, safe, marker, hi)


def _run_ddl(cycle: Cycle, index_ddl: IndexDDL, flavour: str, ddl: DdlEntry, replay: bool,
             checkpoint: tuple[int, dict] | None) -> str:
    """Run one DDL downstream: the operator's replacement if there is one, else the statement in
    the downstream's dialect (tidb_only_ddl; raises before anything runs where it has none).
    The DDL is marked in flight first (with `checkpoint`, the one past the DDL before it, not
    written yet): a rerun after a crash then tolerates that it ran."""
    statements = ddl.replacement
    # an online schema change's cut-over runs its ALTERs in order, each as any DDL
    queries = [] if statements else [tidb_only.for_downstream(replace(ddl, query=q), flavour, cycle.changefeed_id)
                                     for q in ddl.statements or [ddl.query]]
    metastore.mark_ddl_in_flight(cycle.changefeed_id, ddl.commit_ts, checkpoint)
    ran = 0
    try:
        if statements:
            for q in statements:
                execute_ddl(index_ddl.conn, q, ddl.default_schema, ddl.sql_mode, replay, ddl.session,
                            index_ddl.ddl_timeout)
                ran += 1
            return f"replaced by {len(statements)} statement(s) (replace-ddl)"
        outcomes = []
        for q in queries:
            outcomes.append(index_ddl.execute(replace(ddl, query=q), replay))
            ran += 1
        return ", ".join(outcomes)
    except pymysql.MySQLError as e:
        if ran == 0 and not replay and not is_retryable(e):
            # the server refused it, so it did not run: a rerun is no replay, and must not take
            # the same refusal ("exists already") for its own earlier success
            metastore.mark_ddl_in_flight(cycle.changefeed_id, None)
        raise


def _planned(seg: Segment, lo: int) -> PlannedSegment:
    """What a dry run reports of one segment: its rows and tables, then the DDL that closes it."""
    ddl = seg.ddl
    return PlannedSegment(
        rows=seg.rows if lo < seg.hi else 0, tables=[".".join(t) for t in seg.tables],
        ddl=None if ddl is None else PlannedDdl(commit_ts=ddl.commit_ts, query=ddl.query,
                                                error=ddl.error.message if ddl.error else None))


def _changed(stats: contracts.ApplyResult, tables) -> None:
    """Add the tables that got rows or a DDL to stats.changed_tables (a skipped table got nothing)."""
    names = {f"{s}.{t}" for s, t in tables} - set(stats.skipped_tables)
    stats.changed_tables = sorted(set(stats.changed_tables) | names)


def apply(spark, cycle: Cycle) -> contracts.ApplyResult:
    from pyspark.sql import functions as F

    run = cycle.run()
    window = contracts.WINDOW.read(cycle.folder)
    segments = contracts.SEGMENTS.read(cycle.folder)
    keys_known = {(k.schema, k.table): k.ranges for k in contracts.KEYS.read(cycle.folder)}
    sink = cycle.sink.connection_args(cycle.sink_options)
    rows = kept_rows(spark, cycle)
    stats = contracts.ApplyResult(safe_mode=cycle.sink_options.safe_mode or may_replay(cycle, window))
    t0 = time.time()
    try:
        conn = connection.connect(sink)
    except Exception as e:
        raise CdcflowError(f"cannot connect to the downstream {cycle.sink.redacted()}: {e}",
                           code=DOWNSTREAM_UNREACHABLE,
                           hint="the checkpoint has not moved; the next cycle retries") from None
    # the checkpoint past the last DDL run, written with the next DDL's in-flight mark (one
    # metadata-store commit per DDL in a run of DDLs), or before anything else moves it
    pending: tuple[int, dict] | None = None

    def write_pending() -> None:
        nonlocal pending
        if pending is not None:
            metastore.advance_checkpoint(cycle.changefeed_id, *pending)
            pending = None

    try:
        index_ddl = IndexDDL.open(cycle.changefeed_id, conn, sink, cycle.sink.scheme,
                                  cycle.sink_options.ddl_read_timeout(), cycle.log_event)
        flavour = tidb_only.flavour(index_ddl.kind, index_ddl.version)
        small = {} if run.dry_run else _small_segments(rows, segments, cycle.feed().checkpoint_ts)
        renewed = 0.0
        foreign_keys = ForeignKeys(conn)
        for i, seg in enumerate(segments):
            feed = cycle.feed()
            checkpoint_ts = max(feed.checkpoint_ts, pending[0] if pending else 0)
            if time.time() - renewed >= LEASE_RENEWAL_SECONDS:
                cycle.keep_lease("apply")
                renewed = time.time()
            # a dry run moves no checkpoint: it plans every segment of its window
            lo = seg.lo if run.dry_run else max(seg.lo, checkpoint_ts)
            wrote = bool(seg.rows and lo < seg.hi)
            if wrote:
                write_pending()  # the DDL before these rows is past before they are written
                seg_rows = rows.where((F.col("commit_ts") > lo) & (F.col("commit_ts") <= seg.hi))
                stats.rows_in += seg.rows
                if not run.dry_run:
                    local = small.get(i)
                    if local is not None:
                        local = local.filter(pc.greater(local["commit_ts"], lo))
                    try:
                        _apply_rows(spark, cycle, seg_rows, seg.tables, keys_known, conn, sink, stats, seg.hi,
                                    foreign_keys, stats.safe_mode, window.replay_until, local, seg.rows)
                    except CdcflowError as e:
                        raise e.with_context(ts=seg.hi)
                    except Exception as e:  # noqa: BLE001 - a row statement the downstream refused
                        raise _refused_rows(e, cycle.changefeed_id, lo, seg.hi) from e
                    _changed(stats, seg.tables)
            if run.dry_run:
                stats.would_apply = [*(stats.would_apply or []), _planned(seg, lo)]
                continue
            ddl = seg.ddl
            if ddl is None:
                write_pending()
                metastore.advance_checkpoint(cycle.changefeed_id, seg.hi, seg.pos_after.to_dict())
                continue
            if checkpoint_ts >= ddl.commit_ts:
                continue  # applied by an earlier attempt of this cycle

            # The checkpoint reaches the barrier before the DDL runs (TiCDC's DDL handling), so a crash
            # after the DDL never replays older rows against the new table structure; it is written
            # with the DDL's in-flight mark.  Where no row of the segment was written (a run of DDLs),
            # the checkpoint at the segment's start is already past every row below the DDL.
            in_flight = feed.ddl_in_flight_ts
            if wrote or checkpoint_ts < seg.lo or ddl.error:
                pending = (ddl.commit_ts - 1, seg.pos_before.to_dict())
                if checkpoint_ts < ddl.commit_ts - 1:
                    in_flight = None  # moving the checkpoint clears the mark (a mark from before a rewind)
            if ddl.error:
                write_pending()
                e = ddl.error
                raise CdcflowError(e.message, ts=ddl.commit_ts, statement=ddl.query, code=e.code,
                                   retryable=e.retryable, hint=e.hint)
            if ddl.schema_only:  # not run downstream; only splits the segments
                pending = (ddl.commit_ts, seg.pos_after.to_dict())
                continue
            # a replay: the DDL ran before a crash, or before a backfill moved the checkpoint back
            replay = in_flight == ddl.commit_ts or ddl.commit_ts <= window.replay_until
            waits = index_ddl.blockers(ddl, replay)
            if waits:  # an index TiDB still builds on a table this DDL touches: wait_index takes over
                write_pending()
                stats.index_wait = IndexWait(commit_ts=ddl.commit_ts, jobs=[j.job_id for j in waits])
                cycle.log_event("stopped at barrier", commit_ts=ddl.commit_ts, name=ddl.name,
                            waiting_for=[j.what() for j in waits])
                break
            try:
                outcome = _run_ddl(cycle, index_ddl, flavour, ddl, replay, pending)
            except CdcflowError as e:
                raise e.with_context(ts=ddl.commit_ts)
            except Exception as e:
                if is_timeout(e):
                    raise _ddl_timed_out(cycle, ddl) from None
                raise _ddl_failed(e, cycle.changefeed_id, ddl) from None
            foreign_keys.ddl_ran(ddl.type, ddl.replacement or ddl.statements or [ddl.query], ddl.tables)
            pending = (ddl.commit_ts, seg.pos_after.to_dict())
            stats.ddl_applied += 1
            _changed(stats, ddl.tables)
            cycle.log_event("ddl applied", commit_ts=ddl.commit_ts, name=ddl.name, outcome=outcome)
        write_pending()
    except BaseException:
        with suppress(Exception):  # the DDL that ran is past, whatever failed after it; that error is the one
            write_pending()
        raise
    finally:
        conn.close()
    if not stats.index_wait:  # the window applied whole: a snapshot's deferred indexes may follow it
        snapshot_indexes(cycle)
    secs = time.time() - t0
    stats.apply_seconds = round(secs, 3)
    stats.rows_per_second = round(stats.rows_in / secs, 1) if secs > 0 else None
    feed = cycle.feed()
    cycle.log_event("applied", **contracts.plain(stats), checkpoint_before=run.start_ts,
                checkpoint_after=feed.checkpoint_ts)
    return stats


def snapshot_indexes(cycle: Cycle) -> bool:
    """A snapshot's deferred indexes, built once the cycle's checkpoint is past the copy's last
    read (snapshot/deferred_indexes.py); a dry run builds nothing."""
    if cycle.run().dry_run:
        return False
    feed = cycle.feed()
    return deferred_indexes.after_apply(cycle.changefeed_id, feed.checkpoint_pos, feed.checkpoint_ts,
                                        cycle.sink.connection_args(cycle.sink_options), cycle.sink.scheme,
                                        lambda: cycle.keep_lease("apply"), cycle.log_event)


def _ddl_timed_out(cycle: Cycle, ddl: DdlEntry) -> CdcflowError:
    """A DDL that outlasted ddl-timeout: retryable, and marked in flight, so that if the downstream
    was only slow (a long ADD INDEX) the next cycle takes the statement's own completion for a replay."""
    return CdcflowError(
        f"the downstream did not finish DDL {ddl.name} within ddl-timeout {cycle.sink_options.ddl_timeout}",
        ts=ddl.commit_ts, statement=ddl.query, code=DOWNSTREAM_UNREACHABLE, retryable=True,
        hint="the checkpoint stays just below this DDL and the next cycle retries it after the backoff; check the "
             "downstream runs and is not frozen, and raise ddl-timeout on the sink URI if the statement "
             "legitimately takes longer")


def _ddl_failed(e: Exception, changefeed_id: str, ddl: DdlEntry) -> CdcflowError:
    """A DDL that did not run downstream.  A refusal (a statement the downstream cannot run) is
    the operator's to fix or skip; a lost connection, a lock wait or a deadlock is not a
    refusal, and skipping the DDL for it would lose it: the next cycle runs it again."""
    if is_retryable(e):
        return CdcflowError(
            f"DDL {ddl.name} did not complete on the downstream: {e}", ts=ddl.commit_ts, statement=ddl.query,
            code=EXEC_DDL_FAILED, retryable=True,
            hint="the downstream was lost or busy; the checkpoint is below this DDL and the next cycle runs it "
                 "again (a DDL that did run before the connection was lost is taken as a replay)")
    return CdcflowError(
        f"the downstream rejected DDL {ddl.name}: {e}", ts=ddl.commit_ts, statement=ddl.query,
        code=EXEC_DDL_FAILED, retryable=False,
        hint="fix the downstream so it accepts the statement, or skip it with "
             f"`cdcflow changefeed skip-ddl -c {changefeed_id} --commit-ts {ddl.commit_ts}`")


def _refused_rows(e: Exception, changefeed_id: str, lo: int, hi: int) -> CdcflowError:
    """The downstream's refusal of a row statement, placed in the window: a value error names
    its row's key and commit ts; any other (a duplicate key, a lock) names the commit ts range
    of the rows the failed statements were writing."""
    err = as_cdcflow_error(e, changefeed_id, "apply")
    if err.ts is None:
        err.message += f" (in the row changes committed in ({lo}, {hi}])"
    return err
