"""A live upstream keeps writing while it is verified: a chunk may differ only because the
changefeed has not applied the upstream's latest rows yet.  So a difference counts only if it
is still there once the changefeed's checkpoint has passed the upstream's binlog head as it
was when the difference was seen (as DM's validator re-checks its failed rows)."""

from __future__ import annotations

import time

from cdcflow.source.binlog import Position, head_position
from cdcflow.store import metastore

POLL_SECONDS = 2.0


def head(source) -> Position:
    conn = source.connect()
    try:
        return head_position(conn)
    finally:
        conn.close()


def applied(changefeed_id: str, pos: Position) -> bool:
    """Has the changefeed's checkpoint reached `pos`?"""
    feed = metastore.get_feed(changefeed_id)
    # a checkpoint moved to a new source has no file until a cycle locates it: not reached
    return bool(feed.checkpoint_pos.get("file")) and Position.from_dict(feed.checkpoint_pos).key() >= pos.key()


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


def wait_applied(changefeed_id: str, pos: Position, timeout: float, moves) -> bool:
    """Wait (at most `timeout` seconds) until the checkpoint reaches `pos`; False when it did
    not, at once once `moves()` says the changefeed's state lets no cycle move it."""
    deadline = time.monotonic() + timeout
    while not applied(changefeed_id, pos):
        if not moves() or time.monotonic() >= deadline:
            return False
        _sleep(min(POLL_SECONDS, max(0.0, deadline - time.monotonic())))
    return True
