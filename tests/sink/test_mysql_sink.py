"""mysql_sink without a server: statements are recorded by a fake connection."""

import json
import random

import pyarrow as pa
import pymysql
import pytest

from cdcflow.core.row_codec import encode_image
from cdcflow.sink import mysql_sink
from cdcflow.sink.compaction import keyed_changes
from cdcflow.sink.mysql_sink import (
    REPLAYED_DDL_ERRORS,
    RowWriter,
    SinkError,
    StreamingWriter,
    apply_ordered,
    catalogue_key,
    execute_ddl,
    is_retryable,
    valid_key,
)


class FakeCursor:
    def __init__(self, conn):
        self.conn = conn

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def execute(self, sql, args=None):
        err = self.conn.fail(sql, args) if self.conn.fail else None
        if err is not None:
            raise err
        self.conn.sql.append(sql if args is None else (sql, args))

    def fetchall(self):
        return self.conn.rows

    def fetchone(self):
        return self.conn.rows[0] if self.conn.rows else None


class FakeConn:
    def __init__(self, fail=None, rows=()):
        self.sql, self.fail, self.rows, self.closed = [], fail, list(rows), False

    def cursor(self):
        return FakeCursor(self)

    def close(self):
        self.closed = True


@pytest.fixture(autouse=True)
def no_sleep(monkeypatch):
    monkeypatch.setattr(mysql_sink.time, "sleep", lambda s: None)


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

def failing(errors):
    """A fail() that raises the given errors in turn, then lets statements through."""
    errors = list(errors)

    def fail(sql, args):
        return errors.pop(0) if errors else None
    return fail


def test_deadlock_is_retried():
    conn = FakeConn(fail=failing([pymysql.err.OperationalError(1213, "Deadlock found"),
                                  pymysql.err.OperationalError(1205, "Lock wait timeout")]))
    w = RowWriter(conn, batch_rows=10)
    w.replace_rows("db", "t", ("id",), [{"id": 1}])
    assert (len(conn.sql), w.statements, w.rows_written) == (1, 1, 1)


def test_persistent_deadlock_becomes_a_retryable_sink_error():
    conn = FakeConn(fail=failing([pymysql.err.OperationalError(1213, "Deadlock found")] * 5))
    with pytest.raises(SinkError) as e:
        RowWriter(conn, batch_rows=10).delete_keys("db", "t", ["id"], [{"id": 1}])
    assert (e.value.code, e.value.retryable, e.value.what) == (1213, True, "DELETE from db.t")
    assert conn.sql == []


def test_other_errors_are_not_retried():
    conn = FakeConn(fail=failing([pymysql.err.IntegrityError(1062, "Duplicate entry '1' for key 'PRIMARY'")]))
    with pytest.raises(SinkError) as e:
        RowWriter(conn, batch_rows=10).replace_rows("db", "t", ("id",), [{"id": 1}])
    assert (e.value.code, e.value.retryable, e.value.text) == (1062, False, "Duplicate entry '1' for key 'PRIMARY'")
    assert conn.sql == []


@pytest.mark.parametrize("exc, retryable", [
    (pymysql.err.OperationalError(2013, "Lost connection"), True),
    (pymysql.err.OperationalError(2006, "MySQL server has gone away"), True),
    (pymysql.err.OperationalError(1213, "Deadlock"), True),
    (pymysql.err.OperationalError(1045, "Access denied"), False),
    (pymysql.err.ProgrammingError(1064, "You have an error in your SQL syntax"), False),
    (pymysql.err.IntegrityError(1062, "Duplicate entry"), False),
    (ConnectionResetError("reset"), True),
    (TimeoutError("slow"), True),
    (ValueError("x"), False),
])
def test_is_retryable(exc, retryable):
    assert is_retryable(exc) is retryable


# --- SinkError: carried out of Spark workers as text --------------------------------------

