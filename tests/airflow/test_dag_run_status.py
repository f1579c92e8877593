"""A DAG run's status and error as the Changefeeds page shows them (cdcflow_airflow.dag_runs), from
Airflow's own records of a real dag.test() run: one vocabulary with the cycles' (done, not
success), a run whose prepare skipped the cycle said to be skipped and why, and a task Airflow
failed before it ran (its log empty) shown with what Airflow said, never an empty error."""

from __future__ import annotations

import pytest

try:
    from airflow_env import parsed_changefeed_dag, use_airflow
except ImportError:  # tests/ imported as a package
    from tests.airflow_env import parsed_changefeed_dag, use_airflow

from cdcflow.config.spec_store import Spec, save_spec
from cdcflow.store import metastore

pytestmark = [pytest.mark.airflow]

FEED = "run-words"
DAG_ID = f"changefeed__{FEED}"
# the scheduler's words when the executor's process of a task ended before the task ran (here: its
# first call to the API server timed out), as it writes them to its audit log
MISMATCH = ("Executor LocalExecutor(parallelism=2) reported that the task instance <TaskInstance: changefeed__run-words"
            ".prepare [queued]> finished with state failed, but the task instance's state attribute is queued.")


@pytest.fixture
def stopped_feed(tmp_path_factory, monkeypatch):
    """A stopped changefeed (no server behind its URIs: a stopped changefeed's run reads none) and
    Airflow's database."""
    env = use_airflow(tmp_path_factory.mktemp("airflow"))
    env.migrate_db()
    monkeypatch.setenv("CDCFLOW_HOME", str(tmp_path_factory.mktemp("cdcflow-home")))
    save_spec(Spec(id=FEED, source_uri="mysql://u@127.0.0.1:1", sink_uri="mysql://u@127.0.0.1:2",
                   config_text='[cdcflow]\nschedule = "none"\n'))
    metastore.create_feed(FEED, 1 << 18, {})
    metastore.update_feed(FEED, state="stopped")
    return parsed_changefeed_dag(FEED)


def page_runs(cycles: list[dict] | None = None) -> list[dict]:
    """The detail's last runs as the page gets them: Airflow's, merged with the cycles."""
    from airflow.utils.session import create_session

    from cdcflow_airflow import dag_runs

    with create_session() as session:
        return dag_runs.merged(dag_runs.airflow_runs(session, DAG_ID, 10), cycles or [], 10)


def test_a_stopped_changefeeds_run_is_skipped_and_a_run_airflow_failed_says_why(stopped_feed):
    from airflow.models.dagrun import DagRun
    from airflow.models.log import Log
    from airflow.models.taskinstance import TaskInstance
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from sqlalchemy import delete, select

    run = stopped_feed.test()
    assert str(run.state) in ("success", "DagRunState.SUCCESS"), run.state
    [shown] = page_runs()
    # was "success", its figures empty, as if a cycle had run
    assert shown["status"] == "skipped (stopped)" and shown["error"] is None, shown
    assert shown["airflow_state"] == "success"

    # a second run, whose prepare Airflow failed before it ran: its try ended with an empty log, the
    # scheduler wrote why in its audit log, and the run failed without the changefeed's own error
    second = stopped_feed.test()
    with create_session() as session:
        ti = session.scalars(select(TaskInstance).where(TaskInstance.dag_id == DAG_ID, TaskInstance.run_id ==
                                                        second.run_id, TaskInstance.task_id == "prepare")).one()
        ti.state = "failed"
        session.execute(delete(XComModel).where(XComModel.dag_id == DAG_ID, XComModel.run_id == second.run_id))
        session.add(Log(event="state mismatch", extra=MISMATCH, task_instance=ti.key))
        session.get(DagRun, second.id).state = "failed"
    newest, first = page_runs()
    assert newest["dag_run_id"] == second.run_id and first["status"] == "skipped (stopped)"
    assert newest["status"] == "failed" and newest["failed_task"] == "prepare"
    # was None: the page showed a failed run with an empty error
    assert newest["error"] == f"Airflow: task prepare (try {ti.try_number}) state mismatch: {MISMATCH}", newest

    # the same try, up for retry: the run goes on, and the page says Airflow tries prepare again
    with create_session() as session:
        session.get(DagRun, second.id).state = "running"
        session.scalars(select(TaskInstance).where(TaskInstance.dag_id == DAG_ID, TaskInstance.run_id ==
                                                   second.run_id, TaskInstance.task_id == "prepare")).one() \
            .state = "up_for_retry"
    newest = page_runs()[0]
    assert newest["status"] == "running" and newest["error"].endswith("state attribute is queued. — Airflow "
                                                                      "tries prepare again"), newest


def test_a_run_that_ran_a_cycle_is_done_as_the_cycles_say():
    from cdcflow_airflow.dag_runs import merged

    airflow = [{"dag_run_id": "manual__1", "airflow_state": "success", "mode": "catch-up", "cycle_id": "airflow__1",
                "skipped": None, "started": "2026-11-30T10:00:00.000Z", "error": None, "failed_task": None},
               {"dag_run_id": "manual__2", "airflow_state": "running", "mode": "catch-up", "cycle_id": None,
                "skipped": None, "started": "2026-11-30T10:05:00.000Z", "error": None, "failed_task": None}]
    cycles = [{"run_id": "airflow__1", "status": "done", "mode": "catch-up", "started": "2026-11-30T10:00:01.000Z"},
              {"run_id": "cli__1", "status": "done", "mode": "catch-up", "started": "2026-11-30T09:00:00.000Z"}]
    assert [r["status"] for r in merged(airflow, cycles, 10)] == ["running", "done", "done"]  # was success
