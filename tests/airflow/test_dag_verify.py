"""The trigger form's mode verify through Airflow's dag.test(): `cdcflow changefeed verify` in
the run (its chunks compared by the task's own threads); no cycle runs, and the run fails,
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

    run = dag.test(run_conf=VERIFY)
    assert str(run.state) in ("success", "DagRunState.SUCCESS"), run.state
    assert query(capsys, "dag-vf")["cdcflow"]["last_verify"]["status"] == "equal"

    down.execute("UPDATE dag_vf.t SET v = 'changed' WHERE id = 2")
    run = dag.test(run_conf=VERIFY)
    assert str(run.state) in ("failed", "DagRunState.FAILED"), run.state
    last = query(capsys, "dag-vf")["cdcflow"]["last_verify"]
    assert last["status"] == "different" and len(last["differences"]) == 1
    diff = last["differences"][0]
    assert (diff["table"], diff["key"], diff["kind"], diff["columns"]) == ("dag_vf.t", {"id": "2"}, "different", ["v"])
    assert diff["downstream"]["v"] == "changed"
    feed = metastore.get_feed("dag-vf")  # a verify is no cycle: nothing moved, nothing recorded as an error
    assert (feed.state, feed.checkpoint_ts, feed.error) == ("normal", checkpoint, None)
    assert len(metastore.recent_runs("dag-vf")) == runs_before
    for s in (up, down):
        s.execute("DROP DATABASE dag_vf")
