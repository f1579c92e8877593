"""Reading a binlog file as an upstream's dump: the same readers, the same records and Events.

A server's binlog dump sends a Rotate event naming the file (timestamp 0, flagged artificial),
then each event of the file as a packet (an OK byte, then the event as the file holds it), and
an EOF packet where a non-blocking dump reaches the end.  FileConnection sends a file's events
so, through the two ways the readers read a dump connection (pymysql's `_read_packet`:
mysql-replication's fetchone, so the Python reader; `_rfile.read1` and `_next_seq_id`: the
compiled reader), so a BinLogStreamReader reads a file with every patch installed, and
FileBinlogReader is BinlogReader over it: binlogs no server here can send (a MySQL 8 server's)
are read as pull reads an upstream's.

Nothing is asked of a server.  A file's checksum setting is its format description's; its
server version names the flavour (MariaDB or MySQL).  What pull would ask the upstream is
given instead: a Table_map written with binlog_row_metadata=MINIMAL names no columns
(`column_names`, as information_schema would list them; a table not given stops the read as it
stops pull: binlog._decoded_rows), a DDL's collations by number are named from pymysql's table
of MySQL's ids, and a pre-5.6 temporal column's fraction (which the server's definition gives)
cannot be read: the error says so.
"""

from __future__ import annotations

import io
import struct
from pathlib import Path

from pymysql.charset import charset_by_id
from pymysql.protocol import MysqlPacket

from cdcflow.core.errors import UPSTREAM_BINLOG, CdcflowError
from cdcflow.source import patches, table_maps
from cdcflow.source.binlog import BinlogReader
from cdcflow.source.position import Position
from cdcflow.source.session_vars import SessionVars

MAGIC = b"\xfebin"
_HEADER = 19
_MAX_PACKET = 0xFFFFFF
_ARTIFICIAL = 0x20  # LOG_EVENT_ARTIFICIAL_F: the dump's Rotate is no event of the file
_EOF = b"\xfe\x00\x00\x02\x00"
_NAMES_QUERY = "SELECT COLUMN_NAME FROM INFORMATION_SCHEMA.COLUMNS WHERE"  # fetch_column_names' question


def events(path: str | Path) -> list[tuple[int, bytes]]:
    """(start, the event's bytes) of each event of a binlog file, in order."""
    data = Path(path).read_bytes()
    if data[:4] != MAGIC:
        raise CdcflowError(f"{path} is no binlog file (it does not begin with the binlog magic bytes)",
                           code=UPSTREAM_BINLOG, hint="give a binlog file (mysql-bin.000001 and the like)")
    out, at = [], 4
    while at < len(data):
        size = int.from_bytes(data[at + 9:at + 13], "little") if at + _HEADER <= len(data) else 0
        if size < _HEADER or at + size > len(data):
            raise CdcflowError(f"{path} is cut short: its event at {at} does not end in the file",
                               code=UPSTREAM_BINLOG, hint="read the file once the server has closed it")
        out.append((at, data[at:at + size]))
        at += size
    return out


def format_description(first: bytes) -> tuple[str, bool]:
    """The server version a format description event names, and whether the file's events end
    with a checksum (the algorithm byte before the event's own checksum, from 5.6.1 on)."""
    if first[4] != 15:
        raise CdcflowError("a binlog file's first event is no format description", code=UPSTREAM_BINLOG,
                           hint="give a binlog file as the server wrote it")
    version = first[_HEADER + 2:_HEADER + 52].split(b"\0", 1)[0].decode("ascii", "replace")
    numbers = tuple(int(p) for p in version.split("-", 1)[0].split(".")[:3] if p.isdigit())
    return version, numbers >= (5, 6, 1) and first[-5] == 1


def _packets(name: str, file_events: list[tuple[int, bytes]], checksum: bool) -> bytes:
    """The dump's packets (header, then payload) of a file's events, from its artificial Rotate to EOF."""
    first = file_events[0][1]
    server_id = first[5:9]
    body = struct.pack("<Q", 4) + name.encode()
    size = _HEADER + len(body) + (4 if checksum else 0)
    rotate = (b"\0\0\0\0" + bytes([4]) + server_id + size.to_bytes(4, "little") + b"\0\0\0\0"
              + _ARTIFICIAL.to_bytes(2, "little") + body + (b"\0\0\0\0" if checksum else b""))
    out, seq = io.BytesIO(), 1
    for payload in [b"\0" + rotate] + [b"\0" + ev for _at, ev in file_events] + [_EOF]:
        at = 0
        while True:  # a payload of 2^24 - 1 bytes or more goes in parts, the last one shorter
            part = payload[at:at + _MAX_PACKET]
            out.write(len(part).to_bytes(3, "little") + bytes([seq]))
            out.write(part)
            seq = (seq + 1) % 256
            at += len(part)
            if len(part) < _MAX_PACKET:
                break
    return out.getvalue()


