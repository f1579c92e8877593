"""A ts a person gives, checked once for every surface: the CLI (`create --start-ts`, `resume
--overwrite-checkpoint-ts`), the DAG's trigger form and the page (a backfill's or dry run's
`start_ts`), the HTTP API, and prepare as the last guard before a backfill moves the checkpoint.
A ts later than the current TSO is refused with the same words everywhere, before anything is
recorded: a checkpoint moved into the future would stamp every later row with a commit ts from
there, and the resolved ts, which only moves forward, would stay there.  So is a ts older than
the oldest change the upstream still holds (the start of its oldest binlog, which the source
reads: source.binlog.check_ts_held): the changes after it are purged, TiCDC's ErrStartTsBeforeGC."""

from __future__ import annotations

from cdcflow.core import tso
from cdcflow.core.errors import (
    CLI_START_TS_IN_FUTURE,
    INVALID_CONFIG,
    START_TS_BEFORE_GC,
    CdcflowError,
    ConfigError,
)
from cdcflow.core.wording import CLI, Words


def parse(value, name: str, changefeed_id: str | None = None, code: str = INVALID_CONFIG,
          words: Words = CLI) -> int | None:
    """A TSO, a date-time or 'now' (tso.parse); None for nothing given."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        return tso.parse(value)
    except ValueError as e:
        raise ConfigError(f"{name}: {e}", changefeed=changefeed_id, code=code,
                          hint=f"give {name} as a TSO or a UTC date-time ({words.current_tso}), or leave it empty") from None


def not_in_future(ts: int, name: str, changefeed_id: str | None = None, code: str = CLI_START_TS_IN_FUTURE,
                  hint: str | None = None) -> int:
    """`ts`, unless it is later than the current TSO (TiCDC refuses such a start-ts too)."""
    now = tso.now()
    if ts > now:
        raise CdcflowError(
            f"{name} {ts} ({tso.to_text(ts)}) is later than the current TSO {now} ({tso.to_text(now)})",
            changefeed=changefeed_id, code=code,
            hint=hint or f"give a {name} at or before the current TSO (`cdcflow tso query`); nothing was changed")
    return ts


def not_before_gc(ts: int, name: str, changefeed_id: str | None, oldest_log: str, oldest_ts: int) -> int:
    """`ts`, unless it is older than `oldest_ts`, the start of `oldest_log`, the oldest binlog the
    upstream holds: what came before is purged."""
    if ts < oldest_ts:
        raise CdcflowError(
            f"{name} {ts} ({tso.to_text(ts)}) is older than the oldest change the upstream still holds "
            f"(binlog {oldest_log} starts at {tso.to_text(oldest_ts)})", changefeed=changefeed_id,
            code=START_TS_BEFORE_GC,
            hint=f"choose a later {name}, or keep binlogs longer (binlog_expire_logs_seconds); nothing was changed")
    return ts