def test_sink_error_round_trip_inside_a_traceback():
    e = SinkError("REPLACE into db.t", pymysql.err.OperationalError(2013, "Lost connection to server"))
    spark_text = ("org.apache.spark.api.python.PythonException: Traceback (most recent call last):\n"
                  '  File "mysql_sink.py", line 1, in apply_partition\n'
                  f"cdcflow.sink.mysql_sink.SinkError: {e}\n\tat org.apache.spark.X(X.scala:1)")
    assert SinkError.parse(spark_text) == {"what": "REPLACE into db.t", "code": 2013,
                                           "text": "Lost connection to server", "retryable": True}


@pytest.mark.parametrize("message", [
    "Duplicate entry 'a:END' for key 'PRIMARY'",  # error texts quote row values, which may hold anything
    "quote \" backslash \\ newline \n unicode 中文 😀 CDCFLOW_SINK_ERROR:",
])
def test_sink_error_round_trip_of_any_message(message):
    e = SinkError("DELETE from db.t", pymysql.err.IntegrityError(1062, message))
    parsed = SinkError.parse("prefix " + str(e) + " suffix :END more")
    assert parsed == {"what": "DELETE from db.t", "code": 1062, "text": message, "retryable": False}


def test_sink_error_parse_of_foreign_text():
    assert SinkError.parse("java.lang.OutOfMemoryError") is None
    assert SinkError.parse(SinkError.MARK + "{not json") is None


def test_sink_error_without_a_mysql_code():
    e = SinkError("connect", ConnectionRefusedError("refused"))
    assert SinkError.parse(str(e)) == {"what": "connect", "code": None, "text": "refused", "retryable": True}


# --- StreamingWriter: a table's DELETEs before its upserts, bounded memory ----------------

class Recorder:
    """Stands for RowWriter: records what would be written, in order."""

    def __init__(self, batch_rows):
        self.batch_rows = batch_rows
        self.log = []  # (kind, schema, table, [row ids]) per statement batch

    def delete_keys(self, schema, table, key, images):
        assert key == KEYS[f"{schema}.{table}"]
        self.log.append(("D", schema, table, [img["n"] for img in images]))

    def replace_rows(self, schema, table, columns, images, verb="REPLACE", commit_ts=None, key=None):
        assert all(tuple(img) == columns for img in images)
        self.log.append(("U" if verb == "REPLACE" else verb, schema, table, [img["n"] for img in images]))


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
    added_at = {}
    for i, (schema, table, kind, img) in enumerate(changes):
        w.add(schema, table, kind, img)
        added_at[img["n"]] = i
        pending = list(w.deletes.values()) + list(w.upserts.values())
        assert all(len(p) < batch_rows for p in pending)
        assert sum(len(p) for p in pending) <= batch_rows * (3 + 6)  # per table: deletes + 2 column sets
    w.close()
    assert w.deletes == {} and w.upserts == {}
    # every change written exactly once, with its kind
    written = {n: kind for kind, _, _, ns in rec.log for n in ns}
    assert sorted(written) == sorted(r[3]["n"] for r in changes)
    assert all(written[r[3]["n"]] == r[2] for r in changes)
    assert all(len(ns) <= batch_rows for *_, ns in rec.log)
    # a DELETE added before an upsert of the same table is written before it
    done: set[int] = set()
    for kind, _, table, ns in rec.log:
        if kind == "U":
            first_upsert = min(added_at[n] for n in ns)
            earlier_deletes = {r[3]["n"] for r in changes[:first_upsert] if r[1] == table and r[2] == "D"}
            assert earlier_deletes <= done, (table, sorted(earlier_deletes - done))
        done.update(ns)


