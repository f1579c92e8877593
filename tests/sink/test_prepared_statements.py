"""The writers' prepared statements (sink.prepared_statements, sink/compiled_params.pyx): the same
row images written once as text statements and once as prepared statements with binary
parameters, into two tables alike on the real downstream, store the same bytes in every column
of every kind and character set; a value no parameter carries as its literal is read goes as
text; the statements are kept per connection, prepared again when the server lost them, and a
refusal names the row as the text statement's does."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import math
import struct

import pymysql
import pytest
from pymysql.constants import COMMAND

from cdcflow_devtools.mariadb import HOST, ROOT_PASSWORD, ROOT_USER

from cdcflow.core.row_codec import TemporalText, encode_image
from cdcflow.core.sink_params import SinkOptions, merge_sink_options
from cdcflow.sink import connection, prepared_statements, row_writer
from cdcflow.sink.row_writer import RowWriter, SinkError, apply_in_commit_order, apply_ordered, raw_form

D = decimal.Decimal
DB = "prepared"
COLUMNS = """
    id INT PRIMARY KEY,
    ti TINYINT, su SMALLINT UNSIGNED, bi BIGINT, bu BIGINT UNSIGNED, de DECIMAL(65,30), dz DECIMAL(10,2),
    fl FLOAT, db DOUBLE, bt BIT(64), yr YEAR,
    dt DATETIME(6), ts TIMESTAMP(6) NULL, da DATE, tm TIME(6),
    u8 VARCHAR(64) CHARACTER SET utf8mb4, l1 VARCHAR(64) CHARACTER SET latin1, gb VARCHAR(64) CHARACTER SET gbk,
    tx TEXT CHARACTER SET utf8mb4, bn VARBINARY(300), bl BLOB, ch CHAR(8) CHARACTER SET latin1,
    en ENUM('a','ä','zz') CHARACTER SET latin1, eg ENUM('x','中文') CHARACTER SET gbk,
    st SET('a','ä','b') CHARACTER SET latin1, js JSON, uu UUID, i6 INET6,
    g VARCHAR(70) AS (CONCAT(u8, '|', l1)) VIRTUAL
