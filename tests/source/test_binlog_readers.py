"""The compiled binlog reader (source/compiled_reader.pyx) gives exactly the events of the Python
reader, the reference: every field of every Event and the reader's state after the window,
over the type matrix (strict and lax values, the fixed-size binaries, the pre-5.6 temporal
formats, a table of only the columns the compiled reader decodes itself), a statement in a
non-UTF-8 session, savepoints and rollbacks, a bench-shaped window of small transactions, and
random integers, DECIMALs, dates and times of every width the reader writes the digits of.
The writers' literals of every image read are compared with the decoded values' too.
"""

from __future__ import annotations

import logging
import math
import random
import struct
import sys

import pytest
from charset_matrix import charset_tables, charsets, raw, spread, text
from type_matrix import LAX_ROWS, ROWS, reader_tables

import cdcflow.source
from cdcflow.core.row_codec import decode_image, raw_image, raw_values, sql_literal
from cdcflow.core.uri import parse_source_uri
from cdcflow.source import binlog_events
from cdcflow.source.binlog import BinlogReader, Position
from cdcflow_devtools import bench_workload

S = "readers"
OLD_COLUMNS = "id INT PRIMARY KEY, dt DATETIME, dt3 DATETIME(3), tm TIME(2), ts TIMESTAMP(6) NULL"


def _read(up, start: Position, head: Position, reader: str, monkeypatch, **kw) -> tuple[list, tuple, int]:
    """The window's events and the reader's state, read by `reader` ("python" or "compiled");
    and how many rows events the compiled reader handed to mysql-replication.  `kw`: the
    BinlogReader's (exact_head, target_ts)."""
    slow_rows = []
    with monkeypatch.context() as m:
        if reader == "python":
            m.setenv(binlog_events.READER_ENV, "python")
        else:
            m.setenv(binlog_events.READER_ENV, "compiled")
            assert binlog_events.compiled_module() is not None, "the compiled reader is not built: run make setup"
            record = binlog_events.Slow.record

            def counted(self, payload):
                rec = record(self, payload)
                if rec is not None and rec[0] == binlog_events.ROWS:
                    slow_rows.append(rec[3].table)
                return rec
            m.setattr(binlog_events.Slow, "record", counted)
        events = []
        r = BinlogReader(parse_source_uri(up.uri), 9494, start, head, **{"prev_ts": 1, **kw})
        r.read(events.append)
    state = (r.last_pos, r.last_ts, r.transactions, sorted(r.aborted_ts), r.rolled_back, str(r.read_gtids))
    return events, state, slow_rows


def _both(up, start, head, monkeypatch, **kw) -> tuple[list, list]:
    """The window read both ways, compared; the events and the tables of the rows events the
    compiled reader handed on (`kw`: _read's)."""
    python, python_state, _ = _read(up, start, head, "python", monkeypatch, **kw)
    compiled, compiled_state, slow = _read(up, start, head, "compiled", monkeypatch, **kw)
    assert compiled_state == python_state
    assert len(compiled) == len(python)
    for c, p in zip(compiled, python):
        assert c == p
    if compiled:
        _literals_agree(compiled)
    return compiled, slow


def _ends_at(up, start, head, monkeypatch, **kw) -> Position:
    """Where both readers leave the boundary after the window (the same, and no event read)."""
    python, python_state, _ = _read(up, start, head, "python", monkeypatch, **kw)
    compiled, compiled_state, _ = _read(up, start, head, "compiled", monkeypatch, **kw)
    assert python == compiled == [] and python_state == compiled_state
    return python_state[0]


def _literals_agree(events) -> None:
    """The writers' literals read from each image's text (both ways: sink.row_writer's RAW form)
    are those of its decoded values (sql_literal of decode_image's), as apply wrote them before."""
    from cdcflow.sink import compiled_literals  # lazy: a module make setup builds (a missing build fails here)

    images = [img for e in events if e.op != "ddl" for img in (e.before, e.after) if img is not None]
    assert images
    for text in images:
        want = "(" + ", ".join(map(sql_literal, decode_image(text).values())) + ")"
        raw = raw_image(text)
        assert raw_values(raw, tuple(raw)) == want
        img = compiled_literals.scan(text)
        assert compiled_literals.image_values([img], img.names) == [want]


