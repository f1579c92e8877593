"""pull's parallel path: the window cut into ranges (source.binlog_ranges), each read on its
own binlog connection and written to the event store by its reader; then the commit ts chain
over all the transactions (a small pass here) and a second round that stamps each range's
events with their ts.  The events and the Pulled record are those the sequential read gives
(tests/stages/test_pull_ranges.py compares every event).

Taken only when `[cdcflow] pull-parallelism` is above 1, the window holds at least
`pull-parallel-min-bytes` of binlog and has no target-ts; otherwise pull reads sequentially,
in this process, without Spark.  The ranges are Spark tasks where the session is there to run
them (SparkLater.for_ranges), else child processes of pull's (core.child_calls): an embedded
session takes seconds to start, and pull does not wait for it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from concurrent.futures import Future, ThreadPoolExecutor

import msgspec
import pyarrow as pa

from cdcflow.core import child_calls
from cdcflow.source.binlog import Position
from cdcflow.source.binlog_ranges import (RangeResult, chain, cuts, gtids_at_starts, range_server_id, span_bytes,
                                          window_bytes)
from cdcflow.sink.conflict_keys import PAIRS_BYTES, ConflictPairs
from cdcflow.stages import contracts, pull_keys, range_parts
from cdcflow.stages.cycle import Cycle

RANGES_FOLDER = range_parts.RANGES_FOLDER


def ranges_asked(cfg) -> int:
    """`pull-parallelism`, its default 0 being the cores of the machine pull runs on (what
    an embedded local[*] Spark runs at once); 1 turns the parallel path off."""
    return cfg.pull_parallelism or os.cpu_count() or 1


def wanted(cycle: Cycle, window: contracts.Window) -> bool:
    """Whether this cycle's pull takes the parallel path (and so needs a Spark session)."""
    cfg = cycle.config
    if ranges_asked(cfg) <= 1 or window.idle or window.target_ts:
        return False
    return _binlog_bytes(cycle, window) >= cfg.pull_parallel_min_bytes


def _binlog_bytes(cycle: Cycle, window: contracts.Window) -> int:
    """The window's binlog bytes: from the spans prepare recorded, or its positions where one
    file holds it, without a connection to the upstream; a window over several files that an
    older prepare recorded without its spans asks the upstream for the files' sizes."""
    if window.spans is not None:
        return span_bytes(window.spans)
    if window.start_pos.file == window.head.file:
        return window_bytes(None, window.start_pos, window.head)
    conn = cycle.source.connect()
    try:
        return window_bytes(conn, window.start_pos, window.head)
    finally:
        conn.close()


class SparkLater:
    """The Spark session the cycle's later stages use: one given, or a future of one still
    starting (the CLI's cycle starts it beside pull).  `elsewhere`: its tasks run on other
    machines' cores (a Spark Connect server, a cluster: spark.place.SparkPlace.elsewhere)."""

    def __init__(self, session, elsewhere: bool = False):
        self._session = session
        self.elsewhere = elsewhere

    @classmethod
    def of(cls, spark) -> "SparkLater":
        return spark if isinstance(spark, cls) else cls(spark)

    def ready(self) -> bool:
        return not isinstance(self._session, Future) or self._session.done()

    def get(self):
        return self._session.result() if isinstance(self._session, Future) else self._session

    def for_ranges(self):
        """The session the ranges run in as Spark tasks: a Connect server's or a cluster's
        (waited for: its tasks run on other machines' cores), or an embedded one already up (its
        Python workers are warm).  None while an embedded one is starting: its tasks would run
        on this machine's cores anyway, so the ranges run in child processes here at once
        instead of waiting for the JVM."""
        if self._session is None or not (self.elsewhere or self.ready()):
            return None
        return self.get()


def plan(cycle: Cycle, window: contracts.Window) -> list[Position]:
    """The ranges' start positions, the window's start first: one only when the window
    holds no transaction boundary to cut at."""
    conn = cycle.source.connect()
    try:
        return [window.start_pos, *cuts(conn, window.start_pos, window.head, ranges_asked(cycle.config))]
    finally:
        conn.close()