"""
ROWS = [
    {"id": 1, "ti": -128, "su": 65535, "bi": -2**63, "bu": 2**64 - 1, "de": D("12345678901234567890123456789012345.123456789012345678901234567890"),
     "dz": D("-0.00"), "fl": 1.5, "db": 1e300, "bt": 2**64 - 1, "yr": 1901,
     "dt": dt.datetime(2026, 11, 28, 13, 37, 0, 1), "ts": dt.datetime(2038, 1, 19, 3, 14, 7, tzinfo=dt.timezone.utc),
     "da": dt.date(1000, 1, 1), "tm": dt.timedelta(hours=-838, minutes=-59, seconds=-59),
     "u8": "emoji 😀 中文 'q' \"d\" \\ \0\n\r\x1a", "l1": "äöü ÿ", "gb": "中文字符", "tx": "x" * 3000 + "é",
     "bn": bytes(range(256)), "bl": b"\x00\xff'\\", "ch": "ä", "en": "ä", "eg": "中文", "st": frozenset({"ä", "b"}),
     "js": {"k": [1, "x", None], "q": "'\"\\"}, "uu": "123e4567-e89b-12d3-a456-426614174000", "i6": "::ffff:1.2.3.4"},
    {"id": 2, "ti": 127, "su": 0, "bi": 2**63 - 1, "bu": 2**63, "de": D("-0.000000000000000000000000000001"),
     "dz": D("99999999.99"), "fl": -0.0, "db": 5e-324, "bt": 0, "yr": 2155,
     "dt": dt.datetime(1, 1, 1), "ts": None, "da": dt.date(9999, 12, 31), "tm": dt.timedelta(days=34, microseconds=5),
     "u8": "", "l1": "", "gb": "", "tx": "", "bn": b"", "bl": None, "ch": "", "en": "zz", "eg": "x", "st": frozenset(),
     "js": [1, 2.5, "'"], "uu": None, "i6": "2001:db8::1"},
    {"id": 3, "ti": 0, "su": 1, "bi": 0, "bu": 0, "de": D("1E-8"), "dz": D("-1.5E+3"), "fl": 1 / 3, "db": -2.2250738585072014e-308,
     "bt": 5, "yr": None, "dt": TemporalText("2000-00-15 10:00:00.123"), "ts": dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=dt.timezone.utc),
     "da": TemporalText("0000-00-00"), "tm": dt.timedelta(0), "u8": None, "l1": "plain", "gb": "半角", "tx": None,
     "bn": b"\x00", "bl": b"", "ch": None, "en": None, "eg": None, "st": frozenset({"a"}), "js": None, "uu": None, "i6": None},
    # an image whose text is one byte a character beyond ASCII, and one of two bytes a character
    # without a wider one: the parameters' loops run once per width of character
    {"id": 4, "u8": "café 'q' \\ \n", "l1": "äöü ÿ", "ch": "ä", "en": "ä", "st": frozenset({"ä"}), "tx": "ÿ" * 300,
     "js": {"k": "é"}},
    {"id": 5, "u8": "中 'q' \\", "l1": "ä", "gb": "中文", "eg": "中文", "tx": "名" * 300, "js": {"k": "中"}},
]
ROWS[3:] = [{**dict.fromkeys(ROWS[0]), **row} for row in ROWS[3:]]  # None in the columns they do not name


@pytest.fixture
def down(mariadb_pair):
    _, down = mariadb_pair
    down.execute(f"DROP DATABASE IF EXISTS {DB}", f"CREATE DATABASE {DB}",
                 f"CREATE TABLE {DB}.text_rows ({COLUMNS})", f"CREATE TABLE {DB}.binary_rows ({COLUMNS})",
                 f"CREATE TABLE {DB}.myisam_rows ({COLUMNS}) ENGINE=MyISAM")
    return down


@pytest.fixture
def conn(down):
    c = connection.connect({"host": HOST, "port": down.port, "user": ROOT_USER, "password": ROOT_PASSWORD})
    yield c
    c.close()


def form():
    """The writers' form; its parameters are built (make setup), or this fails."""
    f = raw_form()
    assert f.params is not None, "the compiled parameters are not built (make setup)"
    return f


def write(conn, table: str, rows: list[dict], prepared: bool, verb: str = "REPLACE",
          batch_rows: int | None = None, defer: bool = False) -> RowWriter:
    """`batch_rows`: all of them by default (only a full batch goes prepared); `defer`: each
    statement's answer read when the next is sent, the last one's by settle (the partition
    bodies' writers)."""
    f = form()
    writer = RowWriter(conn, batch_rows or len(rows), form=f)
    writer.defer = defer
    if not prepared:
        writer.prepared = None
    images = [f.read(encode_image(r)) for r in rows]
    columns = tuple(c for c in rows[0])
    writer.replace_rows(DB, table, columns, images, verb, [10] * len(rows), ["id"])
    writer.settle()
    return writer


def stored(conn, table: str) -> list[tuple]:
    """Every column's bytes (HEX: no conversion on the way back), and the table's definition."""
    with conn.cursor() as cur:
        cur.execute("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s "
                    "ORDER BY ORDINAL_POSITION", (DB, table))
        names = [n for (n,) in cur.fetchall()]
        cur.execute(f"SELECT {', '.join(f'HEX(`{n}`)' for n in names)} FROM {DB}.{table} ORDER BY id")
        rows = cur.fetchall()
        cur.execute(f"SHOW CREATE TABLE {DB}.{table}")
        definition = cur.fetchone()[1].split("(", 1)[1]
    return [definition, *rows]


