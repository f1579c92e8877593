"""Foreign keys with row-changing actions (CASCADE, SET NULL) through the CLI against the real
MariaDB pair: InnoDB's cascaded changes are not in the binlog, so a replicated child table of
such a key is refused at create and at the DDL that adds the key, naming it and the remedy;
with the child left out of the filter, the rest converges."""

from __future__ import annotations

import pytest
from e2e_helpers import _write_config, cli_ok, cli_run, create_changefeed, run_fails

from cdcflow import cli

pytestmark = pytest.mark.e2e

PARENT = "CREATE TABLE p (id INT PRIMARY KEY, v INT)"
CHILD = ("CREATE TABLE c (id INT PRIMARY KEY, pid INT, "
         "FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE ON UPDATE CASCADE)")


def _fresh(db, *servers):
    for s in servers:
        s.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}")


def _same(up, down, table):
    assert sorted(down.query(f"SELECT * FROM {table}")) == sorted(up.query(f"SELECT * FROM {table}")), table


@pytest.fixture(autouse=True, scope="module")
def _no_cascading_keys_left(mariadb_pair):
    """The servers serve the whole session: a cascading key left behind would make every
    later changefeed that selects every table refuse to start."""
    yield
    for s in mariadb_pair:
        s.execute("DROP DATABASE IF EXISTS fka", "DROP DATABASE IF EXISTS fkb")


def test_create_refuses_a_replicated_child_of_a_cascading_key(mariadb_pair, cdcflow_home, capsys):
    up, down = mariadb_pair
    _fresh("fka", up, down)
    up.execute(PARENT, CHILD, "CREATE TABLE n (id INT PRIMARY KEY, pid INT, "
               "FOREIGN KEY (pid) REFERENCES p (id) ON DELETE SET NULL)", database="fka")
    path = _write_config("e2e-fka", "[filter]\nrules = ['fka.*']\n")
    capsys.readouterr()
    rc = cli.main(["changefeed", "create", "-c", "e2e-fka", "--source-uri", up.uri, "--sink-uri", down.uri,
                   "--config", str(path)])
    err = capsys.readouterr().err
    assert rc != 0 and "foreign keys whose actions change rows the binlog does not carry" in err
    assert "fka.c key" in err and "ON DELETE CASCADE" in err and "fka.n key" in err and "SET NULL" in err
    assert "leave fka.c, fka.n out of filter.rules" in err
    # the children left out: nothing the binlog omits reaches a replicated table
    create_changefeed(capsys, up, down, "e2e-fka", "[filter]\nrules = ['fka.*', '!fka.c', '!fka.n']\n")


def test_a_ddl_adding_a_cascading_key_stops_the_changefeed(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    _fresh("fkb", up, down)
    create_changefeed(capsys, up, down, "e2e-fkb", "[filter]\nrules = ['fkb.*']\n")
    up.execute(PARENT, "INSERT INTO p VALUES (1, 1), (2, 2)", CHILD, "INSERT INTO c VALUES (10, 1), (20, 2)",
               "DELETE FROM p WHERE id = 1", "UPDATE p SET v = 3 WHERE id = 2", database="fkb")
    status, message, ts = run_fails(capsys, "e2e-fkb")
    assert status["error"]["code"] == "CDCFLOW:ErrCascadingForeignKey"
    assert "CREATE TABLE gives table fkb.c a foreign key ON DELETE CASCADE ON UPDATE CASCADE" in message
    assert f"replace-ddl -c e2e-fkb --commit-ts {ts}" in message and "leave fkb.c out of filter.rules" in message
    assert down.query("SELECT * FROM fkb.p") == [(1, 1), (2, 2)]  # everything before the DDL

    # the remedy: leave the child out, resume; the parent converges
    path = _write_config("e2e-fkb", "[filter]\nrules = ['fkb.*', '!fkb.c']\n")
    cli_ok(capsys, "changefeed", "update", "-c", "e2e-fkb", "--config", str(path))
    cli_ok(capsys, "changefeed", "resume", "-c", "e2e-fkb")
    rc, err = cli_run(capsys, "e2e-fkb")
    assert rc == 0, err
    _same(up, down, "fkb.p")

    # ALTER TABLE ... ADD FOREIGN KEY ... ON UPDATE SET NULL on a replicated table stops too
    up.execute("CREATE TABLE d (id INT PRIMARY KEY, pid INT)", "INSERT INTO d VALUES (1, 2)",
               "ALTER TABLE d ADD CONSTRAINT dp FOREIGN KEY (pid) REFERENCES p (id) ON UPDATE SET NULL",
               database="fkb")
    status, message, ts = run_fails(capsys, "e2e-fkb")
    assert "table fkb.d a foreign key ON UPDATE SET NULL" in message
    _same(up, down, "fkb.d")
