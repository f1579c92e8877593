"""barrier: the DDL barrier ts list and the DML segments between barriers (TiCDC's DDL handling).

A segment is (lo, hi]: its row changes, then the DDL at hi (if any), then the
checkpoint moves to hi.  Every DDL blocks the rows of every table after it,
as TiCDC's owner does.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from cdcflow.sink.row_sink import KEY_TEXTS, ROW_COLUMNS, Held
from cdcflow.source.binlog import Position
from cdcflow.stages import contracts, rows
from cdcflow.stages.contracts import DdlEntry, Segment
from cdcflow.stages.cycle import Cycle


def build_segments(start_ts: int, ddls: list[DdlEntry], resolved_ts: int, end_pos: Position) -> list[Segment]:
    segments, lo = [], start_ts
    for d in sorted(ddls, key=lambda d: d.commit_ts):
        segments.append(Segment(lo=lo, hi=d.commit_ts, ddl=d, pos_before=d.start_pos, pos_after=d.end_pos))
        lo = d.commit_ts
    segments.append(Segment(lo=lo, hi=max(resolved_ts, lo), ddl=None, pos_before=None, pos_after=end_pos))
    return segments


# bisect_left(his, commit_ts) in Spark SQL: a binary search over the barrier array, `steps`
# halvings of [lo, hi); the plan is the same whatever the number of barriers
_BISECT = """aggregate(sequence(1, {steps}), named_struct('lo', 0, 'hi', size(barrier_his)),
    (acc, i) -> if(acc.lo < acc.hi,
        if(element_at(barrier_his, cast((acc.lo + acc.hi) div 2 + 1 as int)) < commit_ts,
           named_struct('lo', cast((acc.lo + acc.hi) div 2 + 1 as int), 'hi', acc.hi),
           named_struct('lo', acc.lo, 'hi', cast((acc.lo + acc.hi) div 2 as int))),
        acc)).lo"""


def with_segment(row_events, his: list[int]):
    """The row events with a `segment` column: i for the rows with commit ts in
    (his[i-1], his[i]] (len(his) for rows above the last), his sorted.  A DDL is a
    transaction of its own, so no row shares its ts and (lo, hi] holds exactly the rows
    before the barrier.

    The segment is bisect_left(his, commit_ts), computed in Spark against the barrier ts
    given as one array literal: the plan does not grow with the barriers (an expression
    with a term per DDL overflowed the JVM's stack at a few hundred), and no DataFrame is
    made of them (that took a job on Python workers, a tenth of a second per call)."""
    from pyspark.sql import functions as F  # lazy: the stages load without Spark (pull, an idle cycle)

    barriers = F.expr("array(" + ", ".join(f"{int(h)}L" for h in his) + ")")
    segment = F.expr(_BISECT.format(steps=max(1, len(his)).bit_length() + 1))
    return row_events.withColumn("barrier_his", barriers).withColumn("segment", segment).drop("barrier_his")


def segment_counts(row_events, his: list[int]) -> list[tuple[tuple[int, str, str], int, int]]:
    """((segment, schema, table), rows, their images' bytes) of the row events (with_segment):
    only these counts come back to the driver, not one row per transaction.  The rows are
    counted per (table, commit ts) first, so the bisect (an interpreted lambda, the stage's
    largest cost: about 3 s of CPU a million rows here) runs once per transaction and table,
    not once per row."""
    from pyspark.sql import functions as F  # lazy: the stages load without Spark (pull, an idle cycle)

    size = F.coalesce(F.octet_length("before"), F.lit(0)) + F.coalesce(F.octet_length("after"), F.lit(0))
    per_txn = row_events.groupBy("commit_ts", "schema", "table").agg(F.count("*").alias("n"),
                                                                     F.sum(size).alias("b"))
    counted = (with_segment(per_txn, sorted(his))
               .groupBy("segment", "schema", "table").agg(F.sum("n").alias("n"), F.sum("b").alias("b")))
    return [((r["segment"], r["schema"], r["table"]), r["n"], r["b"] or 0) for r in counted.collect()]


# A segment of at most this many row events is written from the driver, its rows read with
# those of the window's other such segments by pyarrow in the driver (SmallSegments), up to
# SMALL_SEGMENTS_ROWS and SMALL_SEGMENTS_BYTES of images in all.  A Spark job per segment
# cost 0.3-0.5 s of planning, which over a thousand DDLs with rows between them was most of
# the cycle; and for a segment of tens of thousands of rows the JVM's shuffle, aggregation and
# sort cost more than Arrow's sort and compaction here: at 100,000 row changes in 5 segments
# the apply stage took 4.2 s written from the driver against 8.8 s in Spark jobs, 6.1
# core-seconds against 13.3 (make bench's census, same machine, docs/performance.md).  Beyond
# them, Spark's partitions write, and the driver never holds more than the byte bound.
SMALL_SEGMENT_ROWS = 100_000
SMALL_SEGMENTS_ROWS = 400_000
SMALL_SEGMENTS_BYTES = 256 * 2**20
# a segment record older than image_bytes: the row bounds the driver path had then
OLD_RECORD_ROWS, OLD_RECORD_TOTAL = 2_000, 50_000


def driver_segments(segments: list[Segment], checkpoint_ts: int) -> list[int]:
    """The indexes of the segments SmallSegments reads: not applied yet, with rows, within
    the bounds, in window order."""
    picked, total, held = [], 0, 0
    for i, seg in enumerate(segments):
        known = seg.image_bytes > 0
        most, most_total = (SMALL_SEGMENT_ROWS, SMALL_SEGMENTS_ROWS) if known else (OLD_RECORD_ROWS, OLD_RECORD_TOTAL)
        if 0 < seg.rows <= most and seg.hi > checkpoint_ts and total + seg.rows <= most_total \
                and held + seg.image_bytes <= SMALL_SEGMENTS_BYTES:
            picked.append(i)
            total += seg.rows
            held += seg.image_bytes
    return picked


def _segment_of(commit_ts, his: list[int]) -> np.ndarray:
    """Each row's segment as with_segment gives it: bisect_left(his, commit_ts)."""
    return np.searchsorted(np.array(his, np.int64), commit_ts.to_numpy(zero_copy_only=False), side="left")


def segment_counts_here(cycle: Cycle, his: list[int]) -> list[tuple[tuple[int, str, str], int, int]]:
    """segment_counts of the window's kept rows (rows.kept_rows_here), counted with pyarrow: only
    one batch of the images is held at a time."""
    totals: dict[tuple[int, str, str], list[int]] = {}
    for batch in rows.kept_rows_here(cycle, None, ("commit_ts", "schema", "table", "before", "after")).to_batches():
        if not batch.num_rows:
            continue
        before, after = (pc.coalesce(pc.binary_length(batch[image]), 0) for image in ("before", "after"))
        grouped = pa.table({"segment": _segment_of(batch["commit_ts"], his), "schema": batch["schema"],
                            "table": batch["table"], "b": pc.add(before, after)})
        grouped = grouped.group_by(["segment", "schema", "table"]).aggregate([("b", "count"), ("b", "sum")])
        for seg, schema, table, n, b in zip(*(grouped[c].to_pylist() for c in
                                              ("segment", "schema", "table", "b_count", "b_sum"))):
            total = totals.setdefault((seg, schema, table), [0, 0])
            total[0] += n
            total[1] += b
    return [(k, n, b) for k, (n, b) in totals.items()]


class SmallSegments:
    """The rows of the segments not applied yet that hold at most SMALL_SEGMENT_ROWS each (up to
    SMALL_SEGMENTS_ROWS and SMALL_SEGMENTS_BYTES in all: driver_segments), read in this process
    with pyarrow (rows.kept_rows_here), a segment at a time, in order, by a thread of their own,
    and made ready for the writers there by `ahead` (sink.row_sink.RowSink.spread_ahead): the
    next segment's rows are read and compacted while apply writes this one's, not all before the
    first is written (a read that held up every write: 0.4 s of the bench's 2.4 s apply, and the
    compaction 0.3 s more).  One segment is read beyond the one being written, no more: the
    next one's read starts when this one is taken.  `get(i)`: segment i's rows (row_sink.Held),
    None where it is not one of them; `close()` ends the reads not needed."""

    def __init__(self, cycle: Cycle, segments: list[Segment], checkpoint_ts: int,
                 ahead: Callable[[Segment, pa.Table], object] | None = None):
        self.cycle, self.segments, self.ahead = cycle, segments, ahead
        self._waiting = driver_segments(segments, checkpoint_ts)  # not submitted yet, in order
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="segment-rows") if self._waiting else None
        self._rows: dict[int, Future] = {}
        self._read_next()

    def _read_next(self) -> None:
        if self._waiting:
            i = self._waiting.pop(0)
            self._rows[i] = self._pool.submit(self._read, self.segments[i])

    def _read(self, seg: Segment) -> Held | None:
        rows_here = rows.kept_rows_here(self.cycle, [(seg.lo, seg.hi)], (*ROW_COLUMNS, *KEY_TEXTS)).to_table()
        if not rows_here.num_rows:
            return None
        return Held(rows_here, self.ahead(seg, rows_here) if self.ahead is not None else None)

    def get(self, i: int) -> Held | None:
        future = self._rows.pop(i, None)
        if future is None:
            return None
        self._read_next()
        return future.result()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)


def barrier(spark, cycle: Cycle) -> contracts.BarrierResult:
    window = contracts.WINDOW.read(cycle.folder)
    ddls = contracts.DDLS.read(cycle.folder).kept
    segments = build_segments(window.start_ts, ddls, window.pulled.resolved_ts, window.pulled.end_pos)
    tables: list[set] = [set() for _ in segments]
    his = [s.hi for s in segments]
    counted = (segment_counts_here(cycle, his) if rows.read_here(window)
               else segment_counts(rows.kept_rows(spark, cycle), his))
    for (i, schema, table), n, size in counted:
        if i < len(segments):
            segments[i].rows += n
            segments[i].image_bytes += size
            tables[i].add((schema, table))
    for seg, ts in zip(segments, tables):
        seg.tables = sorted(ts)
    contracts.SEGMENTS.write(cycle.folder, segments)
    cycle.log_event("barriers", barriers=[s.hi for s in segments if s.ddl], segments=len(segments),
                rows=[s.rows for s in segments])
    return contracts.BarrierResult(segments=len(segments), barriers=sum(1 for s in segments if s.ddl))
