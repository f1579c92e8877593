"""The trigger form's mode verify through Airflow's dag.test(): `cdcflow changefeed verify` in
the run (its chunks compared by the task's own threads), after the run catches up itself (the
DAG runs one run at a time: no scheduled catch-up could start while it waits); the run fails,
naming the difference, when the downstream differs."""

from __future__ import annotations

import pytest

try:
    from airflow_env import parsed_changefeed_dag
except ImportError:  # tests/ imported as a package
    from tests.airflow_env import parsed_changefeed_dag

from e2e_helpers import query, schema_changefeed

from cdcflow.store import metastore

pytestmark = [pytest.mark.e2e, pytest.mark.airflow]

VERIFY = {"mode": "verify", "start_ts": None, "target_ts": None}


def test_mode_verify_runs_no_cycle_and_fails_when_the_downstream_differs(mariadb_pair, airflow_home, capsys):
    up, down = mariadb_pair
    schema_changefeed(capsys, up, down, "dag-vf", "dag_vf", "CREATE DATABASE dag_vf",
                      "CREATE TABLE dag_vf.t (id INT PRIMARY KEY, v VARCHAR(20))",
                      "INSERT INTO dag_vf.t VALUES (1, 'one'), (2, 'two'), (3, 'three')")
    dag = parsed_changefeed_dag("dag-vf")
    run = dag.test(run_conf={"mode": "catch-up", "start_ts": None, "target_ts": None})
    assert str(run.state) in ("success", "DagRunState.SUCCESS"), run.state
    runs_before = len(metastore.recent_runs("dag-vf"))
    checkpoint = metastore.get_feed("dag-vf").checkpoint_ts

    # rows no cycle has applied yet: the verify run catches up first, in its own run (nothing else
    # moves the checkpoint here, as nothing could beside a verify run holding the DAG's one slot)
    up.execute("INSERT INTO dag_vf.t VALUES (4, 'four'), (5, 'five')")
    run = dag.test(run_conf=VERIFY)
    assert str(run.state) in ("success", "DagRunState.SUCCESS"), run.state
    verified = query(capsys, "dag-vf")["cdcflow"]["last_verify"]
    assert verified["status"] == "equal" and verified["not_yet_applied"] == [], verified
    assert down.query("SELECT COUNT(*) FROM dag_vf.t")[0][0] == 5
    assert metastore.get_feed("dag-vf").checkpoint_ts > checkpoint
    caught_up = metastore.recent_runs("dag-vf")
    assert len(caught_up) > runs_before and caught_up[0].run_id.startswith("airflow__"), caught_up[0]
    runs_before = len(caught_up)
    checkpoint = metastore.get_feed("dag-vf").checkpoint_ts

    down.execute("UPDATE dag_vf.t SET v = 'changed' WHERE id = 2")
    run = dag.test(run_conf=VERIFY)
    assert str(run.state) in ("failed", "DagRunState.FAILED"), run.state
    last = query(capsys, "dag-vf")["cdcflow"]["last_verify"]
    assert last["status"] == "different" and len(last["differences"]) == 1
    diff = last["differences"][0]
    assert (diff["table"], diff["key"], diff["kind"], diff["columns"]) == ("dag_vf.t", {"id": "2"}, "different", ["v"])
    assert diff["downstream"]["v"] == "changed"
    feed = metastore.get_feed("dag-vf")  # its catch-up found nothing new; nothing recorded as an error
    assert (feed.state, feed.error) == ("normal", None)
    for s in (up, down):
        s.execute("DROP DATABASE dag_vf")
