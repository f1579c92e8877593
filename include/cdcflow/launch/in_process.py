"""The in-process cycle of `cdcflow changefeed run`: prepare, pull (a Connect session, or the
JVM of a large window, starting meanwhile), the Spark stages (an embedded session started by
the first that uses it), wait_index once, finish — in this process, over one Cycle."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

from cdcflow.core.errors import CdcflowError
from cdcflow.core.stage_names import SPARK_STAGES, STAGES
from cdcflow.launch import sessions
from cdcflow.launch.cycle_runner import needs_spark, pull_and_settle, run_stage
from cdcflow.spark.place import SparkPlace
from cdcflow.spark.lazy import Lazy, built, was_built
from cdcflow.spark.session import is_remote, release
from cdcflow.stages import contracts, pull_ranges
from cdcflow.stages.cycle import Cycle, recording
from cdcflow.stages.engine import SPARK
from cdcflow.stages.finish import finish
from cdcflow.stages.prepare import prepare


def new_run_id() -> str:
    """A new cycle's id, saying the cycle came from the CLI."""
    return time.strftime("cli__%Y%m%dT%H%M%S", time.gmtime()) + "_" + uuid.uuid4().hex[:6]


def run_cycle(changefeed_id: str, spark=None, *, dry_run: bool = False, start_ts: int | None = None,
              target_ts: int | None = None, spark_remote: str | None = None,
              connection: Callable[[], str] | None = None, run_id: str | None = None,
              manual: bool = False) -> dict:
    """One catch-up cycle in this process: prepare, the four Spark stages, finish; its Spark on
    `spark_remote` (--spark-remote), else as the config says, else on a launcher's `connection`
    (SparkPlace.resolve); `run_id`: the cycle's id, a new CLI one by default; `manual`: a run a
    person triggered in Airflow, which does not wait out a warning's backoff (stages.prepare)."""
    t0 = time.time()
    cycle = Cycle.load(changefeed_id, run_id or new_run_id())
    place = SparkPlace.resolve(cycle.config, spark_remote, connection)
    prep = prepare(cycle, start_ts=start_ts, target_ts=target_ts, dry_run=dry_run, manual=manual)
    if prep.skip:
        return {"skipped": True, "reason": prep.reason, "state": prep.state}
    results: dict = {}
    failure = None
    session_opened_here = spark is None
    try:
        if spark is None:
            results, spark = _pull_then_session(cycle, place)
        for name in STAGES:
            if name not in results:
                results[name] = run_stage(name, spark, cycle)
        # one look, no waiting: a cycle stopped for an index build says so, and the next run resumes
        results["wait_index"] = run_stage("wait_index", spark, cycle)
    except CdcflowError as e:
        failure = e
    finally:
        if session_opened_here and spark is not None and was_built(spark) and is_remote(built(spark)):
            release(spark)
        results["finish"] = finish(cycle)
    if failure is not None:
        raise failure
    # whether a Spark session served the cycle (an embedded one is started only where a stage needs it)
    return {"run_id": cycle.run_id, **contracts.plain(results), "seconds": round(time.time() - t0, 3),
            "spark_session": spark is not None and was_built(spark)}


def _pull_then_session(cycle: Cycle, place: SparkPlace) -> tuple[dict, object]:
    """Pull, and the session the Spark stages will use (None: none needed; a Lazy: an embedded
    one started by the first stage that uses it).  Pull needs no Spark: the session of a window
    large enough for pull's ranges starts while the binlog is read where the engine is spark
    (below); a Connect session is opened after pull (opened beside it, its client's threads
    slowed the read by a third); an embedded session is otherwise started by the first stage
    that uses it (spark.lazy), and none at all when the upstream has written nothing since the
    checkpoint."""
    window = contracts.WINDOW.read(cycle.folder)
    ranges = not window.idle and pull_ranges.wanted(cycle, window)

    def start(workers: bool = True):
        return sessions.start_session(cycle.config, cycle.changefeed_id, place, workers=workers)

    # the session starts beside pull where pull's ranges run in its tasks on other cores
    # (a cluster's, a Connect server's) or the engine runs the row steps in Spark anyway
    # (with its Python workers: sessions.start_session); on auto an embedded JVM is not
    # started for a window the process reads whole (pull's ranges then run in child
    # processes): idle, it held 0.5-1 GiB through the cycle
    in_spark = cycle.engine.mode == SPARK and not window.idle
    session = start() if in_spark or (ranges and place.elsewhere) else None
    results = pull_and_settle(cycle, place, session, ranges)
    if not needs_spark(results):
        return results, None
    # a Connect session's Python workers are started only for row steps in Spark: a window
    # the stages read in process uses none (1.4-2.0 s otherwise)
    rows_in_spark = not cycle.engine.window_in_process(results["pull"].pulled)
    if session is None and not (place.is_remote and rows_in_spark):
        # opened by the first stage that uses it, as the DAG's tasks open theirs: none where every
        # row step runs here (an embedded JVM; a Connect session, 0.6 s of a fresh process)
        return results, Lazy(lambda: start(workers=rows_in_spark).result())
    with recording(cycle, SPARK_STAGES[0]):  # a Connect server that is down fails here
        return results, (session or start(workers=rows_in_spark)).result()
