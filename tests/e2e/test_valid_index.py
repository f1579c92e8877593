"""TiCDC's DDL-replication doc's valid-index rules through the CLI against the real MariaDB pair: a table without
a valid index is neither created nor fed downstream unless force-replicate; the two cases
the seed warns about stop the changefeed at the DDL, naming table, statement, commit ts and
remedy, and an operator gets past them as the message says."""

from __future__ import annotations

import logging

import pytest
from e2e_helpers import assert_consistent, cli_ok, cli_run, create_changefeed, run_fails

pytestmark = pytest.mark.e2e


def _fresh(*dbs_and_servers):
    for db, servers in dbs_and_servers:
        for s in servers:
            s.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}")


def test_tables_without_a_valid_index_and_the_warned_cases(mariadb_pair, spark, cdcflow_home, capsys, caplog):
    caplog.set_level(logging.INFO, logger="cdcflow")
    up, down = mariadb_pair
    _fresh(("vi", (up, down)))
    create_changefeed(capsys, up, down, "e2e-vi", "[filter]\nrules = ['vi.*']\n")
    up.execute(
        "CREATE TABLE nk (a INT NOT NULL, b INT)", "INSERT INTO nk VALUES (1, 1), (2, 2)",  # N: no valid index
        "ALTER TABLE nk ADD COLUMN c INT", "UPDATE nk SET c = a",                           # N
        "CREATE TABLE k (id INT PRIMARY KEY, v INT)", "INSERT INTO k VALUES (1, 1)",       # Y
        "CREATE TABLE u (a INT NOT NULL, b INT, UNIQUE KEY ua (a))", "INSERT INTO u VALUES (1, 1)",  # Y
        "CREATE TABLE nu (a INT, UNIQUE KEY na (a))", "INSERT INTO nu VALUES (NULL), (NULL)",  # nullable unique: N
        "ALTER TABLE nk ADD PRIMARY KEY (a)",  # a valid index on a table never replicated: stop here
        "INSERT INTO nk VALUES (3, 3, 3)", "INSERT INTO k VALUES (2, 2)", database="vi")
    status, message, ts = run_fails(capsys, "e2e-vi")
    assert "ALTER TABLE nk ADD PRIMARY KEY (a)" in message and "table vi.nk" in message
    assert "never replicated" in message and f"skip-ddl --commit-ts {ts}" in message
    assert status["checkpoint_tso"] == ts - 1  # everything before the DDL, nothing after
    assert sorted(r[0] for r in down.query("SHOW TABLES FROM vi")) == ["k", "u"]
    assert down.query("SELECT * FROM vi.k") == [(1, 1)]

    # the remedy the message gives: copy the table as it is now, skip the DDL, resume
    create = up.query("SHOW CREATE TABLE vi.nk")[0][1]
    down.execute(create, *[f"INSERT INTO nk VALUES ({a}, {b}, {c})" for a, b, c in up.query("SELECT * FROM vi.nk")],
                 database="vi")
    cli_ok(capsys, "changefeed", "skip-ddl", "-c", "e2e-vi", "--commit-ts", str(ts))
    cli_ok(capsys, "changefeed", "resume", "-c", "e2e-vi")
    up.execute("UPDATE nk SET b = 30 WHERE a = 3", "INSERT INTO nk VALUES (4, 4, 4)", database="vi")
    rc, err = cli_run(capsys, "e2e-vi")
    assert rc == 0, err
    for t in ("nk", "k", "u"):
        assert sorted(down.query(f"SELECT * FROM vi.{t}")) == sorted(up.query(f"SELECT * FROM vi.{t}")), t
    assert sorted(r[0] for r in down.query("SHOW TABLES FROM vi")) == ["k", "nk", "u"]  # nu never created

    # the last valid index dropped: stop at it
    up.execute("ALTER TABLE u DROP INDEX ua", "INSERT INTO u VALUES (2, 2)", "INSERT INTO k VALUES (3, 3)",
               database="vi")
    status, message, ts = run_fails(capsys, "e2e-vi")
    assert "drops the last valid index of table vi.u" in message and "ALTER TABLE u DROP INDEX ua" in message
    # accepting it: u is no longer replicated from there on, everything else is
    cli_ok(capsys, "changefeed", "skip-ddl", "-c", "e2e-vi", "--commit-ts", str(ts))
    cli_ok(capsys, "changefeed", "resume", "-c", "e2e-vi")
    rc, err = cli_run(capsys, "e2e-vi")
    assert rc == 0, err
    assert down.query("SELECT * FROM vi.u") == [(1, 1)]
    assert sorted(down.query("SELECT * FROM vi.k")) == [(1, 1), (2, 2), (3, 3)]
    assert any('"rows skipped"' in r.getMessage() and '"vi.u"' in r.getMessage() for r in caplog.records)


