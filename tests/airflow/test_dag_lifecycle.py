"""The trigger form and the schedule's idle runs through Airflow's dag.test(), against real
MariaDB servers and the Spark stages on the session's Spark Connect server: dry run, backfill from a date-time, an idle
catch-up that starts no Spark, and the runs of a stopped, failed, finished or removed
changefeed, which succeed, apply nothing and say why."""

from __future__ import annotations

import json

import logging
import os
from types import SimpleNamespace

import pytest

try:
    from airflow_env import connect_connection, parsed_changefeed_dag
except ImportError:  # tests/ imported as a package
    from tests.airflow_env import connect_connection, parsed_changefeed_dag

from e2e_helpers import assert_consistent, create_changefeed, fresh_schema

from cdcflow import cli
from cdcflow.core import log_line, tso
from cdcflow.store import metastore

pytestmark = [pytest.mark.e2e, pytest.mark.airflow]


# dag.test() keeps the previous run's conf as the params' values: every run names its mode
CATCH_UP = {"mode": "catch-up", "start_ts": None, "target_ts": None}


def _succeeded(run) -> None:
    assert str(run.state) in ("success", "DagRunState.SUCCESS"), run.state


def _task_states(run) -> dict:
    return {ti.task_id: getattr(ti.state, "value", ti.state) for ti in run.get_task_instances()}


def _task_log(capsys, caplog, dag, runs: list | None = None) -> str:
    """One catch-up run's task logs (the run appended to `runs`).  dag.test() writes them to
    stdout, unless an earlier test of the session configured logging so that they reach the
    log handlers: both are read."""
    capsys.readouterr()
    caplog.clear()
    with caplog.at_level(logging.INFO):
        run = dag.test(run_conf=CATCH_UP)
    _succeeded(run)
    if runs is not None:
        runs.append(run)
    return capsys.readouterr().out + caplog.text


