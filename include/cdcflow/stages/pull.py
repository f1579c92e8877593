"""pull: read the upstream binlog for the window and write raw events to the event store."""

from __future__ import annotations

import time

from cdcflow.core import tso
from cdcflow.core.uri import default_server_id
from cdcflow.source.binlog import BinlogReader, Position
from cdcflow.stages.cycle import Cycle


def pull(spark, cycle: Cycle) -> dict:
    run = cycle.run()
    head = Position.from_dict(run.stats["head"])
    server_id = int(cycle.source.params.get("server-id") or default_server_id(cycle.cid))
    reader = BinlogReader(cycle.source, server_id, Position.from_dict(run.start_pos), head,
                          prev_ts=run.start_ts, target_ts=run.target_ts)
    t0 = time.time()
    writer = cycle.folder.writer("raw")
    reader.read(writer.add)
    writer.close()
    # Everything up to the head is read: the window is resolved up to the moment the head
    # was taken (or up to target-ts, whichever is first).
    resolved = max(reader.last_ts, int(run.stats["head_tso"]))
    if run.target_ts:
        resolved = run.target_ts if reader.stopped_at_target else min(resolved, run.target_ts)
    window = {
        "start_ts": run.start_ts, "start_pos": run.start_pos,
        "end_ts": reader.last_ts, "end_pos": reader.last_pos.to_dict(),
        "resolved_ts": resolved, "stopped_at_target": reader.stopped_at_target,
        "aborted_ts": sorted(reader.aborted_ts), "events": writer.count,
        "transactions": reader.transactions,
    }
    cycle.folder.write_json("window.json", window)
    secs = time.time() - t0
    cycle.event("pulled", events=writer.count, transactions=reader.transactions, seconds=round(secs, 3),
                end_pos=window["end_pos"], resolved_ts=resolved, resolved_time=tso.to_text(resolved))
    return {"pulled": writer.count, "transactions": reader.transactions}
