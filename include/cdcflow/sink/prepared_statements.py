"""Prepared statements on a writer's pymysql connection: the binary protocol (COM_STMT_PREPARE,
COM_STMT_EXECUTE, COM_STMT_CLOSE), which MySQL, MariaDB and TiDB all speak and pymysql does not.

Why: a multi-row statement sent as text is parsed by the downstream every time, and its literals
made into items one by one; a prepared statement is parsed once per connection and executed with
typed parameters.  On the bench's bulk window that took 15% off the downstream's CPU
(docs/performance.md).  The parameters are the literals' own values, each carried in the type
its literal has in SQL (sink/compiled_params.pyx), so the downstream stores what the text
statement would have stored; where a literal has no such parameter the writer sends the text.

The packets go through pymysql's own framing (`_execute_command`, `_read_packet`,
`_read_query_result`: the pinned PyMySQL's), so an error packet raises the error the text
statement would, a lost connection pymysql's OperationalError; only the definitions a prepare's
answer ends with, which nothing reads, are stepped over here (`_skip_packets`).  The sink's cache-prep-stmts
(TiCDC's parameter of the same name, true by default) turns it off: every statement as text.
"""

from __future__ import annotations

import struct
import threading
import weakref
from collections import OrderedDict
from functools import lru_cache

import pymysql
from pymysql.constants import CLIENT, COMMAND, CR

from cdcflow.sink.downstream_errors import error_code

MAX_PARAMS = 65535  # a prepared statement's most placeholders (both servers' limit)
KEPT = 32  # statements kept prepared per connection: a few tables' column sets and row counts
UNKNOWN_STATEMENT = 1243  # ER_UNKNOWN_STMT_HANDLER: the session that prepared it is gone
NEEDS_PREPARING = 1615  # ER_NEED_REPREPARE: its tables changed more often than the server retries
_EXECUTE_HEAD = struct.Struct("<IBI")  # statement id, flags (no cursor), iteration count (always 1)


class NotPrepared(Exception):
    """The downstream would not prepare the statement (its max_prepared_stmt_count reached, a
    statement it cannot prepare): the caller sends the text, which raises what is wrong with it."""


_HELD: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # connection -> its PreparedStatements
_HELD_LOCK = threading.Lock()


def speaks(conn) -> bool:
    """Whether `conn` is a pymysql connection, whose framing this module uses."""
    return isinstance(conn, pymysql.connections.Connection)


def of(conn) -> "PreparedStatements":
    """The statements `conn` holds prepared: one set per connection, whichever writer uses it (a
    session kept for the next segment keeps its statements)."""
    with _HELD_LOCK:
        held = _HELD.get(conn)
        if held is None:
            held = _HELD[conn] = PreparedStatements(conn)
        return held