def test_every_kind_of_column_stores_the_same_bytes_both_ways(conn):
    text = write(conn, "text_rows", ROWS, prepared=False)
    binary = write(conn, "binary_rows", ROWS, prepared=True)
    assert text.prepared is None and binary.prepared.executed == 1  # one statement, every row, prepared
    expected = stored(conn, "text_rows")
    assert len(expected) == 1 + len(ROWS)
    assert stored(conn, "binary_rows") == expected
    with conn.cursor() as cur:
        cur.execute(f"SELECT COUNT(*) FROM {DB}.binary_rows WHERE l1 = 'äöü ÿ' AND gb = '中文字符' AND en = 'ä' "
                    "AND eg = '中文' AND FIND_IN_SET('ä', st)")
        assert cur.fetchone()[0] == 1  # the non-ASCII members and texts of latin1 and gbk columns arrived


def test_each_row_alone_and_many_rows_in_statements_of_a_batch(conn):
    many = [{**ROWS[k % len(ROWS)], "id": k} for k in range(1, 600)]
    text = write(conn, "text_rows", many, prepared=False, batch_rows=256)
    binary = write(conn, "binary_rows", many, prepared=True, batch_rows=256)
    # two full batches prepared, the last 87 rows as text: a statement of their count would be
    # prepared for one execution
    assert text.statements == binary.statements == 3 and binary.prepared.executed == 2
    assert stored(conn, "binary_rows") == stored(conn, "text_rows")
    # the same statement again: prepared once per connection, not once per writer
    assert len(prepared_statements.of(conn).kept) == 1
    again = write(conn, "binary_rows", many, prepared=True, batch_rows=256)
    assert again.prepared is binary.prepared and len(again.prepared.kept) == 1 and again.prepared.executed == 4


@pytest.mark.parametrize("verb", ["INSERT", "UPSERT"])
def test_insert_and_upsert_go_prepared(conn, verb):
    write(conn, "text_rows", ROWS, prepared=False, verb=verb)
    binary = write(conn, "binary_rows", ROWS, prepared=True, verb=verb)
    assert binary.prepared.executed >= 1
    assert stored(conn, "binary_rows") == stored(conn, "text_rows")


@pytest.mark.parametrize("key", [["id"], ["id", "u8"]])
def test_deletes_by_key_go_prepared(conn, key):
    many = [{**ROWS[k % 3], "id": k, "u8": f"k{k} é'"} for k in range(1, 21)]
    for table in ("text_rows", "binary_rows"):
        write(conn, table, many, prepared=False)
    f = form()
    gone = [f.read(encode_image(r)) for r in many[:10]]
    text = RowWriter(conn, 10, form=f)
    text.prepared = None
    text.delete_keys(DB, "text_rows", key, gone)
    held = prepared_statements.of(conn)
    before = held.executed
    RowWriter(conn, 10, form=f).delete_keys(DB, "binary_rows", key, gone)
    assert held.executed == before + 1
    after = stored(conn, "binary_rows")
    assert after == stored(conn, "text_rows") and len(after) == 1 + 10


def changes_of(table: str, rows: list[dict]) -> list[dict]:
    """Inserts of `rows`, then each updated (its key too for the first: an UPDATE by the old key)
    and every third deleted, as the commit-order writers take them."""
    def change(op, before, after):
        return {"schema": DB, "table": table, "op": op, "before": encode_image(before), "after": encode_image(after)}
    out = [change("insert", None, r) for r in rows]
    for k, r in enumerate(rows):
        moved = {**r, "id": r["id"] + 1000 if k == 0 else r["id"], "u8": f"moved {k} ü'", "bu": k}
        out.append(change("update", r, moved))
        if k % 3 == 2:
            out.append(change("delete", moved, None))
    return out


