"""apply: the barrier loop.  Segment by segment: its rows (sink.row_sink), then the checkpoint
reaches the barrier, the DDL there runs (sink.ddl_sink), and the checkpoint moves past it."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import suppress

from cdcflow.core.errors import CdcflowError
from cdcflow.ddl import tidb_only
from cdcflow.sink.ddl_sink import DdlSink
from cdcflow.sink.foreign_keys import marker_id
from cdcflow.sink.row_sink import Held, RowSink, Written
from cdcflow.sink.table_keys import by_table
from cdcflow.snapshot import deferred_indexes
from cdcflow.spark.lazy import Lazy
from cdcflow.stages import contracts
from cdcflow.stages.contracts import IndexWait, PlannedDdl, PlannedSegment, Segment
from cdcflow.stages.cycle import Cycle
from cdcflow.stages.held_rows import HeldRows, let_go
from cdcflow.stages.rows import kept_rows
from cdcflow.store import metastore, table_copies

# the lease (an hour long) is renewed this often during apply, not at every segment
LEASE_RENEWAL_SECONDS = 30.0


def may_replay(cycle: Cycle, window: contracts.Window) -> bool:
    """Whether rows above the checkpoint may already be downstream, so that safe mode is
    needed whatever `safe-mode` says (TiCDC, too, writes safely for a while after a start):
    a backfill, a changefeed's first cycle (a snapshot loaded after start-ts may hold its
    rows), a table joining with its copy (snapshot/table_join.py), or a previous cycle that did
    not finish cleanly (it may have written rows)."""
    if window.replay_until or table_copies.in_safe_mode(cycle.changefeed_id):
        return True
    previous = [r for r in metastore.recent_runs(cycle.changefeed_id, 5) if r.run_id != cycle.run_id]
    return not previous or previous[0].status != "done"


def apply(spark, cycle: Cycle) -> contracts.ApplyResult:
    run, window = cycle.run(), contracts.WINDOW.read(cycle.folder)
    segments = contracts.SEGMENTS.read(cycle.folder)
    rows = Lazy(lambda: kept_rows(spark, cycle))  # a plan only where Spark writes a segment
    stats = contracts.ApplyResult(safe_mode=cycle.sink_options.safe_mode or may_replay(cycle, window))
    t0 = time.time()
    ddl_sink = DdlSink.open(cycle.changefeed_id, cycle.sink, cycle.sink_options, cycle.log_event)
    try:
        keys_known = {(k.schema, k.table): k.ranges for k in contracts.KEYS.read(cycle.folder)}
        # the rows go on the DDL sink's session: the catalogue they are keyed by is the one its DDLs left
        row_sink = RowSink(spark, ddl_sink.conn, ddl_sink.args, cycle.sink_options,
                           keys_known, changefeed_id=cycle.changefeed_id,
                           force_replicate=cycle.config.force_replicate,
                           marker=marker_id(cycle.changefeed_id, cycle.spec.created_at), safe=stats.safe_mode,
                           replay_until=window.replay_until, event=cycle.log_event,
                           pulled_keys=by_table(contracts.KEY_SPANS.read(cycle.folder))
                           if cycle.folder.exists(contracts.KEY_SPANS.name) else None,
                           tidb=ddl_sink.flavour == tidb_only.TIDB)
        held = HeldRows(cycle, [] if run.dry_run else segments, cycle.feed().checkpoint_ts, row_sink.spread_ahead)
        try:
            _Barriers(cycle, window, ddl_sink, row_sink, stats, run.dry_run).run(segments, rows, held)
        finally:
            held.close()
            row_sink.close()
    finally:
        ddl_sink.close()
    if not stats.index_wait:  # the window applied whole: a snapshot's deferred indexes may follow it
        snapshot_indexes(cycle)
        copy_tables(cycle)
    secs = time.time() - t0
    stats.apply_seconds = round(secs, 3)
    stats.rows_per_second = round(stats.rows_in / secs, 1) if secs > 0 else None
    cycle.log_event("applied", **contracts.plain(stats), checkpoint_before=run.start_ts,
                    checkpoint_after=cycle.feed().checkpoint_ts)
    return stats


class _Barriers:
    """One walk over the window's segments.  `pending` is the checkpoint past the last DDL run, not
    written yet: it goes with the next DDL's in-flight mark (one metadata-store commit per DDL in
    a run of DDLs), or is written before anything else moves the checkpoint."""

    def __init__(self, cycle: Cycle, window: contracts.Window, ddl_sink: DdlSink, row_sink: RowSink,
                 stats: contracts.ApplyResult, dry_run: bool):
        self.cycle, self.window, self.ddls, self.rows, self.stats = cycle, window, ddl_sink, row_sink, stats
        self.dry_run, self.renewed = dry_run, 0.0
        self.pending: tuple[int, dict] | None = None

    def run(self, segments: list[Segment], rows, held: HeldRows) -> None:
        try:
            for i, seg in enumerate(segments):
                if not self.segment(seg, rows, lambda j, i=i: held.get((i, j))):
                    break
            self.write_pending()
        except BaseException:
            with suppress(Exception):  # the DDL that ran is past, whatever failed after it; that error is the one
                self.write_pending()
            raise

    def write_pending(self) -> None:
        if self.pending is not None:
            metastore.advance_checkpoint(self.cycle.changefeed_id, *self.pending)
            self.pending = None

    def keep_lease(self) -> None:
        if time.time() - self.renewed >= LEASE_RENEWAL_SECONDS:
            self.cycle.keep_lease("apply")
            self.renewed = time.time()

    def segment(self, seg: Segment, rows, held: Callable[[int], Held | None]) -> bool:
        """The segment's rows, then its DDL.  False: the loop stops at this barrier (wait_index).
        `held(j)`: the rows of its part j where this process writes them (HeldRows)."""
        feed = self.cycle.feed()
        checkpoint_ts = max(feed.checkpoint_ts, self.pending[0] if self.pending else 0)
        # a dry run moves no checkpoint: it plans every segment of its window
        lo = seg.lo if self.dry_run else max(seg.lo, checkpoint_ts)
        wrote = bool(seg.rows and lo < seg.hi)
        if wrote:
            self.write_pending()  # the DDL before these rows is past before they are written
            self.stats.rows_in += seg.rows
            if not self.dry_run:
                self.write_rows(seg, rows, held, lo)
        self.keep_lease()
        if self.dry_run:
            self.stats.would_apply = [*(self.stats.would_apply or []), _planned(seg, lo)]
            return True
        if seg.ddl is None:
            self.write_pending()
            metastore.advance_checkpoint(self.cycle.changefeed_id, seg.hi, seg.pos_after.to_dict())
            return True
        if checkpoint_ts >= seg.ddl.commit_ts:
            return True  # applied by an earlier attempt of this cycle
        return self.ddl(seg, feed.ddl_in_flight_ts, checkpoint_ts, wrote)

    def write_rows(self, seg: Segment, rows, held: Callable[[int], Held | None], lo: int) -> None:
        """The segment's rows above `lo`, part by part (its slices, in order, or the whole of it);
        the checkpoint stays at the segment's start until the DDL at its end (a replay writes
        every part again, safely: apply.may_replay)."""
        for j, part in enumerate(seg.parts()):
            if part.hi <= lo:
                continue
            self.keep_lease()
            rows_here = held(j)
            self._add(self.rows.write_segment(rows, seg.tables, max(part.lo, lo), part.hi, part.rows, rows_here))
            if rows_here is None:
                self.stats.segments_in_spark += 1
            else:
                self.stats.segments_in_process += 1
                rows_here = None  # written: its rows go before the next part is taken
                let_go()
        self._changed(seg.tables)

    def ddl(self, seg: Segment, in_flight: int | None, checkpoint_ts: int, wrote: bool) -> bool:
        ddl = seg.ddl
        # The checkpoint reaches the barrier before the DDL runs (TiCDC's DDL handling), so a crash
        # after the DDL never replays older rows against the new table structure; it is written
        # with the DDL's in-flight mark.  Where no row of the segment was written (a run of DDLs),
        # the checkpoint at the segment's start is already past every row below the DDL.
        if wrote or checkpoint_ts < seg.lo or ddl.error:
            self.pending = (ddl.commit_ts - 1, seg.pos_before.to_dict())
            if checkpoint_ts < ddl.commit_ts - 1:
                in_flight = None  # moving the checkpoint clears the mark (a mark from before a rewind)
        if ddl.error:  # a rule the DDL breaks (filter decided): its code says the class
            self.write_pending()
            e = ddl.error
            raise CdcflowError(e.message, ts=ddl.commit_ts, statement=ddl.query, code=e.code, hint=e.hint)
        if ddl.schema_only:  # not run downstream; only splits the segments
            self.pending = (ddl.commit_ts, seg.pos_after.to_dict())
            return True
        # a replay: the DDL ran before a crash, or before a backfill moved the checkpoint back, or
        # is in a table a copy created after it (a snapshot's, a joining table's: replay_until)
        replay = in_flight == ddl.commit_ts or ddl.commit_ts <= self.window.replay_until
        waits = self.ddls.blockers(ddl, replay)
        if waits:  # an index TiDB still builds on a table this DDL touches: wait_index takes over
            self.write_pending()
            self.stats.index_wait = IndexWait(commit_ts=ddl.commit_ts, jobs=[j.job_id for j in waits])
            self.cycle.log_event("stopped at barrier", commit_ts=ddl.commit_ts, name=ddl.name,
                                 waiting_for=[j.what() for j in waits])
            return False
        outcome = self.ddls.execute(ddl, replay, self.pending)  # writes `pending` with the in-flight mark
        self.rows.ddl_ran(ddl)
        self.pending = (ddl.commit_ts, seg.pos_after.to_dict())
        self.stats.ddl_applied += 1
        self._changed(ddl.tables)
        self.cycle.log_event("ddl applied", commit_ts=ddl.commit_ts, name=ddl.name, outcome=outcome)
        return True

    def _add(self, w: Written) -> None:
        """One segment's rows into the result."""
        s = self.stats
        s.rows_written += w.rows
        s.statements += w.statements
        s.upsert_fallbacks += w.upsert_fallbacks
        s.keyed_by_pull += w.keyed_by_pull
        s.keyed_here += w.keyed_here
        if w.workers is not None:
            s.workers = max(s.workers or 0, w.workers)
        s.rows_held = max(s.rows_held, w.rows_held)
        s.skipped_tables.extend(w.skipped_tables)

    def _changed(self, tables) -> None:
        """Add the tables that got rows or a DDL to changed_tables (a skipped table got nothing)."""
        names = {f"{s}.{t}" for s, t in tables} - set(self.stats.skipped_tables)
        self.stats.changed_tables = sorted(set(self.stats.changed_tables) | names)