class FileConnection:
    """What the readers read of a dump connection, giving a binlog file's events."""

    encoding = "utf8"
    _read_timeout = _current_timeout = None

    def __init__(self, path: str | Path, name: str):
        file_events = events(path)
        if not file_events:
            raise CdcflowError(f"{path} holds no event", code=UPSTREAM_BINLOG, hint="give a binlog file")
        self.version, self.checksum = format_description(file_events[0][1])
        self._rfile = io.BytesIO(_packets(name, file_events, self.checksum))
        self._next_seq_id = 1

    def _read_packet(self):
        parts = []
        while True:
            header = self._rfile.read(4)
            length = int.from_bytes(header[:3], "little")
            self._next_seq_id = (header[3] + 1) % 256
            parts.append(self._rfile.read(length))
            if length < _MAX_PACKET:
                break
        return MysqlPacket(b"".join(parts), self.encoding)

    def close(self) -> None:
        """Nothing to close: a file's stream is its packets, read whole into memory."""

    _force_close = close


class FileControl:
    """The control connection of a file's stream: the flavour its version names, and the columns
    `column_names` lists for information_schema's question; any other question is refused."""

    charset = "utf8mb4"

    def __init__(self, path: str | Path, version: str, column_names: dict[tuple[str, str], list[str]]):
        self.path, self.version, self.column_names = path, version, column_names

    def _get_dbms(self) -> str:
        return "mariadb" if "mariadb" in self.version.lower() else "mysql"

    def get_server_info(self) -> str:
        return self.version

    def cursor(self, *_args):
        return _FileCursor(self)

    def close(self) -> None:
        """Nothing to close: a file's stream is its packets, read whole into memory."""


class _FileCursor:
    """Answers mysql-replication's question for a table's column names (row_event.fetch_column_names)."""

    def __init__(self, control: FileControl):
        self.control, self.rows = control, []

    def __enter__(self):
        return self

    def __exit__(self, *_exc):
        return False

    def execute(self, query: str, args=()):
        if " ".join(query.split()).upper().startswith(_NAMES_QUERY):
            self.rows = [(n,) for n in self.control.column_names.get(tuple(args), [])]
            return len(self.rows)
        raise CdcflowError(f"reading the binlog file {self.control.path} needs the server that wrote it, "
                           f"which a file is read without: {' '.join(query.split())}", code=UPSTREAM_BINLOG,
                           hint="read this binlog from its server (a pre-5.6 temporal column's fraction is "
                                "in the server's definition of the table, not in the binlog)")

    def fetchall(self):
        return self.rows

    def close(self) -> None:
        """Nothing to close: a file's stream is its packets, read whole into memory."""


def open_file_stream(path: str | Path, only_events: list,
                     column_names: dict[tuple[str, str], list[str]] | None = None):
    """A BinLogStreamReader over a binlog file's events, as a non-blocking dump from its start."""
    from pymysqlreplication import BinLogStreamReader  # lazy: only binlog readers load mysql-replication
    from pymysqlreplication import row_event  # lazy: as above

    from cdcflow.source import transaction_payload  # lazy: as above (it loads mysql-replication's event classes)

    patches.install()
    name = Path(path).name
    conn = FileConnection(path, name)
    names = dict(column_names or {})
    for schema, table in names:  # the library keeps names it fetched for any stream after
        row_event._COLUMN_NAME_CACHE.pop(f"{schema}.{table}", None)
    table_maps._cache.clear()  # parses by bytes alone: a table named here is parsed anew
    stream = BinLogStreamReader(connection_settings={}, server_id=1, resume_stream=True, blocking=False,
                                log_file=name, log_pos=4, only_events=only_events,
                                filter_non_implemented_events=False, is_mariadb=False,
                                enable_logging=False, use_column_name_cache=bool(names))
    p = "_BinLogStreamReader__"
    stream._stream_connection = conn
    stream._ctl_connection = FileControl(path, conn.version, names)
    for attr, value in (("connected_stream", True), ("connected_ctl", True), ("use_checksum", conn.checksum),
                        ("optional_meta_data", True)):
        setattr(stream, p + attr, value)
    conn._read_packet = transaction_payload.expanding(stream)
    return stream


class _FileSession(SessionVars):
    """A DDL's collations by number, named from pymysql's table of MySQL's ids (no server to ask);
    a SYSTEM time zone is left as such."""

    def _collation(self, number: int) -> str | None:
        try:
            return charset_by_id(number).collation
        except KeyError:
            return None

    def _system_offset(self, seconds: int) -> str:
        return "SYSTEM"


class FileBinlogReader(BinlogReader):
    """BinlogReader over a binlog file, from its start to its end (or `head`)."""

    def __init__(self, path: str | Path, prev_ts: int = 1, head: Position | None = None,
                 column_names: dict[tuple[str, str], list[str]] | None = None):
        name = Path(path).name
        last = events(path)[-1]
        end = Position(name, last[0] + len(last[1]))
        super().__init__(None, 0, Position(name, 4), head or end, prev_ts)  # no upstream: _open_stream, _session
        self.path, self.column_names = path, column_names

    def _open_stream(self, only_events: list):
        return open_file_stream(self.path, only_events, self.column_names)

    def _session(self) -> SessionVars:
        return _FileSession(None)

