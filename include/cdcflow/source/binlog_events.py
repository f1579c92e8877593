"""The binlog events BinlogReader acts on, as plain records, from either of two readers.

BinlogReader.read needs of each event only a few fields: where it starts, its time, and per
kind a GTID, a position, a statement or a rows event's images.  Those come as tuples:

    (ROTATE, start, time, next_binlog, position)
    (GTID,   start, time, gtid)
    (XID,    start, time, end)
    (QUERY,  start, time, end, statement, event)   event: mysql-replication's (None for a bare BEGIN)
    (ROWS,   start, time, table, flags, op, rows)  table: a TableInfo; rows: [(before, after)] as
                                                   image text, or the mysql-replication event to decode
    (REFUSED, start, time, type, table, at, end, in_payload)  an event pull refuses (source.event_types):
                                                   its type, a rows event's table ("schema.table" or
                                                   None), where it starts in its file (in_payload:
                                                   the TRANSACTION_PAYLOAD holding it starts there)
                                                   and its end_log_pos; BinlogReader raises it

`end` is the byte after the event in its binlog file; `start` is `end` less mysql-replication's
event_size, which leaves out the 19-byte header and the checksum: BinlogReader has always
compared that with the head of a window (a head inside the first bytes of a transaction's first
event ends the window before it), and both readers give the same.  Two readers
give them: mysql-replication's event objects mapped one by one (`python_records`, the
reference), and the compiled reader (source/compiled_reader.pyx, `compiled_records`), which reads
the stream connection's packets itself, decodes the frequent events (GTID, XID, BEGIN, table
maps seen before, rows events of tables whose every column it can read) in compiled code, and
hands every other packet to mysql-replication through `Slow`.  A MySQL 8 TRANSACTION_PAYLOAD
event is read as the events it holds (source.transaction_payload), by both.  The compiled reader is the
default (CDCFLOW_BINLOG_READER=python asks for the reference); where it is missing, the Python
reader runs and the log says so once.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import warnings

import pymysql
from dataclasses import dataclass

from cdcflow.core.row_codec import encode_image
from cdcflow.core.system_schemas import is_system_schema
from cdcflow.source import event_types, row_decoder, transaction_payload

log = logging.getLogger(__name__)

ROTATE, GTID, XID, QUERY, ROWS, REFUSED = range(6)
READER_ENV = "CDCFLOW_BINLOG_READER"  # "compiled" or "python"; unset: DEFAULT_READER
DEFAULT_READER = "compiled"
_ROW_OPS = {"WriteRowsEvent": "insert", "DeleteRowsEvent": "delete", "UpdateRowsEvent": "update"}
_said_missing = False


@dataclass(frozen=True)
class TableInfo:
    """What a rows event's records say of its table (one per table definition)."""

    schema: str
    table: str
    pk: str | None  # the binlog's key columns, a JSON list
    system: bool  # a system schema's table: its rows are not read


def table_info(schema: str, table: str, primary_key) -> TableInfo:
    pk = json.dumps([primary_key] if isinstance(primary_key, str) else list(primary_key)) if primary_key else None
    return TableInfo(schema, table, pk, is_system_schema(schema))


def compiled_module():
    """The compiled reader's module, or None (the Python reader asked for or the default, or the
    compiled one not built)."""
    global _said_missing
    if (os.environ.get(READER_ENV) or DEFAULT_READER).lower() != "compiled":
        return None
    try:
        from cdcflow.source import compiled_reader  # lazy: an extension make setup may not have built
    except ImportError as e:
        if not _said_missing:
            _said_missing = True
            log.warning("the compiled binlog reader is not built (%s): pull reads the binlog with the Python "
                        "reader, several times slower; `make setup` builds it", e)
        return None
    return compiled_reader


def records(stream, window=None):
    """The records of a mysql-replication BinLogStreamReader's events, from the compiled reader
    where there is one; `window`: a compiled Window over them (source.binlog.BinlogReader.read's)."""
    fast = compiled_module()
    return python_records(stream) if fast is None else compiled_records(stream, fast, window)


