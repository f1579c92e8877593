"""Transactions that touch a non-transactional table and roll back to a savepoint, or roll
back whole (issue 42, item 2).  The server writes their SAVEPOINT and ROLLBACK TO (or the
closing ROLLBACK) into the binlog with the transactional rows between; a replica undoes those
rows, and so must the changefeed — read sequentially and in parallel ranges alike.  The
non-transactional tables' rows are committed (the server writes them as their own
transaction) and stay."""

from __future__ import annotations

import pytest
from e2e_helpers import assert_consistent, cli_run, create_changefeed

from cdcflow.store import metastore

pytestmark = pytest.mark.e2e

# (statements of one session, in order); every transaction changes a MyISAM or Aria table,
# so the server writes its savepoints and rollbacks into the binlog instead of truncating them
# (Aria with TRANSACTIONAL=0: a crash-safe Aria table refuses SAVEPOINT once in a transaction)
SESSION = (
    # one savepoint undone, rows before and after it kept
    "BEGIN", "INSERT INTO i VALUES (1, 'kept')", "SAVEPOINT s1", "INSERT INTO i VALUES (2, 'undone')",
    "INSERT INTO m VALUES (1, 'myisam')", "UPDATE i SET v = 'undone' WHERE id = 1", "DELETE FROM i WHERE id = 1",
    "ROLLBACK TO SAVEPOINT s1", "INSERT INTO i VALUES (3, 'kept')", "COMMIT",
    # nested savepoints: back to the inner one, then to the outer one; a name set twice moves
    "BEGIN", "INSERT INTO a VALUES (10, 'aria')", "INSERT INTO i VALUES (10, 'kept')", "SAVEPOINT outer_sp",
    "INSERT INTO i VALUES (11, 'undone')", "SAVEPOINT `inner sp`", "INSERT INTO i VALUES (12, 'undone')",
    "INSERT INTO m VALUES (12, 'myisam')", "ROLLBACK TO `inner sp`", "INSERT INTO i VALUES (13, 'undone')",
    "ROLLBACK TO outer_sp", "INSERT INTO i VALUES (14, 'kept')", "SAVEPOINT s", "INSERT INTO i VALUES (15, 'kept')",
    "SAVEPOINT s", "INSERT INTO i VALUES (16, 'undone')", "ROLLBACK TO s", "COMMIT",
    # a savepoint rolled back to, then a whole rollback (a temporary table makes the server
    # write the transaction): none of its transactional rows stay
    "BEGIN", "INSERT INTO i VALUES (20, 'undone')", "INSERT INTO m VALUES (20, 'myisam')", "SAVEPOINT r",
    "INSERT INTO i VALUES (21, 'undone')", "ROLLBACK TO r", "CREATE TEMPORARY TABLE tmp (x INT) ENGINE=MyISAM",
    "INSERT INTO i VALUES (22, 'undone')", "ROLLBACK",
    # a transaction that commits after its savepoint: everything stays
    "BEGIN", "INSERT INTO m VALUES (30, 'myisam')", "SAVEPOINT k", "INSERT INTO i VALUES (30, 'kept')", "COMMIT",
    "UPDATE i SET v = CONCAT(v, '!') WHERE id = 3",
)


@pytest.mark.parametrize("parallel", [False, True], ids=["sequential", "ranges"])
def test_rows_undone_by_rollback_to_savepoint_are_not_replicated(mariadb_pair, spark, cdcflow_home, capsys,
                                                                 parallel):
    up, down = mariadb_pair
    db = f"svp_{'r' if parallel else 's'}"
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {db}")
    feed = f"e2e-savepoint-{'ranges' if parallel else 'sequential'}"
    config = f"[filter]\nrules = ['{db}.*']\n"
    if parallel:
        config += "[cdcflow]\npull-parallelism = 4\npull-parallel-min-bytes = 0\n"
    create_changefeed(capsys, up, down, feed, config)
    up.execute(f"CREATE DATABASE {db}", database=None)
    up.execute("CREATE TABLE i (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB",
               "CREATE TABLE m (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=MyISAM",
               "CREATE TABLE a (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=Aria TRANSACTIONAL=0", *SESSION, database=db)
    # the upstream holds what a replica must end with
    assert up.query(f"SELECT id, v FROM {db}.i ORDER BY id") == [
        (1, "kept"), (3, "kept!"), (10, "kept"), (14, "kept"), (15, "kept"), (30, "kept")]
    assert [r[0] for r in up.query(f"SELECT id FROM {db}.m ORDER BY id")] == [1, 12, 20, 30]
    rc, err = cli_run(capsys, feed)
    assert rc == 0, err
    if parallel:
        assert metastore.recent_runs(feed, 1)[0].stats["pull"]["ranges"] > 1
    assert down.query(f"SELECT id, v FROM {db}.i ORDER BY id") == up.query(f"SELECT id, v FROM {db}.i ORDER BY id")
    assert_consistent(up, down, [db])
