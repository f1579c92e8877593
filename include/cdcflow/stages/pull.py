"""pull: read the upstream binlog for the window and write raw events to the event store."""

from __future__ import annotations

import time

import msgspec

from cdcflow.core import tso
from cdcflow.core.uri import default_server_id
from cdcflow.source.binlog import BinlogReader
from cdcflow.spark.session import is_remote
from cdcflow.stages import contracts, pull_ranges
from cdcflow.stages.cycle import Cycle
from cdcflow.store import metastore


def pull(spark, cycle: Cycle) -> contracts.PullResult:
    """Read the window (read_window) and record how far it was read."""
    window = contracts.WINDOW.read(cycle.folder)
    server_id = int(cycle.source.params.get("server-id") or default_server_id(cycle.changefeed_id))
    t0 = time.time()
    pulled, detail = read_window(spark, cycle, window, server_id)
    contracts.WINDOW.write(cycle.folder, msgspec.structs.replace(window, pulled=pulled))
    metastore.raise_resolved(cycle.changefeed_id, pulled.resolved_ts)
    cycle.log_event("pulled", events=pulled.events, transactions=pulled.transactions, seconds=round(time.time() - t0,
                                                                                                    3),
                end_pos=pulled.end_pos.to_dict(), resolved_ts=pulled.resolved_ts,
                resolved_time=tso.to_text(pulled.resolved_ts), **detail)
    return contracts.PullResult(pulled=pulled.events, transactions=pulled.transactions,
                                events_held=pulled.events_held, **detail)


def read_window(spark, cycle: Cycle, window: contracts.Window, server_id: int) -> tuple[contracts.Pulled, dict]:
    """Read the window in this process into the raw folder.  When pull_ranges.wanted says so
    and a Spark session is given or starting (runner.cycle_runner.pull_and_settle gives a
    pull_ranges.SparkLater), the read stops at the first transaction start after the session
    is up, and what is left of the window is read in ranges by Spark tasks.  Returns what
    was read and where the time went (contracts.PullResult's fields)."""
    t0 = time.time()
    later = pull_ranges.SparkLater.of(spark) if spark is not None and pull_ranges.wanted(cycle, window) else None
    with pull_ranges.session_first(later):
        pulled, reader = read_sequentially(cycle, window, server_id,
                                           pull_ranges.hand_over(cycle, window, later) if later else None)
    if not reader.handed_over:
        return pulled, {"ranges": 1}
    t1 = time.time()
    rest = msgspec.structs.replace(window, start_pos=reader.last_pos, start_ts=reader.last_ts)
    session = later.get()
    starts = pull_ranges.plan(cycle, rest)
    detail = {"ranges": len(starts) + (1 if pulled.events else 0), "sequential_events": pulled.events,
              "sequential_seconds": round(t1 - t0, 3), "plan_seconds": round(time.time() - t1, 3),
              "spark": "connect" if is_remote(session) else "embedded"}
    part, timing = pull_ranges.read(session, cycle, rest, server_id, starts, first_part=1)
    return pull_ranges.joined(pulled, part), {**detail, **timing}


def read_sequentially(cycle: Cycle, window: contracts.Window, server_id: int,
                      hand_over=None) -> tuple[contracts.Pulled, BinlogReader]:
    """The window read in this process, into part 0 of the raw folder (up to where
    `hand_over` stopped it: BinlogReader.read)."""
    reader = BinlogReader(cycle.source, server_id, window.start_pos, window.head,
                          prev_ts=window.start_ts, target_ts=window.target_ts)
    writer = cycle.folder.writer("raw", cycle.config.pull_batch_rows)
    reader.read(writer.add, hand_over)
    writer.close()
    # Everything up to the head is read: the window is resolved up to the moment the head
    # was taken (or up to target-ts, whichever is first; or up to its last transaction, for a
    # window bounded by max-window-bytes).
    resolved = window.resolved(reader.last_ts)
    if window.target_ts:
        resolved = window.target_ts if reader.stopped_at_target else min(resolved, window.target_ts)
    return contracts.Pulled(
        end_ts=reader.last_ts, end_pos=reader.last_pos, resolved_ts=resolved,
        stopped_at_target=reader.stopped_at_target, aborted_ts=sorted(reader.aborted_ts), events=writer.count,
        transactions=reader.transactions, events_held=writer.held_rows,
    ), reader
