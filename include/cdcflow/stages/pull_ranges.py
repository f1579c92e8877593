"""pull's parallel path: the window cut into ranges (source.binlog_ranges), each read by a
Spark task on its own binlog connection and written to the event store by that task; then
the commit ts chain over all the transactions (a small pass here) and a second Spark job that
stamps each range's events with their ts.  The events and the Pulled record are those the
sequential read gives (tests/stages/test_pull_ranges.py compares every event).

Taken only when `[cdcflow] pull-parallelism` is above 1, the window holds at least
`pull-parallel-min-bytes` of binlog and has no target-ts; otherwise pull reads sequentially,
without Spark.
"""

from __future__ import annotations

import dataclasses
import json
import time

from cdcflow.source.binlog import Position
from cdcflow.source.binlog_ranges import (
    RangeReader,
    RangeResult,
    chain,
    cuts,
    range_server_id,
    window_bytes,
)
from cdcflow.stages import contracts
from cdcflow.stages.cycle import Cycle
from cdcflow.store.events import RunFolder

RANGES_FOLDER = "raw-ranges"  # each range's events before their commit ts is known


def wanted(cycle: Cycle, window: contracts.Window) -> bool:
    """Whether this cycle's pull takes the parallel path (and so needs a Spark session)."""
    cfg = cycle.config
    if cfg.pull_parallelism <= 1 or window.idle or window.target_ts:
        return False
    conn = cycle.source.connect()
    try:
        return window_bytes(conn, window.start_pos, window.head) >= cfg.pull_parallel_min_bytes
    finally:
        conn.close()


def plan(cycle: Cycle, window: contracts.Window) -> list[Position]:
    """The ranges' start positions, the window's start first: one only when the window
    holds no transaction boundary to cut at."""
    conn = cycle.source.connect()
    try:
        return [window.start_pos, *cuts(conn, window.start_pos, window.head, cycle.config.pull_parallelism)]
    finally:
        conn.close()


def read(spark, cycle: Cycle, window: contracts.Window, server_id: int,
         starts: list[Position]) -> tuple[contracts.Pulled, dict]:
    """Read the ranges starting at `starts` (the last ends at the head) into the raw folder.
    Also returns where the time went: each range's events and decoding seconds (in its task),
    and the seconds of the two Spark jobs."""
    ends = [*starts[1:], window.head]
    specs = [(range_server_id(server_id, i), s.to_dict(), e.to_dict()) for i, (s, e) in enumerate(zip(starts, ends))]
    uri, url = cycle.source, cycle.folder.url  # plain values: the tasks get them pickled

    def decode(index: int) -> str:
        t0 = time.perf_counter()
        sid, start, end = specs[index]
        writer = RunFolder.at(url).writer(RANGES_FOLDER, part=index)
        reader = RangeReader(uri, sid, Position.from_dict(start), Position.from_dict(end))
        reader.read(writer.add)  # rows go out in bounded batches, however large the transaction
        writer.close()
        return json.dumps(dataclasses.asdict(RangeResult.of(reader, writer.count, time.perf_counter() - t0)))

    t0 = time.perf_counter()
    results = [RangeResult(**json.loads(r)) for r in _each_range(spark, len(specs), decode)]
    t1 = time.perf_counter()
    stamps = chain(window.start_ts, results)

    def stamp(index: int) -> str:
        RunFolder.at(url).restamp(RANGES_FOLDER, "raw", index, stamps[index])
        return ""

    _each_range(spark, len(specs), stamp)
    t2 = time.perf_counter()
    cycle.folder.remove_folder(RANGES_FOLDER)
    ended = sum(r.ended for r in results)
    flat = [ts for mine in stamps for ts in mine]
    end_ts = flat[ended - 1] if ended else window.start_ts  # only the last range may end mid-transaction
    return contracts.Pulled(
        end_ts=end_ts, end_pos=Position.from_dict(results[-1].last_pos), resolved_ts=max(end_ts, window.head_tso),
        stopped_at_target=False, aborted_ts=sorted(stamps[i][n] for i, r in enumerate(results) for n in r.aborted),
        events=sum(r.events for r in results), transactions=ended,
    ), {"decode_seconds": round(t1 - t0, 3), "stamp_seconds": round(t2 - t1, 3),
        "range_events": [r.events for r in results], "range_seconds": [round(r.seconds, 3) for r in results]}


def _each_range(spark, n: int, fn) -> list[str]:
    """fn(i) for i in 0..n-1, one Spark task each (embedded or Connect alike); their results
    in order."""
    import pyarrow as pa

    def run(batches):
        for batch in batches:
            for i in batch.column(0).to_pylist():
                yield pa.RecordBatch.from_pydict({"i": [i], "out": [fn(i)]})

    rows = spark.range(0, n, 1, n).mapInArrow(run, "i long, out string").collect()
    return [r.out for r in sorted(rows, key=lambda r: r.i)]
