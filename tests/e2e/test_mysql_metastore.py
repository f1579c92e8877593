"""Cycles whose metadata store is a MySQL-compatible database (CDCFLOW_METASTORE_URL), as
cycles on several machines share one: every table the cycle reads and writes (state, runs,
lease, schema versions) lives there, in this process and in a cycle's own process."""

from __future__ import annotations

import time
import uuid

import pytest
from e2e_helpers import assert_consistent, cli_run, create_changefeed, cycle_result, query, run_in_own_process

from cdcflow.store import engine
from cdcflow_devtools.mariadb import HOST, ROOT_PASSWORD, ROOT_USER

pytestmark = pytest.mark.e2e

SCHEMA = "e2e_mstore"


@pytest.fixture
def mysql_store(mariadb_pair, cdcflow_home, monkeypatch):
    """A database of its own on the downstream server, named by CDCFLOW_METASTORE_URL."""
    _up, down = mariadb_pair
    database = f"cdcflow_meta_{uuid.uuid4().hex[:12]}"
    down.execute(f"CREATE DATABASE `{database}`")
    url = f"mysql://{ROOT_USER}:{ROOT_PASSWORD}@{HOST}:{down.port}/{database}"
    monkeypatch.setenv("CDCFLOW_METASTORE_URL", url)
    try:
        yield database
    finally:
        engine.close_all()
        down.execute(f"DROP DATABASE IF EXISTS `{database}`")


def test_cycles_keep_their_state_in_a_mysql_store(mariadb_pair, spark, cdcflow_home, mysql_store, capsys):
    up, down = mariadb_pair
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {SCHEMA}")
    create_changefeed(capsys, up, down, "e2e-mstore", f"[filter]\nrules = ['{SCHEMA}.*']\n")
    up.execute(f"CREATE DATABASE {SCHEMA}",
               f"CREATE TABLE {SCHEMA}.t (id INT PRIMARY KEY, name VARCHAR(20))",
               f"INSERT INTO {SCHEMA}.t VALUES (1, 'a'), (2, 'b')",
               f"ALTER TABLE {SCHEMA}.t ADD COLUMN n INT DEFAULT 5",
               f"UPDATE {SCHEMA}.t SET n = id * 10")
    before = time.time()
    rc, err = cli_run(capsys, "e2e-mstore")
    assert rc == 0, err
    assert_consistent(up, down, [SCHEMA])

    # a cycle in a process of its own finds the same store through the environment alone
    up.execute(f"RENAME TABLE {SCHEMA}.t TO {SCHEMA}.t2", f"INSERT INTO {SCHEMA}.t2 VALUES (3, 'c', 30)")
    result = cycle_result(run_in_own_process("e2e-mstore"))
    assert result["apply"]["ddl_applied"] == 1
    assert_consistent(up, down, [SCHEMA])

    # the state is in the MySQL database, none in a SQLite file, and its times read back whole
    assert not (cdcflow_home / "metadata.db").exists()
    checkpoint, state, lease = down.query("SELECT checkpoint_ts, state, lease_owner FROM cdcflow_changefeeds "
                                          "WHERE id = 'e2e-mstore'", database=mysql_store)[0]
    assert (checkpoint, state, lease) == (query(capsys, "e2e-mstore")["checkpoint_tso"], "normal", None)
    runs = down.query("SELECT status, started_at, ended_at FROM cdcflow_runs WHERE changefeed_id = 'e2e-mstore' "
                      "ORDER BY started_at", database=mysql_store)
    assert [r[0] for r in runs] == ["done", "done"]
    assert before <= runs[0][1] <= runs[0][2] <= runs[1][1] <= runs[1][2] <= time.time()
    tables = {r[0] for r in down.query("SELECT DISTINCT table_name FROM cdcflow_schema_versions "
                                       "WHERE changefeed_id = 'e2e-mstore'", database=mysql_store)}
    assert {"t", "t2"} <= tables  # the tracked schema: the table before and after its rename
