"""pull's compiled path writes what its Python path writes, byte for byte.

The compiled path: the compiled reader's Window (source/compiled_window.pxi) follows the
transactions and writes each row it decodes, with its key texts, into the event writer's
compiled columns (core/compiled_columns.pyx); the key stamper keys the other rows there in its
batches.  The reference (CDCFLOW_BINLOG_READER=python): the Python reader, an Event per row, the
stamper's batches of Events, the writer's tuples.  Both read the same window through
stages.pull.read_sequentially with key texts, and must give the same Parquet file (its bytes),
the same key spans (tangled keys included) and the same reader state, over the type matrix
(every column kind, the compiled reader's and mysql-replication's tables, unique keys of several
kinds), every character set of the server (keys and unique keys of its text), keys that fold and
a DDL that changes a key mid-window, savepoints and rollbacks, rows of only NULLs, a
bench-shaped window of small transactions, and row groups of a few rows.
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import msgspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from charset_matrix import charset_tables, charsets, raw, spread, text
from type_matrix import COMPILED_COLUMNS, reader_tables

from cdcflow.core import tso
from cdcflow.config.keys import ChangefeedConfig
from cdcflow.core.uri import parse_source_uri
from cdcflow.ddl.tracker import SchemaTracker
from cdcflow.source import binlog_events
from cdcflow.source.binlog import Position
from cdcflow.stages import contracts
from cdcflow.stages.engine import Engine
from cdcflow.stages.pull import read_sequentially
from cdcflow.store.events import RunFolder
from cdcflow_devtools import bench_workload
from cdcflow_devtools.mariadb import HOST, ROOT_PASSWORD, ROOT_USER

S = "pullcols"


def _pull(up, down, start: Position, head: Position, folder: RunFolder, batch_rows: int, target_ts: int = 0):
    """The window pulled with key texts: the event file's bytes, the spans, what pull read."""
    sink = {"host": HOST, "port": down.port, "user": ROOT_USER, "password": ROOT_PASSWORD}
    cfg = ChangefeedConfig(pull_batch_rows=batch_rows)
    cycle = SimpleNamespace(source=parse_source_uri(up.uri), config=cfg, engine=Engine.of(cfg),
                            changefeed_id="cols-feed", folder=folder)
    prev_ts = tso.compose(1_000_000)
    window = contracts.Window(start_ts=prev_ts, start_pos=start, head=head, head_tso=prev_ts, target_ts=target_ts)
    pulled, _reader = read_sequentially(cycle, window, 4545, {"tracker": SchemaTracker(), "sink": sink,
                                                              "sql_mode": None})
    folder.persist()  # a window within the keep bounds is written when handed on (store.events.Keeper)
    with open(folder.part_file("raw"), "rb") as f:
        data = f.read()
    return data, [msgspec.to_builtins(s) for s in contracts.KEY_SPANS.read(folder)], pulled


def _both(up, down, start: Position, head: Position, tmp_path, monkeypatch, batch_rows: int = 50_000,
          target_ts: int = 0, pulled: list | None = None) -> list[dict]:
    """The window pulled both ways and compared; its events (what pull read, to `pulled`)."""
    got = {}
    for way in ("python", "compiled"):
        monkeypatch.setenv(binlog_events.READER_ENV, way)
        if way == "compiled":
            assert binlog_events.compiled_module() is not None, "the compiled reader is not built: run make setup"
        folder = RunFolder(str(tmp_path), way, f"{batch_rows}-{head.file}-{head.pos}-{target_ts}")
        got[way] = _pull(up, down, start, head, folder, batch_rows, target_ts)
    (python, python_spans, python_pulled), (compiled, compiled_spans, compiled_pulled) = got["python"], got["compiled"]
    table, reference = pq.read_table(pa.BufferReader(compiled)), pq.read_table(pa.BufferReader(python))
    for name in reference.column_names:  # the first column that differs, named
        assert table[name].to_pylist() == reference[name].to_pylist(), name
    assert compiled == python
    assert compiled_spans == python_spans
    assert compiled_pulled == python_pulled
    if pulled is not None:
        pulled.append(python_pulled)
    if any(s["table"] == "u" for s in python_spans):  # keys that share a unique value were found
        assert [s["tangled"] for s in python_spans if s["table"] == "u"] == [['[1]', '[2]', '[3]', '[4]', '[5]']]
    return reference.to_pylist()


