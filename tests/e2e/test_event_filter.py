"""TiCDC's DDL-replication doc's event-filter table through the CLI against the real MariaDB pair: an ignored
CREATE/TRUNCATE/RENAME TABLE leaves the table's rows replicated; a table the table filter
excludes gets neither; ignore-event for row changes and ignore-sql for DDL."""

from __future__ import annotations

import pytest
from e2e_helpers import backdate, cli_ok, cli_run, create_changefeed, query, tables

pytestmark = pytest.mark.e2e

DB = "ef_seed"
# the seed's config, on a schema of this test's own; force-replicate because the seed's
# tables have no valid index (the matrix is another test's subject)
CONFIG = f"""
force-replicate = true
[filter]
rules = ['{DB}.t*']
[[filter.event-filters]]
matcher = ["{DB}.t1"]
ignore-event = ["create table", "drop table", "truncate table", "rename table"]
[[filter.event-filters]]
matcher = ["{DB}.td"]
ignore-event = ["update", "delete"]
ignore-sql = ["comment"]
"""
SEED_TABLE = "(id INT, name VARCHAR(50))"


def _rows(db, table):
    return sorted(db.query(f"SELECT * FROM {DB}.{table}"))


def test_seed_event_filter_table_end_to_end(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    for db in (up, down):
        db.execute(f"DROP DATABASE IF EXISTS {DB}", f"CREATE DATABASE {DB}")
    # the seed asks the operator to keep both schemas alike when DDL is filtered: t1's CREATE is
    # ignored, so the operator created it downstream
    down.execute(f"CREATE TABLE {DB}.t1 {SEED_TABLE}")
    create_changefeed(capsys, up, down, "e2e-ef-seed", CONFIG)

    up.execute(
        f"CREATE TABLE t1 {SEED_TABLE}", "INSERT INTO t1 VALUES (1, 'a')",       # row 1: DDL ignored, DML kept
        f"CREATE TABLE t2 {SEED_TABLE}", "INSERT INTO t2 VALUES (1, 'x')",       # row 2: both kept
        f"CREATE TABLE `ignore` {SEED_TABLE}", "INSERT INTO `ignore` VALUES (1, 'i')",  # row 3: neither
        "TRUNCATE TABLE t1", "INSERT INTO t1 VALUES (2, 'b')",                    # row 5: DDL ignored, DML kept
        "CREATE TABLE td (id INT PRIMARY KEY, v INT)", "INSERT INTO td VALUES (1, 1), (2, 2), (3, 3)",
        "UPDATE td SET v = 20 WHERE id = 2", "DELETE FROM td WHERE id = 3",       # ignored kinds
        "ALTER TABLE td COMMENT 'not downstream'",                                # ignore-sql
        "INSERT INTO td VALUES (4, 4)", database=DB)
    rc, err = cli_run(capsys, "e2e-ef-seed")
    assert rc == 0, err
    assert tables(down, DB) == ["t1", "t2", "td"]
    assert _rows(down, "t1") == [(1, "a"), (2, "b")] and _rows(up, "t1") == [(2, "b")]  # TRUNCATE not run
    assert _rows(down, "t2") == _rows(up, "t2") == [(1, "x")]
    assert _rows(down, "td") == [(1, 1), (2, 2), (3, 3), (4, 4)]
    assert down.query(f"SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA='{DB}' "
                      "AND TABLE_NAME='td'") == [("",)]

    up.execute(
        "DROP TABLE `ignore`",  # filtered by the table filter
        "RENAME TABLE t1 TO `ignore`", "INSERT INTO `ignore` VALUES (3, 'c')",  # row 7: neither
        f"CREATE TABLE t1 {SEED_TABLE}", "INSERT INTO t1 VALUES (4, 'd')",
        "DROP TABLE t1", database=DB)                                            # row 4: DDL ignored
    rc, err = cli_run(capsys, "e2e-ef-seed")
    assert rc == 0, err
    assert tables(down, DB) == ["t1", "t2", "td"]  # neither the RENAME nor the DROP ran downstream
    assert _rows(down, "t1") == [(1, "a"), (2, "b"), (4, "d")]

    up.execute(
        "DROP TABLE t2",  # replicated
        f"CREATE TABLE t1 {SEED_TABLE}",
        "RENAME TABLE t1 TO t2", "INSERT INTO t2 VALUES (5, 'e')", database=DB)  # row 6: DDL ignored, DML kept
    rc, err = cli_run(capsys, "e2e-ef-seed")
    # the RENAME did not run downstream, so the row has no table to land in: the cycle says so
    # and keeps the checkpoint below the row
    assert rc == 1 and f"table {DB}.t2 does not exist downstream" in err
    assert query(capsys, "e2e-ef-seed")["state"] == "warning"
    down.execute(f"RENAME TABLE {DB}.t1 TO {DB}.t2")  # the operator mirrors the ignored RENAME
    backdate("e2e-ef-seed", 11, "next_retry_at")  # the warning's first backoff (10 s) runs out
    rc, err = cli_run(capsys, "e2e-ef-seed")
    assert rc == 0, err
    assert tables(down, DB) == ["t2", "td"]
    assert _rows(down, "t2") == [(1, "a"), (2, "b"), (4, "d"), (5, "e")]
    assert query(capsys, "e2e-ef-seed")["state"] == "normal"


def test_unknown_ignore_event_is_a_config_error_listing_the_allowed(mariadb_pair, cdcflow_home, capsys):
    up, down = mariadb_pair
    from e2e_helpers import _write_config

    from cdcflow import cli

    path = _write_config("e2e-ef-bad", '[[filter.event-filters]]\nmatcher = ["a.*"]\nignore-event = ["add index"]\n')
    capsys.readouterr()
    rc = cli.main(["changefeed", "create", "-c", "e2e-ef-bad", "--source-uri", up.uri, "--sink-uri", down.uri,
                   "--config", str(path)])
    err = capsys.readouterr().err
    assert rc == 1 and "'add index'" in err and "'create index'" in err and "'all dml'" in err
    cli_ok(capsys, "changefeed", "list")
