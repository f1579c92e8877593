"""prepare: decide whether this cycle runs, take the lease, fix the window."""

from __future__ import annotations

import dataclasses

from cdcflow.changefeed import feed_state, lifecycle, states
from cdcflow.core import ts_input, tso
from cdcflow.core.errors import UPSTREAM_UNREACHABLE, CdcflowError, classify
from cdcflow.core.uri import default_server_id
from cdcflow.source.binlog import (
    Position,
    check_checkpoint_held,
    check_ts_held,
    head_position,
    position_for_ts,
    replay_horizon,
)
from cdcflow.source.binlog_ranges import bounded_head, spans_of
from cdcflow.source.gtid_locate import gtid_at, locate
from cdcflow.source.position import binlog_sizes
from cdcflow.stages import contracts
from cdcflow.stages.cycle import Cycle
from cdcflow.store import metastore, snapshots
from cdcflow.store.engine import transaction


def prepare(cycle: Cycle, *, start_ts: int | None = None, target_ts: int | None = None, dry_run: bool = False,
            manual: bool = False) -> contracts.Prepared:
    """Fix the window of one cycle.  `start_ts` (a backfill) first moves the checkpoint to that
    ts, as `resume --overwrite-checkpoint-ts` does; `target_ts` bounds this cycle only.  A run
    a person triggered (`manual`) does not wait out a warning's backoff: it is their decision,
    as TiCDC's resume is."""
    changefeed_id, run_id = cycle.changefeed_id, cycle.run_id
    if start_ts is not None:  # the last guard: whatever surface let it through, nothing is recorded
        ts_input.not_in_future(start_ts, "start_ts", changefeed_id)
        check_ts_held(cycle.source, cycle.source.server_id or default_server_id(changefeed_id), start_ts,
                      "start_ts", changefeed_id)
    feed = feed_state.expire_gc_ttl(changefeed_id, cycle.feed(), lambda: cycle.config)  # ⑧ happens when a cycle looks
    reason = _skip_reason(changefeed_id, feed, start_ts, manual)
    if reason:
        cycle.log_event("skip", state=feed.state, reason=reason)
        return contracts.Prepared(run_id=run_id, skip=True, reason=reason, state=feed.state)
    try:
        cycle.config  # a config that no longer parses fails here (⑥), before any lease is taken
    except CdcflowError as e:
        feed_state.record_error(changefeed_id, e.with_context(changefeed=changefeed_id))
        raise

    with transaction() as c:  # the lease and the runs it replaces, one commit (ErrLeaseHeld: before the try)
        cycle.renew_lease(conn=c)
        replaced = metastore.supersede_open_runs(changefeed_id, run_id, conn=c)
    if replaced:
        cycle.log_event("replaced open cycles", runs=replaced)
    before_backfill = None
    try:
        replay_until = 0
        if start_ts is not None:
            before_backfill = _where(feed, start_ts) if not dry_run else None
            feed, replay_until = _backfill_from(cycle, feed, start_ts, persist=not dry_run)
        start, sizes, head, bound = _upstream_window(cycle, feed)
        check_checkpoint_held(list(sizes), feed.checkpoint_pos, feed.checkpoint_ts)
        head_tso = tso.now()
        target = target_ts or cycle.spec.target_ts or 0
        metastore.start_run(changefeed_id, run_id, feed.checkpoint_ts, feed.checkpoint_pos, target, dry_run,
                            stats={metastore.RUN_BACKFILL: before_backfill} if before_backfill else None)
        # DDLs up to where the checkpoint was before a backfill or an overwrite are replays
        replay_until = max(replay_until, feed.replay_until)
        if replay_until <= feed.checkpoint_ts:
            replay_until = 0  # every replay is behind the checkpoint: the cycle writes as configured
        contracts.WINDOW.write(cycle.folder, contracts.Window(
            start_ts=feed.checkpoint_ts, start_pos=start, head=bound or head, head_tso=head_tso, target_ts=target,
            replay_until=replay_until, bounded=bool(bound), spans=spans_of(sizes, start, bound or head)))
    except BaseException as e:
        metastore.release_lease(changefeed_id, run_id)
        err = classify(e, "prepare", changefeed_id)
        if before_backfill:
            err = feed_state.undo_backfill(changefeed_id, before_backfill, err)
        else:
            feed_state.record_error(changefeed_id, err, feed_state.error_stuck_limit(lambda: cycle.config))
        if err is e:
            raise
        raise err from e
    cycle.log_event("window", checkpoint_ts=feed.checkpoint_ts, start=start.to_dict(), head=head.to_dict(),
                target_ts=target, dry_run=dry_run, bounded_at=bound.to_dict() if bound else None)
    return contracts.Prepared(run_id=run_id, skip=False, reason=None, state=feed.state,
                              checkpoint_ts=feed.checkpoint_ts)


