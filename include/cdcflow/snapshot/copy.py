"""Copying one chunk: read in its own consistent-snapshot transaction on the upstream, streamed
(a server-side cursor, `batch_rows` at a time, so memory stays bounded whatever the chunk's
size), written downstream in multi-row statements in the sink's row-writing session (UTC,
strict).  REPLACE for a keyed table, so a chunk copied twice converges.

The upstream prints each row as SQL text itself (LITERALS): Python only joins those bytes
into statements, instead of decoding every value into a Python object and encoding it back
(which made the copy an order of magnitude slower than myloader).  The reading session is
UTC like the writing one, so a TIMESTAMP's text is the instant it holds; every other value's
text is the server's own, as its text protocol sends it."""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
from typing import NamedTuple

import pyarrow as pa
import pymysql

from cdcflow.core.errors import SNAPSHOT_FAILED, CdcflowError
from cdcflow.core.row_codec import encode_image, quote_ident, sql_literal
from cdcflow.sink import connection
from cdcflow.sink.row_writer import RowWriter, qualified
from cdcflow.sink.sequence_state import setval_statement
from cdcflow.verify.chunks import Chunk, integer_span
from cdcflow.verify.comparison import reading_session

log = logging.getLogger(__name__)

_BYTES = "CONCAT('X''', HEX({c}), '''')"
# A column's value as SQL text, by information_schema's DATA_TYPE ({c}: the quoted column);
# any other type is quoted text converted to the statement's charset (QUOTE escapes with
# backslashes, which the writing session reads).  Numbers as the server prints them, but FLOAT
# as the DOUBLE it widens to exactly (`* 1e0` keeps -0): its own text has 6 digits, which do
# not always read back as the same float (3.40282e38 is not FLT_MAX); bytes as X'…' (a charset
# conversion would change them); BIT as its number; YEAR, dates and times quoted (a bare 0
# would be read as the year 2000).
LITERALS = {
    **dict.fromkeys(("tinyint", "smallint", "mediumint", "int", "bigint", "decimal", "double"), "{c}"),
    "float": "{c} * 1e0",
    **dict.fromkeys(("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "geometry", "point",
                     "linestring", "polygon", "multipoint", "multilinestring", "multipolygon",
                     "geometrycollection"), _BYTES),
    "bit": "{c} + 0",
}
_NUMBERS = frozenset(k for k, v in LITERALS.items() if v != _BYTES)  # always printable
_TEXT = "CONVERT(QUOTE({c}) USING utf8mb4)"
_UTF8MB4_TEXT = "QUOTE({c})"  # already in the statement's charset


class Column(NamedTuple):
    name: str
    kind: str  # information_schema's DATA_TYPE
    nullable: bool
    charset: str | None


class _TooLong(Exception):
    """A row whose text the upstream could not build (longer than its max_allowed_packet)."""


def _columns(up, schema: str, name: str) -> list[Column]:
    """The table's stored columns in order: generated ones are computed downstream; invisible
    ones are copied too (SELECT * would skip them)."""
    with up.cursor() as cur:
        cur.execute("SELECT COLUMN_NAME, DATA_TYPE, IS_NULLABLE, CHARACTER_SET_NAME FROM information_schema.COLUMNS "
                    "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s AND IS_GENERATED = 'NEVER' ORDER BY ORDINAL_POSITION",
                    (schema, name))
        return [Column(c, t.lower(), n == "YES", cs) for c, t, n, cs in cur.fetchall()]


def value_text_sql(col: Column) -> str:
    """The expression of one value's SQL text.  The upstream evaluates it for every value
    copied, so it is no longer than the column needs (printing the bench's 2,000,000 rows took
    1.9 s instead of 2.5 s with a test and a conversion around every value):
    QUOTE prints NULL as NULL itself and a utf8mb4 value needs no conversion; a number always
    prints, so its NULL is only IFNULL's; bytes keep the test first, since HEX of a value over
    max_allowed_packet is NULL too and must reach CONCAT."""
    q = quote_ident(col.name)
    if col.kind not in LITERALS:
        return (_UTF8MB4_TEXT if col.charset in (None, "utf8mb4") else _TEXT).format(c=q)
    text = LITERALS[col.kind].format(c=q)
    if not col.nullable:
        return text
    return f"IFNULL({text}, 'NULL')" if col.kind in _NUMBERS else f"IF({q} IS NULL, 'NULL', {text})"


