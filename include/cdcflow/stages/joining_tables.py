"""Tables joining a running changefeed (add-tables, resync-tables, a filter an update widens):
after a cycle's apply, a few of their chunks copied at a point of their own
(snapshot/table_join.py)."""

from __future__ import annotations

from cdcflow.stages.cycle import Cycle
from cdcflow.store import table_copies


def copy_tables(cycle: Cycle) -> bool:
    """The tables joining the changefeed: joined, copied for up to table-copy-seconds, and their
    deferred indexes built once their copy is done, after the window is applied whole
    (snapshot/table_join.py); a dry run copies nothing."""
    if cycle.run().dry_run or not table_copies.busy(cycle.changefeed_id):
        return False
    from cdcflow.snapshot import table_join  # lazy: the copy's planner, 200 ms, only where a table joins

    feed = cycle.feed()
    return table_join.step(cycle.changefeed_id, cycle.config, cycle.source.connection_args(),
                           cycle.sink.connection_args(cycle.sink_options), cycle.sink.scheme, feed.checkpoint_pos,
                           feed.checkpoint_ts, cycle.log_event, lambda: cycle.keep_lease("apply"))