def _planned(seg: Segment, lo: int) -> PlannedSegment:
    """What a dry run reports of one segment: its rows and tables, then the DDL that closes it."""
    ddl = seg.ddl
    return PlannedSegment(
        rows=seg.rows if lo < seg.hi else 0, tables=[".".join(t) for t in seg.tables],
        ddl=None if ddl is None else PlannedDdl(commit_ts=ddl.commit_ts, query=ddl.query,
                                                error=ddl.error.message if ddl.error else None))


def snapshot_indexes(cycle: Cycle) -> bool:
    """A snapshot's deferred indexes, built once the cycle's checkpoint is past the copy's last
    read (snapshot/deferred_indexes.py); a dry run builds nothing."""
    if cycle.run().dry_run:
        return False
    feed = cycle.feed()
    return deferred_indexes.after_apply(cycle.changefeed_id, feed.checkpoint_pos, feed.checkpoint_ts,
                                        cycle.sink.connection_args(cycle.sink_options), cycle.sink.scheme,
                                        lambda: cycle.keep_lease("apply"), cycle.log_event)


def copy_tables(cycle: Cycle) -> bool:
    """The tables joining the changefeed: joined, copied for up to table-copy-seconds, and their
    deferred indexes built once their copy is done, after the window is applied whole
    (snapshot/table_join.py); a dry run copies nothing."""
    if cycle.run().dry_run or not table_copies.busy(cycle.changefeed_id):
        return False
    from cdcflow.snapshot import table_join  # lazy: the copy's planner, 200 ms, only where a table joins

    feed = cycle.feed()
    return table_join.step(cycle.changefeed_id, cycle.config, cycle.source.connection_args(),
                           cycle.sink.connection_args(cycle.sink_options), cycle.sink.scheme, feed.checkpoint_pos,
                           feed.checkpoint_ts, cycle.log_event, lambda: cycle.keep_lease("apply"))
