"""Lock conflicts on the downstream (a deadlock, a lock wait timeout) met by the row writers: an
autocommitted statement runs again once the other writer has gone on; a transaction
(transaction-atomicity = table) runs again whole, never in part.  Real conflicts on the real
downstream: another connection holds the rows, and a deadlock is made by it asking for a row
the writer holds (InnoDB rolls back the lighter transaction, the writer's)."""

from __future__ import annotations

import threading
import time

import pytest

from cdcflow.core.row_codec import encode_image
from cdcflow.sink.partitions import write_transaction
from cdcflow.sink.row_writer import RowWriter, StreamingWriter

DB = "lockconf"
KEYS = {f"{DB}.t": ["id"]}


@pytest.fixture
def down(mariadb_pair):
    _, down = mariadb_pair
    down.execute(f"DROP DATABASE IF EXISTS {DB}", f"CREATE DATABASE {DB}",
                 f"CREATE TABLE {DB}.t (id INT PRIMARY KEY, v VARCHAR(10))",
                 f"CREATE TABLE {DB}.ballast (id INT PRIMARY KEY, n INT)",
                 f"INSERT INTO {DB}.t VALUES (1, 'old'), (2, 'old'), (3, 'old')")
    down.execute("INSERT INTO ballast SELECT seq, 0 FROM seq_1_to_200", database=DB)
    yield down
    down.execute(f"DROP DATABASE IF EXISTS {DB}")


def _final(i: int, v: str) -> tuple:
    """A final change as the partition bodies take it: (schema, table, part, key, kind, image, ts)."""
    return (DB, "t", str(i), str(i), "U", encode_image({"id": i, "v": v}), 100)


def _holder(down, statements: list[str], hold: float, ready: threading.Event, errors: list) -> threading.Thread:
    """Another connection's transaction: it runs `statements` (setting `ready` after the first),
    keeps its locks `hold` seconds, and commits."""
    def run():
        conn = down.connect(DB)
        try:
            with conn.cursor() as cur:
                cur.execute("BEGIN")
                cur.execute("UPDATE ballast SET n = n + 1")  # heavier than the writer's: not the victim
                cur.execute(statements[0])
                ready.set()
                for sql in statements[1:]:
                    time.sleep(0.5)  # the writer is waiting for the row by then
                    cur.execute(sql)
                time.sleep(hold)
                cur.execute("COMMIT")
        except Exception as e:  # noqa: BLE001 - reported by the test
            errors.append(e)
            ready.set()
        finally:
            conn.close()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_transaction_rolled_back_by_a_deadlock_runs_again_whole(down):
    ready, errors = threading.Event(), []
    # it holds row 2, then asks for row 1, which the writer's transaction has written by then
    holder = _holder(down, ["UPDATE t SET v = 'other' WHERE id = 2", "UPDATE t SET v = 'other' WHERE id = 1"],
                     0.2, ready, errors)
    assert ready.wait(10)
    conn = down.connect(DB)
    try:
        w = StreamingWriter(RowWriter(conn, batch_rows=1), KEYS)  # a statement per row: row 1's go first
        w.writer.in_transaction = True
        write_transaction(w, conn, [_final(1, "mine"), _final(2, "mine")])
    finally:
        conn.close()
    holder.join(20)
    assert errors == []
    # both of the transaction's rows, after the other transaction: not row 2 alone over its row 1
    assert down.query(f"SELECT id, v FROM {DB}.t ORDER BY id") == [(1, "mine"), (2, "mine"), (3, "old")]
    assert w.writer.rows_written == 2 and w.writer.statements == 4  # a DELETE and a REPLACE per row, once


@pytest.mark.parametrize("defer", [False, True])
def test_an_autocommitted_statement_waits_out_a_lock_held_elsewhere(down, defer):
    """`defer`: the statement's answer (the lock wait timeout) read after it was sent, at close."""
    ready, errors = threading.Event(), []
    holder = _holder(down, ["UPDATE t SET v = 'other' WHERE id = 3"], 2.5, ready, errors)
    assert ready.wait(10)
    conn = down.connect(DB)
    try:
        with conn.cursor() as cur:
            cur.execute("SET SESSION innodb_lock_wait_timeout = 1")  # 1205 after a second
        w = StreamingWriter(RowWriter(conn, batch_rows=10), KEYS)
        w.writer.defer = defer
        w.add(DB, "t", "U", {"id": 3, "v": "mine"})
        w.close()
    finally:
        conn.close()
    holder.join(20)
    assert errors == []
    assert down.query(f"SELECT v FROM {DB}.t WHERE id = 3") == [("mine",)]
    assert w.writer.rows_written == 1 and w.writer.statements == 2