def test_streaming_writer_flushes_pending_deletes_when_upserts_fill():
    rec = Recorder(2)
    w = StreamingWriter(rec, KEYS)
    w.add("db", "a", "D", {"n": 1, "id": 1})
    w.add("db", "a", "U", {"n": 2, "id": 2})
    assert rec.log == []
    w.add("db", "a", "U", {"n": 3, "id": 3})
    assert rec.log == [("D", "db", "a", [1]), ("U", "db", "a", [2, 3])]
    w.add("db", "b", "D", {"n": 4, "id": 4})
    w.close()
    assert rec.log[-1] == ("D", "db", "b", [4])


def test_streaming_writer_inserts_new_rows_only_when_asked():
    for insert_new, verb in ((False, "U"), (True, "INSERT")):
        rec = Recorder(10)
        w = StreamingWriter(rec, KEYS, insert_new=insert_new)
        w.add("db", "a", "I", {"n": 1, "id": 1})
        w.add("db", "a", "U", {"n": 2, "id": 2})
        w.add("db", "a", "I", {"n": 3, "id": 3})
        w.close()
        assert sorted(rec.log) == sorted([(verb, "db", "a", [1, 3]), ("U", "db", "a", [2])] if insert_new
                                         else [("U", "db", "a", [1, 2, 3])])


def test_insert_statement_text():
    conn = FakeConn()
    RowWriter(conn, batch_rows=10).replace_rows("db", "t", ("id",), [{"id": 1}, {"id": 2}], "INSERT")
    assert conn.sql == ["INSERT INTO `db`.`t` (`id`) VALUES (1),(2)"]


# --- apply_partition: the whole body of a Spark partition, on a fake connection -----------

def keyed_batches(changes, keys):
    cols = {f: [] for f in ("schema", "table", "commit_ts", "seq", "op", "before", "after")}
    for table, ts, seq, op, before, after in changes:
        for f, v in zip(cols, ("db", table, ts, seq, op, encode_image(before), encode_image(after))):
            cols[f].append(v)
    out = list(keyed_changes(iter([pa.RecordBatch.from_pydict(cols)]), keys))
    rows = out[0].to_pylist()
    rows.sort(key=lambda r: (r["schema"], r["table"], r["part"], r["key"], r["commit_ts"], r["seq"], r["sub"]))
    return [pa.RecordBatch.from_pylist(rows[:2], schema=out[0].schema),
            pa.RecordBatch.from_pylist(rows[2:], schema=out[0].schema)]


def test_apply_partition_case_only_key_change(monkeypatch):
    conn = FakeConn()
    monkeypatch.setattr(mysql_sink, "_connect_with_retry", lambda sink: conn)
    keys = {"db.s": ["name"]}
    batches = keyed_batches([
        ("s", 10, 0, "update", {"name": "abc", "v": 1}, {"name": "ABC", "v": 1}),
        ("s", 11, 0, "insert", None, {"name": "zz", "v": 2}),
        ("s", 12, 0, "delete", {"name": "qq", "v": 3}, None),
    ], keys)
    out = list(mysql_sink.apply_partition(iter(batches), {"host": "h", "port": 1}, 100, keys))
    assert conn.sql == [
        "DELETE FROM `db`.`s` WHERE `name` IN ('abc', 'qq')",
        "REPLACE INTO `db`.`s` (`name`, `v`) VALUES ('ABC', 1),('zz', 2)",
    ]
    assert out[0].to_pydict() == {"rows": [4], "statements": [2]}
    assert conn.closed


