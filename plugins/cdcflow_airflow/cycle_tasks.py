"""The Python tasks of one cycle: `prepare`, `pull` and `finish`.

They run inside the Airflow worker, so they only call cdcflow.stages (imported
when the task runs, never when the DAG is parsed) and talk to Airflow through
the task instance: XCom for the run id, task states for what failed.
"""

from __future__ import annotations

import logging
import os
import time
import uuid
from contextlib import contextmanager

from cdcflow.core.stage_names import SPARK_STAGES, STAGES

log = logging.getLogger(__name__)

# What each trigger-form mode does with start_ts, whether it only reports, and the task that
# runs instead of a cycle (a name in NO_CYCLE, below).
#   mode         start_ts          dry_run  instead of a cycle
_MODE_RULES = {
    "catch-up": ("not allowed", False, None),  # from the checkpoint up to what upstream has committed
    "backfill": ("required", False, None),  # replay from start_ts
    "dry-run": ("optional", True, None),  # plan the window, apply nothing
    "verify": ("not allowed", False, "verify"),  # compare upstream and downstream (cdcflow.verify)
    "snapshot": ("not allowed", False, "snapshot"),  # copy the tables of a stopped changefeed, start it there
}
MODES = tuple(_MODE_RULES)  # the trigger form's choices, default first

CYCLE_TASKS = ("prepare", *STAGES, "wait_index")
REMOVED_REASON = "it was removed (its spec is gone); this DAG disappears at the next DAG parse"
# The tasks whose failure nothing else records: finish records the other tasks' failures.
RECORDING_TASKS = ("prepare", "finish")


def _ts_param(changefeed_id: str, name: str, value) -> int | None:
    from cdcflow.core import tso
    from cdcflow.core.errors import ConfigError

    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        return tso.parse(value)
    except ValueError as e:
        raise ConfigError(
            f"trigger parameter {name}: {e}",
            changefeed=changefeed_id,
            hint=f"give {name} as a TSO or a UTC date-time, or leave it empty",
        ) from None


def cycle_request(changefeed_id: str, params) -> dict:
    """The keyword arguments of stages.prepare for a run's trigger parameters."""
    from cdcflow.core.errors import ConfigError

    mode = (params.get("mode") or "catch-up").strip()
    if mode not in _MODE_RULES:
        raise ConfigError(
            f"trigger parameter mode={mode!r} is not one of {', '.join(MODES)}", changefeed=changefeed_id
        )
    start_rule, dry_run, instead = _MODE_RULES[mode]
    start_ts = _ts_param(changefeed_id, "start_ts", params.get("start_ts"))
    target_ts = _ts_param(changefeed_id, "target_ts", params.get("target_ts"))
    if start_rule == "required" and start_ts is None:
        raise ConfigError(
            "mode backfill needs start_ts", changefeed=changefeed_id, hint="give the TSO or date-time to replay from"
        )
    if start_rule == "not allowed" and start_ts is not None:
        raise ConfigError(
            "start_ts is only used by mode backfill or dry-run; a catch-up starts at the checkpoint",
            changefeed=changefeed_id,
            hint="choose mode backfill to replay from start_ts, or clear start_ts",
        )
    return {"start_ts": start_ts, "target_ts": target_ts, "dry_run": dry_run, "instead": instead}


@contextmanager
def task_sessions(changefeed_id: str):
    """`spark_for(config)` for a command run in the task: sessions on the stages' Spark (the
    Spark Connect server, or the config's master), released when the block ends."""
    from cdcflow import stages
    from cdcflow.spark.session import release

    sessions = []

    def spark_for(cfg):
        sessions.append(stages.session_for(cfg, changefeed_id, task_spark_remote(cfg, changefeed_id)))
        return sessions[-1]

    try:
        yield spark_for
    finally:
        for spark in sessions:
            release(spark)


def verify_changefeed(changefeed_id: str) -> None:
    """Trigger mode verify: `cdcflow changefeed verify` in the task; the run fails when the
    downstream differs, naming how (the changefeed's state does not change)."""
    from airflow.sdk.exceptions import AirflowFailException

    from cdcflow.changefeed import commands
    from cdcflow.verify.runner import EQUAL, summary_line

    with task_sessions(changefeed_id) as spark_for:
        result = commands.verify(changefeed_id, spark_for)
    line = summary_line(result)
    for diff in result["differences"][:20]:
        log.info("difference: %s", diff)
    if result["status"] != EQUAL:
        log.error("%s", line)
        raise AirflowFailException(line)
    log.info("%s", line)


def snapshot_changefeed(changefeed_id: str) -> None:
    """Trigger mode snapshot: copy the tables of the stopped changefeed from a new consistent
    point (or continue its unfinished copy) on the stages' Spark, the progress in the task log
    as chunks end; the changefeed then resumes from the point."""
    from cdcflow.changefeed import commands
    from cdcflow.snapshot.runner import progress_line

    with task_sessions(changefeed_id) as spark_for:
        result = commands.snapshot(changefeed_id, spark_for, report=lambda p: log.info("%s", progress_line(changefeed_id, p)))
    log.info("changefeed %s: snapshot done from binlog %s (%s); the changefeed is %s and replicates from there",
             changefeed_id, result["start_position"], "continued" if result["continued"] else "new point",
             result["state"])


