"""The stage functions of one cycle.  The DAG's Spark jobs, `cdcflow changefeed run` and the
tests all call exactly these."""

from __future__ import annotations

import time

from cdcflow.core.errors import CdcflowError
from cdcflow.core.stage_names import SPARK_STAGES, STAGES
from cdcflow.spark.session import is_remote, release
from cdcflow.spark.warm_up import python_workers
from cdcflow.stages import contracts, pull_ranges
from cdcflow.stages.apply import apply as _apply
from cdcflow.stages.apply import may_replay
from cdcflow.stages.barrier import barrier as _barrier
from cdcflow.stages.barrier import build_segments
from cdcflow.stages.cycle import Cycle, log, recording
from cdcflow.stages.filter_stage import filter_events as _filter
from cdcflow.stages.finish import finish
from cdcflow.stages.prepare import prepare
from cdcflow.stages.pull import pull as _pull
from cdcflow.stages.wait_index import wait_index as _wait_index
from cdcflow.store import metastore

_FUNCS = {"pull": _pull, "filter": _filter, "barrier": _barrier, "apply": _apply,
          "wait_index": _wait_index}  # not a Spark stage: the DAG runs it as a sensor


def run_stage(name: str, spark, changefeed_id: str, run_id: str):
    """Run one stage of the cycle and record its result (a contracts record) on the run."""
    if name not in _FUNCS:
        raise CdcflowError(f"unknown stage {name!r}; stages are {', '.join(_FUNCS)}")
    cycle = Cycle.load(changefeed_id, run_id)
    with recording(cycle, name):
        cycle.hold(name)
        result = _FUNCS[name](spark, cycle)
    metastore.update_run(changefeed_id, run_id, stats={name: contracts.plain(result)})
    return result


def pull(spark, changefeed_id: str, run_id: str) -> contracts.PullResult:
    return run_stage("pull", spark, changefeed_id, run_id)


def filter_events(spark, changefeed_id: str, run_id: str) -> contracts.FilterResult:
    return run_stage("filter", spark, changefeed_id, run_id)


def barrier(spark, changefeed_id: str, run_id: str) -> contracts.BarrierResult:
    return run_stage("barrier", spark, changefeed_id, run_id)


def apply(spark, changefeed_id: str, run_id: str) -> contracts.ApplyResult:
    return run_stage("apply", spark, changefeed_id, run_id)


def empty_window(changefeed_id: str, run_id: str) -> dict:
    """A window without a single event: filter, barrier and apply have nothing to read, so no
    Spark session is needed; the checkpoint moves to the resolved ts, as apply moves it past
    an empty final segment.  Returns the results of the three stages, recorded as theirs."""
    cycle = Cycle.load(changefeed_id, run_id)
    with recording(cycle, "apply"):
        cycle.hold("apply")
        window = contracts.WINDOW.read(cycle.folder)
        segments = build_segments(window.start_ts, [], window.pulled.resolved_ts, window.pulled.end_pos)
        if not cycle.run().dry_run:
            metastore.advance_checkpoint(cycle.cid, segments[-1].hi, segments[-1].pos_after.to_dict())
        out = {"filter": contracts.FilterResult(), "barrier": contracts.BarrierResult(segments=len(segments)),
               "apply": contracts.ApplyResult(safe_mode=cycle.sink_options.safe_mode or may_replay(cycle, window))}
    cycle.event("empty window", checkpoint_after=cycle.feed().checkpoint_ts)
    metastore.update_run(changefeed_id, run_id, stats=contracts.plain(out))
    return out


def pull_and_settle(changefeed_id: str, run_id: str, session=None, spark_remote=None) -> dict:
    """Pull the window and settle a window without a single event right away (empty_window):
    the Spark stages then have nothing to do.  The one decision both launchers take:
    `cdcflow changefeed run` and the DAG's pull task.  Pull reads in this process, without
    Spark, unless the config asks for the parallel path and the window is large enough
    (stages.pull_ranges.wanted): then pull reads on while a Spark session starts, and hands
    what is left of the window to Spark tasks once it is up.  The session is `session` (a
    future: the CLI's cycle, which starts it anyway), else one started here as
    run_spark_stage opens one (on `spark_remote`, a URL or a function giving one, else as the
    config says) and closed after.  Returns the stage results so far; `needs_spark(results)`
    says whether the Spark stages must run."""
    cycle = Cycle.load(changefeed_id, run_id)
    later, opened_here = None, False
    if pull_ranges.wanted(cycle, contracts.WINDOW.read(cycle.folder)):
        opened_here = session is None
        if opened_here:
            remote = spark_remote() if callable(spark_remote) else spark_remote
            session = _start_session(cycle.config, changefeed_id, remote)
        later = pull_ranges.SparkLater(session)
    try:
        results = {"pull": run_stage("pull", later, changefeed_id, run_id)}
    finally:
        if opened_here:  # closed once started, without waiting for a start the pull did not need
            session.add_done_callback(lambda f: f.exception() is None and release(f.result()))
    if results["pull"].pulled == 0:
        results.update(empty_window(changefeed_id, run_id))
    return results


