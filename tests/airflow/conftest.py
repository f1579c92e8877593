"""Fixtures of the DAG tests, and the API's client with Airflow's login."""

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


ROLES = {"admin": "admin", "viewer": "viewer", "user": "user"}  # simple auth manager users


@pytest.fixture
def airflow_auth(tmp_path_factory, monkeypatch):
    """Airflow's metadata DB (its auth checks look the DAG up) and its simple auth manager,
    initialised as the API server does; returns a bearer header per user."""
    env = use_airflow(tmp_path_factory.mktemp("airflow"))  # cdcflow_airflow imports airflow
    env.migrate_db()
    monkeypatch.setenv("AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS", ",".join(f"{u}:{r}" for u, r in ROLES.items()))
    monkeypatch.setenv("AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS", "False")
    from airflow.api_fastapi.app import init_auth_manager
    from airflow.api_fastapi.auth.managers.simple.user import SimpleAuthManagerUser

    manager = init_auth_manager()
    return {u: {"Authorization": "Bearer " + manager.generate_jwt(SimpleAuthManagerUser(username=u, role=r))}
            for u, r in ROLES.items()}


@pytest.fixture
def client(cdcflow_home, airflow_auth):
    from fastapi.testclient import TestClient

    from cdcflow_airflow.http_api import create_app

    return TestClient(create_app(), headers=airflow_auth["viewer"])  # a viewer reads everything
