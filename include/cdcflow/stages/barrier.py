"""barrier: the DDL barrier ts list and the DML segments between barriers (TiCDC's DDL handling).

A segment is (lo, hi]: its row changes, then the DDL at hi (if any), then the
checkpoint moves to hi.  Every DDL blocks the rows of every table after it,
as TiCDC's owner does.
"""

from __future__ import annotations

import bisect

import pyarrow as pa

from cdcflow.sink.row_sink import KEY_TEXTS, ROW_COLUMNS
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


def segment_counts(row_events, his: list[int]) -> list[tuple[tuple[int, str, str], int]]:
    """((segment, schema, table), rows) of the row events (with_segment): only these counts
    come back to the driver, not one row per transaction.  The rows are counted per (table,
    commit ts) first, so the bisect (an interpreted lambda, the stage's largest cost: about
    3 s of CPU a million rows here) runs once per transaction and table, not once per row."""
    from pyspark.sql import functions as F  # lazy: the stages load without Spark (pull, an idle cycle)

    per_txn = row_events.groupBy("commit_ts", "schema", "table").agg(F.count("*").alias("n"))
    counted = (with_segment(per_txn, sorted(his))
               .groupBy("segment", "schema", "table").agg(F.sum("n").alias("n")))
    return [((r["segment"], r["schema"], r["table"]), r["n"]) for r in counted.collect()]


# A segment of at most this many row events is written from the driver, its rows fetched
# with those of the window's other small segments in one Spark job (small_segments), up to
# SMALL_SEGMENTS_ROWS in all: a Spark job per segment cost 0.3-0.5 s, which over a thousand
# DDLs with rows between them was most of the cycle.
SMALL_SEGMENT_ROWS = 2_000
SMALL_SEGMENTS_ROWS = 50_000


def small_segments(rows, segments: list[Segment], checkpoint_ts: int) -> dict[int, pa.Table]:
    """The rows of the segments not applied yet that hold at most SMALL_SEGMENT_ROWS each
    (up to SMALL_SEGMENTS_ROWS in all), fetched in one Spark job: {segment index: its rows}."""
    from pyspark.sql import functions as F  # lazy: pyspark is not loaded on the Spark-free paths

    picked, total = [], 0
    for i, seg in enumerate(segments):
        if 0 < seg.rows <= SMALL_SEGMENT_ROWS and seg.hi > checkpoint_ts and total + seg.rows <= SMALL_SEGMENTS_ROWS:
            picked.append(i)
            total += seg.rows
    if not picked:
        return {}
    # the ts range they span first: Parquet skips the row groups outside it
    span = (F.col("commit_ts") > segments[picked[0]].lo) & (F.col("commit_ts") <= segments[picked[-1]].hi)
    fetched = (with_segment(rows.where(span).select(*ROW_COLUMNS, *KEY_TEXTS), [s.hi for s in segments])
               .where(F.col("segment").isin(picked)).toArrow().sort_by("segment"))
    ids = fetched["segment"].to_pylist()
    return {i: fetched.slice(a, b - a) for i in picked
            for a, b in [(bisect.bisect_left(ids, i), bisect.bisect_right(ids, i))] if b > a}


def barrier(spark, cycle: Cycle) -> contracts.BarrierResult:
    window = contracts.WINDOW.read(cycle.folder)
    ddls = contracts.DDLS.read(cycle.folder).kept
    segments = build_segments(window.start_ts, ddls, window.pulled.resolved_ts, window.pulled.end_pos)
    tables: list[set] = [set() for _ in segments]
    for (i, schema, table), n in segment_counts(rows.kept_rows(spark, cycle), [s.hi for s in segments]):
        if i < len(segments):
            segments[i].rows += n
            tables[i].add((schema, table))
    for seg, ts in zip(segments, tables):
        seg.tables = sorted(ts)
    contracts.SEGMENTS.write(cycle.folder, segments)
    cycle.log_event("barriers", barriers=[s.hi for s in segments if s.ddl], segments=len(segments),
                rows=[s.rows for s in segments])
    return contracts.BarrierResult(segments=len(segments), barriers=sum(1 for s in segments if s.ddl))
