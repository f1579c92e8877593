"""The cycle runner under every launcher: the stages of one cycle over ONE loaded Cycle (spec,
config, folder: stages.cycle.Cycle, loaded once per cycle and process by the launcher and
handed down), each stage's result recorded on the run, and the one decision every launcher
takes after pull: a window without a single event is settled here, without Spark."""

from __future__ import annotations

from cdcflow.core import heap
from cdcflow.core.errors import CdcflowError
from cdcflow.core.stage_names import SPARK_STAGES, STAGE_TASKS
from cdcflow.launch import sessions
from cdcflow.spark.lazy import Lazy
from cdcflow.spark.place import SparkPlace
from cdcflow.spark.session import release
from cdcflow.stages import contracts, pull_ranges
from cdcflow.stages.apply import apply
from cdcflow.stages.barrier import barrier, build_segments
from cdcflow.stages.cycle import Cycle, recording
from cdcflow.stages.filter_stage import filter_events
from cdcflow.stages.joining_tables import copy_tables
from cdcflow.stages.pull import pull
from cdcflow.stages.safe_mode import may_replay
from cdcflow.stages.snapshot_indexes import snapshot_indexes
from cdcflow.stages.wait_index import wait_index
from cdcflow.store import index_jobs, metastore

STAGE_FUNCS = {"pull": pull, "filter": filter_events, "barrier": barrier, "apply": apply,
               "wait_index": wait_index}  # not a Spark stage: the DAG runs it as a sensor


def run_stage(name: str, spark, cycle: Cycle, task: str = "cycle"):
    """Run one stage of the cycle and record its result (a contracts record) on the run, and for
    a Spark stage the process that ran it, `task` (a key of core.stage_names.STAGE_TASKS)."""
    if name not in STAGE_FUNCS:
        raise CdcflowError(f"unknown stage {name!r}; stages are {', '.join(STAGE_FUNCS)}")
    heap.settle()
    with recording(cycle, name) as stats:  # the result recorded with the stage's time: one transaction
        cycle.keep_lease(name)
        result = STAGE_FUNCS[name](spark, cycle)
        stats[name] = contracts.plain(result)
        if name in SPARK_STAGES:
            stats[f"{name}_task"] = STAGE_TASKS[task]
    return result


def empty_window(cycle: Cycle) -> dict:
    """A window without a single event: filter, barrier and apply have nothing to read, so no
    Spark session is needed; the checkpoint moves to the resolved ts, as apply moves it past
    an empty final segment.  Returns the results of the three stages, recorded as theirs."""
    with recording(cycle, "apply") as stats:
        cycle.keep_lease("apply")
        window = contracts.WINDOW.read(cycle.folder)
        segments = build_segments(window.start_ts, [], window.pulled.resolved_ts, window.pulled.end_pos)
        if not cycle.run().dry_run:
            metastore.advance_checkpoint(cycle.changefeed_id, segments[-1].hi, segments[-1].pos_after.to_dict())
        snapshot_indexes(cycle)  # a snapshot's deferred indexes, once the checkpoint is past its copy
        copy_tables(cycle)  # tables joining with their rows: a quiet upstream's cycles copy them too
        out = {"filter": contracts.FilterResult(), "barrier": contracts.BarrierResult(segments=len(segments)),
               "apply": contracts.ApplyResult(safe_mode=cycle.sink_options.safe_mode or may_replay(cycle, window))}
        stats.update(contracts.plain(out))  # recorded with apply's time
    cycle.log_event("empty window", checkpoint_after=cycle.feed().checkpoint_ts)
    return out


def pull_and_settle(cycle: Cycle, place: SparkPlace, session=None, ranges: bool | None = None) -> dict:
    """Pull the window and settle a window without a single event right away (empty_window):
    the Spark stages then have nothing to do.  The one decision both launchers take:
    `cdcflow changefeed run` and the DAG's pull task.  Pull reads in this process, without
    Spark, unless the config asks for the parallel path and the window is large enough
    (stages.pull_ranges.wanted): then its ranges run as Spark tasks on a Spark Connect server
    (`place`, when it is one), or in an embedded
    session already up, else in child processes (pull_ranges.SparkLater.for_ranges).  The
    session is `session` (a future: the CLI's cycle, which starts it anyway), else, for a
    Connect server, one opened here and closed after.  `ranges`: pull_ranges.wanted's answer,
    where the caller asked already.  Returns the stage results so far; `needs_spark(results)`
    says whether the Spark stages must run."""
    later, opened_here = None, False
    if pull_ranges.wanted(cycle, contracts.WINDOW.read(cycle.folder)) if ranges is None else ranges:
        remote = place.url()
        opened_here = session is None and bool(remote)
        if opened_here:
            session = sessions.start_session(cycle.config, cycle.changefeed_id, place)
        later = pull_ranges.SparkLater(session, elsewhere=place.elsewhere)
    try:
        results = {"pull": run_stage("pull", later, cycle)}
    finally:
        if opened_here:  # closed once started, without waiting for a start the pull did not need
            sessions.release_once_started(session)
    if results["pull"].pulled == 0:
        results.update(empty_window(cycle))
    return results


def needs_spark(results: dict) -> bool:
    return any(name not in results for name in SPARK_STAGES)


def _session_when_used(cycle: Cycle, place: SparkPlace | None) -> Lazy:
    """The stages' session at `place` (None: as the config says), opened by the first stage that
    uses it (spark.lazy): a task whose stages run every row step in its own process opens none
    (a Connect session costs a fresh process 0.6 s, a round trip to the server otherwise).  A
    failure to open it is the error of the stage that asked, recorded by its run_stage."""
    return Lazy(lambda: sessions.open_session(place or SparkPlace.resolve(cycle.config), cycle.config,
                                              cycle.changefeed_id, cycle=True))


def run_spark_stage(stage: str, cycle: Cycle, place: SparkPlace | None = None):
    """One Spark stage with a session of its own, as a DAG task or a spark-submit job runs it
    (_session_when_used), the session closed after."""
    spark = _session_when_used(cycle, place)
    try:
        return run_stage(stage, spark, cycle, "own")
    finally:
        release(spark)


def run_spark_stages(cycle: Cycle, results: dict, place: SparkPlace | None = None) -> dict:
    """The Spark stages `results` (pull_and_settle's) lacks, in order, sharing ONE session opened
    as run_spark_stage opens it and closed after: a cycle's fast path in one DAG task, as
    `cdcflow changefeed run` runs them.  Returns `results` with theirs."""
    spark = _session_when_used(cycle, place)
    try:
        for stage in SPARK_STAGES:
            if stage not in results:
                results[stage] = run_stage(stage, spark, cycle, "pull")
    finally:
        release(spark)
    return results


def index_wait_needed(cycle: Cycle) -> bool:
    """Whether the wait_index stage has anything to look at: an index build of this changefeed
    still pending (only ever on a TiDB downstream), outside a dry run.  Without one it is done
    at once (stages.wait_index), so a launcher may leave it out."""
    return not cycle.run().dry_run and bool(index_jobs.pending(cycle.changefeed_id))
