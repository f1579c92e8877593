"""pull's parallel path through Airflow's dag.test(): a changefeed whose config turns it on has
its window read in ranges by tasks on the same Spark Connect server as its Spark stages (the
`spark_connect_default` connection), not on a Spark of the pull task's own, and replicates."""

from __future__ import annotations

import pytest

try:
    from airflow_env import parsed_changefeed_dag
except ImportError:  # tests/ imported as a package
    from tests.airflow_env import parsed_changefeed_dag

from e2e_helpers import assert_consistent, create_changefeed

from cdcflow.store import metastore

pytestmark = [pytest.mark.e2e, pytest.mark.airflow]

S = "dag_pr"


def test_the_dag_reads_a_large_window_in_ranges_on_its_connect_server(mariadb_pair, airflow_home, capsys):
    up, down = mariadb_pair
    # a Connect server's session is waited for: the ranges run as its tasks
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {S}")
    create_changefeed(capsys, up, down, "dag-pr",
                      f"[filter]\nrules = ['{S}.*']\n[cdcflow]\npull-parallelism = 3\npull-parallel-min-bytes = 0\n")
    up.execute(f"CREATE DATABASE {S}", f"CREATE TABLE {S}.t (id INT PRIMARY KEY, v VARCHAR(40))",
               *[f"INSERT INTO {S}.t VALUES ({i}, 'v{i}')" for i in range(60)],
               f"ALTER TABLE {S}.t ADD COLUMN w INT DEFAULT 1",
               *[f"UPDATE {S}.t SET v = 'u{i}', w = {i} WHERE id = {i}" for i in range(0, 60, 2)],
               f"DELETE FROM {S}.t WHERE id < 10")
    run = parsed_changefeed_dag("dag-pr").test(run_conf={"mode": "catch-up", "start_ts": None, "target_ts": None})
    assert str(run.state) in ("success", "DagRunState.SUCCESS"), run.state
    assert_consistent(up, down, [S])
    pull = metastore.recent_runs("dag-pr", 1)[0].stats["pull"]
    assert pull["ranges"] > 1 and pull["spark"] == "connect", pull
    assert sum(pull["range_events"]) == pull["pulled"] > 100
    for s in (up, down):
        s.execute(f"DROP DATABASE {S}")