class PreparedStatements:
    """The statements one connection holds prepared, by text, the least used closed past KEPT.
    A connection pymysql opened again (another server thread) holds none of them: they are
    forgotten, not closed."""

    def __init__(self, conn):
        self.conn = conn
        self.kept: OrderedDict[str, int] = OrderedDict()  # text -> statement id
        self.thread = conn.server_thread_id
        self.executed = 0

    def execute(self, sql: str, params: bytes) -> int:
        """Run `sql` (its placeholders `?`) with `params`: COM_STMT_EXECUTE's bytes after the
        iteration count (null bitmap, 1, types, values); the rows it affected.  NotPrepared: the
        downstream would not prepare it."""
        return self.finish(self.send(sql, params))

    def send(self, sql: str, params: bytes) -> tuple[str, bytes]:
        """execute's first half: the statement sent (prepared first where the connection does not
        hold it, which waits for the prepare's answer), its answer left to `finish`, which takes
        what this returns.  Nothing else may go over the connection in between."""
        if self.conn.server_thread_id != self.thread:
            self.kept.clear()
            self.thread = self.conn.server_thread_id
        self._send_once(sql, params)
        return sql, params

    def finish(self, sent: tuple[str, bytes]) -> int:
        """execute's second half: the answer to what `send` sent; the rows it affected."""
        sql, params = sent
        try:
            affected = self.conn._read_query_result()
        except pymysql.MySQLError as e:
            # the server lost the statement, or asks for it prepared again: once
            if error_code(e) not in (UNKNOWN_STATEMENT, NEEDS_PREPARING):
                raise
            self.kept.pop(sql, None)
            self._send_once(sql, params)
            affected = self.conn._read_query_result()
        self.executed += 1
        return affected

    def _send_once(self, sql: str, params: bytes) -> None:
        stmt = self.kept.get(sql)
        if stmt is None:
            stmt = self._prepare(sql)
        else:
            self.kept.move_to_end(sql)
        self.conn._execute_command(COMMAND.COM_STMT_EXECUTE, _EXECUTE_HEAD.pack(stmt, 0, 1) + params)

    def _prepare(self, sql: str) -> int:
        conn = self.conn
        conn._execute_command(COMMAND.COM_STMT_PREPARE, sql)
        try:
            head = conn._read_packet()
        except pymysql.MySQLError as e:
            if not conn.open:
                raise  # the connection is gone: as the text statement would find it
            raise NotPrepared(sql, e) from e
        stmt, columns, params = struct.unpack_from("<IHH", head.get_all_data(), 1)
        # each parameter's and each result column's definition, then an EOF after each list
        # (pymysql does not ask for CLIENT.DEPRECATE_EOF)
        eof = 0 if conn.client_flag & CLIENT.DEPRECATE_EOF else 1
        _skip_packets(conn, (params + eof if params else 0) + (columns + eof if columns else 0))
        self.kept[sql] = stmt
        if len(self.kept) > KEPT:
            _, old = self.kept.popitem(last=False)
            conn._execute_command(COMMAND.COM_STMT_CLOSE, struct.pack("<I", old))  # no reply
        return stmt


def _skip_packets(conn, count: int) -> None:
    """Read past `count` whole packets of `conn` without making anything of them: the definitions
    of a prepared statement's parameters and result columns, a packet each, which nothing uses.
    Through pymysql's `_read_packet` each cost about 0.75 µs, and a statement of 256 rows of five
    columns sends 1,282 of them; here they cost about 0.2 µs, taken as the socket has them and
    stepped over by their headers.  The bench's window prepares 40 statements a cycle, 32 in its
    first segment, where apply waits on cdcflow's core (docs/performance.md).  The server sends
    nothing after the answer until the next command, so all that is read is the answer's.  As
    pymysql's own reads: a packet out of sequence or a lost connection closes it and raises, a
    lost connection's error (2013, which a retry may cure) also where a server shutting down sends
    its packet numbered 0."""
    rfile, buf, at = conn._rfile, b"", 0
    while count:
        if len(buf) - at >= 4:
            size = buf[at] | buf[at + 1] << 8 | buf[at + 2] << 16
            if len(buf) - at >= 4 + size:
                if buf[at + 3] != conn._next_seq_id:
                    if buf[at + 3] == 0:  # MariaDB's error packet as it shuts down: a lost connection, retried
                        raise _lost(conn)
                    conn._force_close()
                    raise pymysql.err.InternalError(
                        f"Packet sequence number wrong - got {buf[at + 3]} expected {conn._next_seq_id}")
                conn._next_seq_id = (conn._next_seq_id + 1) % 256
                at += 4 + size
                count -= 1
                continue
        try:
            more = rfile.read1(1 << 16)
        except OSError as e:
            raise _lost(conn, f" ({e})") from e
        if not more:
            raise _lost(conn)
        buf, at = buf[at:] + more, 0


def _lost(conn, cause: str = "") -> pymysql.err.OperationalError:
    """The connection closed, and the error pymysql's reads raise for it (2013, which a retry may cure)."""
    conn._force_close()
    return pymysql.err.OperationalError(CR.CR_SERVER_LOST, f"Lost connection to MySQL server during query{cause}")


@lru_cache(maxsize=256)
def placeholders(head: str, rows: int, columns: int, tail: str = "", in_list: bool = False) -> str:
    """A multi-row statement's text with placeholders: `head` then the rows' (?, …) and `tail`,
    in the writers' spelling of each list: a VALUES list's rows joined by "," (a row of one
    column in parentheses too), a DELETE's IN list's by ", " (a key of one column bare)."""
    if in_list and columns == 1:
        return head + ", ".join(["?"] * rows) + tail
    row = "(" + ", ".join(["?"] * columns) + ")"
    return head + (", " if in_list else ",").join([row] * rows) + tail
