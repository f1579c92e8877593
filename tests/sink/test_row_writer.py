"""sink.row_writer without a server: statements are recorded by a fake connection."""

import random

import pymysql
import pytest
from fake_downstream import FakeConn, failing

from cdcflow.core.row_codec import encode_image
from cdcflow.sink import row_writer
from cdcflow.sink.downstream_errors import SinkError
from cdcflow.sink.row_writer import DECODED, RowWriter, StreamingWriter, apply_ordered


@pytest.fixture(autouse=True)
def no_sleep(monkeypatch):
    monkeypatch.setattr(row_writer.time, "sleep", lambda s: None)


# --- RowWriter: batching ------------------------------------------------------------------

def test_chunks_by_rows():
    w = RowWriter(FakeConn(), batch_rows=3)
    assert [len(c) for c in w._chunks([str(i) for i in range(7)], 10)] == [3, 3, 1]
    assert list(w._chunks([], 10)) == []


def test_chunks_by_bytes():
    w = RowWriter(FakeConn(), batch_rows=1000, max_bytes=50)
    items = ["x" * 8] * 9  # each costs 8 + 2 separator bytes
    chunks = list(w._chunks(items, 10))
    assert [len(c) for c in chunks] == [4, 4, 1]
    assert all(10 + sum(len(i) + 2 for i in c) <= 50 for c in chunks)
    assert sum(chunks, []) == items


def test_an_item_bigger_than_the_limit_goes_alone():
    w = RowWriter(FakeConn(), batch_rows=1000, max_bytes=50)
    assert [len(c) for c in w._chunks(["a", "b" * 100, "c"], 10)] == [1, 1, 1]


def test_replace_rows_statements_stay_under_the_byte_limit():
    conn = FakeConn()
    w = RowWriter(conn, batch_rows=1000, max_bytes=300)
    images = [{"id": i, "v": "x" * 20} for i in range(40)]
    w.replace_rows("db", "t", ("id", "v"), images)
    assert len(conn.sql) > 1
    assert all(len(s.encode()) <= 300 for s in conn.sql)
    assert (w.rows_written, w.statements) == (40, len(conn.sql))
    assert conn.sql[0].startswith("REPLACE INTO `db`.`t` (`id`, `v`) VALUES (0, 'xxxxxxxxxxxxxxxxxxxx'),(1, ")
    assert sum(s.count("'xxxxxxxxxxxxxxxxxxxx'") for s in conn.sql) == 40


def test_replace_and_delete_statement_text():
    conn = FakeConn()
    w = RowWriter(conn, batch_rows=2)
    w.replace_rows("d`b", "t", ("id", "s"), [{"id": 1, "s": "o'k"}, {"id": 2, "s": None}, {"id": 3, "s": ""}])
    w.delete_keys("db", "t", ["id"], [{"id": 1}, {"id": 2}, {"id": 3}])
    w.delete_keys("db", "m", ["a", "b"], [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}])
    assert conn.sql == [
        "REPLACE INTO `d``b`.`t` (`id`, `s`) VALUES (1, 'o\\'k'),(2, NULL)",
        "REPLACE INTO `d``b`.`t` (`id`, `s`) VALUES (3, '')",
        "DELETE FROM `db`.`t` WHERE `id` IN (1, 2)",
        "DELETE FROM `db`.`t` WHERE `id` IN (3)",
        "DELETE FROM `db`.`m` WHERE (`a`, `b`) IN ((1, 'x'), (2, 'y'))",
    ]
    assert (w.rows_written, w.statements) == (8, 5)


# --- RowWriter: errors --------------------------------------------------------------------
def test_deadlock_is_retried():
    conn = FakeConn(fail=failing([pymysql.err.OperationalError(1213, "Deadlock found"),
                                  pymysql.err.OperationalError(1205, "Lock wait timeout")]))
    w = RowWriter(conn, batch_rows=10)
    w.replace_rows("db", "t", ("id",), [{"id": 1}])
    assert (len(conn.sql), w.statements, w.rows_written) == (1, 1, 1)


