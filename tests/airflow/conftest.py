"""Fixtures of the DAG tests."""

from __future__ import annotations

import pytest

try:
    from airflow_env import connect_connection, use_airflow
except ImportError:  # tests/ imported as a package
    from tests.airflow_env import connect_connection, use_airflow


@pytest.fixture
def airflow_home(tmp_path_factory, monkeypatch, spark_connect):
    """Airflow with its database, a fresh CDCFLOW_HOME, and the Spark stages on the session's
    Spark Connect server (the `spark_connect_default` connection)."""
    env = use_airflow(tmp_path_factory.mktemp("airflow"))
    env.migrate_db()
    monkeypatch.setenv("CDCFLOW_HOME", str(tmp_path_factory.mktemp("cdcflow-home")))
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_CONNECT_DEFAULT", connect_connection(spark_connect.url))
    return env