def row_text_sql(columns: list[Column]) -> str:
    """The expression of a row's SQL text, b"(v1,v2,…)".  CONCAT, not CONCAT_WS: a value the
    server cannot print (NULL, with a warning) makes the whole row NULL, which the copy sees."""
    return "CAST(CONCAT('(', " + ", ',', ".join(map(value_text_sql, columns)) + ", ')') AS BINARY)"


def _chunk_query(task: dict, select: str, tail: str = "") -> tuple[str, list]:
    key = task["key"]
    where, args = Chunk(**task["chunk"]).where(key) if key else ("", [])
    table = qualified(task["schema"], task["name"])
    return f"SELECT {select} FROM {table}" + (f" WHERE {where}" if where else "") + tail, args


# What a grouped batch's VALUES text aims at (mydumper's default statement size): a batch's
# two queries and one statement cost about as much whatever its rows, so the rows are as many
# as fit (1,000-row batches of the bench's 2,000,000 rows took 0.5 s longer than 1 MiB ones),
# and a quarter of the statement's limit leaves room for the next batch's rows to be wider.
BATCH_BYTES = 1 << 20


def _copy_grouped(up, writer: RowWriter, task: dict, verb: str, batch_bytes: int) -> int:
    """A keyed chunk in batches of consecutive keys, each batch's VALUES list joined by the
    upstream (GROUP_CONCAT of the rows' text, each built once): one statement a batch, so
    Python handles no row at all.  The first batch is `batch_rows` rows (or keys), each next
    one as many as `batch_bytes` of text holds at the rows' width so far.  A batch the upstream
    cannot join whole (longer than group_concat_max_len, or a row it cannot print: either is a
    warning) goes row by row."""
    columns = _columns(up, task["schema"], task["name"])
    names, text = tuple(c.name for c in columns), row_text_sql(columns)
    copied = 0
    with up.cursor() as cur:
        cur.execute("SET SESSION group_concat_max_len = %s", (writer.max_bytes,))
        # read in the chunk's transaction, as its rows are
        span = integer_span(cur, qualified(task["schema"], task["name"]), task["key"], Chunk(**task["chunk"]))
        batches = _by_offset(cur, task, writer.batch_rows) if span is None else \
            _by_span(task, *span, writer.batch_rows)
        batch = next(batches)
        while True:
            written, size = _write_values(up, cur, writer, batch, names, text, verb)
            copied += written
            try:  # a cut list's size is the limit: the rows are at least that wide, the next batch a quarter or less
                batch = batches.send(batch_bytes / size if size else None)
            except StopIteration:
                return copied


def _batch(task: dict, lo: str | None, hi: str | None) -> dict:
    return {**task, "chunk": {"index": task["chunk"]["index"], "lo": lo, "hi": hi}}


def _by_offset(cur, task: dict, rows: int):
    """Batches of `rows` keys each, each ending at the key the upstream's index walk finds (a
    query a batch); sent the factor to the aim of the batch just written (None: it held no row)."""
    key, keys = task["key"], ", ".join(map(quote_ident, task["key"]))
    lo, hi = task["chunk"]["lo"], task["chunk"]["hi"]
    while True:
        batch = _batch(task, lo, hi)
        cur.execute(*_chunk_query(batch, keys, f" ORDER BY {keys} LIMIT 1 OFFSET {rows - 1}"))
        last = cur.fetchone()  # the batch's last key; None: the rest of the chunk is the last batch
        if last is not None:
            batch["chunk"]["hi"] = encode_image(dict(zip(key, last)))
        scale = yield batch
        if last is None:
            return
        rows = max(1, int(rows * scale)) if scale else rows
        lo = batch["chunk"]["hi"]