def test_persistent_deadlock_becomes_a_retryable_sink_error(monkeypatch):
    from cdcflow.sink import row_writer

    waits = []
    monkeypatch.setattr(row_writer.time, "sleep", waits.append)
    conn = FakeConn(fail=failing([pymysql.err.OperationalError(1213, "Deadlock found")] * row_writer.STATEMENT_ATTEMPTS))
    with pytest.raises(SinkError) as e:
        RowWriter(conn, batch_rows=10).delete_keys("db", "t", ["id"], [{"id": 1}])
    assert (e.value.code, e.value.retryable, e.value.what) == (1213, True, "DELETE from db.t")
    assert conn.sql == []
    # waits doubling from 0.05 s, each with jitter of +-50%
    assert len(waits) == row_writer.STATEMENT_ATTEMPTS - 1
    assert all(0.025 * 2 ** i <= w <= 0.075 * 2 ** i for i, w in enumerate(waits)), waits


def test_other_errors_are_not_retried():
    conn = FakeConn(fail=failing([pymysql.err.IntegrityError(1062, "Duplicate entry '1' for key 'PRIMARY'")]))
    with pytest.raises(SinkError) as e:
        RowWriter(conn, batch_rows=10).replace_rows("db", "t", ("id",), [{"id": 1}])
    assert (e.value.code, e.value.retryable, e.value.text) == (1062, False, "Duplicate entry '1' for key 'PRIMARY'")
    assert conn.sql == []


# --- StreamingWriter: a table's DELETEs before its upserts, bounded memory ----------------

class Recorder:
    """Stands for RowWriter: records what would be written, in order."""

    form = DECODED

    def __init__(self, batch_rows):
        self.batch_rows = batch_rows
        self.log = []  # (kind, schema, table, [row ids]) per statement batch
        self.settled = 0

    def delete_keys(self, schema, table, key, images, counted=None):
        assert key == KEYS[f"{schema}.{table}"]
        self.log.append(("D", schema, table, [img["n"] for img in images]))

    def replace_rows(self, schema, table, columns, images, verb="REPLACE", commit_ts=None, key=None):
        assert all(tuple(img) == columns for img in images)
        self.log.append(("U" if verb == "REPLACE" else verb, schema, table, [img["n"] for img in images]))

    def settle(self):
        self.settled += 1  # StreamingWriter.close: the last statement's answer read


KEYS = {"db.a": ["id"], "db.b": ["id"], "db.c": ["x", "y"]}


def stream(seed: int, n: int) -> list[tuple]:
    """Changes as final_changes emits them: per table, parts in order, a part's DELETEs first."""
    rnd = random.Random(seed)
    out, n_id = [], 0
    for table in ("a", "b", "c"):
        for _part in range(n):
            kinds = sorted(rnd.choice("DU") for _ in range(rnd.randint(1, 3)))  # 'D' < 'U'
            for kind in kinds:
                img = {"n": n_id, "id": n_id} if table != "c" else {"n": n_id, "x": n_id, "y": "v"}
                if kind == "U" and rnd.random() < 0.3:
                    img["extra"] = 1  # another column set: a separate pending statement
                out.append(("db", table, kind, img))
                n_id += 1
    # tables interleave at random (a partition holds many tables), each keeping its order
    by_table: dict[str, list] = {}
    for r in out:
        by_table.setdefault(r[1], []).append(r)
    merged = []
    while any(by_table.values()):
        t = rnd.choice([t for t, rows in by_table.items() if rows])
        merged.append(by_table[t].pop(0))
    return merged