def test_the_type_matrix_decodes_identically_both_ways(mariadb_pair, monkeypatch):
    up, _ = mariadb_pair
    db = f"{S}_types"
    up.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}")
    up.execute("SET GLOBAL mysql56_temporal_format = OFF")
    try:
        up.execute(f"CREATE TABLE {db}.old ({OLD_COLUMNS})")
    finally:
        up.execute("SET GLOBAL mysql56_temporal_format = ON")
    start = Position(*up.binlog_head())
    up.execute(
        *reader_tables(db),
        f"UPDATE {db}.fast SET vc = CONCAT(IFNULL(vc, ''), '\"\\\\'), l1 = 'àé', bn = x'00' WHERE id < 5",
        f"DELETE FROM {db}.fast WHERE id = 2",
        f"UPDATE {db}.fb SET i4 = '10.0.0.0' WHERE id = 1",
        f"INSERT INTO {db}.old VALUES (1, '2024-02-29 23:59:58', '0000-00-00 00:00:00.5', '-12:00:00.01', "
        "'2038-01-19 03:14:07.999999'), (2, NULL, NULL, NULL, NULL)",
    )
    head = Position(*up.binlog_head())
    events, slow = _both(up, start, head, monkeypatch)
    rows = [e for e in events if e.op != "ddl"]
    assert {e.table for e in rows} == {"t", "fast", "fb", "old"}
    assert len([e for e in rows if e.table == "fast"]) == len(ROWS + LAX_ROWS) + 4 + 1  # inserts, updates, a delete
    # the compiled reader decoded the tables of its columns itself, and handed on those with others
    assert "fast" not in slow and "fb" not in slow and {"t", "old"} <= set(slow)


def test_every_character_set_reads_as_the_server_reads_it_both_ways(mariadb_pair, monkeypatch):
    """Tables of each character set of the server (tests/charset_matrix.py), of text columns
    only, which the compiled reader reads itself: a CHAR and a VARCHAR of samples and a TEXT of
    the whole repertoire read, both ways, as the server's own text of them (binary's as bytes).
    One table in the set's default collation, one in its collation of the highest id (for the
    Unicode sets a UCA 14 one, which mysql-replication's table of ids does not know)."""
    up, _ = mariadb_pair
    db = f"{S}_charsets"
    sets = charsets(up)
    tables = charset_tables(up, sets)
    up.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}",
               *[f"CREATE TABLE {db}.{table} (id INT PRIMARY KEY, c CHAR(10), v VARCHAR(120), t TEXT) "
                 f"DEFAULT CHARSET = {cs.name}{collation}" for table, (cs, collation) in tables.items()])
    values = {cs.name: [spread(cs.chars, 10), spread(cs.chars, 120, 1), cs.chars] for cs in sets}
    start = Position(*up.binlog_head())
    with up.connect(db) as conn, conn.cursor() as cur:
        for table, (cs, _) in tables.items():
            cur.execute(f"INSERT INTO {table} VALUES (1, %s, %s, %s)",
                        [raw(v) if cs.textless else text(v) for v in values[cs.name]])
    events, slow = _both(up, start, Position(*up.binlog_head()), monkeypatch)
    assert not slow  # the compiled reader read every table itself
    read = {e.table: decode_image(e.after) for e in events if e.op == "insert"}
    assert set(read) == set(tables)
    for table, (cs, _) in tables.items():
        c, v, t = values[cs.name]
        # a binary CHAR is BINARY: its value padded with zero bytes
        want = [raw(c).ljust(10, b"\0"), raw(v), raw(t)] if cs.textless else [text(c), text(v), text(t)]
        assert [read[table][k] for k in "cvt"] == want, table


