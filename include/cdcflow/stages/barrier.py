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

from cdcflow.core.arrow_rows import spark_schema
from cdcflow.sink.row_sink import HELD_COLUMNS, Held
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


COUNTED = pa.schema([("segment", pa.int64()), ("schema", pa.string()), ("table", pa.string()),
                     ("n", pa.int64()), ("b", pa.int64())])
COUNTED_COLUMNS = ("commit_ts", "schema", "table", "before", "after")


def segment_of(commit_ts, his: list[int]) -> np.ndarray:
    """Each row's segment: i for a commit ts in (his[i-1], his[i]], len(his) above the last
    (bisect_left of his, sorted).  A DDL is a transaction of its own, so no row shares its ts
    and (lo, hi] holds exactly the rows before the barrier."""
    return np.searchsorted(np.array(his, np.int64), commit_ts.to_numpy(zero_copy_only=False), side="left")


def batch_counts(batch: pa.RecordBatch, his: list[int]) -> pa.RecordBatch:
    """(segment, schema, table, rows, their images' bytes) of one batch of row events: the
    counting step, the same function over the window's batches in this process and inside
    Spark tasks (segment_counts); only these partial counts travel, never the images."""
    before, after = (pc.coalesce(pc.binary_length(batch[image]), 0) for image in ("before", "after"))
    grouped = pa.table({"segment": segment_of(batch["commit_ts"], his), "schema": batch["schema"],
                        "table": batch["table"], "b": pc.add(before, after).cast(pa.int64())})
    grouped = grouped.group_by(["segment", "schema", "table"]).aggregate([("b", "count"), ("b", "sum")])
    return pa.RecordBatch.from_arrays([grouped["segment"].combine_chunks().cast(pa.int64()),
                                       grouped["schema"].combine_chunks(), grouped["table"].combine_chunks(),
                                       grouped["b_count"].combine_chunks(), grouped["b_sum"].combine_chunks()],
                                      schema=COUNTED)


def counts_here(batches, his: list[int]) -> list[tuple[tuple[int, str, str], int, int]]:
    """segment_counts over row events' Arrow batches in this process (his sorted)."""
    return _summed(batch_counts(b, his) for b in batches if b.num_rows)


def counts_in_spark(frame, his: list[int]) -> list[tuple[tuple[int, str, str], int, int]]:
    """segment_counts over a Spark frame of row events, batch_counts in its tasks (his sorted)."""
    from pyspark.sql import functions as F  # lazy: the stages load without Spark (pull, an idle cycle)

    partials = frame.select(*COUNTED_COLUMNS).mapInArrow(
        lambda it: (batch_counts(b, his) for b in it if b.num_rows), spark_schema(COUNTED))
    summed = partials.groupBy("segment", "schema", "table").agg(F.sum("n").alias("n"), F.sum("b").alias("b"))
    return [((r["segment"], r["schema"], r["table"]), r["n"], r["b"] or 0) for r in summed.collect()]


def _summed(partials) -> list[tuple[tuple[int, str, str], int, int]]:
    totals: dict[tuple[int, str, str], list[int]] = {}
    for part in partials:
        for seg, schema, table, n, b in zip(*(part.column(c).to_pylist() for c in COUNTED.names)):
            total = totals.setdefault((seg, schema, table), [0, 0])
            total[0] += n
            total[1] += b or 0
    return [(k, n, b) for k, (n, b) in totals.items()]


def segment_counts(cycle: Cycle, spark, his: list[int]) -> list[tuple[tuple[int, str, str], int, int]]:
    """((segment, schema, table), rows, their images' bytes) of the window's kept rows, by
    batch_counts: over pyarrow's scan in this process (one batch of images held at a time) where
    the cycle's engine reads the window here, else in Spark tasks (mapInArrow), whose partial
    counts Spark sums.  Only counts come back, not one row per transaction."""
    his = sorted(his)
    window = contracts.WINDOW.read(cycle.folder)
    if rows.read_here(cycle, window):
        return counts_here(rows.kept_rows_here(cycle, None, COUNTED_COLUMNS).to_batches(), his)
    return counts_in_spark(rows.kept_rows(spark, cycle), his)


class SmallSegments:
    """The rows of the segments the cycle's engine writes from this process (Engine.segments_here), read in this process
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
        self._waiting = cycle.engine.segments_here(segments, checkpoint_ts)  # not submitted yet, in order
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="segment-rows") if self._waiting else None
        self._rows: dict[int, Future] = {}
        self._read_next()

    def _read_next(self) -> None:
        if self._waiting:
            i = self._waiting.pop(0)
            self._rows[i] = self._pool.submit(self._read, self.segments[i])

    def _read(self, seg: Segment) -> Held | None:
        rows_here = rows.kept_rows_here(self.cycle, [(seg.lo, seg.hi)], HELD_COLUMNS).to_table()
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
    counted = segment_counts(cycle, spark, his)
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
    return contracts.BarrierResult(segments=len(segments), barriers=sum(1 for s in segments if s.ddl),
                                   ran_in=cycle.engine.place(rows.read_here(cycle, window)))
