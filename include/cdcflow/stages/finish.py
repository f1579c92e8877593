"""finish: the state transition (changefeed.feed_state), garbage collection of the cycle's events, the lease."""

from __future__ import annotations

import json
import time

from cdcflow.changefeed import feed_state
from cdcflow.core import tso
from cdcflow.core.errors import CYCLE_INTERRUPTED, TASK_FAILED, CdcflowError
from cdcflow.stages.contracts import FinishResult, plain
from cdcflow.stages.cycle import Cycle
from cdcflow.store import metastore
from cdcflow.store.engine import transaction
from cdcflow.store.events import collect_garbage


# Stages whose failure leaves the downstream untouched: a backfill failing there can be undone.
# Once apply has begun, rows of the replayed window may be downstream, and the checkpoint must
# stay where the backfill put it (at or below them) for the next cycles to carry it on.
WRITE_NOTHING = ("pull", "filter", "barrier")


def finish(cycle: Cycle, error: str | None = None) -> FinishResult:
    changefeed_id, run_id = cycle.changefeed_id, cycle.run_id
    try:
        run = cycle.run()
    except CdcflowError:
        return FinishResult(state=cycle.feed().state, skipped=True)  # prepare skipped this cycle
    if run.status == metastore.SUPERSEDED:
        # another cycle owns the changefeed (and the lease, and the event store's folders) now
        by = run.stats.get("superseded_by", "")
        cycle.log_event("superseded", by=by, note="nothing to finish: the changefeed's state is that cycle's")
        return FinishResult(state=cycle.feed().state, skipped=True, superseded_by=by)
    err = None
    if run.error:
        d = json.loads(run.error)
        err = CdcflowError(d["message"], code=d["code"], retryable=d["retryable"])
        err.remedy = d.get("hint")
    elif error:
        err = CdcflowError(error, changefeed=changefeed_id, code=TASK_FAILED)  # a task died unrecorded
    try:
        with transaction() as c:  # the changefeed's new state and the run's end, in one commit
            state, err = _record_end(cycle, run, err, c)
        if err is None:
            cycle.folder.remove()  # every event of this cycle is below the checkpoint now
        # earlier cycles' folders (failed or killed ones) hold only events at or below the
        # checkpoint too: a cycle always re-reads the upstream from the checkpoint on
        removed = collect_garbage(cycle.config.event_store, changefeed_id, keep={run_id})
        if removed:
            cycle.log_event("event store gc", removed=removed)
    except BaseException:
        metastore.release_lease(changefeed_id, run_id)
        raise
    # the lease goes last: a cycle that takes it may find only its own folder gone from here on
    with transaction() as c:
        metastore.release_lease(changefeed_id, run_id, conn=c)
        feed = metastore.get_feed(changefeed_id, conn=c)
        metastore.update_run(changefeed_id, run_id, conn=c, stats={metastore.RUN_END: {
            "checkpoint_ts": feed.checkpoint_ts, "resolved_ts": feed.resolved_ts}})
        metastore.prune_runs(changefeed_id, conn=c)
    result = FinishResult(state=state, checkpoint_before=run.start_ts, checkpoint_ts=feed.checkpoint_ts,
                          checkpoint_time=tso.to_text(feed.checkpoint_ts), error=str(err) if err else None)
    cycle.log_event("finished", **plain(result))
    return result


def _record_end(cycle: Cycle, run: metastore.RunState, err: CdcflowError | None,
                c) -> tuple[str, CdcflowError | None]:
    """The run's end and the changefeed's state after it, written in `c`'s transaction: an error
    is recorded (a backfill that wrote nothing is undone, an operator's stop is no error of the
    changefeed's), a cycle that ended well moves the state on (feed_state.cycle_done).  Returns
    the state, and the error as the run ends with it."""
    changefeed_id, run_id = cycle.changefeed_id, cycle.run_id
    before_backfill = run.stats.get(metastore.RUN_BACKFILL)
    if err is not None and before_backfill and run.stats.get("failed_stage") in WRITE_NOTHING:
        err = feed_state.undo_backfill(changefeed_id, before_backfill, err, conn=c)
        metastore.update_run(changefeed_id, run_id, conn=c, status="failed", ended_at=time.time(),
                             error=json.dumps(err.to_dict()))
        return before_backfill["state"], err
    if err is not None and err.code == CYCLE_INTERRUPTED:
        # the operator stopped the cycle: no error of the changefeed's, no backoff; what apply
        # wrote is below the checkpoint it moved, the rest is the next run's
        metastore.update_run(changefeed_id, run_id, conn=c, status="failed", ended_at=time.time())
        return metastore.get_feed(changefeed_id, conn=c).state, err
    if err is not None:
        state = feed_state.record_error(changefeed_id, err, feed_state.error_stuck_limit(lambda: cycle.config),
                                        conn=c)
        metastore.update_run(changefeed_id, run_id, conn=c, status="failed", ended_at=time.time())
        return state, err
    feed = metastore.get_feed(changefeed_id, conn=c)
    state = feed.state
    if not run.dry_run:
        state = feed_state.cycle_done(changefeed_id, feed, run.start_ts, run.target_ts, conn=c)
    metastore.update_run(changefeed_id, run_id, conn=c, status="done", ended_at=time.time())
    return state, None