def test_dry_run_backfill_and_idle_runs(mariadb_pair, airflow_home, capsys, caplog):
    up, down = mariadb_pair
    create_changefeed(capsys, up, down, "dag-lc", "[filter]\nrules = ['dag_lc.*']\n")
    created = metastore.get_feed("dag-lc").checkpoint_ts
    up.execute("CREATE DATABASE dag_lc", "CREATE TABLE dag_lc.t (id INT PRIMARY KEY, v VARCHAR(20))",
               "INSERT INTO dag_lc.t VALUES (1, 'one'), (2, 'two')")
    dag = parsed_changefeed_dag("dag-lc")
    assert dag.max_active_runs == 1 and dag.schedule is not None

    # dry run: the plan is recorded, nothing is applied, the checkpoint stays
    _succeeded(dag.test(run_conf={"mode": "dry-run"}))
    assert down.query("SHOW DATABASES LIKE 'dag_lc'") == []
    assert metastore.get_feed("dag-lc").checkpoint_ts == created
    plan = metastore.recent_runs("dag-lc", limit=1)[0].stats["apply"]["would_apply"]
    ddls = [seg["ddl"]["query"] for seg in plan if seg["ddl"]]
    assert ddls == ["CREATE DATABASE dag_lc", "CREATE TABLE dag_lc.t (id INT PRIMARY KEY, v VARCHAR(20))"]
    assert sum(seg["rows"] for seg in plan) == 2 and ["dag_lc.t"] in [seg["tables"] for seg in plan]

    runs = []
    log = _task_log(capsys, caplog, dag, runs)
    assert_consistent(up, down, ["dag_lc"])
    # the task logs say each event and the changefeed in words first, the JSON after them
    assert "applied · changefeed dag-lc · {" in log and "apply done · changefeed dag-lc · {" in log, log[-3000:]
    structured = [line for line in log.splitlines() if '{"changefeed": "dag-lc"' in line]
    assert structured and all(' · changefeed dag-lc · {"changefeed"' in line for line in structured), structured
    assert [e["rows_written"] for e in map(log_line.parse, structured) if e["event"] == "apply done"] == [2]
    # on Spark Connect a window read in one process runs its Spark stages in the pull task, one session
    assert "filter, barrier, apply ran in this task, sharing one Spark Connect session" in log, log[-3000:]
    assert "no index build pending; wait_index is skipped" in log, log[-3000:]
    assert _task_states(runs[0]) == {"prepare": "success", "pull": "success", "filter": "skipped",
                                     "barrier": "skipped", "apply": "skipped", "wait_index": "skipped",
                                     "finish": "success"}, _task_states(runs[0])
    after_catch_up = metastore.get_feed("dag-lc").checkpoint_ts

    # backfill from a date-time: the checkpoint moves back, the DDLs replay, the rows converge
    down.execute("DELETE FROM dag_lc.t WHERE id = 1", "UPDATE dag_lc.t SET v = 'damaged' WHERE id = 2")
    _succeeded(dag.test(run_conf={"mode": "backfill", "start_ts": tso.to_text(created)}))
    assert_consistent(up, down, ["dag_lc"])
    feed = metastore.get_feed("dag-lc")
    assert feed.state == "normal" and feed.checkpoint_ts >= after_catch_up
    last = metastore.recent_runs("dag-lc", limit=1)[0]
    assert last.start_ts == tso.parse(tso.to_text(created)) and last.stats["apply"]["ddl_applied"] == 2

    # an idle catch-up starts no Spark: pull settles the empty window and the checkpoint moves; with no
    # index build pending the sensor is skipped too, so the run is prepare, pull and finish
    before = metastore.get_feed("dag-lc").checkpoint_ts
    run = dag.test(run_conf=CATCH_UP)
    _succeeded(run)
    assert _task_states(run) == _task_states(runs[0]), _task_states(run)
    assert metastore.get_feed("dag-lc").checkpoint_ts > before
    idle = metastore.recent_runs("dag-lc", limit=1)[0]
    assert idle.status == "done" and idle.stats["pull"]["pulled"] == 0 and idle.stats["apply"]["rows_in"] == 0

    # `query` says each run's mode and that it came from Airflow, with its figures
    capsys.readouterr()  # the runs' own output
    assert cli.main(["changefeed", "query", "-c", "dag-lc"]) == 0
    runs = json.loads(capsys.readouterr().out)["cdcflow"]["last_runs"]
    assert [(r["mode"], r["origin"]) for r in runs] == [("catch-up", "airflow"), ("backfill", "airflow"),
                                                        ("catch-up", "airflow"), ("dry-run", "airflow")]
    idle_run, backfill_run, _, dry_run = runs
    assert backfill_run["ddl_applied"] == 2 and backfill_run["rows_written"] == 2
    assert backfill_run["events_pulled"] >= 4 and set(backfill_run["stage_seconds"]) >= {"pull", "filter", "apply"}
    assert dry_run["events_pulled"] >= 4 and dry_run["rows_written"] == 0
    assert idle_run["checkpoint_after"] > idle_run["checkpoint_before"] and idle_run["resolved_ts"]

    # the scheduled runs of a stopped, failed or finished changefeed succeed, do nothing, say why
    up.execute("INSERT INTO dag_lc.t VALUES (3, 'idle')")
    for state, why in (("stopped", "paused (stopped)"), ("failed", "has failed"), ("finished", "target-ts")):
        metastore.update_feed("dag-lc", state=state)
        log = _task_log(capsys, caplog, dag)
        assert "changefeed dag-lc does nothing this cycle" in log and why in log, log[-3000:]
        assert down.query("SELECT COUNT(*) FROM dag_lc.t WHERE id = 3") == [(0,)]
    # ... and so do the runs of a removed one whose DAG Airflow still has
    assert cli.main(["changefeed", "remove", "-c", "dag-lc"]) == 0
    assert "changefeed dag-lc does nothing this cycle: it was removed" in _task_log(capsys, caplog, dag)


def test_failure_callback_records_warning(mariadb_pair, airflow_home, capsys):
    from airflow.sdk.exceptions import AirflowFailException

    from cdcflow_airflow.cycle_tasks import record_task_failure

    up, down = mariadb_pair
    create_changefeed(capsys, up, down, "dag-cb", "")
    home = os.environ["CDCFLOW_HOME"]

    def ti(task_id):
        return SimpleNamespace(task_id=task_id, run_id="manual__1")

    # recorded where raised (AirflowFailException) or by finish (the Spark stages): no change here
    record_task_failure("dag-cb", home, {"ti": ti("finish"), "exception": AirflowFailException("x")})
    record_task_failure("dag-cb", home, {"ti": ti("apply"), "exception": RuntimeError("exit code 137")})
    assert metastore.get_feed("dag-cb").state == "normal"
    # a finish task that died of something else: warning, retried with backoff
    record_task_failure("dag-cb", home, {"ti": ti("finish"), "exception": TimeoutError("task timed out")})
    feed = metastore.get_feed("dag-cb")
    assert feed.state == "warning" and feed.error["code"] == "CDCFLOW:ErrTaskFailed"
    assert "finish" in feed.error["message"] and "TimeoutError: task timed out" in feed.error["message"]
    assert feed.retry_count == 1 and feed.next_retry_at is not None


