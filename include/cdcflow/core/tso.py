"""TSO-shaped timestamps: (physical_ms << 18) | logical, as in TiDB/TiCDC."""

from __future__ import annotations

import datetime as _dt
import re
import time

LOGICAL_BITS = 18
_LOGICAL_MASK = (1 << LOGICAL_BITS) - 1


def compose(physical_ms: int, logical: int = 0) -> int:
    return (int(physical_ms) << LOGICAL_BITS) | (int(logical) & _LOGICAL_MASK)


def physical_ms(ts: int) -> int:
    return int(ts) >> LOGICAL_BITS


def logical(ts: int) -> int:
    return int(ts) & _LOGICAL_MASK


def now() -> int:
    return compose(int(time.time() * 1000))


def to_datetime(ts: int) -> _dt.datetime:
    return _dt.datetime.fromtimestamp(physical_ms(ts) / 1000, tz=_dt.timezone.utc)


def to_text(ts: int | None) -> str | None:
    """TiCDC's checkpoint_time format: local-less 'YYYY-MM-DD HH:MM:SS.fff' in UTC."""
    if not ts:
        return None
    return to_datetime(ts).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def for_binlog_event(prev_ts: int, event_time_s: int) -> int:
    """Commit ts of a binlog transaction: deterministic from the previous one.

    Binlog timestamps have second precision and may go backwards (a long
    transaction commits with its start time), so the ts is the event time
    unless that would not move forward.
    """
    return max(int(prev_ts) + 1, compose(int(event_time_s) * 1000))


def second_end(ts: int) -> int:
    """The last ts of the wall-clock second `ts` falls in.  A binlog dates transactions to the
    second, so a start at `ts` must read that whole second again (see position_for_ts)."""
    return compose((physical_ms(ts) // 1000 + 1) * 1000) - 1


_DIGITS = re.compile(r"^\d+$")


def parse(text: str | int) -> int:
    """A TSO, or a date-time ('2026-11-22 10:00:00', ISO 8601; UTC unless it says otherwise)."""
    if isinstance(text, int):
        return text
    s = str(text).strip()
    if _DIGITS.match(s):
        return int(s)
    if s.lower() == "now":
        return now()
    try:
        dt = _dt.datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"{text!r} is neither a TSO (a 64-bit integer) nor a date-time such as '2026-11-22 10:00:00'"
        ) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=_dt.timezone.utc)
    return compose(int(dt.timestamp() * 1000))
