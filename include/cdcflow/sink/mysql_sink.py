"""Writing to a MySQL-compatible downstream (MySQL, MariaDB, TiDB) with pymysql.

Row changes arrive compacted to one final image per key, so every statement
is idempotent: `REPLACE INTO … VALUES (…),(…)` for rows that exist at the
end of the segment, `DELETE … WHERE key IN (…)` for rows that do not.
Replaying a segment after a crash writes the same final images again.
"""

from __future__ import annotations

import json
import logging
import time
from contextlib import contextmanager
from typing import Iterable

import pymysql

from cdcflow.core import tls
from cdcflow.core.ddl_session import DdlSession
from cdcflow.core.row_codec import decode_image, quote_ident, sql_literal
from cdcflow.ddl.table_def import PRIMARY, TableInfo
from cdcflow.sink.ddl_session import ROW_TIME_ZONE, upstream_session

log = logging.getLogger(__name__)

# Sessions that write rows: UTC so TIMESTAMP literals (decoded in UTC) mean the same
# instant, and backslash escapes on because literals are escaped that way.  Strict, so a
# value the downstream column cannot hold fails instead of being cut; zero dates, zero
# parts and dates the upstream allowed (no NO_ZERO_DATE / NO_ZERO_IN_DATE,
# ALLOW_INVALID_DATES) still go through as they are.
DML_SQL_MODE = "STRICT_ALL_TABLES,ALLOW_INVALID_DATES,NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION"
DML_SESSION = (
    f"SET SESSION time_zone = '{ROW_TIME_ZONE}'",
    f"SET SESSION sql_mode = '{DML_SQL_MODE}'",
    "SET SESSION foreign_key_checks = 0",
    "SET SESSION unique_checks = 1",
)
RETRYABLE_MYSQL_ERRORS = {1205, 1213, 2002, 2003, 2006, 2013, 1040, 1053, 8002, 9007}
# a value the column cannot hold (strict mode): too long, out of range, wrong for the type,
# NULL into NOT NULL; MySQL names the column and the statement's row ("at row N")
VALUE_ERRORS = {1048, 1101, 1264, 1265, 1292, 1366, 1406, 3140}
MAX_STATEMENT_BYTES = 4 * 1024 * 1024


def qualified(schema: str, table: str) -> str:
    return f"{quote_ident(schema)}.{quote_ident(table)}"


def catalogue_key(conn, schema: str, table: str) -> tuple[list[str] | None, dict[str, str | None]]:
    """The table's valid index (TableInfo.valid_key) as the downstream's catalogue has it, and
    its string columns' collations; None when the table has none or does not exist."""
    with conn.cursor() as cur:
        cur.execute(
            "SELECT s.INDEX_NAME, s.COLUMN_NAME, c.IS_NULLABLE, s.SUB_PART, c.DATA_TYPE, c.COLLATION_NAME "
            "FROM information_schema.STATISTICS s "
            "JOIN information_schema.COLUMNS c ON c.TABLE_SCHEMA = s.TABLE_SCHEMA "
            "AND c.TABLE_NAME = s.TABLE_NAME AND c.COLUMN_NAME = s.COLUMN_NAME "
            "WHERE s.TABLE_SCHEMA = %s AND s.TABLE_NAME = %s AND s.NON_UNIQUE = 0 "
            "ORDER BY s.INDEX_NAME, s.SEQ_IN_INDEX",
            (schema, table),
        )
        info = TableInfo()
        for name, col, nullable, sub_part, data_type, collation in cur.fetchall():
            ix = info.indexes.setdefault(name, {"columns": [], "unique": True, "primary": name == PRIMARY,
                                                "prefix": False})
            ix["columns"].append(col)
            ix["prefix"] |= sub_part is not None
            if info.column(col) is None:
                info.columns.append({"name": col, "type": data_type.lower(), "nullable": nullable == "YES",
                                     "collation": collation and collation.lower()})
    key = info.valid_key()
    return key, info.key_collations(key) if key else {}


def valid_key(conn, schema: str, table: str) -> list[str] | None:
    """The table's valid index as the downstream's catalogue has it (catalogue_key)."""
    return catalogue_key(conn, schema, table)[0]


def table_exists(conn, schema: str, table: str) -> bool:
    with conn.cursor() as cur:
        cur.execute("SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA=%s AND TABLE_NAME=%s",
                    (schema, table))
        return cur.fetchone() is not None