def test_a_non_utf8_session_savepoints_and_rollbacks_read_identically(mariadb_pair, monkeypatch):
    up, _ = mariadb_pair
    db = f"{S}_trx"
    up.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}",
               f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(20)) ENGINE=InnoDB",
               f"CREATE TABLE {db}.m (id INT PRIMARY KEY) ENGINE=MyISAM")
    start = Position(*up.binlog_head())
    gbk = up.connect(None, charset="gbk")  # the statement's bytes are GBK
    try:
        with gbk.cursor() as cur:
            cur.execute(f"ALTER TABLE {db}.t COMMENT '你好'")
    finally:
        gbk.close()
    conn = up.connect()
    try:
        with conn.cursor() as cur:
            for stmt in ("BEGIN", f"INSERT INTO {db}.t VALUES (1, 'a')", "SAVEPOINT s1",
                         f"INSERT INTO {db}.m VALUES (1)", f"INSERT INTO {db}.t VALUES (2, 'b')", "ROLLBACK TO s1",
                         f"INSERT INTO {db}.t VALUES (3, 'c')", "COMMIT",
                         "BEGIN", f"INSERT INTO {db}.m VALUES (2)", f"INSERT INTO {db}.t VALUES (4, 'd')", "ROLLBACK",
                         f"INSERT INTO {db}.t VALUES (5, 'é')"):
                cur.execute(stmt)
    finally:
        conn.close()
    head = Position(*up.binlog_head())
    events, _slow = _both(up, start, head, monkeypatch)
    assert any(e.op == "ddl" and "你好" in e.ddl_query for e in events)
    assert [e.after for e in events if e.table == "t" and e.op == "insert"][-1] == '{"id":5,"v":"é"}'


def test_rows_of_only_nulls_read_identically(mariadb_pair, monkeypatch):
    """A row whose every column is NULL is its null bitmap alone, one byte, in the event: the
    last row of an event is read however short it is (a keyless table's lost row or delete
    leaves one row too many downstream)."""
    up, _ = mariadb_pair
    db = f"{S}_nulls"
    up.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}", f"CREATE TABLE {db}.k (a INT, s VARCHAR(10))")
    start = Position(*up.binlog_head())
    up.execute(f"INSERT INTO {db}.k VALUES (1, 'x'), (NULL, NULL)", f"INSERT INTO {db}.k VALUES (NULL, NULL)",
               f"UPDATE {db}.k SET a = NULL, s = NULL WHERE a = 1", f"DELETE FROM {db}.k WHERE a IS NULL LIMIT 1")
    head = Position(*up.binlog_head())
    events, slow = _both(up, start, head, monkeypatch)
    nulls = '{"a":null,"s":null}'
    assert [(e.op, e.before, e.after) for e in events] == [
        ("insert", None, '{"a":1,"s":"x"}'), ("insert", None, nulls), ("insert", None, nulls),
        ("update", '{"a":1,"s":"x"}', nulls), ("delete", nulls, None)]
    assert slow == []  # the compiled reader read them itself


def test_wide_images_and_long_rows_events_read_identically(mariadb_pair, monkeypatch):
    """Images many times the reader's first buffer (4 KiB) and rows events of more rows than its
    first spans (64): what makes each of its buffers grow (core/growth.pxd) reads as the
    reference reads it."""
    up, _ = mariadb_pair
    db = f"{S}_wide"
    up.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}",
               f"CREATE TABLE {db}.w (id INT PRIMARY KEY, t LONGTEXT, b LONGBLOB, "
               "u VARCHAR(20) CHARACTER SET utf8mb4) CHARACTER SET latin1")
    start = Position(*up.binlog_head())
    up.execute(f"INSERT INTO {db}.w SELECT seq, REPEAT('\u00e9', 40000), REPEAT(x'00ff27', 30000), '\u00fc\U0001f600' "
               f"FROM {db}.seq_1_to_3",
               f"INSERT INTO {db}.w SELECT seq + 100, CONCAT('r', seq), NULL, NULL FROM {db}.seq_1_to_1500",
               f"UPDATE {db}.w SET t = CONCAT(t, 'x') WHERE id <= 3")
    head = Position(*up.binlog_head())
    events, slow = _both(up, start, head, monkeypatch)
    assert [e.op for e in events] == ["insert"] * 1503 + ["update"] * 3 and not slow
    assert min(len(e.after) for e in events[:3]) > 100_000  # 40,000 characters and 90,000 bytes
    assert len(events[-1].before) > 100_000 and events[-1].after != events[-1].before


