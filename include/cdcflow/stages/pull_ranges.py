"""pull's parallel path: the window cut into ranges (source.binlog_ranges), each read by a
Spark task on its own binlog connection and written to the event store by that task; then
the commit ts chain over all the transactions (a small pass here) and a second Spark job that
stamps each range's events with their ts.  The events and the Pulled record are those the
sequential read gives (tests/stages/test_pull_ranges.py compares every event).

Taken only when `[cdcflow] pull-parallelism` is above 1, the window holds at least
`pull-parallel-min-bytes` of binlog and has no target-ts; otherwise pull reads sequentially,
without Spark.  Even then pull starts reading at once, in its own process, while the Spark
session starts (8-10 s for an embedded one); once the session is up, what is left of the
window is cut into ranges (hand_over), so the session's start-up is not time lost.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sys
import time
from concurrent.futures import Future

import msgspec

from cdcflow.source.binlog import Position
from cdcflow.source.binlog_ranges import (
    RangeReader,
    RangeResult,
    chain,
    cuts,
    gtid_in_range,
    gtids_at_starts,
    range_server_id,
    window_bytes,
)
from cdcflow.stages import contracts
from cdcflow.stages.cycle import Cycle
from cdcflow.store.events import RunFolder

RANGES_FOLDER = "raw-ranges"  # each range's events before their commit ts is known


def ranges_asked(cfg) -> int:
    """`pull-parallelism`, its default 0 being the cores of the machine pull runs on (what
    an embedded local[*] Spark runs at once); 1 turns the parallel path off."""
    return cfg.pull_parallelism or os.cpu_count() or 1


def wanted(cycle: Cycle, window: contracts.Window) -> bool:
    """Whether this cycle's pull takes the parallel path (and so needs a Spark session)."""
    cfg = cycle.config
    if ranges_asked(cfg) <= 1 or window.idle or window.target_ts:
        return False
    conn = cycle.source.connect()
    try:
        return window_bytes(conn, window.start_pos, window.head) >= cfg.pull_parallel_min_bytes
    finally:
        conn.close()


class SparkLater:
    """The Spark session of pull's ranges: one given, or a future of one still starting
    (runner.cycle_runner.pull_and_settle), which pull does not wait for."""

    def __init__(self, session):
        self._session = session

    @classmethod
    def of(cls, spark) -> "SparkLater":
        return spark if isinstance(spark, cls) else cls(spark)

    def ready(self) -> bool:
        return not isinstance(self._session, Future) or self._session.done()

    def get(self):
        return self._session.result() if isinstance(self._session, Future) else self._session

    def when_ready(self, fn) -> None:
        """fn() once the session is up (or failed to start)."""
        if isinstance(self._session, Future):
            self._session.add_done_callback(lambda _f: fn())
        else:
            fn()


# While the session starts, this process's main thread decodes the binlog, holding the GIL,
# and the thread starting the session needs it back after each of its hundreds of py4j
# calls: at Python's default switch interval (5 ms) an embedded session took 7 s to open
# beside the read, 2.2 s alone.  A shorter interval until it is up lets it run.
STARTING_SWITCH_INTERVAL = 0.0002


@contextlib.contextmanager
def session_first(later: "SparkLater"):
    """The GIL handed between threads more often while `later`'s session is starting."""
    if later is None or later.ready():
        yield
        return
    default = sys.getswitchinterval()
    sys.setswitchinterval(STARTING_SWITCH_INTERVAL)
    later.when_ready(lambda: sys.setswitchinterval(default))
    try:
        yield
    finally:
        sys.setswitchinterval(default)


def hand_over(cycle: Cycle, window: contracts.Window, later: SparkLater):
    """When the sequential read (BinlogReader.read) stops for the ranges: at the first
    transaction start after the session is up, if what is left of the window still holds
    `pull-parallel-min-bytes`; decided once, so a rest too small is read to its end."""
    decided: list[bool] = []

    def ask(at: Position) -> bool:
        if not decided and later.ready():
            conn = cycle.source.connect()
            try:
                decided.append(window_bytes(conn, at, window.head) >= cycle.config.pull_parallel_min_bytes)
            finally:
                conn.close()
        return bool(decided and decided[0])

    return ask


