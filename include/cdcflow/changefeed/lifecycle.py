"""The clock-driven rules of TiCDC's Changefeed Overview: retry backoff in warning, the error-stuck limit, gc-ttl.

The state table (states.py) says where an event leads; this module decides when
the time-based events are due, and feed_state.py, the one owner of a changefeed's
state, records them, so prepare, finish, the CLI and the HTTP API all apply the
same rules.
"""

from __future__ import annotations

import socket
import time

from cdcflow.changefeed import states
from cdcflow.core.errors import GC_TTL_EXCEEDED, SNAPSHOT_LOST_BY_GC, CdcflowError
from cdcflow.core.wording import CLI, Words
from cdcflow.store import metastore

# TiCDC's changefeed backoff (cdc/owner/feed_state_manager.go): 10 s, doubling, at most 10 min.
BACKOFF_INITIAL_SECONDS = 10.0
BACKOFF_MULTIPLIER = 2.0
BACKOFF_MAX_SECONDS = 600.0

# Errors after which the changefeed cannot resume from its own checkpoint: the upstream no
# longer holds the changes (TiCDC's Changefeed Overview: these do not block GC).  Only a new checkpoint helps.
UNRESUMABLE = {
    GC_TTL_EXCEEDED: "it was left stopped or failed longer than gc-ttl",
    SNAPSHOT_LOST_BY_GC: "the upstream no longer holds the change log at its checkpoint",
}


def backoff_seconds(attempt: int) -> float:
    """The wait after the `attempt`-th failed attempt (1-based)."""
    return min(BACKOFF_MAX_SECONDS, BACKOFF_INITIAL_SECONDS * BACKOFF_MULTIPLIER ** max(0, attempt - 1))


def error_record(err: CdcflowError, now: float) -> dict:
    """What the store keeps of an error: TiCDC's RunningError fields, plus whether it is retryable
    and its remedy (also at the end of the message) for the page to show apart."""
    return {**err.to_dict(), "time": now, "addr": socket.gethostname()}


def stuck_seconds(feed: metastore.FeedState, now: float) -> float:
    """How long a warning changefeed has gone without progress: since its checkpoint last moved,
    or since the warning began if it was idle before that (no cycles is not being stuck)."""
    return now - max(feed.last_progress_at, feed.error_since or 0.0)


def retry_wait_left(feed: metastore.FeedState, now: float | None = None) -> float:
    """The seconds a warning changefeed's cycle must still wait (its backoff); 0: none."""
    now = time.time() if now is None else now
    if feed.state != states.WARNING or not feed.next_retry_at:
        return 0.0
    return max(0.0, feed.next_retry_at - now)


def retry_wait_reason(feed: metastore.FeedState, now: float | None = None) -> str | None:
    """Why a warning changefeed's cycle must wait (its backoff has not run out), or None."""
    now = time.time() if now is None else now
    if not retry_wait_left(feed, now):
        return None
    message = (feed.error or {}).get("message", "an error")
    return (f"changefeed {feed.id} is in warning after {feed.retry_count} failed attempt(s) ({message}); "
            f"the next retry is at {utc(feed.next_retry_at)} (in {int(feed.next_retry_at - now) + 1} s)")


def cleared() -> dict:
    """The values that end a warning: progress or an operator's resume."""
    return {"error": None, "error_since": None, "retry_count": 0, "next_retry_at": None}


def gc_ttl_expired(feed: metastore.FeedState, gc_ttl: float, now: float | None = None) -> bool:
    now = time.time() if now is None else now
    return feed.state in (states.STOPPED, states.FAILED) and now - feed.state_since > gc_ttl \
        and (feed.error or {}).get("code") != GC_TTL_EXCEEDED


def check_resumable(feed: metastore.FeedState, overwrite: bool, words: Words = CLI) -> None:
    """A changefeed whose checkpoint the upstream no longer serves resumes only from a new one."""
    code = (feed.error or {}).get("code")
    if code in UNRESUMABLE and not overwrite:
        raise CdcflowError(
            f"cannot be resumed: {UNRESUMABLE[code]} ({code.split(':')[-1]})",
            changefeed=feed.id, code=code,
            hint=f"resume from a point the upstream still holds: {words.resume_from_now} (or a TSO / date-time)",
        )


def utc(epoch: float) -> str:
    """A moment as the error messages give it."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch))
