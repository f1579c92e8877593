"""Sequences (issue 42, item 4c): a table whose DEFAULT is NEXTVAL(seq) needs the sequence
downstream, so CREATE/ALTER/DROP SEQUENCE of a sequence the table filter replicates run there, and
its state follows: MariaDB writes a sequence's row (next_not_cached_value, …) to the binlog each
time it takes a new block of values, and the changefeed writes that row downstream, as a replica
does.  Compared: SHOW CREATE SEQUENCE, the sequence's row, what NEXTVAL gives next, and the
table's whole definition and rows."""

from __future__ import annotations

import pytest
from e2e_helpers import assert_consistent, cli_run, create_with_snapshot, fresh_upstream_schema, replicate_workload
from tidb_standin_helpers import tidb  # noqa: F401 - a fixture

pytestmark = pytest.mark.e2e

DB = "seqs"
BEFORE = "CREATE SEQUENCE s0 START WITH 10 NOCACHE"  # found in the catalogue at create
WORKLOAD = (
    "SELECT NEXTVAL(s0)",
    "CREATE SEQUENCE s1 START WITH 100 INCREMENT BY 5 CACHE 2",
    "CREATE SEQUENCE s2 NOCACHE",
    "CREATE TABLE d (id INT PRIMARY KEY DEFAULT NEXTVAL(s1), v INT, n BIGINT DEFAULT NEXTVAL(s2))",
    "INSERT INTO d (v) VALUES (1), (2), (3)",
    "SELECT NEXTVAL(s2), NEXTVAL(s2)",
    "ALTER SEQUENCE s2 RESTART WITH 50 INCREMENT BY 2",
    "INSERT INTO d (v) VALUES (4)",
    "SELECT SETVAL(s1, 500)",
    "INSERT INTO d (v) VALUES (5)",
    "CREATE SEQUENCE gone",
    "SELECT NEXTVAL(gone)",
    "DROP SEQUENCE gone",
    "CREATE TABLE t (id INT PRIMARY KEY)",
    "DROP SEQUENCE IF EXISTS s0, missing",
)
SEQUENCES = ("s1", "s2")


