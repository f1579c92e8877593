"""The Python tasks of one cycle: `prepare`, `pull`, the Spark stages on Spark Connect,
`finish`, and the failure callback.

What each task does is cdcflow.launch.dag_tasks' (no Airflow there); these callables
keep what is Airflow's: XCom for the run id, task states for what failed, Airflow's
exceptions for the outcome, the Task SDK's connections and the Spark Connect connection.
Each hands its body the task's home (task_home): the DAG's CDCFLOW_HOME and the Task SDK's
credential lookup; nothing here writes the process's environment.

The DAG file imports this module to parse: the task bodies (`bodies()`), the stages and Airflow's
task-time modules are imported when a task runs.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager

from cdcflow.core.errors import CYCLE_SUPERSEDED, CdcflowError, ConfigError
from cdcflow.core.home import Home
from cdcflow.core.log_line import event_line
from cdcflow.core.stage_names import SPARK_STAGES

log = logging.getLogger(__name__)


def bodies():
    """cdcflow.launch.dag_tasks, the task bodies."""
    from cdcflow.launch import dag_tasks  # lazy: loads the cycle runner and the stages; the DAG parse must not

    return dag_tasks


def airflow_connection_credentials(conn_id: str) -> tuple[str | None, str | None] | None:
    """(login, password) of an Airflow connection through the Task SDK (its environment
    variables, secrets backends and Airflow's database alike); None when there is none."""
    from airflow.sdk import Connection  # lazy: the Task SDK's client, at task time only
    from airflow.sdk.exceptions import AirflowNotFoundException  # lazy: as above

    try:
        conn = Connection.get(conn_id)
    except AirflowNotFoundException:
        return None
    return conn.login, conn.password


def task_home(cdcflow_home: str) -> Home:
    """The home a task's body runs in: the DAG's CDCFLOW_HOME, its `airflow-conn-id` credentials
    read through the Task SDK."""
    return Home(cdcflow_home, airflow_connection_credentials)


@contextmanager
def user_errors_fail_the_task():
    """A CdcflowError is the user's to fix: its one line (changefeed, commit ts, statement,
    remedy) is the task log's first ERROR, ahead of Airflow's own error block, and the task
    fails without a retry.  A stage of a cycle another cycle replaced ends skipped, saying so."""
    from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException  # lazy: task time only

    try:
        yield
    except CdcflowError as e:
        if e.code == CYCLE_SUPERSEDED:
            log.warning("%s", e)
            raise AirflowSkipException(str(e)) from None
        log.error("%s", e)
        raise AirflowFailException(str(e)) from None


SPARK_CONNECT_CONN_ID = "spark_connect_default"  # the Spark provider's own default name


def connect_url(changefeed_id: str) -> str:
    """The Spark Connect server of the Airflow connection `spark_connect_default`."""
    from airflow.providers.apache.spark.hooks.spark_connect import SparkConnectHook  # lazy: optional provider

    try:
        return SparkConnectHook(SPARK_CONNECT_CONN_ID).get_connection_url()
    except Exception as e:  # noqa: BLE001 - AirflowNotFoundException and a malformed connection alike
        raise ConfigError(
            f"no Spark Connect server to run the stages on: Airflow connection {SPARK_CONNECT_CONN_ID}: "
            f"{type(e).__name__}: {e}", changefeed=changefeed_id,
            hint="add the connection (airflow_settings.yaml declares it; make airflow-bootstrap imports it), "
                 "or set cdcflow.spark-remote (a server) or cdcflow.spark-master (spark-submit) in the "
                 "changefeed's config") from None


def launcher_connection(changefeed_id: str):
    """The Spark Connect server of a task whose config names none (SparkPlace.resolve): the
    Airflow connection's, asked when a session is opened."""
    return lambda: connect_url(changefeed_id)


def verify_changefeed(changefeed_id: str, home: Home) -> None:
    """Trigger mode verify, after the run's own catch-up (dag_tasks.verify): the run fails when
    the downstream differs, naming how."""
    from airflow.sdk.exceptions import AirflowFailException  # lazy: task time only

    from cdcflow.verify.comparison import EQUAL, summary_line  # lazy: the verifier, at task time only

    result = bodies().verify(changefeed_id, launcher_connection(changefeed_id), home)
    line = summary_line(result)
    for diff in result["differences"][:20]:
        log.info("difference: %s", diff)
    if result["status"] != EQUAL:
        log.error("%s", line)
        raise AirflowFailException(line)
    log.info("%s", line)


def snapshot_changefeed(changefeed_id: str, home: Home) -> None:
    """Trigger mode snapshot, the progress in the task log as chunks end."""
    result = bodies().snapshot(changefeed_id, lambda line: log.info("%s", line),
                               launcher_connection(changefeed_id), home)
    log.info("changefeed %s: snapshot done from binlog %s (%s); the changefeed is %s and replicates from there",
             changefeed_id, result["start_position"], "continued" if result["continued"] else "new point",
             result["state"])


NO_CYCLE = {"verify": verify_changefeed, "snapshot": snapshot_changefeed}


def triggered_by_a_person(dag_run) -> bool:
    """Whether the run is DagRunType.MANUAL: a person's trigger (it runs through a warning's backoff)."""
    run_type = getattr(dag_run, "run_type", None)
    return getattr(run_type, "value", run_type) == "manual"


def prepare_cycle(changefeed_id: str, cdcflow_home: str, params, ti, dag_run=None) -> bool:
    """Open the cycle; False makes the ShortCircuitOperator skip the Spark stages.  A run a
    person triggered runs through a warning's backoff; a scheduled one waits it out."""
    home = task_home(cdcflow_home)
    with user_errors_fail_the_task():
        opened = bodies().prepare(changefeed_id, params, triggered_by_a_person(dag_run), home)
        if opened.instead:
            NO_CYCLE[opened.instead](changefeed_id, home)
    if opened.run_id:
        ti.xcom_push(key="run_id", value=opened.run_id)
    if opened.follows:  # the stages are skipped, not the follow task (pull_branch.PrepareShortCircuitOperator)
        ti.xcom_push(key="follows", value=True)
    if opened.skip_reason:
        if not opened.instead:
            log.info("%s", opened.skip_reason)
        ti.xcom_push(key="skip_reason", value=opened.skip_reason)
        if opened.skipped:  # the page shows the run as "skipped (<why>)", not as a cycle that was done
            ti.xcom_push(key="skipped", value=opened.skipped)
        return False
    log.info("changefeed %s: cycle %s prepared", changefeed_id, opened.run_id)
    return True


def _log_result(what: str, changefeed_id: str, run_id: str, result) -> dict:
    """A task's result in the task log, words first (core.log_line); returns it as plain values."""
    from cdcflow.stages.contracts import plain  # lazy: task time, the DAG file imports this module to parse

    fields = plain(result)
    log.info("%s", event_line(what, changefeed_id, run=run_id, **fields))
    return fields


def pull_cycle(changefeed_id: str, cdcflow_home: str, run_id: str) -> list[str]:
    """Pull the window here and choose the tasks that follow (dag_tasks.pull)."""
    with user_errors_fail_the_task():
        results, following = bodies().pull(changefeed_id, run_id, launcher_connection(changefeed_id),
                                           task_home(cdcflow_home))
    _log_result("pull done", changefeed_id, run_id, results["pull"])
    if SPARK_STAGES[0] in following:
        return following
    if results["pull"].pulled == 0:
        log.info("changefeed %s: cycle %s: nothing to read; no Spark stage runs", changefeed_id, run_id)
    else:  # the fast path: the stages ran here, their tasks end skipped
        for stage in SPARK_STAGES:
            _log_result(f"{stage} done", changefeed_id, run_id, results[stage])
        log.info("changefeed %s: cycle %s: %s ran in this task, sharing one Spark Connect session where they "
                 "used Spark (a window of at most fast-path-max-events); their own tasks are skipped",
                 changefeed_id, run_id, ", ".join(SPARK_STAGES))
    if "wait_index" not in following:
        log.info("changefeed %s: cycle %s: no index build pending; wait_index is skipped", changefeed_id, run_id)
    return following


def spark_stage(stage: str, changefeed_id: str, cdcflow_home: str, run_id: str) -> dict:
    """A Spark stage as a task in the worker: the stage, with a session on the Spark Connect server
    (the config's cdcflow.spark-remote, else the Airflow connection) opened where it sends rows
    to Spark and closed after."""
    with user_errors_fail_the_task():
        result = bodies().spark_stage(stage, changefeed_id, run_id, launcher_connection(changefeed_id),
                                      task_home(cdcflow_home))
    return _log_result(f"{stage} done", changefeed_id, run_id, result)


def finish_cycle(changefeed_id: str, cdcflow_home: str, ti) -> None:
    """Close the cycle whatever happened, then fail the run if a stage failed."""
    from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException  # lazy: task time only

    tasks = bodies()
    run_id = ti.xcom_pull(task_ids="prepare", key="run_id")
    states = ti.get_task_states(dag_id=ti.dag_id, task_ids=list(tasks.CYCLE_TASKS), run_ids=[ti.run_id])
    error = tasks.failure_message(states.get(ti.run_id, {}))
    if run_id is None and error is None and ti.xcom_pull(task_ids="prepare", key="skip_reason"):
        return  # the changefeed is gone: nothing to close
    if run_id is None:
        # prepare failed before there was a cycle; it recorded its own error.
        raise AirflowFailException(f"changefeed {changefeed_id}: {error or 'prepare returned no run id'}")

    with user_errors_fail_the_task():
        result = tasks.finish(changefeed_id, run_id, error, task_home(cdcflow_home))
    if result.superseded_by:
        log.warning("changefeed %s: cycle %s was replaced by cycle %s while it was open: nothing to finish",
                    changefeed_id, run_id, result.superseded_by)
        raise AirflowSkipException(f"cycle {run_id} was replaced by cycle {result.superseded_by}")
    _log_result("cycle finished", changefeed_id, run_id, result)
    if error:
        line = result.error or f"changefeed {changefeed_id}: cycle {run_id}: {error}"
        log.error("%s", line)
        raise AirflowFailException(line)


def record_task_failure(changefeed_id: str, cdcflow_home: str, context) -> None:
    """on_failure_callback: a prepare or finish task that died of something cdcflow did not
    record (dag_tasks.record_failure).  A CdcflowError was recorded where it was raised,
    and finish records the other tasks' failures."""
    from airflow.sdk.exceptions import AirflowFailException  # lazy: task time only

    tasks = bodies()
    ti = context["ti"]
    exc = context.get("exception")
    if ti.task_id not in tasks.RECORDING_TASKS or isinstance(exc, AirflowFailException):
        return
    state = tasks.record_failure(changefeed_id, ti.task_id, ti.run_id, exc, task_home(cdcflow_home))
    if state is not None:
        log.warning("changefeed %s: task %s failed; the changefeed is now %s", changefeed_id, ti.task_id, state)
