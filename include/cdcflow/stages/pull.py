"""pull: read the upstream binlog for the window and write raw events to the event store."""

from __future__ import annotations

import time

import msgspec

from cdcflow.core import tso
from cdcflow.core.uri import default_server_id
from cdcflow.source.binlog import BinlogReader
from cdcflow.spark.session import tasks_run_in
from cdcflow.stages import contracts, pull_keys, pull_ranges
from cdcflow.stages.cycle import Cycle
from cdcflow.store import metastore, schema_versions


def pull(spark, cycle: Cycle) -> contracts.PullResult:
    """Read the window (read_window) and record how far it was read."""
    window = contracts.WINDOW.read(cycle.folder)
    server_id = int(cycle.source.params.get("server-id") or default_server_id(cycle.changefeed_id))
    t0 = time.time()
    pulled, detail = read_window(spark, cycle, window, server_id, keys=stamper_spec(cycle, window))
    contracts.WINDOW.write(cycle.folder, msgspec.structs.replace(window, pulled=pulled))
    metastore.raise_resolved(cycle.changefeed_id, pulled.resolved_ts)
    cycle.log_event("pulled", events=pulled.events, transactions=pulled.transactions, seconds=round(time.time() - t0,
                                                                                                    3),
                end_pos=pulled.end_pos.to_dict(), resolved_ts=pulled.resolved_ts,
                resolved_time=tso.to_text(pulled.resolved_ts), **detail)
    return contracts.PullResult(pulled=pulled.events, transactions=pulled.transactions,
                                events_held=pulled.events_held, **detail)


def stamper_spec(cycle: Cycle, window: contracts.Window) -> dict:
    """What keys the window's row events (stages.pull_keys.KeyStamper): the tracked schema at
    the window's start, the downstream's connection parameters, the config's sql-mode, the
    table filter's rules."""
    tracker = schema_versions.load(cycle.changefeed_id)
    tracker.rewind(window.start_ts)  # an earlier attempt's versions of this window: followed again
    return {"tracker": tracker, "sink": cycle.sink.connection_args(cycle.sink_options),
            "sql_mode": cycle.config.sql_mode, "tables": (tuple(cycle.config.rules), cycle.config.case_sensitive)}


def read_window(spark, cycle: Cycle, window: contracts.Window, server_id: int,
                keys: dict | None = None) -> tuple[contracts.Pulled, dict]:
    """Read the window into the raw folder: in ranges where pull_ranges.wanted says so (as
    Spark tasks in `spark`, a session or a pull_ranges.SparkLater, where it is there to run
    them; else in child processes), otherwise sequentially in this process.  `keys`:
    stamper_spec's, to write each row change's key texts (none written without it).  Returns
    what was read and where the time went (contracts.PullResult's fields)."""
    if not pull_ranges.wanted(cycle, window):
        pulled, _reader = read_sequentially(cycle, window, server_id, keys)
        return pulled, {"ranges": 1, "kept_in_process": cycle.folder.kept("raw")}
    t0 = time.time()
    session = pull_ranges.SparkLater.of(spark).for_ranges()
    starts = pull_ranges.plan(cycle, window)
    detail = {"ranges": len(starts), "plan_seconds": round(time.time() - t0, 3),
              "spark": "" if session is None else tasks_run_in(session)}
    pulled, timing = pull_ranges.read(session, cycle, window, server_id, starts, keys)
    return pulled, {**detail, **timing}


def read_sequentially(cycle: Cycle, window: contracts.Window, server_id: int,
                      keys: dict | None = None) -> tuple[contracts.Pulled, BinlogReader]:
    """The window read in this process, into part 0 of the raw folder (`keys`: read_window's)."""
    reader = BinlogReader(cycle.source, server_id, window.start_pos, window.head,
                          prev_ts=window.start_ts, target_ts=window.target_ts, exact_head=not window.bounded)
    # the window's binlog spans: the writer lets a catch-up's window go early
    writer = cycle.folder.writer("raw", cycle.config.pull_batch_rows, keep=cycle.engine.window_kept(),
                                 spans=window.spans)
    stamper = pull_keys.KeyStamper.of(keys) if keys else None
    try:
        if not window.idle:  # nothing written since the checkpoint: no binlog dump (its two connections) to read none
            reader.read(writer.add if stamper is None else stamper.wrap(writer.add, writer), writer.columns, stamper)
    finally:
        spans = stamper.close() if stamper is not None else []
    writer.close()
    if stamper is not None:
        spans = pull_keys.mark_tangled(spans, stamper.pairs)
    contracts.KEY_SPANS.write(cycle.folder, spans)
    # Everything up to the head is read: the window is resolved up to the moment the head
    # was taken (or up to target-ts, whichever is first; or up to its last transaction, for a
    # window bounded by max-window-bytes).
    resolved = window.resolved(reader.last_ts)
    if window.target_ts:
        resolved = window.target_ts if reader.stopped_at_target else min(resolved, window.target_ts)
    return contracts.Pulled(
        end_ts=reader.last_ts, end_pos=reader.last_pos, resolved_ts=resolved,
        stopped_at_target=reader.stopped_at_target, aborted_ts=sorted(reader.aborted_ts),
        rolled_back=list(reader.rolled_back), events=writer.count,
        transactions=reader.transactions, events_held=writer.held_rows,
    ), reader