def test_sequences_a_table_uses_are_replicated_with_their_state(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    replicate_workload(capsys, up, down, "e2e-sequences", DB, WORKLOAD, BEFORE)
    assert down.query(f"SHOW FULL TABLES FROM {DB}") == up.query(f"SHOW FULL TABLES FROM {DB}")
    for seq in SEQUENCES:
        assert down.query(f"SHOW CREATE SEQUENCE {DB}.{seq}") == up.query(f"SHOW CREATE SEQUENCE {DB}.{seq}")
        assert down.query(f"SELECT * FROM {DB}.{seq}") == up.query(f"SELECT * FROM {DB}.{seq}"), seq
    assert down.query(f"SHOW CREATE TABLE {DB}.d") == up.query(f"SHOW CREATE TABLE {DB}.d")
    assert down.query(f"SELECT * FROM {DB}.d ORDER BY id") == up.query(f"SELECT * FROM {DB}.d ORDER BY id")
    assert [r[0] for r in up.query(f"SELECT id FROM {DB}.d ORDER BY id")] == [100, 105, 110, 115, 505]
    # NEXTVAL downstream: a NOCACHE sequence's next value is the upstream's; a cached one's is the
    # first the upstream has not handed out a block for, so no value is given twice
    next_block = up.query(f"SELECT next_not_cached_value FROM {DB}.s1")[0][0]
    assert down.query(f"SELECT NEXTVAL({DB}.s2), NEXTVAL({DB}.s1)") == [
        (up.query(f"SELECT NEXTVAL({DB}.s2)")[0][0], next_block)]
    assert_consistent(up, down, [DB])


def test_a_tidb_downstream_takes_a_sequences_state_by_setval(tidb, mariadb_pair, spark, cdcflow_home, capsys):
    """TiDB's sequences are no tables: the TiDB stand-in (a MariaDB server that answers as TiDB,
    cdcflow_devtools.tidb_standin) refuses a row statement on one, as TiDB does.  Each row of a
    sequence's state goes as SETVAL(seq, next_not_cached_value - increment), in the cycle and in
    a snapshot; NEXTVAL downstream then gives what the MariaDB downstream above gives."""
    up, down = mariadb_pair
    standin = tidb.new()
    db = "seqs_tidb"
    replicate_workload(capsys, up, down, "e2e-seq-tidb", db, WORKLOAD, BEFORE)
    for seq in SEQUENCES:
        assert down.query(f"SHOW CREATE SEQUENCE {db}.{seq}") == up.query(f"SHOW CREATE SEQUENCE {db}.{seq}")
    assert down.query(f"SHOW CREATE TABLE {db}.d") == up.query(f"SHOW CREATE TABLE {db}.d")
    assert down.query(f"SELECT * FROM {db}.d ORDER BY id") == up.query(f"SELECT * FROM {db}.d ORDER BY id")
    assert any(s.startswith("CREATE SEQUENCE") for s in standin.statements)  # the stand-in served the cycle
    next_block = up.query(f"SELECT next_not_cached_value FROM {db}.s1")[0][0]
    assert down.query(f"SELECT NEXTVAL({db}.s2), NEXTVAL({db}.s1)") == [
        (up.query(f"SELECT NEXTVAL({db}.s2)")[0][0], next_block)]

    snap = "seqsnap_tidb"
    fresh_upstream_schema(up, down, snap, "CREATE SEQUENCE s START WITH 7 INCREMENT BY 3 CACHE 10",
                          "CREATE TABLE d (id INT PRIMARY KEY DEFAULT NEXTVAL(s), v INT)",
                          "INSERT INTO d (v) VALUES (1), (2)")
    create_with_snapshot(capsys, cdcflow_home, up, down, "e2e-seq-tidb-snapshot", snap)
    up.execute("INSERT INTO d (v) VALUES (3)", database=snap)
    rc, err = cli_run(capsys, "e2e-seq-tidb-snapshot")
    assert rc == 0, err
    assert down.query(f"SELECT * FROM {snap}.d ORDER BY id") == up.query(f"SELECT * FROM {snap}.d ORDER BY id")
    # the upstream reserved 7..34 in one block of ten: the downstream's next value is past the block
    assert up.query(f"SELECT next_not_cached_value FROM {snap}.s") == [(37,)]
    assert down.query(f"SELECT NEXTVAL({snap}.s)") == [(37,)]


def test_a_snapshot_copies_sequences_and_versioned_tables(mariadb_pair, spark, cdcflow_home, capsys):
    """`create --snapshot`: a sequence is created downstream with its state at the point (its one
    row, as a replica writes it: a sequence refuses the DELETE a chunk's copy starts with), a
    versioned table with its current rows; then the changefeed goes on from the point."""
    up, down = mariadb_pair
    snap = "seqsnap"
    fresh_upstream_schema(up, down, snap, "CREATE SEQUENCE s START WITH 7 INCREMENT BY 3 NOCACHE",
                          "CREATE TABLE d (id INT PRIMARY KEY DEFAULT NEXTVAL(s), v INT)",
                          "CREATE TABLE v (id INT PRIMARY KEY, x INT) WITH SYSTEM VERSIONING",
                          "INSERT INTO d (v) VALUES (1), (2)", "INSERT INTO v VALUES (1, 1), (2, 2)",
                          "UPDATE v SET x = 10 WHERE id = 1")
    create_with_snapshot(capsys, cdcflow_home, up, down, "e2e-seq-snapshot", snap)
    state = up.query(f"SELECT * FROM {snap}.s")
    assert down.query(f"SELECT * FROM {snap}.s") == state and state[0][0] == 13  # after 7 and 10
    up.execute("INSERT INTO d (v) VALUES (3)", "UPDATE v SET x = 20 WHERE id = 2", database=snap)
    rc, err = cli_run(capsys, "e2e-seq-snapshot")
    assert rc == 0, err
    assert down.query(f"SHOW CREATE SEQUENCE {snap}.s") == up.query(f"SHOW CREATE SEQUENCE {snap}.s")
    assert down.query(f"SELECT * FROM {snap}.s") == up.query(f"SELECT * FROM {snap}.s")
    for table in ("d", "v"):
        assert down.query(f"SHOW CREATE TABLE {snap}.{table}") == up.query(f"SHOW CREATE TABLE {snap}.{table}")
        assert down.query(f"SELECT * FROM {snap}.{table} ORDER BY id") == up.query(
            f"SELECT * FROM {snap}.{table} ORDER BY id")
    assert down.query(f"SELECT NEXTVAL({snap}.s)") == up.query(f"SELECT NEXTVAL({snap}.s)") == [(16,)]