def test_apply_partition_phases_of_safe_mode_false(monkeypatch):
    """Pass 'existing' writes DELETEs and the REPLACEs of rows that were there; pass 'new'
    INSERTs the keys these changes created (the split's new key included)."""
    keys = {"db.t": ["id"]}
    changes = [("t", 10, 0, "update", {"id": 1, "v": 1}, {"id": 5, "v": 1}),   # key change: D 1, I 5
               ("t", 10, 1, "update", {"id": 2, "v": 2}, {"id": 2, "v": 9}),   # U 2
               ("t", 10, 2, "insert", None, {"id": 3, "v": 3})]                 # I 3
    sql = {}
    for phase in ("existing", "new"):
        conn = FakeConn()
        monkeypatch.setattr(mysql_sink, "_connect_with_retry", lambda sink, c=conn: c)
        list(mysql_sink.apply_partition(iter(keyed_batches(changes, keys)), {}, 100, keys, phase))
        sql[phase] = conn.sql
    assert sql["existing"] == ["DELETE FROM `db`.`t` WHERE `id` IN (1)",
                               "REPLACE INTO `db`.`t` (`id`, `v`) VALUES (2, 9)"]
    assert sql["new"] == ["INSERT INTO `db`.`t` (`id`, `v`) VALUES (3, 3),(5, 1)"]


def test_apply_partition_closes_the_connection_on_error(monkeypatch):
    conn = FakeConn(fail=failing([pymysql.err.ProgrammingError(1146, "Table 'db.s' doesn't exist")]))
    monkeypatch.setattr(mysql_sink, "_connect_with_retry", lambda sink: conn)
    keys = {"db.s": ["name"]}
    batches = keyed_batches([("s", 11, 0, "insert", None, {"name": "zz", "v": 2})], keys)
    with pytest.raises(SinkError) as e:
        list(mysql_sink.apply_partition(iter(batches), {"host": "h", "port": 1}, 100, keys))
    assert e.value.code == 1146 and conn.closed


# --- tables without a valid index, and finding the valid index -----------------------------

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


def _stat(index, col, nullable, sub_part=None, data_type="int", collation=None):
    return index, col, nullable, sub_part, data_type, collation


@pytest.mark.parametrize("rows, key", [
    ([_stat("PRIMARY", "id", "NO"), _stat("u", "code", "NO")], ["id"]),
    ([_stat("PRIMARY", "a", "NO"), _stat("PRIMARY", "b", "NO")], ["a", "b"]),
    ([_stat("u1", "a", "NO"), _stat("u1", "b", "YES"), _stat("u2", "c", "NO"), _stat("u2", "d", "NO")], ["c", "d"]),
    ([_stat("u1", "a", "YES")], None),
    ([_stat("PRIMARY", "b", "NO", 20, "text")], ["b"]),  # a prefix primary key is valid
    ([_stat("u1", "b", "NO", 3, "varchar")], ["b"]),
    ([], None),
])
def test_valid_key(rows, key):
    conn = FakeConn(rows=rows)
    assert valid_key(conn, "db", "t") == key
    assert conn.sql[0][1] == ("db", "t")


def test_catalogue_key_names_the_collations_of_string_key_columns():
    conn = FakeConn(rows=[_stat("PRIMARY", "k", "NO", None, "varchar", "utf8mb4_General_ci"),
                          _stat("PRIMARY", "n", "NO")])
    assert catalogue_key(conn, "db", "t") == (["k", "n"], {"k": "utf8mb4_general_ci"})


# --- DDL replay ---------------------------------------------------------------------------

# What a DDL that already ran gets when it runs again (recorded from MariaDB 10.11; MySQL
# and TiDB use the same codes except DROP VIEW, which they answer with 1051).
REPLAY_ERRORS = [
    ("CREATE DATABASE r", 1007),
    ("DROP DATABASE r", 1008),
    ("CREATE TABLE u (id INT)", 1050),
    ("DROP TABLE w", 1051),
    ("RENAME TABLE u TO u2", 1146),
    ("ALTER TABLE t ADD COLUMN c INT", 1060),
    ("ALTER TABLE t DROP COLUMN c", 1091),
    ("ALTER TABLE t CHANGE a b INT", 1054),
    ("ALTER TABLE t RENAME COLUMN b TO a2", 1054),
    ("CREATE INDEX j ON t (a2)", 1061),
    ("DROP INDEX j ON t", 1091),
    ("ALTER TABLE t RENAME INDEX i TO i2", 1176),
    ("ALTER TABLE t ADD PRIMARY KEY (id)", 1068),
    ("ALTER TABLE t DROP PRIMARY KEY", 1091),
    ("ALTER TABLE t ADD PARTITION (PARTITION p2 VALUES LESS THAN (30))", 1517),
    ("ALTER TABLE t DROP PARTITION p2", 1507),
    ("ALTER TABLE t TRUNCATE PARTITION p9", 1735),
    ("CREATE VIEW v AS SELECT 1", 1050),
    ("DROP VIEW v", 4092),
    ("DROP VIEW v", 1051),
]


