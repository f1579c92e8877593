"""barrier: the DDL barrier ts list and the DML segments between barriers (TiCDC's DDL handling).

A segment is (lo, hi]: its row changes, then the DDL at hi (if any), then the
checkpoint moves to hi.  Every DDL blocks the rows of every table after it,
as TiCDC's owner does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa

from cdcflow.core.arrow_rows import int64_array, spark_schema
from cdcflow.source.binlog import Position
from cdcflow.stages import contracts, rows
from cdcflow.stages.contracts import DdlEntry, Segment
from cdcflow.stages.cycle import Cycle
from cdcflow.store.events import IMAGE_BYTES, image_bytes


def build_segments(start_ts: int, ddls: list[DdlEntry], resolved_ts: int, end_pos: Position) -> list[Segment]:
    segments, lo = [], start_ts
    for d in sorted(ddls, key=lambda d: d.commit_ts):
        segments.append(Segment(lo=lo, hi=d.commit_ts, ddl=d, pos_before=d.start_pos, pos_after=d.end_pos))
        lo = d.commit_ts
    segments.append(Segment(lo=lo, hi=max(resolved_ts, lo), ddl=None, pos_before=None, pos_after=end_pos))
    return segments


COUNTED = pa.schema([("segment", pa.int64()), ("schema", pa.string()), ("table", pa.string()),
                     ("upto", pa.int64()), ("n", pa.int64()), ("b", pa.int64())])
COUNTED_COLUMNS = ("commit_ts", "schema", "table", "before", "after")
# the same counts from the images' sizes pull (or filter's copy in this process) wrote beside them
COUNTED_SIZES = ("commit_ts", "schema", "table", IMAGE_BYTES)


def segment_of(commit_ts, his: list[int]) -> np.ndarray:
    """Each row's segment: i for a commit ts in (his[i-1], his[i]], len(his) above the last
    (bisect_left of his, sorted).  A DDL is a transaction of its own, so no row shares its ts
    and (lo, hi] holds exactly the rows before the barrier."""
    return np.searchsorted(np.array(his, np.int64), commit_ts.to_numpy(zero_copy_only=False), side="left")


def batch_counts(batch: pa.RecordBatch, his: list[int], run_rows: int = 16_384) -> pa.RecordBatch:
    """(segment, schema, table, upto, rows, their images' bytes) of one batch of row events, per
    run of `run_rows` of them (upto: the run's largest commit ts; where a segment is too large for
    the stage's process, its slices are cut at these runs' ends: stages.engine.Engine.slices): the
    counting step, the same function over the window's batches in this process and inside Spark
    tasks (segment_counts); only these partial counts travel, never the images.  The images'
    bytes come from IMAGE_BYTES where the batch has it (COUNTED_SIZES), else from the images
    (COUNTED_COLUMNS)."""
    size = batch[IMAGE_BYTES] if IMAGE_BYTES in batch.schema.names else image_bytes(batch)
    grouped = pa.table({"segment": int64_array(segment_of(batch["commit_ts"], his)), "schema": batch["schema"],
                        "table": batch["table"], "run": int64_array(np.arange(batch.num_rows) // run_rows),
                        "ts": batch["commit_ts"], "b": size})
    grouped = grouped.group_by(["segment", "schema", "table", "run"]).aggregate(
        [("ts", "max"), ("b", "count"), ("b", "sum")])
    return pa.RecordBatch.from_arrays([grouped["segment"].combine_chunks().cast(pa.int64()),
                                       grouped["schema"].combine_chunks(), grouped["table"].combine_chunks(),
                                       grouped["ts_max"].combine_chunks(), grouped["b_count"].combine_chunks(),
                                       grouped["b_sum"].combine_chunks()], schema=COUNTED)


@dataclass
class Counted:
    """What barrier counted of the window's kept rows: `totals`, ((segment, schema, table), rows,
    their images' bytes); `runs`, per segment, (upto, rows, bytes) of runs of its rows sorted by
    upto (stages.engine.Engine.slices cuts there), or None where Spark counted (its segments are
    not cut: Spark writes what the process cannot hold)."""

    totals: list[tuple[tuple[int, str, str], int, int]]
    runs: dict[int, list[tuple[int, int, int]]] | None = None


def counts_in_process(batches, his: list[int], run_rows: int = 16_384) -> Counted:
    """segment_counts over row events' Arrow batches in this process (his sorted)."""
    return _summed([batch_counts(b, his, run_rows) for b in batches if b.num_rows])


def counts_in_spark(frame, his: list[int]) -> Counted:
    """segment_counts over a Spark frame of row events, batch_counts in its tasks (his sorted);
    their partial counts (a row per batch, segment, table and run) come back as Arrow and are
    summed here as the process's are: no shuffle, one job.  Without runs: Spark writes the
    segments of a window it counted, which are not cut."""
    partials = frame.select(*COUNTED_COLUMNS).mapInArrow(
        lambda it: (batch_counts(b, his) for b in it if b.num_rows), spark_schema(COUNTED))
    return replace(_summed(partials.toArrow().cast(COUNTED).to_batches()), runs=None)


def _summed(partials: list[pa.RecordBatch]) -> Counted:
    """The partial counts of batch_counts summed per segment and table, and per segment and run."""
    partials = [b for b in partials if b.num_rows]
    if not partials:
        return Counted([], {})
    counted = pa.Table.from_batches(partials, schema=COUNTED)
    totals = counted.group_by(["segment", "schema", "table"]).aggregate([("n", "sum"), ("b", "sum")])
    by_run = counted.group_by(["segment", "upto"]).aggregate([("n", "sum"), ("b", "sum")]).sort_by(
        [("segment", "ascending"), ("upto", "ascending")])
    runs: dict[int, list[tuple[int, int, int]]] = {}
    for seg, upto, n, b in zip(*(by_run.column(c).to_pylist() for c in ("segment", "upto", "n_sum", "b_sum"))):
        runs.setdefault(seg, []).append((upto, n, b or 0))
    return Counted([((seg, schema, table), n, b or 0) for seg, schema, table, n, b in zip(
        *(totals.column(c).to_pylist() for c in ("segment", "schema", "table", "n_sum", "b_sum")))], runs)


def segment_counts(cycle: Cycle, spark, his: list[int]) -> Counted:
    """The window's kept rows counted by segment and table (Counted), by batch_counts: over
    pyarrow's scan in this process (one batch of images held at a time) where the cycle's engine
    reads the window here, else in Spark tasks (mapInArrow), whose partial counts Spark sums.
    Only counts come back, not one row per transaction."""
    his = sorted(his)
    window = contracts.WINDOW.read(cycle.folder)
    if rows.read_in_process(cycle, window):
        # the images' sizes where the files hold them: the images are most of the window's bytes
        columns = COUNTED_SIZES if rows.kept_rows_have_image_bytes(cycle) else COUNTED_COLUMNS
        return counts_in_process(rows.kept_rows_arrow(cycle, None, columns).to_batches(), his,
                                 cycle.engine.run_rows())
    return counts_in_spark(rows.kept_rows(spark, cycle), his)


def barrier(spark, cycle: Cycle) -> contracts.BarrierResult:
    window = contracts.WINDOW.read(cycle.folder)
    ddls = contracts.DDLS.read(cycle.folder).kept
    segments = build_segments(window.start_ts, ddls, window.pulled.resolved_ts, window.pulled.end_pos)
    tables: list[set] = [set() for _ in segments]
    his = [s.hi for s in segments]
    counted = segment_counts(cycle, spark, his)
    for (i, schema, table), n, size in counted.totals:
        if i < len(segments):
            segments[i].rows += n
            segments[i].image_bytes += size
            tables[i].add((schema, table))
    for i, (seg, ts) in enumerate(zip(segments, tables)):
        seg.tables = sorted(ts)
        if counted.runs is not None:
            seg.slices = cycle.engine.slices(seg, counted.runs.get(i, []))
    contracts.SEGMENTS.write(cycle.folder, segments)
    cycle.log_event("barriers", barriers=[s.hi for s in segments if s.ddl], segments=len(segments),
                    rows=[s.rows for s in segments], slices=[len(s.slices) for s in segments if s.slices])
    return contracts.BarrierResult(segments=len(segments), barriers=sum(1 for s in segments if s.ddl),
                                   ran_in=cycle.engine.place(rows.read_in_process(cycle, window)))
