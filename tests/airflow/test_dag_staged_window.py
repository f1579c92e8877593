"""The staged path's hand-over, through Airflow's dag.test(), real MariaDB servers and the
session's Spark Connect server: with `fast-path-max-events = 0` each Spark stage is a task of its
own, which in a deployment is a process of its own.  Pull's task keeps a window within a
segment's bounds in memory without writing its files (store.events.Keeper), so before it hands
the window on it writes them: every stage task reads what pull read, and the downstream ends as
the upstream is.  dag.test() runs the tasks in one process, but each loads its cycle afresh and
keeps nothing of pull's, as a process of its own would."""

from __future__ import annotations

import pytest

try:
    from airflow_env import parsed_changefeed_dag
except ImportError:  # tests/ imported as a package
    from tests.airflow_env import parsed_changefeed_dag

from e2e_helpers import assert_consistent, create_changefeed

from cdcflow.store import metastore

pytestmark = [pytest.mark.e2e, pytest.mark.airflow]


def test_the_stage_tasks_read_the_window_pulls_task_kept(mariadb_pair, airflow_home, spark, capsys):
    up, down = mariadb_pair
    for s in (up, down):
        s.execute("DROP DATABASE IF EXISTS dag_staged")
    create_changefeed(capsys, up, down, "dag-staged",
                      "[filter]\nrules = ['dag_staged.*']\n[cdcflow]\nfast-path-max-events = 0\n")
    up.execute("CREATE DATABASE dag_staged",
               "CREATE TABLE dag_staged.t (id INT PRIMARY KEY, v VARCHAR(20) CHARACTER SET latin1)",
               "INSERT INTO dag_staged.t VALUES (1, 'one'), (2, 'twö'), (3, NULL)",
               "UPDATE dag_staged.t SET id = 30 WHERE id = 3",
               "ALTER TABLE dag_staged.t ADD COLUMN w INT",
               "UPDATE dag_staged.t SET w = id * 2",
               "DELETE FROM dag_staged.t WHERE id = 1")
    run = parsed_changefeed_dag("dag-staged").test(run_conf={"mode": "catch-up", "start_ts": None,
                                                              "target_ts": None})
    assert str(run.state) in ("success", "DagRunState.SUCCESS"), run.state
    last = metastore.recent_runs("dag-staged", limit=1)[0]
    assert last.status == "done", last.error
    assert last.stats["pull"]["kept_in_process"] is True  # kept by pull: the case the hand-over is for
    assert {last.stats[f"{s}_task"] for s in ("filter", "barrier", "apply")} == {"in its own task"}, last.stats
    assert (last.stats["apply"]["rows_in"], last.stats["apply"]["ddl_applied"]) == (8, 3)
    assert_consistent(up, down, ["dag_staged"])
    for s in (up, down):
        s.execute("DROP DATABASE dag_staged")