def _bench_shaped(up, db: str) -> Position:
    """Small transactions on the bench's tables in `db` (filled first); returns their start."""
    bench_workload.fill(up, db, 800)
    start = Position(*up.binlog_head())
    up.execute(f"FOR i IN 1..150 DO UPDATE {db}.accounts SET balance = balance + 1.5, "
               "updated = updated + INTERVAL 1 SECOND WHERE id = i; END FOR",
               f"FOR i IN 1..100 DO UPDATE {db}.orders SET note = CONCAT('upd ', i) WHERE id = i; END FOR",
               f"FOR i IN 1..100 DO DELETE FROM {db}.events WHERE id = i; END FOR",
               f"UPDATE {db}.items SET qty = qty + 1, price = price * 3 WHERE id BETWEEN 1 AND 150",
               f"INSERT INTO {db}.items SELECT id + 1000, CONCAT('sku-', id + 1000), name, qty, price "
               f"FROM {db}.items WHERE id <= 100")
    return start


def test_a_bench_shaped_window_reads_identically(mariadb_pair, monkeypatch):
    up, _ = mariadb_pair
    start = _bench_shaped(up, f"{S}_bench")
    head = Position(*up.binlog_head())
    events, slow = _both(up, start, head, monkeypatch)
    assert len(events) == 150 + 100 + 100 + 150 + 100 and not slow
    # a window whose head (a bounded one need not be an event's start) lies in the first bytes
    # of a transaction's GTID event
    gtids = [pos for _f, pos, kind, *_ in up.query(f"SHOW BINLOG EVENTS IN '{start.file}' FROM {start.pos} LIMIT 40")
             if kind == "Gtid"]
    for at in (gtids[5] + 1, gtids[5] + 30):
        bounded, _slow = _both(up, start, Position(start.file, at), monkeypatch)
        assert len(bounded) in (5, 6)


def test_a_new_binlogs_header_alone_moves_the_boundary_to_an_exact_head_both_ways(mariadb_pair, monkeypatch):
    """A window over a new binlog's format description, GTID list and binlog checkpoint alone
    (FLUSH BINARY LOGS, as after a restart) ends at the head when the head is the upstream's
    (exact_head), whether the dump ends there or a transaction begins at it: the next window
    does not read them again.  A byte bound (max-window-bytes') may fall inside an event, and
    a window that stopped at target-ts leaves the rest to the next: the boundary stays at the
    new binlog's start."""
    up, _ = mariadb_pair
    up.execute(f"DROP DATABASE IF EXISTS {S}_header", f"CREATE DATABASE {S}_header",
               f"CREATE TABLE {S}_header.t (id INT PRIMARY KEY)")
    start = Position(*up.binlog_head())
    head = Position(*up.new_binlog())
    new = head.file
    assert new != start.file and head.pos > 4
    assert _ends_at(up, start, head, monkeypatch, exact_head=True) == head  # the dump ends at the head
    assert _ends_at(up, start, head, monkeypatch) == Position(new, 4)  # a byte bound: the rotate's boundary
    up.execute(f"INSERT INTO {S}_header.t VALUES (1)")
    assert _ends_at(up, start, head, monkeypatch, exact_head=True) == head  # a transaction begins at the head
    later = Position(*up.binlog_head())
    assert _ends_at(up, start, later, monkeypatch, exact_head=True, target_ts=2) == Position(new, 4)
    events, _slow = _both(up, start, later, monkeypatch, exact_head=True)
    assert [(e.op, e.after) for e in events] == [("insert", '{"id":1}')]
    assert _read(up, start, later, "compiled", monkeypatch, exact_head=True)[1][0] == later  # its commit


class _Flaky:
    """A stream connection whose socket file gives a few small reads, then fails."""

    def __init__(self, conn, reads: int):
        self._conn, self._reads, self._rfile = conn, reads, self

    def read1(self, n: int) -> bytes:
        self._reads -= 1
        if self._reads < 0:
            raise OSError("connection reset by the test")
        return self._conn._rfile.read1(min(n, 4096))

    def __getattr__(self, name):
        return getattr(self._conn, name)