@pytest.mark.parametrize("keyed", [True, False], ids=["by key", "whole row, no valid index"])
def test_changes_in_commit_order_go_prepared(conn, keyed):
    """apply_in_commit_order (foreign keys) by the key, apply_ordered (no valid index) by the whole
    old row NULL-safely: each change one statement, prepared, with the text's effect."""
    # without a key the old row is matched by every value: the columns whose values this test
    # writes are stored as written (a FLOAT's 1/3 is not, nor a SET's members in another order)
    exact = ("id", "ti", "su", "bi", "bu", "dz", "db", "bt", "yr", "da", "u8", "l1", "gb", "bn", "ch", "en", "eg")
    rows = [{c: v for c, v in {**ROWS[k % 3], "id": k}.items() if keyed or c in exact} for k in range(1, 8)]
    generated = frozenset({"g"})
    held = prepared_statements.of(conn)
    for table, prepared in (("text_rows", False), ("binary_rows", True)):
        before = held.executed
        changes = changes_of(table, rows)
        if keyed:
            apply_in_commit_order(conn, changes, {f"{DB}.{table}": ["id"]}, {f"{DB}.{table}": generated}, set(), False,
                                  prepared=prepared)
        else:
            apply_ordered(conn, DB, table, changes, generated, prepared=prepared)
        assert held.executed - before == (len(changes) if prepared else 0)
    after = stored(conn, "binary_rows")
    assert after == stored(conn, "text_rows") and len(after) == 1 + 5


def test_a_value_without_a_literal_has_no_parameters(conn):
    """The text statement raises the reference's refusal: the parameters leave it to it."""
    f = form()
    images = [f.read(encode_image({"id": 1, "u8": "a"})), f.read(encode_image({"id": 2, "u8": math.nan}))]  # no literal
    assert f.params(images[:1], ("id", "u8")) is not None
    assert f.params(images, ("id", "u8")) is None
    assert f.params(images[:1], ("id", "absent")) is None
    writer = RowWriter(conn, 256, form=f)
    with pytest.raises(ValueError, match="no literal"):
        writer.replace_rows(DB, "binary_rows", ("id", "u8"), images, "REPLACE", [10, 10], ["id"])
    assert writer.prepared.executed == 0


def test_params_follow_the_literals_spelling():
    """The parameters' types, as the lexer reads each literal: integers, unsigned past a signed
    one, decimals past an unsigned one, exact decimals, approximate numbers, strings, binary."""
    f = form()
    types = {}
    for value in [0, -1, 2**63 - 1, -2**63, 2**63, 2**64 - 1, 2**64, D("1.50"), 1.5, 1e300, "s", b"\x01", None]:
        params = f.params([f.read(encode_image({"v": value}))], ("v",))
        types[repr(value)] = params[2:4]  # a null bitmap byte, 1, then the type and its flag
    assert types == {"0": b"\x08\x00", "-1": b"\x08\x00", repr(2**63 - 1): b"\x08\x00", repr(-2**63): b"\x08\x00",
                     repr(2**63): b"\x08\x80", repr(2**64 - 1): b"\x08\x80", repr(2**64): b"\xf6\x00",
                     "Decimal('1.50')": b"\xf6\x00", "1.5": b"\xf6\x00", "1e+300": b"\x05\x00", "'s'": b"\xfd\x00",
                     "b'\\x01'": b"\xfc\x00", "None": b"\x06\x00"}


def test_a_lost_statement_is_prepared_again(conn):
    write(conn, "text_rows", ROWS, prepared=False)
    held = write(conn, "binary_rows", ROWS, prepared=True).prepared
    for stmt in held.kept.values():  # closed behind the writers' back: the server no longer knows it
        conn._execute_command(COMMAND.COM_STMT_CLOSE, struct.pack("<I", stmt))
    before = held.executed
    write(conn, "binary_rows", ROWS, prepared=True)
    assert held.executed == before + 1
    assert stored(conn, "binary_rows") == stored(conn, "text_rows")


def test_a_refused_row_is_named_as_the_text_statement_names_it(conn):
    too_long = [{"id": 7, "l1": "ok"}, {"id": 8, "l1": "x" * 65}]
    with pytest.raises(SinkError) as text:
        write(conn, "text_rows", too_long, prepared=False)
    with pytest.raises(SinkError) as binary:
        write(conn, "binary_rows", too_long, prepared=True)
    assert str(binary.value).replace("binary_rows", "text_rows") == str(text.value)
    assert "id = 8" in str(binary.value)


