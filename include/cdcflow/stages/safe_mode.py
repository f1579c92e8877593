"""Whether apply writes a window's rows in safe mode (REPLACE, DELETE by key) whatever the
config's `safe-mode` says: where rows above the checkpoint may already be downstream."""

from __future__ import annotations

from cdcflow.stages import contracts
from cdcflow.stages.cycle import Cycle
from cdcflow.store import metastore, table_copies


def may_replay(cycle: Cycle, window: contracts.Window) -> bool:
    """Whether rows above the checkpoint may already be downstream, so that safe mode is
    needed whatever `safe-mode` says (TiCDC, too, writes safely for a while after a start):
    a backfill, a changefeed's first cycle (a snapshot loaded after start-ts may hold its
    rows), a table joining with its copy (snapshot/table_join.py), or a previous cycle that did
    not finish cleanly (it may have written rows)."""
    if window.replay_until or table_copies.in_safe_mode(cycle.changefeed_id):
        return True
    previous = [r for r in metastore.recent_runs(cycle.changefeed_id, 5) if r.run_id != cycle.run_id]
    return not previous or previous[0].status != "done"