NO_CYCLE = {"verify": verify_changefeed, "snapshot": snapshot_changefeed}


def cycle_run_id() -> str:
    """A new cycle's id in the CLI's shape, saying the cycle came from Airflow.

    Not Airflow's own run id: a retried prepare must open a new cycle, and
    ids with ':' and '+' make poor folder names in the event store.
    """
    return time.strftime("airflow__%Y%m%dT%H%M%S", time.gmtime()) + "_" + uuid.uuid4().hex[:6]


def airflow_connection_credentials(conn_id: str) -> tuple[str | None, str | None] | None:
    """(login, password) of an Airflow connection through the Task SDK (its environment
    variables, secrets backends and Airflow's database alike); None when there is none."""
    from airflow.sdk import Connection
    from airflow.sdk.exceptions import AirflowNotFoundException

    try:
        conn = Connection.get(conn_id)
    except AirflowNotFoundException:
        return None
    return conn.login, conn.password


@contextmanager
def user_errors_fail_the_task():
    """A CdcflowError is the user's to fix: its one line (changefeed, commit ts, statement,
    remedy) is the task log's first ERROR, ahead of Airflow's own error block, and the task
    fails without a retry.  A stage of a cycle another cycle replaced ends skipped, saying so.
    The task's `airflow-conn-id` credentials are read through the Task SDK."""
    from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

    from cdcflow.core.credentials import install_airflow_lookup
    from cdcflow.core.errors import CYCLE_SUPERSEDED, CdcflowError

    install_airflow_lookup(airflow_connection_credentials)
    try:
        yield
    except CdcflowError as e:
        if e.code == CYCLE_SUPERSEDED:
            log.warning("%s", e)
            raise AirflowSkipException(str(e)) from None
        log.error("%s", e)
        raise AirflowFailException(str(e)) from None


def prepare_cycle(changefeed_id: str, cdcflow_home: str, params, ti, dag_run=None) -> bool:
    """Open the cycle; False makes the ShortCircuitOperator skip the Spark stages.  A run a
    person triggered runs through a warning's backoff; a scheduled one waits it out."""
    os.environ["CDCFLOW_HOME"] = cdcflow_home
    with user_errors_fail_the_task():
        from cdcflow import stages
        from cdcflow.core.home import spec_exists

        request = cycle_request(changefeed_id, params)
        instead = request.pop("instead")
        if instead and spec_exists(changefeed_id):
            NO_CYCLE[instead](changefeed_id)
            ti.xcom_push(key="skip_reason", value=f"mode {instead}: no cycle")
            return False
        if not spec_exists(changefeed_id):  # a run Airflow scheduled before the DAG went away
            reason = f"changefeed {changefeed_id} does nothing this cycle: {REMOVED_REASON}"
            log.info(reason)
            ti.xcom_push(key="skip_reason", value=reason)
            return False
        # an unset bound is left out, so stages.prepare applies its own default
        run_type = getattr(dag_run, "run_type", None)
        manual = getattr(run_type, "value", run_type) == "manual"  # DagRunType.MANUAL: a person's trigger
        result = stages.prepare(
            changefeed_id, cycle_run_id(), manual=manual, **{k: v for k, v in request.items() if v is not None}
        )
    ti.xcom_push(key="run_id", value=result.run_id)
    if result.skip:
        log.info("%s", result.reason)
        ti.xcom_push(key="skip_reason", value=result.reason)
        return False
    log.info("changefeed %s: cycle %s prepared", changefeed_id, result.run_id)
    return True


def pull_cycle(changefeed_id: str, cdcflow_home: str, run_id: str) -> list[str]:
    """Pull the window here and choose the tasks that follow, as the CLI's cycle does: the
    Spark stages only when pull found events; an empty window is settled by
    stages.pull_and_settle (the checkpoint moves) and goes straight to wait_index.  Pull
    takes no Spark, unless the config turns its parallel path on and the window is large:
    then its ranges are read by tasks on the same Spark as the stages' (task_spark_remote)."""
    os.environ["CDCFLOW_HOME"] = cdcflow_home
    with user_errors_fail_the_task():
        from cdcflow import stages
        from cdcflow.core.home import load_spec

        cfg = load_spec(changefeed_id).config()
        results = stages.pull_and_settle(changefeed_id, run_id,
                                         spark_remote=lambda: task_spark_remote(cfg, changefeed_id))
    log.info("changefeed %s: cycle %s: pull: %s", changefeed_id, run_id, results["pull"])
    if stages.needs_spark(results):
        return [SPARK_STAGES[0], "wait_index"]
    log.info("changefeed %s: cycle %s: nothing to read; no Spark stage runs", changefeed_id, run_id)
    return ["wait_index"]


SPARK_CONNECT_CONN_ID = "spark_connect_default"  # the Spark provider's own default name


