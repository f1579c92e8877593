"""System-versioned tables (issue 42, item 4a).  The binlog's rows of such a table carry its
period columns (MariaDB's invisible row_start/row_end, or the columns a PERIOD FOR SYSTEM_TIME
names), a DELETE is an update of the period's end, and an UPDATE writes the history row as an
insert of its own.  A downstream computes the period itself (a MariaDB one that is system
versioned) or has none (TiDB, MySQL), so the changefeed writes each change once, without the
period columns: the downstream's history then holds a row for each one the upstream's does, its
timestamps its own.  Compared: the whole definition (SHOW CREATE TABLE), the current rows, and
the history rows (FOR SYSTEM_TIME ALL) without the timestamps."""

from __future__ import annotations

import pytest
from e2e_helpers import assert_consistent, cli_run, create_changefeed, fresh_schema

pytestmark = pytest.mark.e2e

DB = "sysver"
# a versioned table the changefeed finds at create (read from the catalogue, not from a DDL)
BEFORE = "CREATE TABLE old (id INT PRIMARY KEY, v VARCHAR(10)) WITH SYSTEM VERSIONING"
WORKLOAD = (
    "INSERT INTO old VALUES (1, 'a'), (2, 'b')",
    "UPDATE old SET v = 'a2' WHERE id = 1",
    "DELETE FROM old WHERE id = 2",
    # implicit period columns
    "CREATE TABLE v (id INT PRIMARY KEY, x INT, note VARCHAR(20) WITHOUT SYSTEM VERSIONING) WITH SYSTEM VERSIONING",
    # user-named period columns, one invisible; the period's end joins the primary key
    "CREATE TABLE w (id INT PRIMARY KEY, x INT, s TIMESTAMP(6) GENERATED ALWAYS AS ROW START INVISIBLE, "
    "e TIMESTAMP(6) GENERATED ALWAYS AS ROW END, PERIOD FOR SYSTEM_TIME (s, e)) WITH SYSTEM VERSIONING",
    "CREATE TABLE p (id INT PRIMARY KEY, x INT)",
    "INSERT INTO v VALUES (1, 1, 'n'), (2, 2, 'n'), (3, 3, 'n')",
    "INSERT INTO w (id, x) VALUES (1, 1), (2, 2)",
    "INSERT INTO p VALUES (1, 1), (2, 2)",
    "BEGIN", "UPDATE v SET x = x + 10 WHERE id <= 2", "UPDATE v SET x = x + 100 WHERE id = 1", "COMMIT",
    "UPDATE v SET note = 'unversioned' WHERE id = 3",  # a column WITHOUT SYSTEM VERSIONING: no history
    "DELETE FROM v WHERE id = 2",
    "UPDATE w SET x = 20 WHERE id = 2",
    "DELETE FROM w WHERE id = 1",
    "INSERT INTO w (id, x) VALUES (1, 100)",  # a key again, while its history row stays
    "ALTER TABLE p ADD SYSTEM VERSIONING",
    "UPDATE p SET x = 10 WHERE id = 1",
    "DELETE FROM p WHERE id = 2",
    "INSERT INTO p VALUES (3, 3)",
)
# after the history is read: the upstream's purge of it (the downstream keeps its own), and a
# table versioned no more (its history gone on both sides)
TAIL = (
    "DELETE HISTORY FROM v",
    "ALTER TABLE old DROP SYSTEM VERSIONING",
    "UPDATE old SET v = 'a3' WHERE id = 1",
)
HISTORY = {"v": "id, x", "w": "id, x", "p": "id, x"}  # the columns compared of each version


def _history(db, table: str, columns: str) -> list[tuple]:
    """Every row version of a system-versioned table, current and history, timestamps left out."""
    return db.query(f"SELECT {columns} FROM {DB}.{table} FOR SYSTEM_TIME ALL ORDER BY {columns}")


def test_system_versioned_rows_reach_the_downstream_without_their_period(mariadb_pair, spark, cdcflow_home,
                                                                        capsys):
    up, down = mariadb_pair
    fresh_schema(up, down, DB, BEFORE)
    create_changefeed(capsys, up, down, "e2e-sysver", f"[filter]\nrules = ['{DB}.*']\n")
    up.execute(*WORKLOAD, database=DB)
    history = {t: _history(up, t, cols) for t, cols in HISTORY.items()}
    up.execute(*TAIL, database=DB)
    rc, err = cli_run(capsys, "e2e-sysver")
    assert rc == 0, err
    for table in ("old", "v", "w", "p"):
        assert down.query(f"SHOW CREATE TABLE {DB}.{table}") == up.query(f"SHOW CREATE TABLE {DB}.{table}")
        assert down.query(f"SELECT * FROM {DB}.{table} ORDER BY id") == up.query(
            f"SELECT * FROM {DB}.{table} ORDER BY id")
    for table, rows in history.items():
        assert _history(down, table, HISTORY[table]) == rows, table
    assert history["p"] == [(1, 1), (1, 10), (2, 2), (3, 3)]  # history from ADD SYSTEM VERSIONING on
    # a version per change of a versioned column, two in one transaction too; none for `note`
    assert history["v"] == [(1, 1), (1, 11), (1, 111), (2, 2), (2, 12), (3, 3)]
    assert up.query(f"SELECT COUNT(*) FROM {DB}.v FOR SYSTEM_TIME ALL") == [(2,)]  # purged upstream only
    assert_consistent(up, down, [DB])
