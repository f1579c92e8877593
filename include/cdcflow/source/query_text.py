"""A Query event's statement read in its session's character set.

mysql-replication reads every statement as UTF-8 (bytes that are not become `\\xNN`), but the
server writes the bytes the client sent, in the session's character_set_client, which the
event names (Q_CHARSET_CODE): under SET NAMES gbk, `COMMENT '你好'` is GBK bytes.  Here the
statement is decoded in that character set (source.charsets).  The text then reaches the
downstream over its utf8mb4 session: the same characters, so identifiers, comments, defaults
and ENUM members arrive as the upstream session meant them; hexadecimal literals (X'..', 0x..)
are ASCII and pass unchanged, and a literal of another character set than the session's
(`_binary'…'`) is rewritten as hexadecimal where its bytes are no text of the session's
(source.literal_bytes), so every byte arrives as the upstream's server read it.  (Running the
raw bytes in a downstream session of the upstream's character set would need that character
set downstream, which TiDB has only for a few, and cdcflow's filters and schema tracking read
the statement as text anyway.)
"""

from __future__ import annotations

from cdcflow.core.errors import UPSTREAM_BINLOG, CdcflowError
from cdcflow.core.sql_mode import from_bits
from cdcflow.source import charsets, literal_bytes

_BODY_OFFSET = 20  # the OK byte and the 19-byte common header before the event body


def statement_bytes(event, body: bytes) -> bytes:
    """The statement's bytes: the end of the event's body, after the post-header, the status
    variables, the schema and its terminating zero."""
    post_header = event._declared_post_header_len(13)
    length = event.event_size - post_header - event.status_vars_length - event.schema_length - 1
    return body[event.event_size - length:event.event_size]


def decoded(raw: bytes, collation_id: int | None, schema) -> str:
    """The statement in its session's character set, or the error that says which bytes are not."""
    try:
        return charsets.decode(raw, collation_id)
    except UnicodeDecodeError as e:
        charset = charsets.charset_of(collation_id)
        text = raw.decode("utf-8", "backslashreplace")
        raise CdcflowError(
            f"a statement of schema {schema!r} is not valid {charset} at byte {e.start} "
            f"(the character set of the session that ran it): {text[:200]}",
            code=UPSTREAM_BINLOG,
            hint="run the statement's change downstream by hand, then move the changefeed past it "
                 "(changefeed resume with overwrite-checkpoint-ts)",
        ) from None


def session_text(event, raw: bytes) -> str | None:
    """The statement of a QueryEvent as text, or None where mysql-replication's reading of it
    as UTF-8 is already exact (a UTF-8 session, no literal to rewrite)."""
    collation = getattr(event, "character_set_client", None)
    charset = charsets.charset_of(collation)
    fixed = raw
    if literal_bytes.may_hold_one(raw):
        mode = set((from_bits(getattr(event, "sql_mode", None)) or "").split(","))
        fixed = literal_bytes.rewrite(raw, charset, "NO_BACKSLASH_ESCAPES" not in mode, "ANSI_QUOTES" in mode)
    if charset in ("utf8mb4", "utf8mb3"):
        # as mysql-replication reads it, bytes that are no UTF-8 shown as \xNN (as ever)
        return None if fixed is raw else fixed.decode("utf-8", "backslashreplace")
    return decoded(fixed, collation, event.schema)


def install() -> None:
    """Route mysql-replication's QueryEvent through the session's character set (idempotent)."""
    from pymysqlreplication.event import QueryEvent  # lazy: only binlog readers load mysql-replication

    original = QueryEvent.__init__
    if getattr(original, "_cdcflow_charset", False):
        return

    def init(self, from_packet, event_size, table_map, ctl_connection, **kwargs):
        body = from_packet.packet.get_all_data()[_BODY_OFFSET:_BODY_OFFSET + event_size]
        original(self, from_packet, event_size, table_map, ctl_connection, **kwargs)
        self.query = session_text(self, statement_bytes(self, body)) or self.query

    init._cdcflow_charset = True
    QueryEvent.__init__ = init
