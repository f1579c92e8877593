"""A changefeed to a TiDB stand-in (cdcflow_devtools.tidb_standin): a real MariaDB server runs
the rows and the DDL, and ADMIN SHOW DDL JOBS and TiDB's DDL history are answered from the
recorded result sets in tests/tidb_recorded/.  The `tidb` fixture serves every downstream
connection the driver opens; start_tidb_changefeed creates a changefeed to it with two tables
replicated by a first cycle."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdcflow import cli
from cdcflow.launch.in_process import run_cycle
from cdcflow.sink import async_index, connection
from cdcflow_devtools.tidb_standin import TiDBStandIn

RECORDED = Path(__file__).resolve().parent / "tidb_recorded" / "admin_show_ddl_jobs.json"
SCHEMA = "tidb_async"
REAL_CONNECT = connection.connect


@pytest.fixture
def tidb(mariadb_pair, monkeypatch, cdcflow_home):
    """The TiDB stand-in, serving every downstream connection the driver opens."""
    up, down = mariadb_pair
    for server in (up, down):
        server.execute(f"DROP DATABASE IF EXISTS {SCHEMA}")
    monkeypatch.setattr(async_index, "FIND_PAUSE", 0.01)
    holder = {}

    def use(standin: TiDBStandIn) -> TiDBStandIn:
        holder["standin"] = standin
        monkeypatch.setattr(connection, "connect", standin.connect)
        return standin

    use.new = lambda **kw: use(TiDBStandIn(RECORDED, REAL_CONNECT, **kw))
    return use


def create_tidb_changefeed(capsys, up, down, changefeed_id: str) -> None:
    from cdcflow.config.spec_store import home

    config = home() / f"{changefeed_id}.toml"
    config.write_text(f"[filter]\nrules = ['{SCHEMA}.*']\n")
    capsys.readouterr()
    rc = cli.main(["changefeed", "create", "-c", changefeed_id, "--source-uri", up.uri,
                   "--sink-uri", down.uri.replace("mysql://", "tidb://"), "--config", str(config)])
    assert rc == 0, capsys.readouterr().err


def start_tidb_changefeed(tidb, capsys, mariadb_pair, spark, changefeed_id: str, **standin) -> TiDBStandIn:
    """A new TiDB stand-in, a changefeed to it, and two tables replicated by a first cycle."""
    up, down = mariadb_pair
    s = tidb.new(**standin)
    create_tidb_changefeed(capsys, up, down, changefeed_id)
    up.execute(f"CREATE DATABASE {SCHEMA}",
               f"CREATE TABLE {SCHEMA}.t (id INT PRIMARY KEY, v INT)",
               f"CREATE TABLE {SCHEMA}.u (id INT PRIMARY KEY, c INT)",
               f"INSERT INTO {SCHEMA}.t VALUES (1, 10), (2, 20)",
               f"INSERT INTO {SCHEMA}.u VALUES (1, 1)")
    run_cycle(changefeed_id, spark=spark)
    return s