def record_of(ev) -> tuple | None:
    """The record of one mysql-replication event (None: an event BinlogReader passes over)."""
    name = type(ev).__name__
    start = ev.packet.log_pos - ev.event_size
    if name in ("NotImplementedEvent", "PartialUpdateRowsEvent"):  # what mysql-replication would drop
        if ev.event_type in event_types.PASSED_OVER:
            return None
        inner = getattr(ev.packet.packet, "payload_start", None)  # an event a TRANSACTION_PAYLOAD held
        at = ev.packet.log_pos - ev.packet.event_size if inner is None else inner
        table = f"{ev.schema}.{ev.table}" if name == "PartialUpdateRowsEvent" else None
        return (REFUSED, start, ev.timestamp, ev.event_type, table, at, ev.packet.log_pos, inner is not None)
    if name == "RotateEvent":
        return (ROTATE, start, ev.timestamp, ev.next_binlog, ev.position)
    if name in ("MariadbGtidEvent", "GtidEvent"):
        return (GTID, start, ev.timestamp, ev.gtid)
    if name == "XidEvent":
        return (XID, start, ev.timestamp, ev.packet.log_pos)
    if name == "ExecuteLoadQueryEvent":
        _read_load_query(ev)  # LOAD DATA logged as a statement: filter stops at it
    if name in ("QueryEvent", "ExecuteLoadQueryEvent"):
        return (QUERY, start, ev.timestamp, ev.packet.log_pos, ev.query, ev)
    op = _ROW_OPS.get(name)
    if op is not None:
        return (ROWS, start, ev.timestamp, table_info(ev.schema, ev.table, ev.primary_key), ev.flags, op, ev)
    return None


def python_records(stream):
    """The reference reader: mysql-replication's events, one record each."""
    for ev in stream:
        rec = record_of(ev)
        if rec is not None:
            yield rec


def row_images(ev, op: str, decoded_rows) -> list[tuple[str | None, str | None]]:
    """A mysql-replication rows event's (before, after) image texts; `decoded_rows(ev)` gives
    its rows (BinlogReader's, which names the event in an error)."""
    setattr(ev, row_decoder.IMAGE_TEXT, True)  # its images decoded straight to text (row_decoder)
    rows = decoded_rows(ev)
    if op == "insert":
        return [(None, encode_image(r["values"])) for r in rows]
    if op == "delete":
        return [(encode_image(r["values"]), None) for r in rows]
    return [(encode_image(r["before_values"]), encode_image(r["after_values"])) for r in rows]


def _read_load_query(ev) -> None:
    """Read the default schema and statement of an ExecuteLoadQueryEvent, which the library
    leaves unread after its header (the layout of a QueryEvent's, with 13 more header bytes)."""
    ev.packet.read(ev.status_vars_length)
    ev.schema = ev.packet.read(ev.schema_length)
    ev.packet.advance(1)
    ev.query = ev.packet.read(ev.event_size - 26 - ev.status_vars_length - ev.schema_length - 1).decode(
        "utf-8", errors="backslashreplace")


class Slow:
    """mysql-replication's handling of one raw event packet, as its BinLogStreamReader.fetchone
    does after reading it (the pinned release's private names: source.patches): the packet
    wrapped and parsed, the stream's table map and format kept up to date."""

    def __init__(self, stream):
        from pymysql.protocol import MysqlPacket  # lazy: only binlog readers load mysql-replication
        from pymysqlreplication.packet import BinLogPacketWrapper  # lazy: as above

        self.stream, self._packet, self._wrapper = stream, MysqlPacket, BinLogPacketWrapper
        self.payload_start = None  # where the TRANSACTION_PAYLOAD holding the packets parsed now starts
        self._allowed = stream._BinLogStreamReader__allowed_events
        self._allowed_in_packet = stream._BinLogStreamReader__allowed_events_in_packet

    def event(self, payload: bytes):
        """The event of a packet (its OK byte first), or None where the stream passes over it."""
        ev = self._parsed(payload)
        return None if ev is None or type(ev) not in self._allowed else ev

    def _parsed(self, payload: bytes):
        from pymysqlreplication.constants import BINLOG  # lazy: only binlog readers load mysql-replication

        s, p = self.stream, "_BinLogStreamReader__"
        if self.payload_start is None:
            packet = self._packet(payload, s._stream_connection.encoding)
        else:
            packet = transaction_payload.InnerPacket(payload, s._stream_connection.encoding)
            packet.payload_start = self.payload_start
        wrapped = self._wrapper(
            packet, s.table_map, s._ctl_connection, s.mysql_version,
            getattr(s, p + "use_checksum"), self._allowed_in_packet, getattr(s, p + "only_tables"),
            getattr(s, p + "ignored_tables"), getattr(s, p + "only_schemas"), getattr(s, p + "ignored_schemas"),
            getattr(s, p + "freeze_schema"), getattr(s, p + "ignore_decode_errors"),
            getattr(s, p + "verify_checksum"), getattr(s, p + "optional_meta_data"),
            getattr(s, p + "enable_logging"), getattr(s, p + "use_column_name_cache"),
            getattr(s, p + "post_header_lengths"))
        ev = wrapped.event
        if wrapped.event_type == BINLOG.ROTATE_EVENT:
            s.log_pos, s.log_file = ev.position, ev.next_binlog
            if wrapped.timestamp != 0:
                s.table_map = {}  # table ids are not kept across a server's restart
        elif wrapped.log_pos:
            s.log_pos = wrapped.log_pos
        if wrapped.event_type == BINLOG.FORMAT_DESCRIPTION_EVENT and ev is not None:
            s.mysql_version = ev.mysql_version
            setattr(s, p + "post_header_lengths", ev.post_header_len)
        if wrapped.event_type == BINLOG.TABLE_MAP_EVENT and ev is not None:
            s.table_map[ev.table_id] = ev.get_table()
        return ev

    def standard_layout(self) -> bool:
        """Whether the format description read last gives the post-headers the compiled reader
        reads (QUERY_EVENT 13 bytes, TABLE_MAP_EVENT and rows events v1 8, v2 10); where not,
        it hands those events to mysql-replication, which skips the extra bytes."""
        lengths = getattr(self.stream, "_BinLogStreamReader__post_header_lengths")
        return not lengths or all(len(lengths) < t or lengths[t - 1] == n for t, n in _POST_HEADERS.items())

    def record(self, payload: bytes) -> tuple | None:
        ev = self.event(payload)
        return None if ev is None else record_of(ev)

    def payload(self, payload: bytes) -> list[bytes]:
        """The packets of the events a TRANSACTION_PAYLOAD event's packet holds."""
        s = self.stream
        return transaction_payload.packets(payload, getattr(s, "_BinLogStreamReader__use_checksum"), s.log_file)

    def table(self, payload: bytes):
        """(TableInfo, row_decoder.column_specs, the table's id, its mysql-replication Table) of a
        Table_map packet, parsed by mysql-replication (the stream's table map updated with it);
        None where it keeps none."""
        ev = self._parsed(payload)
        if ev is None or not hasattr(ev, "table_obj"):
            return None
        table = ev.get_table()
        info = table_info(table.schema, table.table, table.data["primary_key"])
        return info, row_decoder.column_specs(ev), ev.table_id, table