def test_a_lost_dump_connection_is_dumped_again_from_the_last_event(mariadb_pair, monkeypatch):
    up, _ = mariadb_pair
    start = _bench_shaped(up, f"{S}_lost")
    head = Position(*up.binlog_head())
    python, python_state, _ = _read(up, start, head, "python", monkeypatch)
    monkeypatch.setenv(binlog_events.READER_ENV, "compiled")
    real = binlog_events.compiled_module()
    connections = []

    class Module:  # the compiled module, its first connection failing after 20 reads
        @staticmethod
        def Records(conn, *args):
            connections.append(conn)
            return real.Records(_Flaky(conn, 20) if len(connections) == 1 else conn, *args)

    monkeypatch.setattr(binlog_events, "compiled_module", lambda: Module)
    compiled, compiled_state, _ = _read(up, start, head, "compiled", monkeypatch)
    assert len(connections) == 2  # dumped again once
    assert compiled_state == python_state and compiled == python


def test_without_the_extension_the_python_reader_runs_and_says_so_once(monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "cdcflow.source.compiled_reader", None)  # an import of it fails
    monkeypatch.delattr(cdcflow.source, "compiled_reader", raising=False)
    monkeypatch.setenv(binlog_events.READER_ENV, "compiled")
    monkeypatch.setattr(binlog_events, "_said_missing", False)
    with caplog.at_level(logging.WARNING, logger=binlog_events.__name__):
        assert binlog_events.compiled_module() is None
        assert binlog_events.compiled_module() is None
    assert [r.getMessage() for r in caplog.records].count(caplog.records[0].getMessage()) == 1
    assert "Python reader" in caplog.records[0].getMessage() and len(caplog.records) == 1


@pytest.mark.parametrize("value", ["python", "PYTHON"])
def test_the_python_reader_can_be_asked_for(monkeypatch, value):
    monkeypatch.setenv(binlog_events.READER_ENV, value)
    assert binlog_events.compiled_module() is None


@pytest.mark.parametrize("value", ["Compiled", None])
def test_the_compiled_reader_can_be_asked_for_and_is_the_default(monkeypatch, value):
    if value is None:
        monkeypatch.delenv(binlog_events.READER_ENV, raising=False)
    else:
        monkeypatch.setenv(binlog_events.READER_ENV, value)
    assert binlog_events.compiled_module() is not None, "the compiled reader is not built: run make setup"


def test_floats_and_escaped_strings_read_identically(mariadb_pair, monkeypatch):
    """The compiled reader writes a float's text and an escaped string's as msgspec does itself:
    doubles and floats of every exponent (repr's fixed and exponent forms, those msgspec writes
    fixed), and strings of every byte below 0x20, quotes and backslashes."""
    up, _ = mariadb_pair
    db = f"{S}_floats"
    rng = random.Random(57)
    doubles = [0.0, -0.0, 1e-5, 2.5e-5, 1e-6, 1.5e-7, 1e15, 1e16, 1e22, 5e-324, 1.7976931348623157e308, 0.1, 100.0]
    doubles += [rng.random() * 10 ** rng.randint(-12, 20) * rng.choice([1, -1]) for _ in range(600)]
    doubles += [struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(600)]
    doubles = [d for d in doubles if math.isfinite(d)]
    texts = ["".join(chr(c) for c in range(32)) + '"\\', 'a"b', "\\", "\n\t\r\b\f", "é\x01€\x1f"]
    up.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}",
               f"CREATE TABLE {db}.f (id INT PRIMARY KEY, d DOUBLE, f FLOAT, s VARCHAR(60)) DEFAULT CHARSET = utf8mb4")
    start = Position(*up.binlog_head())
    with up.connect(db) as conn, conn.cursor() as cur:
        cur.executemany("INSERT INTO f VALUES (%s, %s, %s, %s)",
                        [(i, d, d if abs(d) < 3e38 else None, texts[i % len(texts)]) for i, d in enumerate(doubles)])
        conn.commit()
    events, slow = _both(up, start, Position(*up.binlog_head()), monkeypatch)
    assert not slow and len([e for e in events if e.op == "insert"]) == len(doubles)


# (type, lowest, highest) of every integer width, signed and unsigned
_INTS = [("TINYINT", -2**7, 2**7 - 1), ("TINYINT UNSIGNED", 0, 2**8 - 1), ("SMALLINT", -2**15, 2**15 - 1),
         ("SMALLINT UNSIGNED", 0, 2**16 - 1), ("MEDIUMINT", -2**23, 2**23 - 1), ("MEDIUMINT UNSIGNED", 0, 2**24 - 1),
         ("INT", -2**31, 2**31 - 1), ("INT UNSIGNED", 0, 2**32 - 1), ("BIGINT", -2**63, 2**63 - 1),
         ("BIGINT UNSIGNED", 0, 2**64 - 1)]
