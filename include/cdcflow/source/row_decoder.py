"""Decode row images with one reader per column, chosen once per table definition.

mysql-replication decodes every value through one long chain of type tests, with bitmap,
name and charset lookups per value: on the bench's binlog that was about half the pull
stage's CPU.  Which reader a column needs depends only on its type and metadata, so here the
choice is made once per table definition (binlog_table_maps shares one Table object across
the transactions that use it) and each row runs a list of ready readers.  The readers give
exactly what mysql-replication's own code gives; types without one here (decimals, temporal
types, ENUM, SET, BIT, JSON, ...) go through that code value by value as before, including
binlog_types' exact decoders.  Row images that are not FULL, partial JSON updates and
columns without names take the original path whole.
"""

from __future__ import annotations

import codecs
import struct

_original = None  # mysql-replication's RowsEvent._read_column_data while the plans are installed


def _fixed(fmt: str):
    packed = struct.Struct(fmt)
    unpack, size = packed.unpack, packed.size
    return lambda read: unpack(read(size))[0]


def _int24(signed: bool):
    def read24(read):
        v = int.from_bytes(read(3), "little")
        return v - 0x1000000 if signed and v >= 0x800000 else v
    return read24


def _string(length_size: int, encoding: str | None, errors: str):
    """mysql-replication's __read_string: the column's charset, utf-8 where the binlog names
    none, raw bytes where Python has no codec for it (binary columns: charset 'binary')."""
    def read_raw(read):
        return read(int.from_bytes(read(length_size), "little"))

    if encoding is None:
        return lambda read: read_raw(read).decode(errors=errors)
    try:
        codecs.lookup(encoding)
    except LookupError:
        # CPython decodes b"" to "" before it looks the codec up, so the original gives "" there
        return lambda read: read_raw(read) or ""
    return lambda read: read_raw(read).decode(encoding, errors)


def _reader(event, column):
    """A fast reader for the column, or None where mysql-replication's own code must decode it."""
    from pymysqlreplication.constants import FIELD_TYPE as T

    t, unsigned = column.type, column.unsigned
    ints = {T.TINY: "<B" if unsigned else "<b", T.SHORT: "<H" if unsigned else "<h",
            T.LONG: "<I" if unsigned else "<i", T.LONGLONG: "<Q" if unsigned else "<q",
            T.FLOAT: "<f", T.DOUBLE: "<d"}
    if t in ints:
        return _fixed(ints[t])
    if t == T.INT24:
        return _int24(not unsigned)
    if t not in (T.VARCHAR, T.STRING, T.BLOB):
        return None
    errors = "ignore" if event._ignore_decode_errors else "strict"
    charset = getattr(column, "character_set_name", None)
    encoding = event.charset_to_encoding(charset) if charset is not None else None
    length_size = column.length_size if t == T.BLOB else 2 if column.max_length > 255 else 1
    return _string(length_size, encoding, errors)


def _plan(event):
    """(the bitmap of a FULL image, [(name, reader or None)]) for the event's table, or None."""
    table = event.table_map[event.table_id]
    cached = getattr(table, "_cdcflow_row_plan", None)
    if cached is not None and cached[0] == event._ignore_decode_errors:
        return cached[1]
    columns = event.columns
    if not all(c.name for c in columns):
        plan = None  # names come from information_schema: the original path fetches them
    else:
        n = len(columns)
        full = b"\xff" * (n // 8) + (bytes([(1 << (n % 8)) - 1]) if n % 8 else b"")
        plan = (full, [(c.name, _reader(event, c)) for c in columns])
    table._cdcflow_row_plan = (event._ignore_decode_errors, plan)
    return plan


def install() -> None:
    """Route mysql-replication's row decoding through the plans (idempotent)."""
    global _original
    if _original is not None:
        return
    from pymysqlreplication.constants import BINLOG
    from pymysqlreplication.row_event import RowsEvent

    original = _original = RowsEvent._read_column_data

    def read_column_data(self, cols_bitmap, row_image_type=None):
        plan = None if self.event_type == BINLOG.PARTIAL_UPDATE_ROWS_EVENT else _plan(self)
        if plan is None or cols_bitmap != plan[0]:
            return original(self, cols_bitmap, row_image_type)
        self.is_partial_json_update = False
        full, readers = plan
        read = self.packet.read
        null_bitmap = read(len(full))
        slow = self._RowsEvent__read_values_name
        values = {}
        for i, (name, reader) in enumerate(readers):
            if null_bitmap[i >> 3] & (1 << (i & 7)):
                values[name] = None
            elif reader is not None:
                values[name] = reader(read)
            else:
                column = self.columns[i]
                values[name] = slow(column, null_bitmap, i, False, cols_bitmap, column.unsigned, i)
        return values

    RowsEvent._read_column_data = read_column_data


def uninstall() -> None:
    """Back to mysql-replication's own decoding (tests compare the two)."""
    global _original
    if _original is not None:
        from pymysqlreplication.row_event import RowsEvent

        RowsEvent._read_column_data, _original = _original, None
