"""The wait_index sensor's trigger against the TiDB stand-in (the recorded ADMIN SHOW DDL JOBS
result sets, tests/tidb_recorded): it keeps looking while TiDB builds, yields `done` once the
build is done and `failed` with the changefeed's error when it was cancelled; and the sensor
through dag.test(), deferring to it (dag.test() runs the trigger in line), or rescheduling
itself when the config says `index-wait = "reschedule"`."""

from __future__ import annotations

import asyncio
import textwrap

import pytest
from e2e_helpers import index_jobs_of
from tidb_standin_helpers import SCHEMA, start_tidb_changefeed, tidb  # noqa: F401 - tidb: a fixture

try:
    from airflow_env import sync_dag_file, use_airflow
except ImportError:  # tests/ imported as a package
    from tests.airflow_env import sync_dag_file, use_airflow

from cdcflow.config.spec_store import home
from cdcflow.launch import dag_tasks
from cdcflow.launch.in_process import run_cycle
from cdcflow.store import metastore

pytestmark = [pytest.mark.e2e, pytest.mark.airflow]


@pytest.fixture(scope="module")
def airflow_db(tmp_path_factory):
    env = use_airflow(tmp_path_factory.mktemp("airflow"))
    env.migrate_db()
    return env


def _stopped_at_an_index_build(tidb, capsys, mariadb_pair, spark, changefeed_id: str):
    """A cycle that stopped at the DDL after an ADD INDEX TiDB still builds (TiDB job 122)."""
    up, _ = mariadb_pair
    standin = start_tidb_changefeed(tidb, capsys, mariadb_pair, spark, changefeed_id, on_submit="queueing")
    up.execute(f"ALTER TABLE {SCHEMA}.t ADD INDEX iv (v)", f"INSERT INTO {SCHEMA}.t VALUES (3, 30)",
               f"ALTER TABLE {SCHEMA}.t ADD COLUMN w INT", f"INSERT INTO {SCHEMA}.t VALUES (4, 40, 4)")
    result = run_cycle(changefeed_id, spark=spark)
    assert result["wait_index"]["done"] is False and result["wait_index"]["pending"] == [122]
    standin.show("running")
    standin.statements.clear()
    return standin, result["run_id"]


def _trigger(changefeed_id: str, run_id: str):
    """The trigger as the triggerer builds it: from what serialize() gave."""
    from airflow.sdk._shared.module_loading import import_string

    from cdcflow_airflow.index_trigger import IndexJobsTrigger

    classpath, kwargs = IndexJobsTrigger(changefeed_id, str(home()), run_id, poll_interval=0.05).serialize()
    assert classpath == "cdcflow_airflow.index_trigger.IndexJobsTrigger"
    return import_string(classpath)(**kwargs)


async def _first_event_after(trigger, wait: float, then):
    """The trigger's first event, `then()` called once it has looked for `wait` seconds without one."""
    events = trigger.run()
    first = asyncio.ensure_future(anext(events))
    await asyncio.sleep(wait)
    assert not first.done(), first.result()  # still looking: no event while TiDB builds
    then()
    event = await asyncio.wait_for(first, 30)
    await events.aclose()
    return event.payload


def test_the_trigger_keeps_looking_while_tidb_builds_and_says_done_when_it_is_built(
        airflow_db, tidb, mariadb_pair, spark, capsys):
    standin, run_id = _stopped_at_an_index_build(tidb, capsys, mariadb_pair, spark, "trig-done")
    event = asyncio.run(_first_event_after(_trigger("trig-done", run_id), 0.5, lambda: standin.show("synced")))
    assert event["status"] == "done" and event["done"] is True and event["pending"] == []
    assert [(j.job_id, j.status, j.tidb_state) for j in index_jobs_of("trig-done")] == [(122, "done", "synced")]
    assert standin.statements == []  # it only looked: the waiting DDL is the next cycle's


def test_the_trigger_reports_a_cancelled_build_as_the_sensor_does(airflow_db, tidb, mariadb_pair, spark, capsys):
    standin, run_id = _stopped_at_an_index_build(tidb, capsys, mariadb_pair, spark, "trig-cancel")
    event = asyncio.run(_first_event_after(_trigger("trig-cancel", run_id), 0.3,
                                           lambda: standin.show("cancelled")))
    assert event["status"] == "failed"
    for part in ("changefeed trig-cancel", "index iv on tidb_async.t", "TiDB job 122", "ended cancelled"):
        assert part in event["message"], part
    run = metastore.get_run("trig-cancel", run_id)  # recorded on the cycle: finish fails the changefeed
    assert run.stats["failed_stage"] == "wait_index" and "ErrAsyncIndexFailed" in run.error
    assert [(j.status, j.tidb_state) for j in index_jobs_of("trig-cancel")] == [("failed", "cancelled")]


SENSOR_DAG = """\
import datetime as dt
from airflow.sdk import DAG
from cdcflow_airflow.index_sensor import wait_index_task
with DAG({dag_id!r}, schedule=None, start_date=dt.datetime(2026, 1, 1)):
    sensor = wait_index_task({changefeed_id!r}, {home!r}, {index_wait!r}, run_id={run_id!r})
    sensor.poke_interval = 0.1
"""


@pytest.mark.parametrize("index_wait", ["deferrable", "reschedule"])
def test_the_sensor_defers_to_the_trigger_or_reschedules_itself_through_dag_test(
        airflow_db, tidb, mariadb_pair, spark, capsys, tmp_path, monkeypatch, index_wait):
    from cdcflow_airflow import index_trigger

    changefeed_id = f"sensor-{index_wait}"
    standin, run_id = _stopped_at_an_index_build(tidb, capsys, mariadb_pair, spark, changefeed_id)
    looks, triggered = [], []
    real_poke, real_look = dag_tasks.poke_index, index_trigger.look_once

    def poke(*args):  # every look, the sensor's own and the trigger's: TiDB ends the build after the first
        result = real_poke(*args)
        looks.append(result.done)
        if len(looks) == 1:
            standin.show("synced")
        return result

    def look(*args):
        triggered.append(args)
        return real_look(*args)

    monkeypatch.setattr(dag_tasks, "poke_index", poke)
    monkeypatch.setattr(index_trigger, "look_once", look)
    path = tmp_path / "sensor_dag.py"
    path.write_text(textwrap.dedent(SENSOR_DAG.format(dag_id=f"wait_index_{index_wait}", changefeed_id=changefeed_id,
                                                      home=str(home()), index_wait=index_wait, run_id=run_id)))
    dag = sync_dag_file(path)[f"wait_index_{index_wait}"]
    run = dag.test()
    assert str(run.get_task_instance("wait_index").state).rsplit(".", 1)[-1].lower() == "success"
    assert looks[0] is False and looks[-1] is True
    # deferrable: the worker looked once, then the trigger until the build was done; reschedule: no trigger
    assert len(triggered) == (len(looks) - 1 if index_wait == "deferrable" else 0)