def _by_span(task: dict, first: int, last: int, keys: int):
    """Batches of `keys` consecutive key values each (an integer key: no query to find where a
    batch ends); a span that held no row doubles."""
    column = task["key"][0]
    lo = first - 1
    while lo < last:
        hi = min(lo + keys, last)
        scale = yield _batch(task, encode_image({column: lo}), encode_image({column: hi}))
        keys = max(1, int(keys * scale)) if scale else keys * 2
        lo = hi


def _write_values(up, cur, writer: RowWriter, batch: dict, names: tuple[str, ...], text: str,
                  verb: str) -> tuple[int, int]:
    """A batch as one statement of the VALUES list the upstream joined: (its rows, the list's
    bytes as the upstream returned it, 0 when it gave none)."""
    cur.execute(*_chunk_query(batch, f"GROUP_CONCAT({text} SEPARATOR ','), COUNT(*)"))
    joined, rows = cur.fetchone()
    if rows and (cur.warning_count or joined is None):
        # a warning: the list was cut at group_concat_max_len, or a row's text could not be built
        return _copy_text(up, writer, batch, verb), len(joined or b"")
    if not rows:
        return 0, 0

    def write(how: str, on_duplicate=None) -> None:
        writer.write_values(batch["schema"], batch["name"], names, joined, rows, how, on_duplicate=on_duplicate,
                            holds=lambda down, enums: _error_values_as_upstream(cur, down, batch, enums))

    # a first copy finds the range empty: INSERT, cheaper for the downstream than REPLACE; a row
    # of the batch there already (an earlier copy of the chunk): REPLACE
    write("INSERT", lambda: write("REPLACE")) if verb == "REPLACE" else write(verb)
    return rows, len(joined)


def _error_values_as_upstream(up, down, batch: dict, enums: set[str]) -> bool:
    """Whether the batch's rows hold the ENUM error value ('', index 0) downstream exactly where
    the upstream's do (cursors: the upstream's in the chunk's snapshot, the downstream's in the
    transaction that wrote them): a refused '' is then the upstream's value, not one the
    downstream's list lacks.  Rows of the range not in the batch (an earlier copy's) are not
    asked about."""
    select = ", ".join([*map(quote_ident, batch["key"]), *(f"{quote_ident(c)} + 0 = 0" for c in sorted(enums))])
    held = []
    for cur in (up, down):
        cur.execute(*_chunk_query(batch, select))
        held.append({r[:len(batch["key"])]: r[len(batch["key"]):] for r in cur.fetchall()})
    return all(held[1].get(k) == flags for k, flags in held[0].items())


def _copy_text(up, writer: RowWriter, task: dict, verb: str) -> int:
    """The chunk's rows as text, row by row (a keyless table, or a batch too long to join):
    with each row, which of its ENUM columns hold the error value '' (enum_error_value)."""
    columns = _columns(up, task["schema"], task["name"])
    names = tuple(c.name for c in columns)
    enums = [c.name for c in columns if c.kind == "enum"]
    copied = 0
    with up.cursor(pymysql.cursors.SSCursor) as cur:
        cur.execute(*_chunk_query(task, ", ".join([row_text_sql(columns),
                                                   *(f"{quote_ident(c)} + 0 = 0" for c in enums)])))
        while rows := cur.fetchmany(writer.batch_rows):
            texts = [r[0] for r in rows]
            if None in texts:
                raise _TooLong
            marks = [{c: "" if flag else None for c, flag in zip(enums, r[1:])} for r in rows] if enums else None
            writer.write_literals(task["schema"], task["name"], names, texts, verb=verb, marks=marks)
            copied += len(texts)
    return copied


def _value(v):
    """pymysql gives TIME as a timedelta, which has no SQL literal of its own: its text."""
    if isinstance(v, dt.timedelta):
        sign, secs = ("-", -v) if v < dt.timedelta(0) else ("", v)
        total = secs.days * 86400 + secs.seconds
        return f"{sign}{total // 3600:02d}:{total // 60 % 60:02d}:{total % 60:02d}.{secs.microseconds:06d}"
    return v


