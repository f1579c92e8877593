"""A snapshot's deferred secondary indexes, built after a cycle's apply once its checkpoint is
past the copy's last read (snapshot/deferred_indexes.py)."""

from __future__ import annotations

from cdcflow.snapshot import deferred_indexes
from cdcflow.stages.cycle import Cycle


def snapshot_indexes(cycle: Cycle) -> bool:
    """A snapshot's deferred indexes, built once the cycle's checkpoint is past the copy's last
    read (snapshot/deferred_indexes.py); a dry run builds nothing."""
    if cycle.run().dry_run:
        return False
    feed = cycle.feed()
    return deferred_indexes.after_apply(cycle.changefeed_id, feed.checkpoint_pos, feed.checkpoint_ts,
                                        cycle.sink.connection_args(cycle.sink_options), cycle.sink.scheme,
                                        lambda: cycle.keep_lease("apply"), cycle.log_event)
