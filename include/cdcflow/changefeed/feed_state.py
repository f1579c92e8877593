"""The one owner of a changefeed's state, shaped like TiCDC's cdc/owner/feed_state_manager.go:
every change of the stored feed's state goes through here — an operator's pause and resume,
a cycle's progress or target reached, a recorded error (③ / ⑤ / ⑥), gc-ttl running out (⑧),
and a failed backfill put back where it was.

states.py says where an event leads (the table), lifecycle.py when a clock-driven event is
due; this module applies them to the metadata store.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from cdcflow.changefeed import lifecycle, states
from cdcflow.core import tso
from cdcflow.config.keys import DEFAULT_ERROR_STUCK_SECONDS, DEFAULT_GC_TTL_SECONDS
from cdcflow.core.errors import GC_TTL_EXCEEDED, CdcflowError
from cdcflow.config.spec_store import load_spec
from cdcflow.store import metastore


def _setting(config_of: Callable, name: str, default: float) -> float:
    """The config's setting `name`; the config's default (TiCDC's) when the config no longer parses."""
    try:
        return getattr(config_of(), name)
    except CdcflowError:
        return default


def gc_ttl(config_of: Callable) -> float:
    """The changefeed's gc-ttl in seconds; `config_of()` gives its config (or raises when it no
    longer parses)."""
    return _setting(config_of, "gc_ttl_seconds", DEFAULT_GC_TTL_SECONDS)


def error_stuck_limit(config_of: Callable) -> float:
    """changefeed-error-stuck-duration in seconds, as gc_ttl reads it."""
    return _setting(config_of, "error_stuck_seconds", DEFAULT_ERROR_STUCK_SECONDS)


def _take(changefeed_id: str, feed: metastore.FeedState, event: str, now: float | None = None, **values) -> str:
    new, _ = states.next_state(feed.state, event, changefeed_id)
    metastore.update_feed(changefeed_id, state=new, state_since=time.time() if now is None else now, **values)
    return new


def pause(changefeed_id: str, feed: metastore.FeedState) -> str:
    """①: stopped; its cycles do nothing until it is resumed.  Returns the new state."""
    return _take(changefeed_id, feed, "pause", next_retry_at=None)


def pause_created(changefeed_id: str, conn) -> str:
    """① right after creation (`create --pause`), in the creating transaction `conn`: the
    changefeed exists stopped, and no cycle can run before an operator resumes it."""
    new, _ = states.next_state(states.NORMAL, "pause", changefeed_id)
    metastore.update_feed(changefeed_id, conn, state=new, state_since=time.time())
    return new


def resume(changefeed_id: str, feed: metastore.FeedState, **values) -> str:
    """② / ⑨: back to normal, its error cleared, with `values` (a new checkpoint) stored along."""
    now = time.time()
    return _take(changefeed_id, feed, "resume", now, last_progress_at=now, **lifecycle.cleared(), **values)


def cycle_done(changefeed_id: str, feed: metastore.FeedState, start_ts: int, target_ts: int, conn=None) -> str:
    """④ / ⑦ after a cycle that ended well: finished at its target-ts, normal again once a warning
    changefeed's checkpoint moved; a normal or finished one's error is cleared (in `conn`'s
    transaction where given).  Returns the state."""
    state = feed.state
    if target_ts and feed.checkpoint_ts >= target_ts:
        state, _ = states.next_state(feed.state, "target_reached", changefeed_id)
    elif feed.state == states.WARNING and feed.checkpoint_ts > start_ts:
        state, _ = states.next_state(feed.state, "progress", changefeed_id)
    values = {"state": state, "state_since": time.time()} if state != feed.state else {}
    if state in (states.NORMAL, states.FINISHED):
        values.update(lifecycle.cleared())
    if values:
        metastore.update_feed(changefeed_id, conn=conn, **values)
    return state


def record_error(changefeed_id: str, err: CdcflowError, stuck_limit: float | None = None,
                 now: float | None = None, conn=None) -> str:
    """③ / ⑤ / ⑥: warning with the next retry time for a retryable error, failed after
    `stuck_limit` seconds without progress (default: the changefeed's
    changefeed-error-stuck-duration), failed for any other error (in `conn`'s transaction where
    given).  Returns the state."""
    feed = metastore.get_feed(changefeed_id, conn=conn)
    if feed.state in states.IDLE_REASONS:
        return feed.state
    if stuck_limit is None:
        stuck_limit = error_stuck_limit(lambda: load_spec(changefeed_id).config())
    now = time.time() if now is None else now
    values: dict = {"error": lifecycle.error_record(err, now)}
    if err.retryable:
        in_warning = feed.state == states.WARNING
        since = feed.error_since if in_warning and feed.error_since else now
        stuck = in_warning and lifecycle.stuck_seconds(feed, now) > stuck_limit
        event = "stuck_timeout" if stuck else "retryable_error"
        attempt = feed.retry_count + 1
        values.update(error_since=since, retry_count=attempt,
                      next_retry_at=None if stuck else now + lifecycle.backoff_seconds(attempt))
        if stuck:
            values["error"]["message"] += (f" (no progress for {int(lifecycle.stuck_seconds(feed, now))} s, longer "
                                           f"than changefeed-error-stuck-duration {int(stuck_limit)} s)")
    else:
        event = "fatal_error"
        values.update(error_since=now, next_retry_at=None)
    new, _ = states.next_state(feed.state, event, changefeed_id)
    values.update(state=new, state_since=now if new != feed.state else feed.state_since)
    metastore.update_feed(changefeed_id, conn=conn, **values)
    return new


def expire_gc_ttl(changefeed_id: str, feed: metastore.FeedState, config_of: Callable,
                  now: float | None = None) -> metastore.FeedState:
    """⑧, when a cycle or a command looks at it: a changefeed stopped or failed longer than
    gc-ttl fails with ErrGCTTLExceeded.  Returns the feed as it is then."""
    if feed.state not in (states.STOPPED, states.FAILED):
        return feed
    ttl = gc_ttl(config_of)
    now = time.time() if now is None else now
    feed = metastore.get_feed(changefeed_id)
    if not lifecycle.gc_ttl_expired(feed, ttl, now):
        return feed
    new, _ = states.next_state(feed.state, "gc_ttl_exceeded", changefeed_id)
    err = CdcflowError(
        f"it has been {feed.state} since {lifecycle.utc(feed.state_since)}, longer than gc-ttl ({int(ttl)} s); "
        "it no longer holds back the upstream's log retention and cannot be resumed",
        changefeed=changefeed_id, code=GC_TTL_EXCEEDED,
        hint="resume it from a point the upstream still holds with "
             "`cdcflow changefeed resume --overwrite-checkpoint-ts now`, or re-create it",
    )
    metastore.update_feed(changefeed_id, state=new, state_since=now, error=lifecycle.error_record(err, now),
                          error_since=now,
                          next_retry_at=None)
    return metastore.get_feed(changefeed_id)


def undo_backfill(changefeed_id: str, before: dict, err: CdcflowError, conn=None) -> CdcflowError:
    """A backfill that failed before it wrote anything downstream puts the changefeed back where
    it was (checkpoint, replay horizon, state): its next catch-up runs as if the backfill had
    not been asked for.  Returns the error, saying so."""
    metastore.update_feed(changefeed_id, conn=conn, checkpoint_ts=before["checkpoint_ts"],
                          checkpoint_pos=before["checkpoint_pos"], replay_until=before["replay_until"],
                          state=before["state"])
    return CdcflowError(
        f"backfill from ts {before['from_ts']} ({tso.to_text(before['from_ts'])}) failed before it wrote "
        f"anything, so the changefeed is back at checkpoint {before['checkpoint_ts']} ({before['state']}): "
        f"{err.message.removeprefix(f'changefeed {changefeed_id}: ')}", changefeed=changefeed_id, ts=err.ts,
        statement=err.statement, code=err.code,
        retryable=err.retryable, hint=err.hint)
