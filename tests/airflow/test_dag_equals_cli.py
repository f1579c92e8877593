"""One cycle, two launchers: the same window through the Airflow DAG (its Spark tasks on the
session's Spark Connect server) and through `cdcflow changefeed run` (embedded Spark) takes
the same decisions in every stage and leaves two equal downstreams."""

from __future__ import annotations

import pytest

try:
    from airflow_env import connect_connection, parsed_changefeed_dag, use_airflow
except ImportError:  # tests/ imported as a package
    from tests.airflow_env import connect_connection, parsed_changefeed_dag, use_airflow

from e2e_helpers import cli_run, create_changefeed, decisions, mixed_window

from cdcflow.devtools.compare import compare
from cdcflow.devtools.mariadb import MariaDB, free_port
from cdcflow.store import metastore

pytestmark = [pytest.mark.e2e, pytest.mark.airflow]

S = "dag_eq"


def test_the_dag_and_the_cli_take_the_same_decisions(mariadb_pair, tmp_path_factory, monkeypatch, capsys,
                                                      spark_connect):
    env = use_airflow(tmp_path_factory.mktemp("airflow"))
    env.migrate_db()
    monkeypatch.setenv("CDCFLOW_HOME", str(tmp_path_factory.mktemp("cdcflow-home")))
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_CONNECT_DEFAULT", connect_connection(spark_connect.url))
    up, down = mariadb_pair
    other = MariaDB(tmp_path_factory.mktemp("down-dag"), name="down-dag", port=free_port()).start()
    config, workload = mixed_window(S)
    try:
        for s in (up, down, other):
            s.execute(f"DROP DATABASE IF EXISTS {S}")
        create_changefeed(capsys, up, down, "eq-cli", config)
        create_changefeed(capsys, up, other, "eq-dag", config)
        up.execute(f"CREATE DATABASE {S}", *workload)

        rc, err = cli_run(capsys, "eq-cli")
        assert rc == 0, err
        run = parsed_changefeed_dag("eq-dag").test(run_conf={"mode": "catch-up", "start_ts": None, "target_ts": None})
        assert str(run.state) in ("success", "DagRunState.SUCCESS"), run.state
        assert type(parsed_changefeed_dag("eq-dag").get_task("apply")).__name__ == "PythonOperator"  # Connect

        assert decisions("eq-dag") == decisions("eq-cli")
        assert decisions("eq-dag")["apply"]["rows_in"] > 0
        with down.connect() as a, other.connect() as b:
            assert compare(a, b, schemas=[S]) == []
        assert metastore.get_feed("eq-dag").state == metastore.get_feed("eq-cli").state == "normal"
    finally:
        other.stop()
        for s in (up, down):
            s.execute(f"DROP DATABASE IF EXISTS {S}")
