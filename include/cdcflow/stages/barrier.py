"""barrier: the DDL barrier ts list and the DML segments between barriers (TiCDC's DDL handling).

A segment is (lo, hi]: its row changes, then the DDL at hi (if any), then the
checkpoint moves to hi.  Every DDL blocks the rows of every table after it,
as TiCDC's owner does.
"""

from __future__ import annotations

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


def barrier(spark, cycle: Cycle) -> contracts.BarrierResult:
    from pyspark.sql import functions as F

    window = contracts.WINDOW.read(cycle.folder)
    ddls = contracts.DDLS.read(cycle.folder).kept
    segments = build_segments(window.start_ts, ddls, window.pulled.resolved_ts, window.pulled.end_pos)
    # rows per segment and table; a DDL is a transaction of its own, so no row shares its
    # ts and (lo, hi] holds exactly the rows before the barrier.  The segment index is
    # bisect_left(his, commit_ts), computed in Spark so only (segment, table) counts come
    # back to the driver, not one row per transaction.
    his = [s.hi for s in segments]
    tables: list[set] = [set() for _ in segments]
    index = sum(((F.col("commit_ts") > hi).cast("int") for hi in his), F.lit(0))
    for r in (rows.kept_rows(spark, cycle)
              .groupBy(index.alias("segment"), "schema", "table").agg(F.count("*").alias("n")).collect()):
        i = r["segment"]
        if i < len(segments):
            segments[i].rows += r["n"]
            tables[i].add((r["schema"], r["table"]))
    for seg, ts in zip(segments, tables):
        seg.tables = sorted(ts)
    contracts.SEGMENTS.write(cycle.folder, segments)
    cycle.log_event("barriers", barriers=[s.hi for s in segments if s.ddl], segments=len(segments),
                rows=[s.rows for s in segments])
    return contracts.BarrierResult(segments=len(segments), barriers=sum(1 for s in segments if s.ddl))