def read(spark, cycle: Cycle, window: contracts.Window, server_id: int,
         starts: list[Position], keys: dict | None = None) -> tuple[contracts.Pulled, dict]:
    """Read the ranges starting at `starts` (the last ends at the head) into the raw folder, one
    part each: as Spark tasks in `spark`, or in child processes of this one where it is None.
    `keys`: pull.stamper_spec's, to write key texts (each range follows the window's DDLs from
    its start only: apply checks the spans, stages.pull_keys).  Also returns where the time
    went: each range's events and decoding seconds, and the seconds of the two rounds
    (decoding, stamping)."""
    ends = [*starts[1:], window.head]
    url, batch_rows = cycle.folder.url, cycle.config.pull_batch_rows
    # a range's events number its transactions from 0: the tracker's versions go above the start
    # (and each holds its share of the conflict-key pairs' budget: the driver holds them all)
    spec = None if not keys else {**keys, "offset": window.start_ts + 1,
                                  "pairs_budget": PAIRS_BYTES // len(starts)}
    # a range ends where the next one starts, a transaction's start; the last at the window's
    # head, exact unless max-window-bytes bounded it (source.binlog.BinlogReader's exact_head)
    exact = [*(True for _ in starts[1:]), not window.bounded]
    reads = [(url, batch_rows, i, cycle.source, range_server_id(server_id, i), s.to_dict(), e.to_dict(), spec, x)
             for i, (s, e, x) in enumerate(zip(starts, ends, exact))]
    t0 = time.perf_counter()
    answers = [json.loads(r) for r in _each(spark, range_parts.read_range, reads, "pull's range reader")]
    spans = [a.pop("key_spans") for a in answers]
    given_up = [a.pop("all_tangled") for a in answers]
    results = [RangeResult(**a) for a in answers]
    t1 = time.perf_counter()
    stamps = chain(window.start_ts, results)
    if keys:
        spans = [msgspec.structs.replace(s, first_ts=stamps[i][s.first_ts], last_ts=stamps[i][s.last_ts])
                 for i, mine in enumerate(spans) for s in msgspec.convert(mine, list[contracts.KeySpan])]
        contracts.KEY_SPANS.write(cycle.folder, pull_keys.mark_tangled(spans, _window_pairs(cycle, given_up)))
    starts_gtid = gtids_at_starts(window.start_pos.gtid, results)
    stamping = [(url, i, stamps[i], starts_gtid[i]) for i in range(len(reads))]
    if spark is None:  # Arrow's work, which leaves the GIL: threads here, not processes to start
        with ThreadPoolExecutor(len(stamping)) as pool:
            list(pool.map(lambda args: range_parts.stamp_range(*args), stamping))
    else:
        _each(spark, range_parts.stamp_range, stamping, "pull's range stamper")
    t2 = time.perf_counter()
    cycle.folder.remove_folder(RANGES_FOLDER)
    ended = sum(r.ended for r in results)
    flat = [ts for mine in stamps for ts in mine]
    end_ts = flat[ended - 1] if ended else window.start_ts  # only the last range may end mid-transaction
    return contracts.Pulled(
        end_ts=end_ts, resolved_ts=window.resolved(end_ts),
        end_pos=dataclasses.replace(Position.from_dict(results[-1].last_pos), gtid=starts_gtid[-1]),
        stopped_at_target=False, aborted_ts=sorted(stamps[i][n] for i, r in enumerate(results) for n in r.aborted),
        rolled_back=[(stamps[i][n], lo, hi) for i, r in enumerate(results) for n, lo, hi in r.rolled_back],
        events=sum(r.events for r in results), transactions=ended, events_held=max(r.held for r in results),
    ), {"decode_seconds": round(t1 - t0, 3), "stamp_seconds": round(t2 - t1, 3),
        "range_events": [r.events for r in results], "range_seconds": [round(r.seconds, 3) for r in results]}


def _window_pairs(cycle: Cycle, given_up: list[list]) -> ConflictPairs:
    """Every range's conflict-key pairs (range_parts.pairs_file), so that a value two ranges
    share tangles their keys as it does within one range; `given_up`: each range's tables past
    its budget, every change of which is tangled."""
    pairs = ConflictPairs()
    for tables in given_up:
        for schema, table in tables:
            pairs.tangle_all((schema, table))
    for i in range(len(given_up)):
        pairs.merge(cycle.folder.read_table(range_parts.pairs_file(i)))
    return pairs


def _each(spark, fn, calls: list[tuple], what: str) -> list[str]:
    """fn(*args) for each args of `calls`, one Spark task each (embedded or Connect alike), or
    one child process each where `spark` is None; their results in order."""
    if spark is None:
        return child_calls.call_all([(fn, args) for args in calls], what)

    def run(batches):
        for batch in batches:
            for i in batch.column(0).to_pylist():
                yield pa.RecordBatch.from_pydict({"i": [i], "out": [fn(*calls[i])]})

    rows = spark.range(0, len(calls), 1, len(calls)).mapInArrow(run, "i long, out string").collect()
    return [r.out for r in sorted(rows, key=lambda r: r.i)]