def restore_table_order(rows):
    return sorted(rows, key=lambda r: r[3]["n"])


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("batch_rows", [1, 2, 3, 7, 1000])
def test_streaming_writer_orders_deletes_and_bounds_memory(seed, batch_rows):
    changes = stream(seed, 40)
    # within each table the input keeps final_changes' order (ids increase)
    for t in "abc":
        ids = [r[3]["n"] for r in changes if r[1] == t]
        assert ids == sorted(ids)
    rec = Recorder(batch_rows)
    w = StreamingWriter(rec, KEYS)
    added_at, most = {}, 0
    for i, (schema, table, kind, img) in enumerate(changes):
        w.add(schema, table, kind, img)
        added_at[img["n"]] = i
        pending = [images for images, _ in (*w.deletes.values(), *w.upserts.values())]  # beside each, its flags
        assert all(len(p) < batch_rows for p in pending)
        assert sum(len(p) for p in pending) <= batch_rows * (3 + 6)  # per table: deletes + 2 column sets
        # its own count of the row images it holds (a REPLACEd row, in both lists, once)
        assert w.held == len({id(img) for p in pending for img in p})
        most = max(most, w.held)
    w.close()
    assert w.deletes == {} and w.upserts == {} and w.held == 0
    assert most <= w.most_held <= most + 1  # its peak: the moment a row is added, before a flush
    # every change deleted by its key exactly once, and an upserted one REPLACEd exactly once after that
    deleted = [n for kind, _, _, ns in rec.log if kind == "D" for n in ns]
    replaced = [n for kind, _, _, ns in rec.log if kind == "U" for n in ns]
    assert sorted(deleted) == sorted(r[3]["n"] for r in changes)
    assert sorted(replaced) == sorted(r[3]["n"] for r in changes if r[2] == "U")
    assert all(len(ns) <= batch_rows for *_, ns in rec.log)
    # a DELETE added before an upsert of the same table is written before it, and so is the
    # upserted row's own DELETE
    done: set[int] = set()
    for kind, _, table, ns in rec.log:
        if kind == "U":
            first_upsert = min(added_at[n] for n in ns)
            earlier_deletes = {r[3]["n"] for r in changes[:first_upsert] if r[1] == table and r[2] == "D"}
            assert earlier_deletes | set(ns) <= done, (table, sorted((earlier_deletes | set(ns)) - done))
        else:
            done.update(ns)


def test_streaming_writer_flushes_pending_deletes_when_upserts_fill():
    rec = Recorder(2)
    w = StreamingWriter(rec, KEYS)
    w.add("db", "a", "D", {"n": 1, "id": 1})
    assert rec.log == []
    w.add("db", "a", "U", {"n": 2, "id": 2})  # its DELETE by key fills the pending DELETEs
    assert rec.log == [("D", "db", "a", [1, 2])]
    w.add("db", "a", "U", {"n": 3, "id": 3})
    assert rec.log == [("D", "db", "a", [1, 2]), ("D", "db", "a", [3]), ("U", "db", "a", [2, 3])]
    w.add("db", "b", "D", {"n": 4, "id": 4})
    w.close()
    assert rec.log[-1] == ("D", "db", "b", [4])


def test_streaming_writer_inserts_new_rows_only_when_asked():
    for insert_new in (False, True):
        rec = Recorder(10)
        w = StreamingWriter(rec, KEYS, insert_new=insert_new)
        w.add("db", "a", "I", {"n": 1, "id": 1})
        w.add("db", "a", "U", {"n": 2, "id": 2})
        w.add("db", "a", "I", {"n": 3, "id": 3})
        w.close()
        if insert_new:  # a new key cannot exist yet: INSERT, no DELETE first
            assert rec.log == [("D", "db", "a", [2]), ("INSERT", "db", "a", [1, 3]), ("U", "db", "a", [2])]
        else:
            assert rec.log == [("D", "db", "a", [1, 2, 3]), ("U", "db", "a", [1, 2, 3])]


def test_generated_columns_are_left_out_of_written_rows():
    rec = Recorder(10)
    w = StreamingWriter(rec, KEYS, generated={"db.a": frozenset({"g"})})
    columns = []
    rec.replace_rows = lambda schema, table, cols, images, *a, **k: columns.append((table, cols))
    w.add("db", "a", "U", {"n": 1, "id": 1, "g": 2})
    w.add("db", "b", "U", {"n": 2, "id": 2, "g": 3})
    w.close()
    assert sorted(columns) == [("a", ("n", "id")), ("b", ("n", "id", "g"))]


def test_rows_written_counts_each_final_row_once():
    conn = FakeConn()
    writer = RowWriter(conn, batch_rows=10)
    w = StreamingWriter(writer, {"db.t": ["id"]})
    w.add("db", "t", "D", {"id": 1})
    w.add("db", "t", "U", {"id": 2})
    w.add("db", "t", "I", {"id": 3})
    w.close()
    assert conn.sql == ["DELETE FROM `db`.`t` WHERE `id` IN (1, 2, 3)", "REPLACE INTO `db`.`t` (`id`) VALUES (2),(3)"]
    assert writer.rows_written == 3