def needs_spark(results: dict) -> bool:
    return any(name not in results for name in SPARK_STAGES)


def session_for(cfg, changefeed_id: str, spark_remote: str | None = None):
    """The Spark session of a changefeed's stages, as its config says (both launchers):
    on a Spark Connect server (`spark_remote`, else `cdcflow.spark-remote`), else embedded."""
    from cdcflow.spark.session import get_session

    return get_session(f"cdcflow-{changefeed_id}", cfg.spark_master, cfg.shuffle_partitions,
                       remote=spark_remote or cfg.spark_remote)


def run_spark_stage(stage: str, changefeed_id: str, run_id: str, spark_remote=None):
    """One Spark stage in a session of its own, as a DAG task or a spark-submit job runs it:
    the session is opened as the config says (`spark_remote`, a URL or a function giving
    one, wins), a failure to open it is the stage's recorded error, and it is closed after."""
    cycle = Cycle.load(changefeed_id, run_id)
    with recording(cycle, stage):
        remote = spark_remote() if callable(spark_remote) else spark_remote
        spark = session_for(cycle.config, changefeed_id, remote)
    try:
        return run_stage(stage, spark, changefeed_id, run_id)
    finally:
        release(spark)


def _start_session(cfg, changefeed_id: str, spark_remote: str | None):
    """The cycle's Spark session, being built in a background thread; an embedded one's
    Python workers are started there too (a Connect server's were at its start)."""
    from concurrent.futures import ThreadPoolExecutor

    def start():
        spark = session_for(cfg, changefeed_id, spark_remote)
        if not is_remote(spark):
            try:
                log.info("Spark's Python workers started in %.1f s", python_workers(spark))
            except Exception as e:  # noqa: BLE001 - the stage that needs them says why, in context
                log.warning("Spark's Python workers did not start ahead of the stages: %s", e)
        return spark

    pool = ThreadPoolExecutor(1, thread_name_prefix="spark-start")
    try:
        return pool.submit(start)
    finally:
        pool.shutdown(wait=False)


def run_cycle(changefeed_id: str, spark=None, *, dry_run: bool = False, start_ts: int | None = None,
              target_ts: int | None = None, spark_remote: str | None = None) -> dict:
    """One catch-up cycle in this process: prepare, the four Spark stages, finish."""
    t0 = time.time()
    prep = prepare(changefeed_id, start_ts=start_ts, target_ts=target_ts, dry_run=dry_run)
    if prep.skip:
        return {"skipped": True, "reason": prep.reason, "state": prep.state}
    run_id = prep.run_id
    results: dict = {}
    failure = None
    session_opened_here = spark is None
    try:
        if spark is None:
            # pull needs no Spark: the JVM starts on another core while the binlog is read,
            # and not at all when the upstream has written nothing since the checkpoint
            cycle = Cycle.load(changefeed_id, run_id)
            idle = contracts.WINDOW.read(cycle.folder).idle
            session = None if idle else _start_session(cycle.config, changefeed_id, spark_remote)
            results = pull_and_settle(changefeed_id, run_id, session)
            if needs_spark(results):
                with recording(cycle, SPARK_STAGES[0]):  # a Connect server that is down fails here
                    spark = (session or _start_session(cycle.config, changefeed_id, spark_remote)).result()
        for name in STAGES:
            if name not in results:
                results[name] = run_stage(name, spark, changefeed_id, run_id)
        # one look, no waiting: a cycle stopped for an index build says so, and the next run resumes
        results["wait_index"] = run_stage("wait_index", spark, changefeed_id, run_id)
    except CdcflowError as e:
        failure = e
    finally:
        if spark is not None and is_remote(spark) and session_opened_here:
            release(spark)
        results["finish"] = finish(changefeed_id, run_id)
    if failure is not None:
        raise failure
    return {"run_id": run_id, **contracts.plain(results), "seconds": round(time.time() - t0, 3)}


__all__ = ["STAGES", "SPARK_STAGES", "prepare", "pull", "pull_and_settle", "needs_spark", "filter_events",
           "barrier", "apply", "finish", "run_stage", "run_spark_stage", "session_for", "run_cycle"]