# (precision, scale) of DECIMALs: every group length of the integer and the fraction parts
_DECIMALS = [(1, 0), (9, 0), (10, 0), (18, 9), (20, 5), (12, 3), (9, 9), (17, 8), (65, 30), (65, 0)]


def _int_value(rng: random.Random, lo: int, hi: int) -> int:
    """An edge, a small value or any value of the range: each digit count gets its share."""
    pick = rng.random()
    if pick < 0.1:
        return rng.choice([lo, hi, 0, min(hi, 1), max(lo, -1)])
    return rng.randint(max(lo, -(10 ** rng.randint(0, 20))), min(hi, 10 ** rng.randint(0, 20)))


def _decimal_value(rng: random.Random, precision: int, scale: int) -> str:
    whole = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, precision - scale))) or "0"
    frac = "".join(rng.choice("0123456789") for _ in range(rng.randint(0, scale)))
    return ("-" if rng.random() < 0.4 else "") + whole + ("." + frac if frac else "")


def _temporal_values(rng: random.Random) -> tuple[str, str, str]:
    """A DATE (zero parts now and then), a DATETIME(6) and a TIMESTAMP(6) within its range, as text."""
    y, mo, d = rng.randint(0, 9999), rng.randint(0, 12), rng.randint(0, 31) if rng.random() < 0.2 else rng.randint(1, 28)
    h, mi, s, us = rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59), rng.choice([0, 1, 999999, rng.randint(0, 999999)])
    secs = rng.randint(1, 2**31 - 1)
    ts = f"FROM_UNIXTIME({secs}.{rng.randint(0, 999999):06d})"
    return f"'{y:04d}-{mo:02d}-{d:02d}'", f"'{y:04d}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{s:02d}.{us:06d}'", ts


def test_random_numbers_dates_and_times_read_identically(mariadb_pair, monkeypatch):
    """The compiled reader writes the digits of integers of every width, DECIMALs of every group
    length, DATEs, DATETIMEs and TIMESTAMPs itself (compiled_values.pxi: put_digits,
    put_signed, put_date_text): random values of each, edges among them, read as the Python
    reader reads them."""
    up, _ = mariadb_pair
    db = f"{S}_digits"
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    ints = ", ".join(f"i{k} {t}" for k, (t, _lo, _hi) in enumerate(_INTS))
    decs = ", ".join(f"d{k} DECIMAL({p},{s})" for k, (p, s) in enumerate(_DECIMALS))
    up.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}",
               f"CREATE TABLE {db}.n (id INT PRIMARY KEY, {ints}, {decs}, da DATE, dt0 DATETIME, dt3 DATETIME(3), "
               "dt6 DATETIME(6), ts0 TIMESTAMP NULL, ts6 TIMESTAMP(6) NULL)")
    rows = []
    for i in range(1500):
        da, dt, ts = _temporal_values(rng)
        values = [str(_int_value(rng, lo, hi)) for _t, lo, hi in _INTS]
        values += [_decimal_value(rng, p, s) for p, s in _DECIMALS]
        rows.append(f"({i}, {', '.join(values)}, {da}, {dt}, {dt}, {dt}, {ts}, {ts})")
    start = Position(*up.binlog_head())
    # zero dates need a mode without NO_ZERO_DATE / NO_ZERO_IN_DATE; TIMESTAMPs are read in UTC
    up.execute("SET SESSION sql_mode = ''", "SET SESSION time_zone = '+00:00'",
               *(f"INSERT INTO {db}.n VALUES {', '.join(rows[k:k + 100])}" for k in range(0, len(rows), 100)),
               f"UPDATE {db}.n SET i8 = i8 DIV 3, i9 = i9 DIV 3, d8 = -d8 WHERE id % 7 = 0")
    events, slow = _both(up, start, Position(*up.binlog_head()), monkeypatch)
    assert not slow, f"seed {seed}: the compiled reader handed rows of {slow} on"
    assert len([e for e in events if e.op == "insert"]) == len(rows), f"seed {seed}"