def test_upsert_statement_text():
    conn = FakeConn()
    w = RowWriter(conn, batch_rows=2)
    w.replace_rows("db", "t", ("id", "v"), [{"id": 1, "v": "a"}, {"id": 2, "v": None}, {"id": 3, "v": "c"}],
                   "UPSERT", key=["id"])
    tail = " ON DUPLICATE KEY UPDATE `id` = VALUES(`id`), `v` = VALUES(`v`)"
    assert conn.sql == ["INSERT INTO `db`.`t` (`id`, `v`) VALUES (1, 'a'),(2, NULL)" + tail,
                        "INSERT INTO `db`.`t` (`id`, `v`) VALUES (3, 'c')" + tail]
    assert (w.rows_written, w.statements, w.fallbacks) == (3, 2, 0)


def test_upsert_statements_stay_under_the_byte_limit_with_their_tail():
    conn = FakeConn()
    w = RowWriter(conn, batch_rows=1000, max_bytes=300)
    w.replace_rows("db", "t", ("id", "v"), [{"id": i, "v": "x" * 20} for i in range(40)], "UPSERT", key=["id"])
    assert len(conn.sql) > 1 and all(len(s.encode()) <= 300 for s in conn.sql)
    assert sum(s.count("'xxxxxxxxxxxxxxxxxxxx'") for s in conn.sql) == 40


def test_upsert_refused_for_a_duplicate_is_written_as_delete_and_replace():
    """A stale row of another key holds a unique value of the statement's rows: the
    statement's rows are deleted by their key and REPLACEd, which removes that row."""
    dup = pymysql.err.IntegrityError(1062, "Duplicate entry 'x' for key 'u'")
    conn = FakeConn(fail=lambda sql, args: dup if sql.startswith("INSERT") and "(2, 'x')" in sql else None)
    w = RowWriter(conn, batch_rows=2)
    w.replace_rows("db", "t", ("id", "u"), [{"id": 1, "u": "w"}, {"id": 2, "u": "x"}, {"id": 3, "u": "y"}],
                   "UPSERT", [10, 11, 12], ["id"])
    tail = " ON DUPLICATE KEY UPDATE `id` = VALUES(`id`), `u` = VALUES(`u`)"
    assert conn.sql == ["DELETE FROM `db`.`t` WHERE `id` IN (1, 2)",
                        "REPLACE INTO `db`.`t` (`id`, `u`) VALUES (1, 'w'),(2, 'x')",
                        "INSERT INTO `db`.`t` (`id`, `u`) VALUES (3, 'y')" + tail]
    assert (w.rows_written, w.statements, w.fallbacks) == (3, 3, 1)


@pytest.mark.parametrize("verb", ["REPLACE", "INSERT"])
def test_a_duplicate_refusing_replace_or_insert_stands(verb):
    conn = FakeConn(fail=failing([pymysql.err.IntegrityError(1062, "Duplicate entry '1' for key 'PRIMARY'")]))
    with pytest.raises(SinkError) as e:
        RowWriter(conn, batch_rows=10).replace_rows("db", "t", ("id",), [{"id": 1}], verb, key=["id"])
    assert e.value.code == 1062 and conn.sql == []


def test_upsert_refused_for_another_reason_stands():
    conn = FakeConn(fail=failing([pymysql.err.IntegrityError(1048, "Column 'v' cannot be null")]))
    with pytest.raises(SinkError) as e:
        RowWriter(conn, batch_rows=10).replace_rows("db", "t", ("id", "v"), [{"id": 1, "v": None}], "UPSERT",
                                                    [5], ["id"])
    assert e.value.code == 1048 and conn.sql == []


def test_streaming_writer_upserts_existing_rows_of_key_indexed_tables():
    """In a table of `key_indexed`, rows of kind U go out as UPSERT when asked (outside safe
    mode), else as REPLACE, in neither case deleted by their key first; other tables' rows,
    and new rows, as before."""
    for upsert in (False, True):
        rec = Recorder(10)
        w = StreamingWriter(rec, KEYS, key_indexed=frozenset({"db.a"}), upsert=upsert)
        w.add("db", "a", "D", {"n": 1, "id": 1})
        w.add("db", "a", "U", {"n": 2, "id": 2})
        w.add("db", "a", "I", {"n": 3, "id": 3})
        w.add("db", "b", "U", {"n": 4, "id": 4})
        w.close()
        upserted = [("UPSERT", "db", "a", [2]), ("U", "db", "a", [3])] if upsert else [("U", "db", "a", [2, 3])]
        assert rec.log == [("D", "db", "a", [1]), ("D", "db", "b", [4]), *upserted, ("U", "db", "b", [4])]
        assert w.held == 0



