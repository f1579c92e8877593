"""MySQL 8's TRANSACTION_PAYLOAD_EVENT (binlog_transaction_compression=ON): one event holding a
transaction's events, compressed, read as the events it holds.

Its body is a list of fields, each a type, a length and that many bytes holding a
length-encoded integer: 1 the payload's size, 2 its compression (0 zstd, 255 none), 3 its
uncompressed size; type 0 ends the list and the payload follows (MySQL's
binary_log::Transaction_payload_event, checked on MariaDB's
std_data/mdev35643_mysql_80_binlog.000001).  The fields begin right after the 19-byte common
header: MySQL 8.0's format description declares 40 bytes of post-header for the type, which
its own writer and reader do not use.  The payload is the
transaction's events, each a common header and body without a checksum, and 0 as their
log_pos: the GTID event stays outside, before it, and only a row-based DML transaction is
compressed (its BEGIN, table maps, row events and XID).

`packets` turns the payload into the packets a server would have sent for those events
uncompressed, so both readers read them as any other: each with the dump's checksum bytes
(not checked, as no event's is) and the payload event's end as log_pos, which is where its
transaction ends (the XID's position, the next checkpoint).  The first one's log_pos is set
so that the start BinlogReader derives for it (log_pos less its size, binlog_events) is the
payload event's own: a window's head is compared with it.  The compiled reader calls it on
the packet it reads; the Python reader reads a connection whose `_read_packet` install()
wraps.  The events are expanded in memory, as the server does to send them.
"""

from __future__ import annotations

from collections import deque

from pymysql.protocol import MysqlPacket

from cdcflow.core.errors import UPSTREAM_BINLOG, CdcflowError
from cdcflow.source import event_types

ZSTD, NONE = 0, 255
_SIZE, _COMPRESSION, _UNCOMPRESSED = 1, 2, 3
_HEADER = 19
_installed = False


class InnerPacket(MysqlPacket):
    """A packet of an event a TRANSACTION_PAYLOAD held: `payload_start` is where that event
    starts in its file (what an error names)."""

    __slots__ = ("payload_start",)


def _lenenc(b: bytes, i: int) -> tuple[int, int]:
    first = b[i]
    if first < 251:
        return first, i + 1
    width = {252: 2, 253: 3, 254: 8}.get(first)
    if width is None:
        raise ValueError(f"a length-encoded integer cannot begin with {first:#x}")
    return int.from_bytes(b[i + 1:i + 1 + width], "little"), i + 1 + width


def payload_start(packet: bytes) -> int:
    """Where the event of a dump packet (its OK byte first) starts in its file."""
    return int.from_bytes(packet[14:18], "little") - int.from_bytes(packet[10:14], "little")


REPORT = "report it with the event (mysqlbinlog --hexdump at that position)"


def packets(packet: bytes, checksum: bool, file: str) -> list[bytes]:
    """The packets (OK byte first) of the events a TRANSACTION_PAYLOAD event's packet holds;
    an error naming the event where it cannot be read."""
    size, log_pos = int.from_bytes(packet[10:14], "little"), int.from_bytes(packet[14:18], "little")
    start = log_pos - size
    body = packet[1 + _HEADER:1 + size - (4 if checksum else 0)]

    def refuse(what: str, hint: str = REPORT) -> CdcflowError:
        return CdcflowError(f"cannot read the compressed transaction (TRANSACTION_PAYLOAD_EVENT) at {file}:{start}: "
                            f"{what}", code=UPSTREAM_BINLOG, hint=hint)

    fields, at = _header_fields(body, refuse)
    data = _decompressed(body[at:at + fields.get(_SIZE, len(body) - at)], fields.get(_COMPRESSION, NONE), refuse)
    if _UNCOMPRESSED in fields and len(data) != fields[_UNCOMPRESSED]:
        raise refuse(f"it holds {len(data)} bytes uncompressed, its header says {fields[_UNCOMPRESSED]}")
    return _inner_packets(data, start, log_pos, b"\0\0\0\0" if checksum else b"", refuse)


