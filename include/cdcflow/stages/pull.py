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
    """Read the window: in ranges on Spark when a session is given and pull_ranges.wanted
    said so (stages.pull_and_settle), else in this process."""
    window = contracts.WINDOW.read(cycle.folder)
    server_id = int(cycle.source.params.get("server-id") or default_server_id(cycle.cid))
    t0 = time.time()
    starts = pull_ranges.plan(cycle, window) if spark is not None and pull_ranges.wanted(cycle, window) else []
    detail = {"plan_seconds": round(time.time() - t0, 3), "spark": "connect" if is_remote(spark) else "embedded"} \
        if starts else {}
    if len(starts) > 1:
        pulled, timing = pull_ranges.read(spark, cycle, window, server_id, starts)
        detail.update(timing)
    else:
        pulled = _read_sequentially(cycle, window, server_id)
    contracts.WINDOW.write(cycle.folder, msgspec.structs.replace(window, pulled=pulled))
    metastore.raise_resolved(cycle.cid, pulled.resolved_ts)
    secs = time.time() - t0
    ranges = max(1, len(starts))
    cycle.event("pulled", events=pulled.events, transactions=pulled.transactions, ranges=ranges,
                seconds=round(secs, 3), end_pos=pulled.end_pos.to_dict(), resolved_ts=pulled.resolved_ts,
                resolved_time=tso.to_text(pulled.resolved_ts), **detail)
    return contracts.PullResult(pulled=pulled.events, transactions=pulled.transactions, ranges=ranges, **detail)


def _read_sequentially(cycle: Cycle, window: contracts.Window, server_id: int) -> contracts.Pulled:
    reader = BinlogReader(cycle.source, server_id, window.start_pos, window.head,
                          prev_ts=window.start_ts, target_ts=window.target_ts)
    writer = cycle.folder.writer("raw")
    reader.read(writer.add)
    writer.close()
    # Everything up to the head is read: the window is resolved up to the moment the head
    # was taken (or up to target-ts, whichever is first).
    resolved = max(reader.last_ts, window.head_tso)
    if window.target_ts:
        resolved = window.target_ts if reader.stopped_at_target else min(resolved, window.target_ts)
    return contracts.Pulled(
        end_ts=reader.last_ts, end_pos=reader.last_pos, resolved_ts=resolved,
        stopped_at_target=reader.stopped_at_target, aborted_ts=sorted(reader.aborted_ts), events=writer.count,
        transactions=reader.transactions,
    )
