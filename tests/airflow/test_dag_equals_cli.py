"""One cycle, two launchers: the same window through the Airflow DAG (its Spark tasks on the
session's Spark Connect server) and through `cdcflow changefeed run` (embedded Spark) takes
the same decisions in every stage and leaves two equal downstreams."""

from __future__ import annotations

import pytest

try:
    from airflow_env import connect_connection, parsed_changefeed_dag, use_airflow
except ImportError:  # tests/ imported as a package
    from tests.airflow_env import connect_connection, parsed_changefeed_dag, use_airflow

from e2e_helpers import compare_twins, twin_changefeeds

from cdcflow_devtools.mariadb import MariaDB, free_port

pytestmark = [pytest.mark.e2e, pytest.mark.airflow]

S = "dag_eq"
CIDS = ("eq-cli", "eq-dag")


def test_the_dag_and_the_cli_take_the_same_decisions(mariadb_pair, tmp_path_factory, monkeypatch, capsys,
                                                      spark_connect):
    env = use_airflow(tmp_path_factory.mktemp("airflow"))
    env.migrate_db()
    monkeypatch.setenv("CDCFLOW_HOME", str(tmp_path_factory.mktemp("cdcflow-home")))
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_CONNECT_DEFAULT", connect_connection(spark_connect.url))
    up, down = mariadb_pair
    other = MariaDB(tmp_path_factory.mktemp("down-dag"), name="down-dag", port=free_port()).start()
    try:
        twin_changefeeds(capsys, up, down, other, S, CIDS)
        run = parsed_changefeed_dag("eq-dag").test(run_conf={"mode": "catch-up", "start_ts": None, "target_ts": None})
        assert str(run.state) in ("success", "DagRunState.SUCCESS"), run.state
        assert type(parsed_changefeed_dag("eq-dag").get_task("apply")).__name__ == "PythonOperator"  # Connect
        compare_twins(up, down, other, S, CIDS)
    finally:
        other.stop()
        for s in (up, down):
            s.execute(f"DROP DATABASE IF EXISTS {S}")