def _header_fields(body: bytes, refuse) -> tuple[dict[int, int], int]:
    """The payload header's fields ({type: value}) and where the payload's data starts."""
    fields, at = {}, 0
    try:
        while True:
            kind, at = _lenenc(body, at)
            if kind == 0:
                return fields, at
            length, at = _lenenc(body, at)
            fields[kind] = _lenenc(body[at:at + length], 0)[0]
            at += length
    except (IndexError, ValueError) as e:
        raise refuse(f"its header does not parse ({e})") from None


def _decompressed(data: bytes, compression: int, refuse) -> bytes:
    off = "or run SET GLOBAL binlog_transaction_compression=OFF on the upstream (and in its configuration file)"
    if compression == NONE:
        return data
    if compression != ZSTD:
        raise refuse(f"its compression type {compression} is none cdcflow reads (zstd: 0, none: 255)",
                     f"report it with the server's version, {off}")
    try:
        import zstandard  # lazy: only a MySQL 8 upstream's compressed transactions need it
    except ImportError:
        raise refuse("it is zstd-compressed and the zstandard package is not installed",
                     f"install it (pip install -c constraints.txt zstandard), {off}") from None
    try:
        return zstandard.ZstdDecompressor().decompressobj(read_across_frames=True).decompress(data)
    except zstandard.ZstdError as e:
        raise refuse(f"zstd cannot decompress it ({e})") from None


def _inner_packets(data: bytes, start: int, log_pos: int, tail: bytes, refuse) -> list[bytes]:
    """The events in the decompressed `data` as packets the reader takes, each header's size and
    next position rewritten as the file would have them (the first starts where the payload does)."""
    out, at = [], 0
    while at < len(data):
        if at + _HEADER > len(data):
            raise refuse("its last event is cut short")
        inner = int.from_bytes(data[at + 9:at + 13], "little")
        if inner < _HEADER or at + inner > len(data):
            raise refuse(f"an event in it claims {inner} bytes")
        if data[at + 4] == event_types.TRANSACTION_PAYLOAD_EVENT:
            raise refuse("it holds another compressed transaction")
        sized = inner + len(tail)
        end = start + sized if not out else log_pos
        header = (data[at:at + 9] + sized.to_bytes(4, "little") + end.to_bytes(4, "little")
                  + data[at + 17:at + _HEADER])
        out.append(b"\0" + header + data[at + _HEADER:at + inner] + tail)
        at += inner
    return out


def expanding(stream):
    """A `_read_packet` for `stream`'s connection (mysql-replication's BinLogStreamReader) that
    gives the events of a TRANSACTION_PAYLOAD event's packet, one packet each, in its place."""
    conn = stream._stream_connection
    read = conn._read_packet
    pending: deque[InnerPacket] = deque()

    def read_packet(*args, **kwargs):
        if pending:
            return pending.popleft()
        pkt = read(*args, **kwargs)
        data = pkt.get_all_data()
        if len(data) < 20 or data[0] != 0 or data[5] != event_types.TRANSACTION_PAYLOAD_EVENT:
            return pkt
        start = payload_start(data)
        for raw in packets(data, getattr(stream, "_BinLogStreamReader__use_checksum"), stream.log_file):
            inner = InnerPacket(raw, conn.encoding)
            inner.payload_start = start
            pending.append(inner)
        return pending.popleft() if pending else read_packet(*args, **kwargs)

    return read_packet


def install() -> None:
    """mysql-replication's stream connection, once connected, reads TRANSACTION_PAYLOAD events as
    the events they hold (idempotent)."""
    global _installed
    if _installed:
        return
    from pymysqlreplication.binlogstream import BinLogStreamReader  # lazy: only binlog readers load it

    connect = BinLogStreamReader._BinLogStreamReader__connect_to_stream

    def connect_to_stream(self):
        connect(self)
        self._stream_connection._read_packet = expanding(self)

    BinLogStreamReader._BinLogStreamReader__connect_to_stream = connect_to_stream
    _installed = True
