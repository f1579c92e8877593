"""Shared fixtures: a pair of real MariaDB servers, a local Spark session and a
private CDCFLOW_HOME."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdcflow_devtools.mariadb import MariaDB, start_pair


@pytest.fixture(scope="session")
def mariadb_pair(tmp_path_factory) -> tuple[MariaDB, MariaDB]:
    """(upstream with a ROW binlog, downstream), on free ports, for the whole
    session.  Tests share them: each test works in schemas of its own."""
    up, down = start_pair(tmp_path_factory.mktemp("mariadb"))
    try:
        yield up, down
    finally:
        up.stop()
        down.stop()


@pytest.fixture(scope="session")
def spark_connect(tmp_path_factory):
    """One Spark Connect server (its own JVM, 127.0.0.1, a free port) for the session's
    DAG runs and Spark Connect tests; started by the first test that asks for it."""
    from cdcflow_devtools import spark_connect as connect
    from cdcflow_devtools.mariadb import free_port

    server = connect.start(tmp_path_factory.mktemp("spark-connect"), port=free_port(), shuffle_partitions=2)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def spark():
    """One embedded Spark for the whole session: the tests that take it and the cycles the
    in-process CLI runs (its getOrCreate finds this one) share one warm JVM."""
    from cdcflow.spark.session import get_session

    session = get_session("cdcflow-test")
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture
def cdcflow_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "cdcflow-home"
    home.mkdir()
    monkeypatch.setenv("CDCFLOW_HOME", str(home))
    return home