def test_the_enum_error_value_refused_in_a_prepared_statement_is_written_as_text_is(conn):
    """Strict mode refuses '' (the ENUM error value a lax upstream stores) in either protocol;
    the statement's text then runs without strict mode (sink.enum_error_value)."""
    lax = [{"id": 5, "en": "ä"}, {"id": 6, "en": ""}]
    write(conn, "text_rows", lax, prepared=False)
    binary = write(conn, "binary_rows", lax, prepared=True)
    assert binary.statements == 1 and binary.prepared.kept and binary.prepared.executed == 0  # refused, as text
    assert stored(conn, "binary_rows") == stored(conn, "text_rows")
    with conn.cursor() as cur:
        cur.execute(f"SELECT id, en + 0 FROM {DB}.binary_rows ORDER BY id")
        assert cur.fetchall() == ((5, 2), (6, 0))


def test_a_statement_the_server_will_not_prepare_goes_as_text(conn):
    write(conn, "text_rows", ROWS, prepared=False)
    with conn.cursor() as cur:
        cur.execute("SELECT @@GLOBAL.max_prepared_stmt_count")
        (was,) = cur.fetchone()
        cur.execute("SET GLOBAL max_prepared_stmt_count = 0")
    try:
        writer = write(conn, "binary_rows", ROWS, prepared=True)
    finally:
        with conn.cursor() as cur:
            cur.execute(f"SET GLOBAL max_prepared_stmt_count = {was}")
    assert writer.statements == 1 and writer.prepared.executed == 0 and not writer.prepared.kept
    assert stored(conn, "binary_rows") == stored(conn, "text_rows")


def test_a_statement_not_prepared_after_lock_conflicts_still_goes_as_text(conn, monkeypatch):
    """The attempts a lock conflict takes and a refusal to prepare at the last one: the text
    runs in that attempt, nothing is left unwritten."""
    write(conn, "text_rows", ROWS, prepared=False)
    writer = RowWriter(conn, len(ROWS), form=form())
    tried = []

    def send(sql, params):
        tried.append(sql)
        if len(tried) < row_writer.STATEMENT_ATTEMPTS:
            raise pymysql.err.OperationalError(1213, "Deadlock found when trying to get lock")
        raise prepared_statements.NotPrepared(sql, None)

    monkeypatch.setattr(writer.prepared, "send", send)
    monkeypatch.setattr(row_writer, "conflict_wait", lambda attempt: 0)
    writer.replace_rows(DB, "binary_rows", tuple(ROWS[0]), [writer.form.read(encode_image(r)) for r in ROWS],
                        "REPLACE", [10] * len(ROWS), ["id"])
    assert len(tried) == row_writer.STATEMENT_ATTEMPTS and writer.statements == 1
    assert writer.rows_written == len(ROWS)
    assert stored(conn, "binary_rows") == stored(conn, "text_rows")


def test_cache_prep_stmts_false_sends_text(conn):
    assert raw_form(False).params is None
    writer = RowWriter(conn, len(ROWS), form=raw_form(False))
    images = [writer.form.read(encode_image(r)) for r in ROWS]
    writer.replace_rows(DB, "binary_rows", tuple(ROWS[0]), images, "REPLACE", [10] * len(ROWS), ["id"])
    assert writer.prepared is None and writer.statements == 1
    assert SinkOptions().cache_prep_stmts is True  # TiCDC's default
    assert merge_sink_options(SinkOptions(), {"cache-prep-stmts": "false"}).cache_prep_stmts is False


# --- answers read a statement later (RowWriter.defer: the partition bodies' writers) -------------

@pytest.mark.parametrize("prepared", [True, False])
def test_answers_read_a_statement_later_store_what_waiting_for_each_stores(conn, prepared):
    many = [{**ROWS[k % len(ROWS)], "id": k} for k in range(1, 600)]
    write(conn, "text_rows", many, prepared=False, batch_rows=256)
    later = write(conn, "binary_rows", many, prepared=prepared, batch_rows=256, defer=True)
    assert later.statements == 3 and later.rows_written == len(many)
    assert (later.prepared.executed == 2) if prepared else later.prepared is None
    assert stored(conn, "binary_rows") == stored(conn, "text_rows")


