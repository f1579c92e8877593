"""Shared fixtures: a pair of real MariaDB servers, a local Spark session and a
private CDCFLOW_HOME."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cdcflow_devtools.mariadb import MariaDB, start_pair

# The test files that take longest (a full run's durations), first: make test gives each worker a
# test file at a time (--dist loadfile), and a long file taken last keeps one worker busy alone
# after the others are done.
LONGEST_FIRST = (
    "devtools/test_airflow_local.py", "airflow/test_ui_browser.py", "e2e/test_ddl_window.py",
    "airflow/test_dag_stale_and_errors.py", "e2e/test_foreign_keys.py", "airflow/test_dag_lifecycle.py",
    "e2e/test_random_workload.py", "e2e/test_spark_connect.py", "e2e/test_snapshot.py", "e2e/test_snapshot_indexes.py",
    "airflow/test_dag_snapshot.py", "e2e/test_add_tables.py", "e2e/test_cli_process.py", "airflow/test_dag_factory.py",
    "filter/test_value_expr.py", "e2e/test_ddl_heavy.py", "airflow/test_dag_run.py", "e2e/test_spark_cluster.py",
    "sink/test_row_sink.py", "e2e/test_lifecycle.py", "e2e/test_large_txn.py",
)


def pytest_addoption(parser) -> None:
    parser.addoption("--engine", choices=("auto", "local", "spark"), default=None,
                     help="force every changefeed's row steps to this engine (CDCFLOW_ENGINE): `spark` runs "
                          "filter, barrier and apply's row work in Spark tasks whatever the window's size")


def pytest_configure(config) -> None:
    # through the environment, so the CLI processes and Airflow tasks the tests start follow it too
    engine = config.getoption("--engine")
    if engine:
        os.environ["CDCFLOW_ENGINE"] = engine


def pytest_report_header(config) -> str:
    return f"cdcflow engine: {os.environ.get('CDCFLOW_ENGINE') or 'each changefeed config (auto by default)'}"


def pytest_collection_modifyitems(items) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    tests = Path(__file__).resolve().parent
    # a stable sort by file: each file's tests stay together and in their order
    items.sort(key=lambda item: rank.get(item.path.relative_to(tests).as_posix(), len(rank))
               if item.path.is_relative_to(tests) else len(rank))


@pytest.fixture(scope="session", autouse=True)
def mariadb_install_once(tmp_path_factory):
    """mariadb-install-db runs once per session: every server a test starts gets a copy of that
    install's datadir (the install options are the same for all; its start then secures root as
    after a real install).  An install costs ~4 s a server on this box, a copy ~0.1 s: the 256 MB
    redo log is copied sparse, as the holes it mostly is."""
    template: list[Path] = []
    real_install = MariaDB._install

    def install(server: MariaDB) -> None:
        if not template:
            fresh = MariaDB(tmp_path_factory.mktemp("mariadb-install"), name="template")
            real_install(fresh)
            sparse = fresh.dir / "sparse"
            subprocess.run(["cp", "-a", "--sparse=always", str(fresh.datadir), str(sparse)], check=True)
            shutil.rmtree(fresh.datadir)
            template.append(sparse)
        if server.datadir.exists():
            shutil.rmtree(server.datadir)
        subprocess.run(["cp", "-a", "--sparse=always", str(template[0]), str(server.datadir)], check=True)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(MariaDB, "_install", install)
        yield


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
def _embedded_sessions():
    """The embedded Spark sessions the `spark` fixture started (the last one is live)."""
    started = []
    try:
        yield started
    finally:
        if started:
            started[-1].stop()


@pytest.fixture
def spark(_embedded_sessions):
    """One embedded Spark for the tests that take it and the cycles the in-process CLI runs (its
    getOrCreate finds this one): one warm JVM for the whole session, started again only when a
    test's code stopped it (a stage run as a DAG task stops the session it opened, which in this
    process is this one), whatever order the tests run in."""
    from cdcflow.spark.session import get_session

    live = _embedded_sessions[-1] if _embedded_sessions else None
    if live is None or live.sparkContext._jsc is None:  # never started, or stopped
        live = get_session("cdcflow-test")
        _embedded_sessions.append(live)
    return live


@pytest.fixture
def cdcflow_home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "cdcflow-home"
    home.mkdir()
    monkeypatch.setenv("CDCFLOW_HOME", str(home))
    return home


@pytest.fixture(autouse=True)
def _no_handler_left_on_a_closed_stream():
    """A handler a test's code set up on its captured stderr/stdout (the CLI's basicConfig,
    Airflow's logging config) writes to a closed file once that test ends: every later record
    would print a "Logging error" traceback into the next test's captured output."""
    yield
    for logger in [logging.root, *(lg for lg in logging.root.manager.loggerDict.values()
                                   if isinstance(lg, logging.Logger))]:
        for handler in list(logger.handlers):
            stream = getattr(handler, "stream", None)
            if stream is not None and getattr(stream, "closed", False):
                logger.removeHandler(handler)