def test_force_replicate_creates_and_feeds_tables_without_a_valid_index(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    _fresh(("vf", (up,)))
    down.execute("DROP DATABASE IF EXISTS vf")
    create_changefeed(capsys, up, down, "e2e-vf", "force-replicate = true\n[filter]\nrules = ['vf.*']\n")
    up.execute(
        "CREATE TABLE nk (a INT, b VARCHAR(10))",
        "INSERT INTO nk VALUES (1, 'x'), (1, 'x'), (2, 'y')",  # duplicate rows survive without a key
        "UPDATE nk SET b = 'z' WHERE a = 2", "DELETE FROM nk WHERE a = 1 LIMIT 1",
        "ALTER TABLE nk ADD COLUMN c INT", "INSERT INTO nk VALUES (3, 'w', 3)",
        "CREATE TABLE nk2 LIKE nk", "INSERT INTO nk2 SELECT * FROM nk", "TRUNCATE TABLE nk2",
        "INSERT INTO nk2 VALUES (9, 'n', 9)", database="vf")
    # the changefeed started after CREATE DATABASE vf: the operator made the schema downstream
    down.execute("CREATE DATABASE vf")
    rc, err = cli_run(capsys, "e2e-vf")
    assert rc == 0, err
    assert_consistent(up, down, ["vf"])
    assert sorted(down.query("SELECT * FROM vf.nk")) == [(1, "x", None), (2, "z", None), (3, "w", 3)]


def test_a_table_created_in_the_window_drops_no_row_before_it_exists(mariadb_pair, spark, cdcflow_home, capsys,
                                                                      caplog):
    # between a DROP and its CREATE again a table has no valid key (it does not exist) and no
    # row: that span drops nothing, so a window that drops and creates keyed tables needs no copy
    # of its rows and logs no rows skipped; a table without a valid index still has its rows
    # dropped, and said so
    from cdcflow.launch.in_process import run_cycle

    caplog.set_level(logging.INFO, logger="cdcflow")
    up, down = mariadb_pair
    _fresh(("vn", (up, down)))
    tables = ("CREATE TABLE vn.k (id INT PRIMARY KEY, v INT)", "CREATE TABLE vn.u (a INT NOT NULL, b INT, UNIQUE KEY ua (a))")
    for s in (up, down):
        s.execute(*tables)
    create_changefeed(capsys, up, down, "e2e-vn", "[filter]\nrules = ['vn.*']\n")
    up.execute("DROP DATABASE vn", "CREATE DATABASE vn", *tables, "INSERT INTO vn.k VALUES (1, 1), (2, 2)",
               "INSERT INTO vn.u VALUES (1, 1)", "UPDATE vn.k SET v = 3 WHERE id = 2")
    result = run_cycle("e2e-vn")
    assert result["filter"]["kept_tables"] == 2 and not result["filter"]["rows_copied"]
    assert "rows skipped" not in caplog.text
    assert_consistent(up, down, ["vn"])

    caplog.clear()
    up.execute("CREATE TABLE nk (a INT NOT NULL, b INT)", "INSERT INTO nk VALUES (1, 1)",
               "INSERT INTO k VALUES (3, 3)", database="vn")
    result = run_cycle("e2e-vn")
    assert result["filter"]["rows_copied"]
    skipped = [r.getMessage() for r in caplog.records if "rows skipped" in r.getMessage()]
    assert len(skipped) == 1 and "vn.nk" in skipped[0] and "no valid index" in skipped[0]
    assert down.query("SELECT * FROM vn.k ORDER BY id") == [(1, 1), (2, 3), (3, 3)]
    assert sorted(r[0] for r in down.query("SHOW TABLES FROM vn")) == ["k", "u"]
