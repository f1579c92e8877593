"""`create --snapshot` of tables bound by foreign keys whose actions change rows (CASCADE, SET
NULL), with the upstream writing during the copy, against the MariaDB pair.

The replay from the point sets every key to its upstream image, but a cascade's child rows are
not in the binlog: the replay redoes them through the downstream's key only if the copy holds
the child rows the cascade reached.  A child chunk read before its parent's change and a parent
chunk read after it break that (the parent's replayed DELETE finds no row, so nothing cascades,
and the children stay).  The copy reads every such parent before its children, and reads the
tables where no order exists (a key from a table to itself or a cycle of keys, a keyless child
that is read at the point, and their parents) inside the point's own transaction.  Each test
makes that interleaving happen and fails without the order."""

from __future__ import annotations

import pytest
from e2e_helpers import assert_consistent, cli_run, create_with_snapshot, fresh_upstream_schema, write_before_chunk

from cdcflow.store import snapshots

pytestmark = pytest.mark.e2e

S = "snapfk"


def test_a_parent_changed_between_its_childs_read_and_its_own_cascades_downstream(
        mariadb_pair, spark, cdcflow_home, capsys, monkeypatch):
    up, down = mariadb_pair
    # the child sorts before its parent, so a copy in name order reads it first
    fresh_upstream_schema(up, down, S,
                          "CREATE TABLE p (id INT PRIMARY KEY, v INT)",
                          "CREATE TABLE c (id INT PRIMARY KEY, pid INT, KEY k_pid (pid), "
                          "FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE ON UPDATE CASCADE)",
                          "CREATE TABLE n (id INT PRIMARY KEY, pid INT NULL, "
                          "FOREIGN KEY (pid) REFERENCES p (id) ON DELETE SET NULL ON UPDATE SET NULL)",
                          "INSERT INTO p SELECT seq, seq FROM seq_1_to_30",
                          "INSERT INTO c SELECT seq, 1 + seq % 30 FROM seq_1_to_90",
                          "INSERT INTO n SELECT seq, 1 + seq % 30 FROM seq_1_to_30")
    pair = {f"{S}.p", f"{S}.c", f"{S}.n"}
    # between the reads of the parent and its children, whichever comes first
    ran = write_before_chunk(monkeypatch, up, lambda task, seen: task["table"] in pair and set(seen) & pair
                             and task["table"] not in seen,
                             f"DELETE FROM {S}.p WHERE id IN (1, 2)", f"UPDATE {S}.p SET id = 100 WHERE id = 3",
                             f"DELETE FROM {S}.p WHERE id = 4")
    progress = create_with_snapshot(capsys, cdcflow_home, up, down, "snapfk1", S)
    assert ran, "the upstream change was to run between two tables' reads"
    assert progress["chunks_done"] == progress["chunks_total"]
    rc, err = cli_run(capsys, "snapfk1")
    assert rc == 0, err
    assert snapshots.progress("snapfk1")["status"] == "done"
    assert_consistent(up, down, [S])
    assert down.query(f"SELECT COUNT(*) FROM {S}.c WHERE pid IN (1, 2, 3)") == [(0,)]
    assert down.query(f"SELECT COUNT(*) FROM {S}.c WHERE pid = 100") == [(3,)]


def test_a_table_keyed_to_itself_and_a_keyless_childs_parent_are_read_at_the_point(
        mariadb_pair, spark, cdcflow_home, capsys, monkeypatch):
    up, down = mariadb_pair
    fresh_upstream_schema(up, down, S,
                          # the reports (ids 1-5) come in the first chunk, their manager (100) in a later one
                          "CREATE TABLE emp (id INT PRIMARY KEY, manager_id INT NULL, "
                          "FOREIGN KEY (manager_id) REFERENCES emp (id) ON DELETE CASCADE)",
                          "INSERT INTO emp VALUES (100, NULL)",
                          "INSERT INTO emp SELECT seq, 100 FROM seq_1_to_5",
                          "INSERT INTO emp SELECT seq, NULL FROM seq_6_to_40",
                          # a keyless child (read at the point) of a keyed parent
                          "CREATE TABLE parent (id INT PRIMARY KEY, v INT)",
                          "CREATE TABLE kl (pid INT, note VARCHAR(10), KEY k_pid (pid), "
                          "FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE CASCADE)",
                          "INSERT INTO parent SELECT seq, seq FROM seq_1_to_20",
                          "INSERT INTO kl SELECT 1 + seq % 20, 'n' FROM seq_1_to_40")
    # after the point, and, where emp is read in chunks, between its first and second
    ran = write_before_chunk(monkeypatch, up,
                             lambda task, _seen: task["table"] != f"{S}.emp" or task["chunk"]["index"] >= 1,
                             f"DELETE FROM {S}.emp WHERE id = 100", f"DELETE FROM {S}.parent WHERE id IN (1, 2)")
    progress = create_with_snapshot(capsys, cdcflow_home, up, down, "snapfk2", S)
    assert progress["chunks_done"] == progress["chunks_total"]
    if not ran:  # every table was read at the point: the writes come after the copy
        up.execute(f"DELETE FROM {S}.emp WHERE id = 100", f"DELETE FROM {S}.parent WHERE id IN (1, 2)")
    rc, err = cli_run(capsys, "snapfk2")
    assert rc == 0, err
    assert_consistent(up, down, [S])
    assert down.query(f"SELECT COUNT(*) FROM {S}.emp") == [(35,)]
    assert down.query(f"SELECT COUNT(*) FROM {S}.kl WHERE pid IN (1, 2)") == [(0,)]