def test_a_statement_is_counted_once_its_answer_is_read(conn):
    f = form()
    writer = RowWriter(conn, 2, form=f)
    writer.defer = True
    images = [f.read(encode_image(r)) for r in ROWS[:4]]
    writer.replace_rows(DB, "binary_rows", tuple(ROWS[0]), images, "REPLACE", [10] * 4, ["id"])
    assert (writer.statements, writer.rows_written) == (1, 2)  # the second is sent, its answer not read
    writer.settle()
    assert (writer.statements, writer.rows_written) == (2, 4)
    with conn.cursor() as cur:  # nothing left unread on the connection
        cur.execute(f"SELECT COUNT(*) FROM {DB}.binary_rows")
        assert cur.fetchone() == (4,)


@pytest.mark.parametrize("prepared", [True, False])
def test_a_refused_row_read_a_statement_later_is_named_as_when_waited_for(conn, prepared):
    """The refusal of the first of two statements surfaces when the second is sent, naming the
    first's row, as a writer waiting for each answer names it; the second is never sent."""
    refused = [{"id": 7, "l1": "ok"}, {"id": 8, "l1": "x" * 65}, {"id": 9, "l1": "after"}, {"id": 10, "l1": "y"}]
    with pytest.raises(SinkError) as waited:
        write(conn, "text_rows", refused, prepared=prepared, batch_rows=2)
    with pytest.raises(SinkError) as later:
        write(conn, "binary_rows", refused, prepared=prepared, batch_rows=2, defer=True)
    assert str(later.value).replace("binary_rows", "text_rows") == str(waited.value)
    assert "id = 8" in str(later.value)
    assert stored(conn, "binary_rows")[1:] == stored(conn, "text_rows")[1:] == []


def test_the_enum_error_value_refused_a_statement_later_is_written_as_text_is(conn):
    lax = [{"id": 5, "en": "ä"}, {"id": 6, "en": ""}]
    write(conn, "text_rows", lax, prepared=False)
    later = write(conn, "binary_rows", lax, prepared=True, defer=True)
    assert later.statements == 1 and later.rows_written == 2
    assert stored(conn, "binary_rows") == stored(conn, "text_rows")


def test_an_upsert_refused_for_a_duplicate_a_statement_later_is_written_as_delete_and_replace(conn):
    """Two rows swapping a unique value, then a row of another statement: the UPSERT is refused,
    and its DELETE + REPLACE run before the next statement is sent."""
    with conn.cursor() as cur:
        cur.execute(f"CREATE TABLE {DB}.swap (id INT PRIMARY KEY, code VARCHAR(8) NOT NULL UNIQUE)")
        cur.execute(f"INSERT INTO {DB}.swap VALUES (1, 'a'), (2, 'b')")
    f = form()
    writer = RowWriter(conn, 2, form=f)
    writer.defer = True
    images = [f.read(encode_image(r)) for r in ({"id": 1, "code": "b"}, {"id": 2, "code": "a"}, {"id": 3, "code": "c"})]
    writer.replace_rows(DB, "swap", ("id", "code"), images, "UPSERT", [10] * 3, ["id"])
    writer.settle()
    assert writer.fallbacks == 1 and writer.rows_written == 3
    with conn.cursor() as cur:
        cur.execute(f"SELECT id, code FROM {DB}.swap ORDER BY id")
        assert cur.fetchall() == ((1, "b"), (2, "a"), (3, "c"))


class _Stalled:
    """A socket or its reader whose `sendall` or `read` times out, as a silent server's does
    past write-timeout or read-timeout: pymysql closes the connection and reports the timeout."""

    def __init__(self, real, call: str):
        self.real, self.call = real, call

    def __getattr__(self, name):
        if name == self.call:
            def timed_out(*_):
                raise TimeoutError("timed out")
            return timed_out
        return getattr(self.real, name)