def compiled_records(stream, fast, window=None):
    """The compiled reader over the stream's connection (connected here, as fetchone would);
    a connection lost is dumped again from the last event read, as fetchone does.  `window`: a
    compiled Window that reads on over each dump's records (the records it leaves are given)."""
    from pymysqlreplication.binlogstream import MYSQL_EXPECTED_ERROR_CODES  # lazy: as above

    s = stream
    collecting = gc.isenabled()
    # the compiled reader and BinlogReader's loop allocate a few objects per event and make no
    # cycles (mysql-replication's events do: not here), so a collection every 700 allocations
    # would only walk the event writer's buffered rows again and again (7% of pull's time)
    gc.disable()
    try:
        while True:
            records = _connected(stream, fast)
            try:
                yield from (records if window is None else window.over(records))
                return
            except pymysql.OperationalError as e:
                if e.args[0] not in MYSQL_EXPECTED_ERROR_CODES:
                    raise
                log.warning("the binlog dump's connection was lost (%s): dumping again from %s:%s", e,
                            s.log_file, records.log_pos)
                s.log_pos = records.log_pos
                s._stream_connection.close()
                s._BinLogStreamReader__connected_stream = False
    finally:
        if collecting:
            gc.enable()


def _connected(stream, fast):
    s = stream
    if not getattr(s, "_BinLogStreamReader__connected_stream"):
        s._BinLogStreamReader__connect_to_stream()
    if not getattr(s, "_BinLogStreamReader__connected_ctl"):
        with warnings.catch_warnings():  # its pymysql.connect(db=...): the library's (source.patches)
            warnings.filterwarnings("ignore", message="'db' is deprecated", category=DeprecationWarning)
            s._BinLogStreamReader__connect_to_ctl()
    conn = s._stream_connection
    if conn._current_timeout != conn._read_timeout:  # as pymysql's _read_packet sets it
        conn._sock.settimeout(conn._read_timeout)
        conn._current_timeout = conn._read_timeout
    return fast.Records(conn, getattr(s, "_BinLogStreamReader__use_checksum"), Slow(stream), _ROW_OPS_BY_TYPE,
                        s.log_pos or 4)


# event type -> the post-header length the compiled reader reads
_POST_HEADERS = {2: 13, 19: 8, 23: 8, 24: 8, 25: 8, 30: 10, 31: 10, 32: 10}
# rows event types (v1, v2) -> op; PARTIAL_UPDATE_ROWS_EVENT goes through mysql-replication
_ROW_OPS_BY_TYPE = {23: "insert", 24: "update", 25: "delete", 30: "insert", 31: "update", 32: "delete"}