def plan(cycle: Cycle, window: contracts.Window) -> list[Position]:
    """The ranges' start positions, the window's start first: one only when the window
    holds no transaction boundary to cut at."""
    conn = cycle.source.connect()
    try:
        return [window.start_pos, *cuts(conn, window.start_pos, window.head, ranges_asked(cycle.config))]
    finally:
        conn.close()


def read(spark, cycle: Cycle, window: contracts.Window, server_id: int,
         starts: list[Position], first_part: int = 0) -> tuple[contracts.Pulled, dict]:
    """Read the ranges starting at `starts` (the last ends at the head) into the raw folder,
    as its parts `first_part`, `first_part` + 1, ...  Also returns where the time went: each
    range's events and decoding seconds (in its task), and the seconds of the two Spark jobs."""
    ends = [*starts[1:], window.head]
    specs = [(range_server_id(server_id, i), s.to_dict(), e.to_dict()) for i, (s, e) in enumerate(zip(starts, ends))]
    uri, url = cycle.source, cycle.folder.url  # plain values: the tasks get them pickled
    batch_rows = cycle.config.pull_batch_rows

    def decode(index: int) -> str:
        t0 = time.perf_counter()
        sid, start, end = specs[index]
        writer = RunFolder.at(url).writer(RANGES_FOLDER, batch_rows, part=first_part + index)
        reader = RangeReader(uri, sid, Position.from_dict(start), Position.from_dict(end))
        reader.read(writer.add)  # rows go out in bounded batches, however large the transaction
        writer.close()
        return json.dumps(dataclasses.asdict(RangeResult.of(reader, writer, time.perf_counter() - t0)))

    t0 = time.perf_counter()
    results = [RangeResult(**json.loads(r)) for r in _each_range(spark, len(specs), decode)]
    t1 = time.perf_counter()
    stamps = chain(window.start_ts, results)

    starts_gtid = gtids_at_starts(window.start_pos.gtid, results)

    def stamp(index: int) -> str:
        RunFolder.at(url).restamp(RANGES_FOLDER, "raw", first_part + index, stamps[index],
                                  lambda read: gtid_in_range(starts_gtid[index], read))
        return ""

    _each_range(spark, len(specs), stamp)
    t2 = time.perf_counter()
    cycle.folder.remove_folder(RANGES_FOLDER)
    ended = sum(r.ended for r in results)
    flat = [ts for mine in stamps for ts in mine]
    end_ts = flat[ended - 1] if ended else window.start_ts  # only the last range may end mid-transaction
    return contracts.Pulled(
        end_ts=end_ts, resolved_ts=window.resolved(end_ts),
        end_pos=dataclasses.replace(Position.from_dict(results[-1].last_pos),
                                    gtid=gtids_at_starts(window.start_pos.gtid, results)[-1]),
        stopped_at_target=False, aborted_ts=sorted(stamps[i][n] for i, r in enumerate(results) for n in r.aborted),
        events=sum(r.events for r in results), transactions=ended, events_held=max(r.held for r in results),
    ), {"decode_seconds": round(t1 - t0, 3), "stamp_seconds": round(t2 - t1, 3),
        "range_events": [r.events for r in results], "range_seconds": [round(r.seconds, 3) for r in results]}


def joined(first: contracts.Pulled, rest: contracts.Pulled) -> contracts.Pulled:
    """A window read in two parts, `rest` from where `first` ended."""
    return msgspec.structs.replace(
        rest, aborted_ts=sorted([*first.aborted_ts, *rest.aborted_ts]), events=first.events + rest.events,
        transactions=first.transactions + rest.transactions, events_held=max(first.events_held, rest.events_held))


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