def _error_code(e: Exception) -> int | None:
    args = getattr(e, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


def is_retryable(e: Exception) -> bool:
    return isinstance(e, pymysql.err.OperationalError) and _error_code(e) in RETRYABLE_MYSQL_ERRORS \
        or isinstance(e, (ConnectionError, TimeoutError))


class RowWriter:
    """Batches final row images into multi-row statements on one connection."""

    def __init__(self, conn, batch_rows: int, max_bytes: int = MAX_STATEMENT_BYTES):
        self.conn = conn
        self.batch_rows = batch_rows
        self.max_bytes = max_bytes
        self.rows_written = 0
        self.statements = 0

    def _run(self, sql: str, what: str, rows: list | None = None, key: list[str] | None = None) -> None:
        """`rows`: the statement's (image, commit ts) in VALUES order, to name the one a value
        error points at."""
        for attempt in range(5):
            try:
                with self.conn.cursor() as cur:
                    cur.execute(sql)
                self.statements += 1
                return
            except pymysql.err.OperationalError as e:
                # deadlocks between partitions that touch the same unique values: retry
                if _error_code(e) in (1205, 1213) and attempt < 4:
                    time.sleep(0.05 * (attempt + 1))
                    continue
                raise SinkError(what, e) from None
            except pymysql.MySQLError as e:
                raise SinkError(what, e, *_offending_row(e, rows, key)) from None

    def delete_keys(self, schema: str, table: str, key: list[str], images: list[dict]) -> None:
        target = qualified(schema, table)
        if len(key) == 1:
            head = f"DELETE FROM {target} WHERE {quote_ident(key[0])} IN ("
            tuples = [sql_literal(img[key[0]]) for img in images]
        else:
            head = f"DELETE FROM {target} WHERE ({', '.join(quote_ident(k) for k in key)}) IN ("
            tuples = ["(" + ", ".join(sql_literal(img[k]) for k in key) + ")" for img in images]
        for chunk in self._chunks(tuples, len(head)):
            self._run(head + ", ".join(chunk) + ")", f"DELETE from {schema}.{table}")
            self.rows_written += len(chunk)

    def replace_rows(self, schema: str, table: str, columns: tuple[str, ...], images: list[dict],
                     verb: str = "REPLACE", commit_ts: list | None = None, key: list[str] | None = None) -> None:
        """REPLACE (safe mode: overwrites whatever holds the key or a unique value), or
        INSERT for rows that must be new (fails on a conflicting row).  `commit_ts`: each
        image's, and `key`: the table's, to name a row the downstream refuses."""
        head = f"{verb} INTO {qualified(schema, table)} ({', '.join(quote_ident(c) for c in columns)}) VALUES "
        tuples = ["(" + ", ".join(sql_literal(img[c]) for c in columns) + ")" for img in images]
        rows = list(zip(images, commit_ts or [None] * len(images)))
        done = 0
        for chunk in self._chunks(tuples, len(head)):
            self._run(head + ",".join(chunk), f"{verb} into {schema}.{table}", rows[done:done + len(chunk)], key)
            done += len(chunk)
            self.rows_written += len(chunk)

    def write_literals(self, schema: str, table: str, columns: tuple[str, ...], tuples: list[bytes],
                       verb: str = "REPLACE") -> None:
        """Rows already written as SQL text, b"(v1,v2,…)" each (utf8mb4, as the session reads
        it), in multi-row statements: what the snapshot's copy gets from the upstream."""
        head = self._values_head(schema, table, columns, verb)
        for chunk in self._chunks(tuples, len(head)):
            self.write_values(schema, table, columns, b",".join(chunk), len(chunk), verb)

    def write_values(self, schema: str, table: str, columns: tuple[str, ...], values: bytes, rows: int,
                     verb: str = "REPLACE") -> None:
        """One statement of `rows` rows whose VALUES list, b"(…),(…)", is already SQL text."""
        self._run(self._values_head(schema, table, columns, verb) + values, f"{verb} into {schema}.{table}")
        self.rows_written += rows

    @staticmethod
    def _values_head(schema: str, table: str, columns: tuple[str, ...], verb: str) -> bytes:
        return f"{verb} INTO {qualified(schema, table)} ({', '.join(quote_ident(c) for c in columns)}) VALUES ".encode()

    def _chunks(self, items: list, head_len: int) -> Iterable[list[str]]:
        chunk, size = [], head_len
        for it in items:
            if chunk and (len(chunk) >= self.batch_rows or size + len(it) + 2 > self.max_bytes):
                yield chunk
                chunk, size = [], head_len
            chunk.append(it)
            size += len(it) + 2
        if chunk:
            yield chunk


def _offending_row(e: Exception, rows: list | None, key: list[str] | None) -> tuple[str | None, int | None]:
    """(the refused row named by its key, its commit ts) for a value error, else (None, None)."""
    import re

    m = re.search(r"at row (\d+)", str(e))
    if _error_code(e) not in VALUE_ERRORS or not rows or not key or not m or int(m.group(1)) > len(rows):
        return None, None
    image, ts = rows[int(m.group(1)) - 1]
    return " AND ".join(f"{k} = {sql_literal(image.get(k))}" for k in key), ts


class SinkError(Exception):
    """A downstream error, carried out of Spark workers as text the driver can parse."""

    MARK = "CDCFLOW_SINK_ERROR:"

    def __init__(self, what: str, cause: Exception, row: str | None = None, ts: int | None = None):
        self.what = what
        self.code = _error_code(cause)
        self.text = str(cause.args[1]) if len(getattr(cause, "args", ())) > 1 else str(cause)
        self.retryable = is_retryable(cause)
        fields = {"what": what, "code": self.code, "text": self.text, "retryable": self.retryable}
        if is_timeout(cause):  # the downstream did not answer within read/write-timeout
            fields["timed_out"] = True
        if self.code in VALUE_ERRORS:
            fields.update(value_error=True, row=row, ts=ts)
        payload = json.dumps(fields)
        super().__init__(self.MARK + payload + ":END")

    @classmethod
    def parse(cls, text: str) -> dict | None:
        i = text.find(cls.MARK)
        if i < 0:
            return None
        try:
            # decode up to the object's own end: the error text (row values) may hold ':END'
            return json.JSONDecoder().raw_decode(text, i + len(cls.MARK))[0]
        except ValueError:
            return None


def connect(sink: dict, **kw):
    """A DML session on the downstream described by plain parameters (picklable for Spark):
    DbUri.connection_args, with its connect/read/write timeouts; `kw` overrides them."""
    tls.install()
    conn = pymysql.connect(**{**sink, "charset": "utf8mb4", "autocommit": True, **kw})
    with conn.cursor() as cur:
        for stmt in DML_SESSION:
            cur.execute(stmt)
    return conn


# safe-mode = false writes a segment in two passes (Spark jobs): first the keys whose row
# existed before the segment (DELETE, REPLACE), then the new keys with INSERT.  After the
# first pass every old row holds its final image or is gone, so an INSERT can only meet a
# row the upstream never had: a real conflict, reported as TiCDC's non-safe mode does.
PHASE_KINDS = {None: ("D", "U", "I"), "existing": ("D", "U"), "new": ("I",)}


def apply_partition(batches, sink: dict, batch_rows: int, keys: dict[str, list[str]], phase: str | None = None):
    """Spark mapInArrow body: changes sorted by (schema, table, key, commit order) in; the
    last one per key is written (only the kinds of `phase`, see PHASE_KINDS); one batch of
    (rows, statements) counts out.

    Why this converges even when rows exchange unique-key values across partitions:
    every key touched in the segment is written with its final image, and those images
    are one consistent snapshot of the upstream at the segment's end, so no two of them
    share a unique value, and none clashes with a row the segment did not touch (that row
    already holds its end-of-segment value downstream).  A REPLACE therefore only ever
    removes stale rows of touched keys, whose own final image another partition writes
    (before or after) or whose DELETE is due anyway; a DELETE only removes a key that has
    no final image.  Nothing removes a final image once written, so in whatever order the
    partitions run (and after a replay of a half-applied segment) each key ends with its
    final image or absent: the upstream's state.  Concurrent REPLACEs on the same unique
    values may deadlock; the statement is retried (RowWriter._run).
    Deletes go first inside a partition: a key that only changed case (or trailing
    spaces) under a case-insensitive collation shares its old spelling's partition,
    and the old image must go before the new one is written.
    """
    from cdcflow.sink.compaction import final_changes

    kinds = PHASE_KINDS[phase]

    def write(w: "StreamingWriter", conn) -> None:
        w.insert_new = phase == "new"
        for schema, table, _part, _key, kind, image, ts in final_changes(_change_rows(batches, "commit_ts")):
            if kind in kinds:
                w.add(schema, table, kind, decode_image(image), ts)
        w.close()

    yield _run_partition(sink, batch_rows, keys, write)


def apply_partition_txns(batches, sink: dict, batch_rows: int, keys: dict[str, list[str]]):
    """transaction-atomicity = table: changes sorted by (schema, table, commit_ts, key,
    commit order) in; each upstream transaction's changes to one table become one
    downstream transaction.  Inside it the changes compact to their final image per key
    (the state at that commit, which is all a transaction shows), never across
    transactions.  A table's transactions all run in one partition, in commit order, so
    partitions never touch the same rows and cannot deadlock each other."""
    from itertools import groupby

    from cdcflow.sink.compaction import final_changes

    def write(w: "StreamingWriter", conn) -> None:
        rows = _change_rows(batches, "commit_ts")
        for _txn, changes in groupby(rows, key=lambda r: (r[0], r[1], r[6])):
            conn.begin()
            for schema, table, _part, _key, kind, image, ts in final_changes(changes):
                w.add(schema, table, kind, decode_image(image), ts)
            w.close()
            conn.commit()

    yield _run_partition(sink, batch_rows, keys, write)


def _change_rows(batches, *extra: str):
    for b in batches:
        d = b.to_pydict()
        yield from zip(d["schema"], d["table"], d["part"], d["key"], d["kind"], d["image"], *(d[e] for e in extra))


def _run_partition(sink: dict, batch_rows: int, keys: dict[str, list[str]], write):
    """One downstream connection for a partition's writes; the (rows, statements) counts."""
    import pyarrow as pa

    conn = None
    try:
        conn = _connect_with_retry(sink)
        w = StreamingWriter(RowWriter(conn, batch_rows), keys)
        write(w, conn)
        written, statements = w.writer.rows_written, w.writer.statements
    finally:
        if conn is not None:
            conn.close()
    return pa.RecordBatch.from_pydict({"rows": [written], "statements": [statements]})


class StreamingWriter:
    """Pending multi-row statements, flushed when full; a table's pending DELETEs always go
    out before any of its upserts, so memory stays bounded by the batch size.  With
    `insert_new`, rows of kind I (new keys) are written with INSERT instead of REPLACE."""

    def __init__(self, writer: RowWriter, keys: dict[str, list[str]], insert_new: bool = False):
        self.writer = writer
        self.keys = keys
        self.insert_new = insert_new
        self.deletes: dict[tuple[str, str], list] = {}
        self.upserts: dict[tuple[str, str, tuple, str], list] = {}

    def add(self, schema: str, table: str, kind: str, img: dict, commit_ts: int | None = None) -> None:
        if kind == "D":
            pending = self.deletes.setdefault((schema, table), [])
            pending.append(img)
            if len(pending) >= self.writer.batch_rows:
                self._flush_deletes(schema, table)
        else:
            group = (schema, table, tuple(img), "INSERT" if kind == "I" and self.insert_new else "REPLACE")
            pending = self.upserts.setdefault(group, [])
            pending.append((img, commit_ts))
            if len(pending) >= self.writer.batch_rows:
                self._flush_deletes(schema, table)
                self._upsert(group, self.upserts.pop(group))

    def _upsert(self, group: tuple, pending: list) -> None:
        schema, table, cols, verb = group
        self.writer.replace_rows(schema, table, cols, [i for i, _ in pending], verb, [t for _, t in pending],
                                 self.keys.get(f"{schema}.{table}"))

    def _flush_deletes(self, schema: str, table: str) -> None:
        images = self.deletes.pop((schema, table), None)
        if images:
            self.writer.delete_keys(schema, table, self.keys[f"{schema}.{table}"], images)

    def close(self) -> None:
        for schema, table in list(self.deletes):
            self._flush_deletes(schema, table)
        for group, pending in list(self.upserts.items()):
            self._upsert(group, pending)
        self.upserts.clear()


def _connect_with_retry(sink: dict, attempts: int = 3):
    for i in range(attempts):
        try:
            return connect(sink)
        except pymysql.MySQLError as e:
            if i == attempts - 1:
                raise SinkError(f"connect to downstream {sink['host']}:{sink['port']}", e) from None
            time.sleep(0.5 * (i + 1))


def apply_ordered(conn, schema: str, table: str, changes: Iterable[dict]) -> int:
    """Changes of a table without a valid index (force-replicate): one by one, in commit order.

    No compaction is possible without a key, so UPDATE and DELETE match the whole old
    row NULL-safely and touch one row (LIMIT 1), which keeps duplicate rows right.
    """
    n = 0
    target = qualified(schema, table)
    with conn.cursor() as cur:
        for ch in changes:
            before, after = decode_image(ch["before"]), decode_image(ch["after"])
            if ch["op"] == "insert":
                sql = (f"INSERT INTO {target} ({', '.join(quote_ident(c) for c in after)}) VALUES ("
                       + ", ".join(sql_literal(v) for v in after.values()) + ")")
            else:
                where = " AND ".join(f"{quote_ident(c)} <=> {sql_literal(v)}" for c, v in before.items())
                if ch["op"] == "delete":
                    sql = f"DELETE FROM {target} WHERE {where} LIMIT 1"
                else:
                    sets = ", ".join(f"{quote_ident(c)} = {sql_literal(v)}" for c, v in after.items())
                    sql = f"UPDATE {target} SET {sets} WHERE {where} LIMIT 1"
            try:
                cur.execute(sql)
            except pymysql.MySQLError as e:
                raise SinkError(f"{ch['op'].upper()} on {schema}.{table} (no valid index)", e) from None
            n += 1
    return n


# --- DDL ------------------------------------------------------------------------------------

# Errors a DDL gets when it already ran before a crash and runs again: tolerated only
# for the DDL the metadata store marks as sent but not yet checkpointed.
REPLAYED_DDL_ERRORS = {
    1007: "database exists", 1008: "database doesn't exist", 1050: "table exists",
    1051: "unknown table", 1054: "unknown column", 1060: "duplicate column", 1061: "duplicate key name",
    1068: "multiple primary key defined", 1091: "can't drop; check that it exists", 1146: "table doesn't exist",
    1176: "key doesn't exist", 1507: "partition to drop doesn't exist", 1517: "duplicate partition name",
    1735: "unknown partition", 1826: "duplicate foreign key", 4092: "unknown view (MariaDB)",
}


def execute_ddl(conn, query: str, default_schema: str | None, sql_mode: str | None, replay: bool,
                session: DdlSession | None = None, timeout: float | None = None) -> str:
    """Run one DDL as the upstream session ran it: same default schema, SQL mode, time, time zone
    and collations (sink.ddl_session).  `timeout`: how long the statement itself may take to
    answer (the sink's ddl-timeout) instead of the connection's read-timeout.

    Returns 'applied', or 'already applied' when this is the replay of a DDL that the
    downstream had executed before a crash (the error says so, and only then).
    """
    with conn.cursor() as cur:
        cur.execute(f"SET SESSION time_zone = '{ROW_TIME_ZONE}'")
        if sql_mode is not None:
            _set_sql_mode(cur, sql_mode)
        if default_schema:
            try:
                cur.execute(f"USE {quote_ident(default_schema)}")
            except pymysql.MySQLError:
                pass  # the schema may be the one this DDL creates or was dropped; the DDL names its targets
        try:
            with upstream_session(cur, session, query), read_timeout(conn, timeout):
                cur.execute(query)
            return "applied"
        except pymysql.MySQLError as e:
            if replay and _error_code(e) in REPLAYED_DDL_ERRORS:
                return "already applied"
            raise


@contextmanager
def read_timeout(conn, seconds: float | None):
    """The connection's read timeout set to `seconds` for the body (None: unchanged).  pymysql
    applies `_read_timeout` before each packet it reads, so this holds for one statement."""
    if seconds is None:
        yield
        return
    saved, conn._read_timeout = conn._read_timeout, seconds
    try:
        yield
    finally:
        conn._read_timeout = saved


def is_timeout(e: BaseException) -> bool:
    """pymysql's report of a socket timeout: the server did not answer within read/write-timeout."""
    return isinstance(e, pymysql.err.OperationalError) and _error_code(e) in (2006, 2013) and "timed out" in str(e)


def _set_sql_mode(cur, sql_mode: str) -> None:
    try:
        cur.execute("SET SESSION sql_mode = %s", (sql_mode,))
    except pymysql.MySQLError:
        # a mode this server does not know (MySQL 8 dropped NO_AUTO_CREATE_USER): keep the rest
        known = []
        for m in [m for m in sql_mode.split(",") if m]:
            try:
                cur.execute("SET SESSION sql_mode = %s", (",".join(known + [m]),))
                known.append(m)
            except pymysql.MySQLError:
                continue
        cur.execute("SET SESSION sql_mode = %s", (",".join(known),))