IN_SPARK = '[cdcflow]\nengine = "spark"\n'  # a changefeed whose row steps run in Spark


def test_a_window_the_task_reads_whole_needs_no_spark_connect_server(mariadb_pair, airflow_home, capsys, caplog,
                                                                     monkeypatch):
    """On engine auto the fast path's stages run every row step in the pull task: it opens no
    session, so the run converges while the server is down (the CLI's cycle alike:
    tests/e2e/test_spark_connect.py)."""
    from cdcflow_devtools.mariadb import free_port

    up, down = mariadb_pair
    for s in (up, down):
        s.execute("DROP DATABASE IF EXISTS dag_nosc")
    create_changefeed(capsys, up, down, "dag-nosc", "[filter]\nrules = ['dag_nosc.*']\n")
    up.execute("CREATE DATABASE dag_nosc", "CREATE TABLE dag_nosc.t (id INT PRIMARY KEY, v INT)",
               "INSERT INTO dag_nosc.t VALUES (1, 1), (2, 2)", "DELETE FROM dag_nosc.t WHERE id = 1")
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_CONNECT_DEFAULT", connect_connection(f"sc://127.0.0.1:{free_port()}"))
    monkeypatch.setattr("cdcflow.spark.session.CONNECT_RETRIES", 1)
    runs = []
    log = _task_log(capsys, caplog, parsed_changefeed_dag("dag-nosc"), runs)
    assert _task_states(runs[0])["pull"] == "success" and _task_states(runs[0])["apply"] == "skipped", log[-3000:]
    assert metastore.get_feed("dag-nosc").state == "normal"
    assert_consistent(up, down, ["dag_nosc"])
    for s in (up, down):
        s.execute("DROP DATABASE dag_nosc")


def test_a_spark_connect_server_that_is_down_puts_the_changefeed_in_warning(mariadb_pair, airflow_home, capsys,
                                                                            monkeypatch):
    from cdcflow_devtools.mariadb import free_port

    up, down = mariadb_pair
    for s in (up, down):
        s.execute("DROP DATABASE IF EXISTS dag_down")
    # row steps in Spark: a window the task reads whole would not ask the server for a session
    create_changefeed(capsys, up, down, "dag-down", f"[filter]\nrules = ['dag_down.*']\n{IN_SPARK}")
    before = metastore.get_feed("dag-down").checkpoint_ts
    up.execute("CREATE DATABASE dag_down", "CREATE TABLE dag_down.t (id INT PRIMARY KEY)",
               "INSERT INTO dag_down.t VALUES (1)")
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_CONNECT_DEFAULT", connect_connection(f"sc://127.0.0.1:{free_port()}"))
    # the down server's error, not how long it is retried (tests/e2e/test_spark_connect.py waits it out)
    monkeypatch.setattr("cdcflow.spark.session.CONNECT_RETRIES", 1)
    run = parsed_changefeed_dag("dag-down").test(run_conf=CATCH_UP)
    assert str(run.state) in ("failed", "DagRunState.FAILED"), run.state
    # a window of at most fast-path-max-events: the stages run in the pull task, whose session fails to open
    assert str(run.get_task_instance("pull").state) in ("failed", "TaskInstanceState.FAILED")
    feed = metastore.get_feed("dag-down")
    assert feed.state == "warning" and feed.error["code"] == "CDCFLOW:ErrSparkUnavailable", feed.error
    assert "Spark Connect server" in feed.error["message"] and feed.checkpoint_ts == before
    assert down.query("SHOW DATABASES LIKE 'dag_down'") == []

    # in the backoff a scheduled run waits and says why; a run a person triggers runs (item 3)
    from cdcflow_airflow.cycle_tasks import prepare_cycle

    pushed = {}
    ti = SimpleNamespace(xcom_push=lambda key, value: pushed.__setitem__(key, value))
    scheduled = SimpleNamespace(run_type=SimpleNamespace(value="scheduled"))
    assert prepare_cycle("dag-down", os.environ["CDCFLOW_HOME"], CATCH_UP, ti, scheduled) is False
    assert "next retry is at" in pushed["skip_reason"]
    first = metastore.recent_runs("dag-down", limit=1)[0].run_id
    parsed_changefeed_dag("dag-down").test(run_conf=CATCH_UP)  # dag.test() is a manual run: no waiting
    ran = metastore.recent_runs("dag-down", limit=1)[0]
    assert ran.run_id != first and ran.status == "failed"  # it ran (into the same dead server)
    assert metastore.get_feed("dag-down").retry_count == 2
    up.execute("DROP DATABASE dag_down")