def test_every_column_kind_and_unique_keys_write_the_same_file(mariadb_pair, monkeypatch, tmp_path):
    up, down = mariadb_pair
    db = f"{S}_types"
    up.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}")
    start = Position(*up.binlog_head())
    names = ", ".join(d.split()[0] for d in COMPILED_COLUMNS)
    up.execute(
        *reader_tables(db),
        # keys of the compiled reader's kinds: their texts are the image's values as they are
        f"CREATE TABLE {db}.keyed ({', '.join(COMPILED_COLUMNS)}, UNIQUE KEY (vc, id), UNIQUE KEY (i, id), "
        "UNIQUE KEY (d65, f, l1, id), UNIQUE KEY (bn, da, id)) DEFAULT CHARSET = utf8mb4",
        f"ALTER TABLE {db}.keyed DROP PRIMARY KEY, ADD PRIMARY KEY (id, da, dt, d65, bn)",
        f"INSERT INTO {db}.keyed SELECT {names} FROM {db}.t WHERE da IS NOT NULL AND dt IS NOT NULL "
        "AND d65 IS NOT NULL AND bn IS NOT NULL",
        f"UPDATE {db}.fast SET vc = CONCAT(IFNULL(vc, ''), '\"\\\\'), l1 = 'àé', bn = x'00' WHERE id < 5",
        f"UPDATE {db}.keyed SET vc = CONCAT(IFNULL(vc, ''), '\"\\\\\t'), bn = x'00ff' WHERE id < 5",
        f"UPDATE {db}.keyed SET d65 = -d65, f = f / 3 WHERE id >= 2",
        f"DELETE FROM {db}.fast WHERE id = 2",
        f"DELETE FROM {db}.keyed WHERE id = 3",
        f"UPDATE {db}.fb SET i4 = '10.0.0.0' WHERE id = 1",
    )
    events = _both(up, down, start, Position(*up.binlog_head()), tmp_path, monkeypatch)
    keyed = [e for e in events if e["table"] == "keyed" and e["op"] != "ddl"]
    assert keyed and all(e["after_key"] or e["before_key"] for e in keyed)


def test_every_character_set_writes_the_same_file(mariadb_pair, monkeypatch, tmp_path):
    """A table of each character set in its default collation and one in its collation of the
    highest id, its CHAR the key and its VARCHAR a unique key: keys that fold (weighed by the
    downstream, keyed by the stamper) and keys that do not (keyed by the compiled reader)."""
    up, down = mariadb_pair
    db = f"{S}_charsets"
    sets = charsets(up)
    tables = charset_tables(up, sets)
    up.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}")
    start = Position(*up.binlog_head())
    up.execute(*[f"CREATE TABLE {db}.{table} (id INT NOT NULL, c CHAR(10) NOT NULL PRIMARY KEY, v VARCHAR(120), "
                 f"t TEXT, UNIQUE KEY (v)) DEFAULT CHARSET = {cs.name}{collation}"
                 for table, (cs, collation) in tables.items()])
    with up.connect(db) as conn, conn.cursor() as cur:
        for table, (cs, _) in tables.items():
            c, v, t = spread(cs.chars, 10), spread(cs.chars, 120, 1), cs.chars
            cur.execute(f"INSERT INTO {table} VALUES (1, %s, %s, %s)",
                        [raw(x) if cs.textless else text(x) for x in (c, v, t)])
            cur.execute(f"INSERT INTO {table} VALUES (2, 'k2', NULL, NULL)")
            cur.execute(f"UPDATE {table} SET c = 'k3', id = 3 WHERE id = 2")
            cur.execute(f"DELETE FROM {table} WHERE id = 1")
    events = _both(up, down, start, Position(*up.binlog_head()), tmp_path, monkeypatch)
    assert {e["table"] for e in events if e["op"] == "insert"} == set(tables)


