"""The whole changefeed DAG through Airflow's dag.test(): real MariaDB servers, the Spark
stages run by SparkSubmitOperator as spark-submit processes (the changefeed's config names a
master: the cluster launcher), the metadata store shared."""

from __future__ import annotations

import json

import pytest

try:
    from airflow_env import parsed_changefeed_dag, use_airflow
except ImportError:  # tests/ imported as a package
    from tests.airflow_env import parsed_changefeed_dag, use_airflow

from e2e_helpers import assert_consistent, create_changefeed

from cdcflow import cli
from cdcflow.store import metastore

pytestmark = [pytest.mark.e2e, pytest.mark.airflow]


def test_dag_runs_a_cycle_and_a_paused_changefeed_does_nothing(mariadb_pair, tmp_path_factory, monkeypatch,
                                                                 capsys):
    env = use_airflow(tmp_path_factory.mktemp("airflow"))
    env.migrate_db()
    monkeypatch.setenv("CDCFLOW_HOME", str(tmp_path_factory.mktemp("cdcflow-home")))
    up, down = mariadb_pair
    create_changefeed(capsys, up, down, "e2e-dag",
                      "[filter]\nrules = ['e2e_dag.*']\n[cdcflow]\nspark-master = \"local[2]\"\nengine = \"spark\"\n")
    before = metastore.get_feed("e2e-dag").checkpoint_ts
    up.execute("CREATE DATABASE e2e_dag",
               "CREATE TABLE e2e_dag.t (id INT PRIMARY KEY, v VARCHAR(20))",
               "INSERT INTO e2e_dag.t VALUES (1, 'one'), (2, 'two'), (3, NULL)",
               "UPDATE e2e_dag.t SET id = 30 WHERE id = 3",
               "ALTER TABLE e2e_dag.t ADD COLUMN w INT",
               "UPDATE e2e_dag.t SET w = id * 2",
               # index DDL is synchronous on MariaDB: the next DDL on the table never waits
               "CREATE INDEX iw ON e2e_dag.t (w)",
               "ALTER TABLE e2e_dag.t ADD COLUMN x INT",
               "UPDATE e2e_dag.t SET x = w + 1")

    dag = parsed_changefeed_dag("e2e-dag")
    assert type(dag.get_task("apply")).__name__ == "StageSubmitOperator"
    run = dag.test()
    assert str(run.state) in ("success", "DagRunState.SUCCESS"), run.state
    assert_consistent(up, down, ["e2e_dag"])
    feed = metastore.get_feed("e2e-dag")
    assert feed.state == "normal" and feed.checkpoint_ts > before and feed.lease_owner is None
    last = metastore.recent_runs("e2e-dag", limit=1)[0]
    assert last.run_id.startswith("airflow__") and last.status == "done"
    assert last.stats["apply"]["ddl_applied"] == 5 and "index_wait" not in last.stats["apply"]
    # the card: each stage a task of its own, its row steps in Spark tasks (engine = "spark"); `query`
    # (and the Changefeeds page) say so
    capsys.readouterr()
    assert cli.main(["changefeed", "query", "-c", "e2e-dag"]) == 0
    shown = json.loads(capsys.readouterr().out)["cdcflow"]["last_runs"][0]
    assert shown["stage_tasks"] == dict.fromkeys(("filter", "barrier", "apply"), "in its own task"), shown
    assert shown["stage_places"] == dict.fromkeys(("filter", "barrier", "apply"), "spark"), shown
    # the sensor ran and was done at its first poke, with nothing pending
    assert last.stats["wait_index"] == {"done": True, "pending": [], "waiting_at": None}
    assert str(run.get_task_instance("wait_index").state) in ("success", "TaskInstanceState.SUCCESS")
    assert down.query("SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'e2e_dag' "
                      "AND INDEX_NAME = 'iw'") == [(1,)]

    # a stopped changefeed's run applies nothing and still succeeds (it says why in the log)
    assert cli.main(["changefeed", "pause", "-c", "e2e-dag"]) == 0
    up.execute("INSERT INTO e2e_dag.t (id, v, w) VALUES (4, 'paused', 8)")
    run = dag.test()
    assert str(run.state) in ("success", "DagRunState.SUCCESS"), run.state
    assert down.query("SELECT COUNT(*) FROM e2e_dag.t WHERE id = 4") == [(0,)]
    assert metastore.get_feed("e2e-dag").checkpoint_ts == feed.checkpoint_ts