def _skip_reason(changefeed_id: str, feed, start_ts: int | None, manual: bool) -> str | None:
    """Why the cycle does nothing (None: it runs): the changefeed's state, an initial copy not
    finished, or a warning's backoff (not for a backfill or a run a person triggered)."""
    if feed.state in states.IDLE_REASONS:
        reason = f"changefeed {changefeed_id} does nothing this cycle: {states.IDLE_REASONS[feed.state]}"
        return reason + (f" (error: {feed.error['message']})" if feed.error else "")
    if snapshots.unfinished(changefeed_id):
        return (f"changefeed {changefeed_id} does nothing this cycle: its initial copy (create --snapshot) has "
                f"not finished; run `cdcflow changefeed create -c {changefeed_id} … --snapshot` again to continue it")
    if start_ts is None and not manual:  # a backfill or a triggered run is an operator's request
        return lifecycle.retry_wait_reason(feed)
    return None


def _upstream_window(cycle: Cycle, feed) -> tuple[Position, dict[str, int], Position, Position | None]:
    """What the window needs of the upstream, on one connection: its start as this source's
    position, the binlogs it holds (each one's size: binlog_sizes), its head, and where a window
    over max-window-bytes ends (None or 0: it does not)."""
    try:
        conn = cycle.source.connect()
    except CdcflowError:
        raise  # a password reference that does not resolve says so itself
    except Exception as e:
        raise CdcflowError(f"cannot connect to the upstream {cycle.source.redacted()}: {e}",
                           code=UPSTREAM_UNREACHABLE,
                           hint="the next cycle retries; check that the upstream runs") from None
    try:
        start = _start_on_this_source(cycle, conn, Position.from_dict(feed.checkpoint_pos), feed.checkpoint_ts)
        head = head_position(conn)
        sizes = binlog_sizes(conn)  # after the head: every file up to the head's is listed
        # a window too large for one cycle ends max-window-bytes on; the next cycle reads on
        bound = cycle.config.max_window_bytes and bounded_head(conn, start, head, cycle.config.max_window_bytes)
    finally:
        conn.close()
    return start, sizes, head, bound


def _start_on_this_source(cycle: Cycle, conn, start: Position, checkpoint_ts: int) -> Position:
    """The window's start as a binlog position of the source: a checkpoint `update --source-uri`
    moved to a new source holds only its GTID position, located here in the new server's binlog
    (refused when the server cannot continue it); a checkpoint recorded without its GTID position
    (a cdcflow from before GTID checkpoints, a DDL barrier inside a range of a parallel read)
    gets it from the binlog, so the checkpoints after it carry one."""
    if start.file is None:
        located = locate(conn, start.gtid, cycle.changefeed_id, checkpoint_ts, cycle.source.redacted())
        cycle.log_event("located by gtid", gtid=start.gtid, position=located.to_dict())
        return located
    if start.gtid is None:
        return gtid_at(conn, start)
    return start


def _where(feed, start_ts: int) -> dict:
    return {"from_ts": start_ts, "checkpoint_ts": feed.checkpoint_ts, "checkpoint_pos": feed.checkpoint_pos,
            "replay_until": feed.replay_until, "state": feed.state}


def _backfill_from(cycle: Cycle, feed, start_ts: int, persist: bool = True):
    """Move the checkpoint to `start_ts`; DDLs up to the old checkpoint will be replays.
    A dry run (persist=False) only plans its window from there and moves nothing."""
    server_id = cycle.source.server_id or default_server_id(cycle.changefeed_id)
    pos = position_for_ts(cycle.source, server_id, start_ts, cycle.changefeed_id)
    cycle.log_event("backfill", from_ts=start_ts, position=pos.to_dict(), previous_checkpoint=feed.checkpoint_ts,
                dry_run=not persist)
    replay_until = replay_horizon(start_ts, feed.replay_until, feed.checkpoint_ts)
    if not persist:
        return dataclasses.replace(feed, checkpoint_ts=start_ts, checkpoint_pos=pos.to_dict()), replay_until
    metastore.update_feed(cycle.changefeed_id, checkpoint_ts=start_ts, checkpoint_pos=pos.to_dict(),
                          replay_until=replay_until)
    return cycle.feed(), replay_until