def test_a_backfill_from_the_creation_second_and_one_that_fails(mariadb_pair, airflow_home, capsys, monkeypatch,
                                                               spark_connect):
    from cdcflow_devtools.mariadb import free_port

    up, down = mariadb_pair
    for s in (up, down):
        s.execute("DROP DATABASE IF EXISTS dag_bf")
    # DDL of the creation second, before the snapshot the changefeed starts from
    up.execute("CREATE DATABASE dag_bf", "CREATE TABLE dag_bf.t (id INT PRIMARY KEY, v VARCHAR(20))")
    down.execute("CREATE DATABASE dag_bf", "CREATE TABLE dag_bf.t (id INT PRIMARY KEY, v VARCHAR(20))")
    create_changefeed(capsys, up, down, "dag-bf", f"[filter]\nrules = ['dag_bf.*']\n{IN_SPARK}")
    created = metastore.get_feed("dag-bf").checkpoint_ts
    up.execute("INSERT INTO dag_bf.t VALUES (1, 'one'), (2, 'two')", "ALTER TABLE dag_bf.t ADD COLUMN w INT")
    dag = parsed_changefeed_dag("dag-bf")
    _succeeded(dag.test(run_conf=CATCH_UP))
    before = metastore.get_feed("dag-bf")
    backfill = {"mode": "backfill", "start_ts": tso.to_text(created)[:19], "target_ts": None}  # as typed in the form

    # a backfill that fails before it writes anything leaves the changefeed as it was
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_CONNECT_DEFAULT", connect_connection(f"sc://127.0.0.1:{free_port()}"))
    # the down server's error, not how long it is retried (tests/e2e/test_spark_connect.py waits it out)
    monkeypatch.setattr("cdcflow.spark.session.CONNECT_RETRIES", 1)
    run = dag.test(run_conf=backfill)
    assert str(run.state) in ("failed", "DagRunState.FAILED"), run.state
    after = metastore.get_feed("dag-bf")
    assert (after.state, after.checkpoint_ts, after.checkpoint_pos, after.replay_until) == \
        (before.state, before.checkpoint_ts, before.checkpoint_pos, before.replay_until) == \
        ("normal", before.checkpoint_ts, before.checkpoint_pos, before.replay_until)
    last = metastore.recent_runs("dag-bf", limit=1)[0]
    assert last.status == "failed" and "backfill from ts" in last.error and "back at checkpoint" in last.error

    # with Spark back, the same backfill replays the creation second and ends normal
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_CONNECT_DEFAULT", connect_connection(spark_connect.url))
    down.execute("UPDATE dag_bf.t SET v = 'damaged' WHERE id = 1")
    _succeeded(dag.test(run_conf=backfill))
    assert metastore.get_feed("dag-bf").state == "normal"
    assert_consistent(up, down, ["dag_bf"])
    for s in (up, down):
        s.execute("DROP DATABASE dag_bf")


FUTURE = "2999-01-01"  # as typed into the trigger form


def test_a_backfill_from_the_future_is_refused_and_changes_nothing(mariadb_pair, airflow_home, capsys):
    """The trigger form's start_ts is checked as every surface checks a ts (core.ts_input):
    later than the current TSO, the run fails in prepare, naming it, and the changefeed's
    record stays as it was (an older cdcflow moved the checkpoint to 2999 for good)."""
    up, down = mariadb_pair
    fresh_schema(up, down, "dag_future", "CREATE TABLE t (id INT PRIMARY KEY)")
    create_changefeed(capsys, up, down, "dag-future", "[filter]\nrules = ['dag_future.*']\n")
    before = metastore.get_feed("dag-future")
    runs_before = len(metastore.recent_runs("dag-future"))
    dag = parsed_changefeed_dag("dag-future")
    capsys.readouterr()
    for mode in ("backfill", "dry-run"):
        run = dag.test(run_conf={"mode": mode, "start_ts": FUTURE, "target_ts": None})
        assert str(run.state) in ("failed", "DagRunState.FAILED"), run.state
    out = capsys.readouterr()
    assert "start_ts" in out.out + out.err and "is later than the current TSO" in out.out + out.err
    after = metastore.get_feed("dag-future")
    assert after == before
    assert len(metastore.recent_runs("dag-future")) == runs_before
    up.execute("INSERT INTO dag_future.t VALUES (1)")
    _succeeded(dag.test(run_conf=CATCH_UP))  # the changefeed goes on from where it was
    assert tso.to_text(metastore.get_feed("dag-future").checkpoint_ts) < "2100"
    assert_consistent(up, down, ["dag_future"])