def ddl_conn(code, message="replayed"):
    def fail(sql, args):
        if sql.startswith(("SET ", "USE ")):
            return None
        return pymysql.err.OperationalError(code, message)
    return FakeConn(fail=fail)


@pytest.mark.parametrize("query, code", REPLAY_ERRORS)
def test_replayed_ddl_is_already_applied(query, code):
    assert code in REPLAYED_DDL_ERRORS
    assert execute_ddl(ddl_conn(code), query, "r", None, replay=True) == "already applied"
    # the same error outside a replay is a real failure
    with pytest.raises(pymysql.MySQLError):
        execute_ddl(ddl_conn(code), query, "r", None, replay=False)


@pytest.mark.parametrize("code", [1064, 1045, 1142, 2013, 4031, 1062, 1213])
def test_errors_that_do_not_mean_already_applied(code):
    # syntax, privileges, a lost connection, the MySQL 8 inactivity disconnect (4031):
    # the DDL did not run, so it must not be skipped
    assert code not in REPLAYED_DDL_ERRORS
    with pytest.raises(pymysql.MySQLError):
        execute_ddl(ddl_conn(code), "ALTER TABLE t ADD COLUMN c INT", "r", None, replay=True)


def test_execute_ddl_session():
    conn = FakeConn()
    assert execute_ddl(conn, "CREATE TABLE t (a INT)", "we`ird", "ANSI_QUOTES,STRICT_TRANS_TABLES", False) == "applied"
    assert conn.sql == [
        "SET SESSION time_zone = '+00:00'",
        ("SET SESSION sql_mode = %s", ("ANSI_QUOTES,STRICT_TRANS_TABLES",)),
        "USE `we``ird`",
        "CREATE TABLE t (a INT)",
        "SET SESSION timestamp = DEFAULT",  # the row session again (sink.ddl_session)
        "SET SESSION time_zone = '+00:00'",
    ]


def test_execute_ddl_keeps_the_sql_modes_the_server_knows():
    def fail(sql, args):
        if args and "NO_AUTO_CREATE_USER" in args[0]:
            return pymysql.err.OperationalError(1231, "Variable 'sql_mode' can't be set")
        if sql.startswith("USE "):
            return pymysql.err.OperationalError(1049, "Unknown database")
        return None
    conn = FakeConn(fail=fail)
    assert execute_ddl(conn, "CREATE DATABASE d", "d", "STRICT_TRANS_TABLES,NO_AUTO_CREATE_USER,ANSI_QUOTES",
                       False) == "applied"
    modes = [s[1][0] for s in conn.sql if isinstance(s, tuple)]
    assert modes[-1] == "STRICT_TRANS_TABLES,ANSI_QUOTES"
    assert "CREATE DATABASE d" in conn.sql


def test_dml_session_settings():
    assert "SET SESSION time_zone = '+00:00'" in mysql_sink.DML_SESSION
    mode = next(s for s in mysql_sink.DML_SESSION if "sql_mode" in s)
    assert "NO_BACKSLASH_ESCAPES" not in mode and "ANSI_QUOTES" not in mode  # literals rely on both


def test_sink_error_payload_is_json():
    e = SinkError("x", pymysql.err.OperationalError(1205, "Lock wait timeout"))
    body = str(e)[len(SinkError.MARK):-len(":END")]
    assert json.loads(body)["retryable"] is True