def _transactions(up, db: str) -> None:
    """Savepoints, rollbacks, rows of only NULLs, a key that folds, a DDL that changes a key."""
    up.execute(f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB",
               f"CREATE TABLE {db}.m (id INT PRIMARY KEY) ENGINE=MyISAM",
               f"CREATE TABLE {db}.k (a INT, s VARCHAR(10))",
               f"CREATE TABLE {db}.ci (v VARCHAR(8) COLLATE utf8mb4_general_ci PRIMARY KEY, n INT)",
               # unique values handed from key to key (as tests/stages/test_pull_keys.py's t_uniq): tangled keys
               f"CREATE TABLE {db}.u (id INT PRIMARY KEY, email VARCHAR(20) COLLATE utf8mb4_general_ci NOT NULL, "
               "code INT NULL, n VARCHAR(10), UNIQUE KEY ux_email (email), UNIQUE KEY ux_code (code), "
               "UNIQUE KEY ux_two (n, code))")
    conn = up.connect()
    try:
        with conn.cursor() as cur:
            # a ROLLBACK TO and a ROLLBACK after rows of a MyISAM table, which the binlog keeps
            for stmt in ("BEGIN", f"INSERT INTO {db}.t VALUES (1, 'a'), (2, 'b')", "SAVEPOINT s1",
                         f"INSERT INTO {db}.m VALUES (1)", "SAVEPOINT s2", f"UPDATE {db}.t SET v = 'B' WHERE id = 2",
                         "RELEASE SAVEPOINT s2", "ROLLBACK TO s1", f"INSERT INTO {db}.t VALUES (3, 'c')", "COMMIT",
                         "BEGIN", f"INSERT INTO {db}.t VALUES (4, 'd')", f"INSERT INTO {db}.m VALUES (2)", "ROLLBACK",
                         f"INSERT INTO {db}.t VALUES (5, 'é')",
                         f"INSERT INTO {db}.k VALUES (1, 'x'), (NULL, NULL)", f"INSERT INTO {db}.k VALUES (NULL, NULL)",
                         f"UPDATE {db}.k SET a = NULL, s = NULL WHERE a = 1",
                         f"DELETE FROM {db}.k WHERE a IS NULL LIMIT 1",
                         f"INSERT INTO {db}.ci VALUES ('a', 1), ('B ', 2)", f"UPDATE {db}.ci SET v = 'A' WHERE n = 1",
                         f"INSERT INTO {db}.u VALUES (1, 'a@x', NULL, 'p'), (2, 'b@x', 5, 'q'), (3, 'c@x', 7, 'É')",
                         f"UPDATE {db}.u SET email = 'A@x ' WHERE id = 1", f"UPDATE {db}.u SET code = NULL WHERE id = 2",
                         f"DELETE FROM {db}.u WHERE id = 1", f"INSERT INTO {db}.u VALUES (4, 'a@x', NULL, 'r')",
                         f"UPDATE {db}.u SET email = 'd@x', code = 5 WHERE id = 3",
                         f"INSERT INTO {db}.u VALUES (5, 'C@X', 8, 'é'), (6, 'q\\\"', 9, 'q')",
                         f"ALTER TABLE {db}.t DROP PRIMARY KEY, ADD PRIMARY KEY (v)",
                         f"UPDATE {db}.t SET id = id + 10", f"DELETE FROM {db}.t WHERE v = 'c'"):
                cur.execute(stmt)
    finally:
        conn.close()


@pytest.mark.parametrize("batch_rows", [50_000, 7])
def test_transactions_and_a_bench_shaped_window_write_the_same_file(mariadb_pair, monkeypatch, tmp_path,
                                                                     batch_rows):
    up, down = mariadb_pair
    db = f"{S}_trx{batch_rows}"
    up.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}")
    start = Position(*up.binlog_head())
    bench_workload.fill(up, db, 400)
    up.execute(f"FOR i IN 1..60 DO UPDATE {db}.accounts SET balance = balance + 1.5, "
               "updated = updated + INTERVAL 1 SECOND WHERE id = i; END FOR",
               f"FOR i IN 1..40 DO UPDATE {db}.accounts SET email = CONCAT('x', id, '@example.com') "
               "WHERE id = i; END FOR",
               f"FOR i IN 1..40 DO DELETE FROM {db}.events WHERE id = i; END FOR",
               f"UPDATE {db}.items SET qty = qty + 1, price = price * 3 WHERE id BETWEEN 1 AND 50",
               f"INSERT INTO {db}.items SELECT id + 1000, CONCAT('sku-', id + 1000), name, qty, price "
               f"FROM {db}.items WHERE id <= 30")
    _transactions(up, db)
    events = _both(up, down, start, Position(*up.binlog_head()), tmp_path, monkeypatch, batch_rows)
    assert {e["table"] for e in events} >= {"accounts", "orders", "events", "items", "t", "k", "ci", "u"}


def test_a_new_binlogs_header_ends_the_window_at_the_head_unless_target_ts_ended_it(mariadb_pair, monkeypatch,
                                                                                     tmp_path):
    """A window whose last transaction is followed by a new binlog's header alone (FLUSH BINARY
    LOGS, as after a restart) ends at the head, both ways; one that target-ts ended before the
    transaction after that header ends at the new binlog's start (the compiled Window ends its
    records at target-ts as it does at the head: the boundary must not move to the head then)."""
    up, down = mariadb_pair
    db = f"{S}_header"
    up.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}", f"CREATE TABLE {db}.t (id INT PRIMARY KEY)")
    start = Position(*up.binlog_head())
    up.execute(f"INSERT INTO {db}.t VALUES (1)")
    head = Position(*up.new_binlog())
    pulled: list = []
    events = _both(up, down, start, head, tmp_path, monkeypatch, pulled=pulled)
    assert [(e["table"], e["op"]) for e in events if e["op"] != "ddl"] == [("t", "insert")]
    assert (pulled[0].end_pos.file, pulled[0].end_pos.pos) == (head.file, head.pos)
    time.sleep(1.1)  # the next transaction in a later second: a target-ts between the two
    up.execute(f"INSERT INTO {db}.t VALUES (2)")
    later = Position(*up.binlog_head())
    target = pulled[0].end_ts + 1
    events = _both(up, down, start, later, tmp_path, monkeypatch, target_ts=target, pulled=pulled)
    assert [e["after"] for e in events if e["op"] != "ddl"] == ['{"id":1}'] and pulled[1].stopped_at_target
    assert (pulled[1].end_pos.file, pulled[1].end_pos.pos) == (head.file, 4)
