"""TiCDC's DML filters end to end through the CLI: the four value expressions (with NULL
and case-insensitive strings), skipping transactions by GTID, and expressions refused at
create.  The downstream holds exactly the rows the filters say."""

from __future__ import annotations

import pytest
from e2e_helpers import create_changefeed

from cdcflow import cli
from cdcflow.store import metastore

pytestmark = pytest.mark.e2e

CONFIG = """
[filter]
rules = ['dmlf.*']

[[filter.event-filters]]
matcher = ['dmlf.t']
ignore-insert-value-expr = "name = 'skip' OR amount > 1000"
ignore-update-old-value-expr = "state = 'frozen'"
ignore-update-new-value-expr = "amount < 0"
ignore-delete-value-expr = "note = 'keep'"
"""


def test_value_expressions(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    up.execute("CREATE DATABASE dmlf",
               "CREATE TABLE dmlf.t (id INT PRIMARY KEY, name VARCHAR(20), amount DECIMAL(10,2), "
               "state VARCHAR(10), note VARCHAR(10))",
               "CREATE TABLE dmlf.other (id INT PRIMARY KEY, name VARCHAR(20))")
    down.execute("CREATE DATABASE dmlf",
                 "CREATE TABLE dmlf.t (id INT PRIMARY KEY, name VARCHAR(20), amount DECIMAL(10,2), "
                 "state VARCHAR(10), note VARCHAR(10))",
                 "CREATE TABLE dmlf.other (id INT PRIMARY KEY, name VARCHAR(20))")
    create_changefeed(capsys, up, down, "dmlf", CONFIG)
    up.execute(
        "INSERT INTO dmlf.t VALUES (1, 'a', 10, 'open', NULL), (2, 'skip', 10, 'open', NULL),"
        " (3, 'b', 5000, 'open', NULL), (4, 'c', NULL, 'frozen', 'keep'), (5, NULL, 1, NULL, NULL),"
        " (6, 'd', 1, 'open', 'keep'), (7, 'e', 1, 'open', 'x'),"
        " (8, 'SKIP  ', 10, 'open', NULL)",  # TiCDC compares bytes whatever the collation: no 'skip'

        "INSERT INTO dmlf.other VALUES (1, 'skip')",  # the rule does not match this table
    )
    assert cli.main(["changefeed", "run", "-c", "dmlf"]) == 0
    assert down.query("SELECT id FROM dmlf.t ORDER BY id") == [(1,), (4,), (5,), (6,), (7,), (8,)]
    assert metastore.recent_runs("dmlf", 1)[0].stats["filter"]["rows_copied"]  # rows dropped: a copy kept
    assert down.query("SELECT id, name FROM dmlf.other") == [(1, "skip")]

    up.execute(
        "UPDATE dmlf.t SET amount = 20 WHERE id = 1",       # replicated
        "UPDATE dmlf.t SET amount = 99 WHERE id = 4",       # old row frozen: ignored
        "UPDATE dmlf.t SET amount = -1 WHERE id = 7",       # new amount < 0: ignored
        "UPDATE dmlf.t SET amount = 2 WHERE id = 5",        # state NULL: NULL = 'frozen' is not a match
        "DELETE FROM dmlf.t WHERE id = 6",                  # note 'keep': ignored
        "DELETE FROM dmlf.t WHERE id = 5",                  # note NULL: deleted
    )
    assert cli.main(["changefeed", "run", "-c", "dmlf"]) == 0
    assert down.query("SELECT id, amount FROM dmlf.t ORDER BY id") == [(1, 20), (4, None), (6, 1), (7, 1), (8, 10)]


def test_ignore_txn_gtid_skips_a_whole_transaction(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    up.execute("CREATE DATABASE txnf", "CREATE TABLE txnf.t (id INT PRIMARY KEY, v INT)")
    down.execute("CREATE DATABASE txnf", "CREATE TABLE txnf.t (id INT PRIMARY KEY, v INT)")
    # MariaDB numbers transactions domain-server-seq: the second transaction from now is skipped
    (pos,), = up.query("SELECT @@GLOBAL.gtid_binlog_pos")
    domain, server, seq = pos.split(",")[0].split("-")
    skip = f"{domain}-{server}-{int(seq) + 2}"
    create_changefeed(capsys, up, down, "txnf", f"[filter]\nrules = ['txnf.*']\nignore-txn-gtid = ['{skip}']\n")
    up.execute("INSERT INTO txnf.t VALUES (1, 1)")
    up.execute("INSERT INTO txnf.t VALUES (2, 2), (3, 3)")
    up.execute("INSERT INTO txnf.t VALUES (4, 4)")
    assert up.query("SELECT @@GLOBAL.gtid_binlog_pos")[0][0].endswith(f"-{int(seq) + 3}")
    assert cli.main(["changefeed", "run", "-c", "txnf"]) == 0
    assert down.query("SELECT id FROM txnf.t ORDER BY id") == [(1,), (4,)]
    # no row dropped by a rule: barrier and apply read pull's events, without the same transaction
    assert metastore.recent_runs("txnf", 1)[0].stats["filter"]["rows_copied"] is False


@pytest.mark.parametrize("expr, words", [
    ("colour = 'red'", ["colour", "crt.t", "ignore-insert-value-expr"]),
    ("id >", ["not a valid SQL expression", "'id >'"]),
])
def test_create_refuses_bad_expressions_naming_them(mariadb_pair, cdcflow_home, capsys, expr, words):
    up, down = mariadb_pair
    up.execute("CREATE DATABASE IF NOT EXISTS crt", "CREATE TABLE IF NOT EXISTS crt.t (id INT PRIMARY KEY)")
    path = cdcflow_home / "bad.toml"
    path.write_text(f"[filter]\nrules = ['crt.*']\n[[filter.event-filters]]\nmatcher = ['crt.*']\n"
                    f"ignore-insert-value-expr = \"{expr}\"\n")
    capsys.readouterr()
    rc = cli.main(["changefeed", "create", "-c", "crt-bad", "--source-uri", up.uri, "--sink-uri", down.uri,
                   "--config", str(path)])
    err = capsys.readouterr().err
    assert rc == 1
    for w in words:
        assert w in err
    assert cli.main(["changefeed", "query", "-c", "crt-bad"]) == 1  # nothing was created