def _copy_decoded(up, writer: RowWriter, task: dict, verb: str) -> int:
    """The rows decoded by pymysql and encoded again: for a row too long for the upstream to
    print as text (its blobs' hex over max_allowed_packet)."""
    names = tuple(c.name for c in _columns(up, task["schema"], task["name"]))
    copied = 0
    with up.cursor(pymysql.cursors.SSCursor) as cur:
        cur.execute(*_chunk_query(task, ", ".join(map(quote_ident, names))))
        while rows := cur.fetchmany(writer.batch_rows):
            images = [{c: _value(v) for c, v in zip(names, row)} for row in rows]
            writer.replace_rows(task["schema"], task["name"], names, images, verb=verb, key=task["key"])
            copied += len(images)
    return copied


def copy_rows(up, writer: RowWriter, task: dict, verb: str = "REPLACE", batch_bytes: int = BATCH_BYTES) -> int:
    """The rows of `task`'s chunk, read on `up` (already in the transaction to read in), written
    through `writer`.  Returns the rows copied."""
    try:
        return _copy_grouped(up, writer, task, verb, batch_bytes) if task["key"] else _copy_text(up, writer, task, verb)
    except _TooLong:
        if verb != "REPLACE":  # the rows written so far would be inserted twice
            raise CdcflowError(
                f"a row of {task['table']} is too long for the upstream to print as SQL text (max_allowed_packet)",
                code=SNAPSHOT_FAILED, hint="raise max_allowed_packet on the upstream to twice the table's "
                                           "longest row, then run the snapshot again") from None
        log.info("snapshot: a row of %s is longer than the upstream's max_allowed_packet as text: chunk %s "
                 "copied again, decoded", task["table"], task["chunk"]["index"])
        return _copy_decoded(up, writer, task, verb)  # REPLACE: the rows already written converge


def copy_sequence(up, down, schema: str, name: str, tidb: bool) -> None:
    """A MariaDB sequence's state, read on `up` (in the point's transaction), written downstream as
    its one row: a sequence refuses DELETE, and an INSERT replaces its row (as a replica writes it);
    a TiDB downstream's sequence is no table and takes it as a SETVAL (sink.sequence_state)."""
    target = qualified(schema, name)
    with up.cursor() as cur:
        cur.execute(f"SELECT * FROM {target}")
        columns = [d[0] for d in cur.description]
        row = cur.fetchone()
    with down.cursor() as cur:
        if tidb:
            cur.execute(setval_statement(target, dict(zip(columns, row))))
            return
        cur.execute(f"INSERT INTO {target} ({', '.join(quote_ident(c) for c in columns)}) VALUES "
                    f"({', '.join(sql_literal(v) for v in row)})")


def copy_chunk(up, writer: RowWriter, task: dict, batch_bytes: int = BATCH_BYTES) -> dict:
    t0 = time.monotonic()
    with up.cursor() as cur:
        cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
    try:
        rows = copy_rows(up, writer, task, batch_bytes=batch_bytes)
    finally:
        up.rollback()  # it only read
    return {"table": task["table"], "index": task["chunk"]["index"], "rows": rows,
            "seconds": round(time.monotonic() - t0, 3)}


def copy_partition(batches, up_args: dict, down_args: dict, batch_rows: int, batch_bytes: int):
    """Spark mapInArrow body: chunk tasks (JSON) in, one result (JSON) per chunk out; a
    downstream error travels as sink.downstream_errors.SinkError's text."""
    up = down = None
    try:
        for batch in batches:
            out = []
            for text in batch.column(0).to_pylist():
                if up is None:
                    up, down = reading_session(up_args), connection.connect(down_args)
                    writer = RowWriter(down, batch_rows)
                out.append(json.dumps(copy_chunk(up, writer, json.loads(text), batch_bytes)))
            yield pa.RecordBatch.from_pydict({"result": out})
    finally:
        for conn in (up, down):
            if conn is not None:
                conn.close()