@pytest.mark.parametrize("prepared, stalls", [(True, "read"), (True, "sendall"), (False, "sendall")])
def test_a_send_that_times_out_a_statement_later_is_reported_as_the_timeout(conn, prepared, stalls):
    """The statement's send is where the connection is lost (the write, or the answer to the
    PREPARE it needs first): the error names the timeout as a writer waiting for each answer's
    would, not what sending again on the closed connection raises (pymysql's bare `(0)`)."""
    if stalls == "read":
        conn._rfile = _Stalled(conn._rfile, stalls)
    else:
        conn._sock = _Stalled(conn._sock, stalls)
    with pytest.raises(SinkError) as lost:
        write(conn, "binary_rows", ROWS[:2], prepared=prepared, defer=True)
    told = SinkError.parse(str(lost.value))
    assert told["timed_out"] and told["retryable"] and "timed out" in told["text"], told
    assert not conn.open


class _Trickle(io.RawIOBase):
    """A socket's bytes arriving seven at a time."""

    def __init__(self, data: bytes):
        self.data = data

    def readable(self):
        return True

    def readinto(self, b):
        n = min(len(b), 7, len(self.data))
        b[:n], self.data = self.data[:n], self.data[n:]
        return n


class _Conn:
    def __init__(self, data: bytes, seq: int):
        self._rfile, self._next_seq_id, self.closed = io.BufferedReader(_Trickle(data)), seq, False

    def _force_close(self):
        self.closed = True


def _packets(payloads, seq: int) -> bytes:
    return b"".join(len(p).to_bytes(3, "little") + bytes([(seq + k) % 256]) + p for k, p in enumerate(payloads))


def test_a_prepares_definitions_are_stepped_over_whole_as_they_arrive_and_in_sequence():
    payloads = [b"def" * 20, b"", b"\xfe\x00\x00\x02\x00", b"x" * 300]
    conn = _Conn(_packets(payloads, 255), 255)
    prepared_statements._skip_packets(conn, len(payloads))
    assert conn._next_seq_id == 3 and conn._rfile.read1(10) == b"" and not conn.closed  # the sequence wraps at 256
    # a packet out of sequence, and a connection lost in the middle of one, close it and raise as pymysql's reads do
    conn = _Conn(_packets(payloads, 4), 3)
    with pytest.raises(pymysql.err.InternalError, match="got 4 expected 3"):
        prepared_statements._skip_packets(conn, 1)
    assert conn.closed
    conn = _Conn(_packets(payloads[:1], 0), 3)  # a server shutting down answers with a packet numbered 0
    with pytest.raises(pymysql.err.OperationalError) as lost:
        prepared_statements._skip_packets(conn, 1)
    assert lost.value.args[0] == 2013 and conn.closed
    conn = _Conn(_packets(payloads, 1)[:-5], 1)
    with pytest.raises(pymysql.err.OperationalError, match="Lost connection") as lost:
        prepared_statements._skip_packets(conn, len(payloads))
    assert lost.value.args[0] == 2013 and conn.closed


def test_a_statement_of_thousands_of_placeholders_prepares_and_the_connection_reads_on(conn):
    many = [{**ROWS[k % len(ROWS)], "id": k} for k in range(1, 513)]
    binary = write(conn, "binary_rows", many, prepared=True, batch_rows=256)
    write(conn, "text_rows", many, prepared=False, batch_rows=256)
    kept = prepared_statements.of(conn).kept
    assert binary.prepared.executed == 2 and len(kept) == 1
    assert next(iter(kept)).count("?") > 5000  # its answer: a definition packet per placeholder, over many reads
    assert stored(conn, "binary_rows") == stored(conn, "text_rows")
    with conn.cursor() as cur:  # nothing of the prepare's answer left on the connection, nor read past it
        cur.execute("SELECT 1")
        assert cur.fetchone() == (1,)
