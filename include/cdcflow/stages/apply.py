"""apply: the barrier loop.  Segment by segment: its rows (sink.row_sink), then the checkpoint
reaches the barrier, the DDL there runs (sink.ddl_sink), and the checkpoint moves past it."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import closing, suppress

from cdcflow.sink import statement_timeline
from cdcflow.sink.ddl_sink import DdlSink
from cdcflow.sink.row_sink import PartRows, RowSink
from cdcflow.spark.lazy import Lazy
from cdcflow.stages import apply_sinks, contracts, joining_tables, safe_mode, snapshot_indexes
from cdcflow.stages.contracts import IndexWait, Segment
from cdcflow.stages.cycle import LEASE_RENEWAL_SECONDS, Cycle
from cdcflow.stages.read_ahead import ReadAhead
from cdcflow.stages.rows import kept_rows
from cdcflow.store import metastore


def apply(spark, cycle: Cycle) -> contracts.ApplyResult:
    run, window = cycle.run(), contracts.WINDOW.read(cycle.folder)
    segments = contracts.SEGMENTS.read(cycle.folder)
    rows = Lazy(lambda: kept_rows(spark, cycle))  # a plan only where Spark writes a segment
    stats = contracts.ApplyResult(safe_mode=cycle.sink_options.safe_mode or safe_mode.may_replay(cycle, window))
    t0 = time.time()
    with apply_sinks.opened(spark, cycle, window, stats.safe_mode) as (ddl_sink, row_sink):
        to_read = [] if run.dry_run else segments
        with closing(ReadAhead(cycle, to_read, cycle.feed().checkpoint_ts, row_sink.writer_input_ahead)) as held, \
                statement_timeline.recording() as timeline:
            if held.reading:
                row_sink.open_sessions()
            _Barriers(cycle, window, ddl_sink, row_sink, stats, run.dry_run).run(segments, rows, held)
            walked = timeline.summary()
    if stats.statements and not stats.segments_in_spark:  # every statement was this process's: all seen
        cycle.log_event("apply timeline", **walked)
    if not stats.index_wait:  # the window applied whole: a snapshot's deferred indexes may follow it
        snapshot_indexes.snapshot_indexes(cycle)
        joining_tables.copy_tables(cycle)
    stats.took(time.time() - t0)
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
        self.held: ReadAhead | None = None  # the parts made ahead (run)

    def run(self, segments: list[Segment], rows, held: ReadAhead) -> None:
        self.held = held
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
        # looked at this often during apply, not at every segment (Cycle.keep_lease renews it)
        if time.time() - self.renewed >= LEASE_RENEWAL_SECONDS:
            self.cycle.keep_lease("apply")
            self.renewed = time.time()

    def segment(self, seg: Segment, rows, held: Callable[[int], PartRows | None]) -> bool:
        """The segment's rows, then its DDL.  False: the loop stops at this barrier (wait_index).
        `held(j)`: the rows of its part j where this process writes them (ReadAhead)."""
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
            self.stats.would_apply = [*(self.stats.would_apply or []), seg.planned(lo)]
            return True
        if seg.ddl is None:
            self.write_pending()
            metastore.advance_checkpoint(self.cycle.changefeed_id, seg.hi, seg.pos_after.to_dict())
            return True
        if checkpoint_ts >= seg.ddl.commit_ts:
            return True  # applied by an earlier attempt of this cycle
        return self.ddl(seg, feed.ddl_in_flight_ts, checkpoint_ts, wrote)

    def write_rows(self, seg: Segment, rows, held: Callable[[int], PartRows | None], lo: int) -> None:
        """The segment's rows above `lo`, part by part (its slices, in order, or the whole of it);
        the checkpoint stays at the segment's start until the DDL at its end (a replay writes
        every part again, safely: safe_mode.may_replay)."""
        for j, part in enumerate(seg.parts()):
            if part.hi <= lo:
                continue
            self.keep_lease()
            # its rows asked for once the write has asked the catalogue (row_sink.RowSink._write)
            written = self.rows.write_segment(rows, seg.tables, max(part.lo, lo), part.hi, part.rows,
                                              lambda j=j: held(j), one_task=self.cycle.engine.part_fits(part))
            self.stats.add(written, in_process=written.in_process)
            if written.in_process:
                self.held.let_go()  # written, and no longer held: what they took goes before the next part is taken
        self.stats.changed(seg.tables)

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
        if ddl.error:  # a rule the DDL breaks
            self.write_pending()
            raise ddl.refusal()
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
        with statement_timeline.timed(ddl=True):
            outcome = self.ddls.execute(ddl, replay, self.pending)  # writes `pending` with the in-flight mark
        self.rows.ddl_ran(ddl)
        self.pending = (ddl.commit_ts, seg.pos_after.to_dict())
        self.stats.ddl_applied += 1
        self.stats.changed(ddl.tables)
        self.cycle.log_event("ddl applied", commit_ts=ddl.commit_ts, name=ddl.name, outcome=outcome)
        return True