def connect_url(changefeed_id: str) -> str:
    """The Spark Connect server of the Airflow connection `spark_connect_default`."""
    from airflow.providers.apache.spark.hooks.spark_connect import SparkConnectHook

    from cdcflow.core.errors import ConfigError

    try:
        return SparkConnectHook(SPARK_CONNECT_CONN_ID).get_connection_url()
    except Exception as e:  # noqa: BLE001 - AirflowNotFoundException and a malformed connection alike
        raise ConfigError(
            f"no Spark Connect server to run the stages on: Airflow connection {SPARK_CONNECT_CONN_ID}: "
            f"{type(e).__name__}: {e}", changefeed=changefeed_id,
            hint="add the connection (airflow_settings.yaml declares it; make airflow-bootstrap imports it), "
                 "or set cdcflow.spark-remote (a server) or cdcflow.spark-master (spark-submit) in the "
                 "changefeed's config") from None


def task_spark_remote(cfg, changefeed_id: str) -> str | None:
    """The Spark Connect server a task's session goes to: the config's cdcflow.spark-remote, else
    the Airflow connection's; None when the config names a master (an embedded session on it)."""
    return cfg.spark_remote or (None if cfg.spark_master else connect_url(changefeed_id))


def spark_stage(stage: str, changefeed_id: str, cdcflow_home: str, run_id: str) -> dict:
    """A Spark stage as a task in the worker: a session on the Spark Connect server (the
    config's cdcflow.spark-remote, else the Airflow connection), the stage, the session closed."""
    os.environ["CDCFLOW_HOME"] = cdcflow_home
    with user_errors_fail_the_task():
        from cdcflow import stages
        from cdcflow.core.home import load_spec
        from cdcflow.stages.contracts import plain

        cfg = load_spec(changefeed_id).config()
        result = stages.run_spark_stage(stage, changefeed_id, run_id,
                                        spark_remote=lambda: task_spark_remote(cfg, changefeed_id))
    log.info("changefeed %s: cycle %s: %s: %s", changefeed_id, run_id, stage, result)
    return plain(result)


def failure_message(task_states: dict) -> str | None:
    """None when every task of the cycle succeeded or was skipped, else which failed."""
    failed = [task for task in CYCLE_TASKS if task_states.get(task) == "failed"]
    if not failed:
        return None
    noun = "task" if len(failed) == 1 else "tasks"
    return f"{noun} {', '.join(failed)} failed (its Airflow task log has the error)"


def finish_cycle(changefeed_id: str, cdcflow_home: str, ti) -> None:
    """Close the cycle whatever happened, then fail the run if a stage failed."""
    from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException

    os.environ["CDCFLOW_HOME"] = cdcflow_home
    run_id = ti.xcom_pull(task_ids="prepare", key="run_id")
    states = ti.get_task_states(dag_id=ti.dag_id, task_ids=list(CYCLE_TASKS), run_ids=[ti.run_id])
    error = failure_message(states.get(ti.run_id, {}))
    if run_id is None and error is None and ti.xcom_pull(task_ids="prepare", key="skip_reason"):
        return  # the changefeed is gone: nothing to close
    if run_id is None:
        # prepare failed before there was a cycle; it recorded its own error.
        raise AirflowFailException(f"changefeed {changefeed_id}: {error or 'prepare returned no run id'}")

    with user_errors_fail_the_task():
        from cdcflow import stages

        result = stages.finish(changefeed_id, run_id, error=error)
    if result.superseded_by:
        log.warning("changefeed %s: cycle %s was replaced by cycle %s while it was open: nothing to finish",
                    changefeed_id, run_id, result.superseded_by)
        raise AirflowSkipException(f"cycle {run_id} was replaced by cycle {result.superseded_by}")
    log.info("changefeed %s: cycle %s finished: %s", changefeed_id, run_id, result)
    if error:
        line = result.error or f"changefeed {changefeed_id}: cycle {run_id}: {error}"
        log.error("%s", line)
        raise AirflowFailException(line)


def record_task_failure(changefeed_id: str, cdcflow_home: str, context) -> None:
    """on_failure_callback: a task that died of something cdcflow did not record (killed,
    timed out, a crash outside cdcflow's code) puts the changefeed in warning (③), so its
    next cycles retry with backoff.  A CdcflowError was recorded where it was raised."""
    from airflow.sdk.exceptions import AirflowFailException

    ti = context["ti"]
    exc = context.get("exception")
    if ti.task_id not in RECORDING_TASKS or isinstance(exc, AirflowFailException):
        return
    os.environ["CDCFLOW_HOME"] = cdcflow_home
    from cdcflow.core.errors import TASK_FAILED, CdcflowError
    from cdcflow.core.home import spec_exists
    from cdcflow.stages.finish import record_error

    if not spec_exists(changefeed_id):
        return
    what = f"{type(exc).__name__}: {exc}" if exc is not None else "no exception given"
    err = CdcflowError(f"Airflow task {ti.task_id} of run {ti.run_id} failed: {what}", changefeed=changefeed_id,
                       code=TASK_FAILED,
                       hint="its Airflow task log has the details; the next cycle retries")
    state = record_error(changefeed_id, err)
    log.warning("changefeed %s: task %s failed; the changefeed is now %s", changefeed_id, ti.task_id, state)