def test_safe_mode_upserts_the_rows_of_in_place_tables_that_set_every_column():
    """In safe mode (no upsert, no insert_new), rows of kinds I and U of a key-indexed table in
    `in_place` go out as UPSERT where the image sets every column the downstream has (names
    compared without case), else as REPLACE: an image lacking one of them (a column of the
    downstream's own keeps REPLACE's default), a table not key-indexed (its rows are deleted by
    key first, then REPLACEd), a table not in `in_place` (a trigger fires on it)."""
    rec = Recorder(10)
    w = StreamingWriter(rec, KEYS, key_indexed=frozenset({"db.a", "db.b"}),
                        in_place={"db.a": frozenset({"n", "id"}), "db.c": frozenset({"n", "x", "y"})})
    w.add("db", "a", "D", {"n": 1, "id": 1})
    w.add("db", "a", "U", {"n": 2, "id": 2})
    w.add("db", "a", "I", {"n": 3, "id": 3})
    w.add("db", "a", "U", {"n": 4, "Id": 4, "extra": 0})  # another column set, every one named
    w.add("db", "b", "U", {"n": 5, "id": 5})  # not in in_place
    w.add("db", "c", "U", {"n": 6, "x": 6, "y": "v"})  # not key-indexed
    w.close()
    assert rec.log == [("D", "db", "a", [1]), ("D", "db", "c", [6]), ("UPSERT", "db", "a", [2, 3]),
                       ("UPSERT", "db", "a", [4]), ("U", "db", "b", [5]), ("U", "db", "c", [6])]
    rec = Recorder(10)
    w = StreamingWriter(rec, KEYS, key_indexed=frozenset({"db.a"}), in_place={"db.a": frozenset({"n", "id", "own"})})
    w.add("db", "a", "U", {"n": 7, "id": 7})  # the downstream's own column "own": REPLACE
    w.close()
    assert rec.log == [("U", "db", "a", [7])]


def test_insert_statement_text():
    conn = FakeConn()
    RowWriter(conn, batch_rows=10).replace_rows("db", "t", ("id",), [{"id": 1}, {"id": 2}], "INSERT")
    assert conn.sql == ["INSERT INTO `db`.`t` (`id`) VALUES (1),(2)"]


# --- tables without a valid index ---------------------------------------------------------

def test_apply_ordered_statements():
    conn = FakeConn()
    n = apply_ordered(conn, "db", "t", [
        {"op": "insert", "before": None, "after": encode_image({"a": 1, "b": None})},
        {"op": "update", "before": encode_image({"a": 1, "b": None}), "after": encode_image({"a": 1, "b": "x"})},
        {"op": "delete", "before": encode_image({"a": 1, "b": "x"}), "after": None},
    ])
    assert n == 3
    assert conn.sql == [
        "INSERT INTO `db`.`t` (`a`, `b`) VALUES (1, NULL)",
        "UPDATE `db`.`t` SET `a` = 1, `b` = 'x' WHERE `a` <=> 1 AND `b` <=> NULL LIMIT 1",
        "DELETE FROM `db`.`t` WHERE `a` <=> 1 AND `b` <=> 'x' LIMIT 1",
    ]


def test_apply_ordered_leaves_generated_columns_out():
    conn = FakeConn()
    apply_ordered(conn, "db", "t", [
        {"op": "insert", "before": None, "after": encode_image({"a": 1, "g": 2})},
        {"op": "update", "before": encode_image({"a": 1, "g": 2}), "after": encode_image({"a": 3, "g": 4})},
        {"op": "delete", "before": encode_image({"a": 3, "g": 4}), "after": None},
    ], frozenset({"g"}))
    assert conn.sql == [
        "INSERT INTO `db`.`t` (`a`) VALUES (1)",
        "UPDATE `db`.`t` SET `a` = 3 WHERE `a` <=> 1 LIMIT 1",
        "DELETE FROM `db`.`t` WHERE `a` <=> 3 LIMIT 1",
    ]
