"""Decode row images straight to their JSON text, with one reader per column chosen once per
table definition.

mysql-replication decodes every value through one long chain of type tests, with bitmap,
name and charset lookups per value, into a dict that core.row_codec.encode_image then walks
again to write the image's text: on the bench's binlog those two were most of the pull
stage's CPU.  Which reader a column needs depends only on its type and metadata, so here the
choice is made once per table definition (binlog_table_maps shares one Table object across
the transactions that use it) and each row runs a list of ready readers, each giving its
value's text in the image, so a row's image is the join of its columns' texts: exactly the
text encode_image gives for what mysql-replication decodes (tests/source/test_row_decoder.py
compares the two over every type).  Types without a reader here (TIME, ENUM, SET, BIT, JSON,
YEAR, the pre-5.6 temporal formats, ...) go through that code value by value, including column_types' exact decoders.
Row images that are not FULL, partial JSON updates and columns without names take the
original path whole, which gives a dict (BinlogReader encodes it).  Only events that ask for
text (IMAGE_TEXT set on them: BinlogReader's) are decoded here; any other use of
mysql-replication gets its own dicts.
"""

from __future__ import annotations

import base64
import codecs
import decimal
import math
import re
import struct

import msgspec

from cdcflow.core.row_codec import temporal_text, value_text
from cdcflow.source import column_types

IMAGE_TEXT = "_cdcflow_image_text"  # set on a rows event: its rows' images come as JSON text
_encode = msgspec.json.Encoder().encode
# what msgspec escapes in a JSON string (tests/source/test_row_decoder.py checks every code point)
_ESCAPED = re.compile(r'["\\\x00-\x1f]')


def json_string(s: str) -> str:
    """A string's text in an image (msgspec's, which escapes only what _ESCAPED finds)."""
    return _encode(s).decode() if _ESCAPED.search(s) else '"' + s + '"'


# mysql-replication's RowsEvent._read_column_data and _get_none_sources while the plans are installed
_original = _original_none_sources = None


def _integer(fmt: str):
    packed = struct.Struct(fmt)
    unpack, size = packed.unpack_from, packed.size
    return lambda data, at: (str(unpack(data, at)[0]), at + size)


def float_text(v: float) -> str:
    """msgspec's text of the value (a float's shortest repr), NaN and infinities tagged."""
    return _encode(v).decode() if math.isfinite(v) else value_text(v)


def _float(fmt: str):
    packed = struct.Struct(fmt)
    unpack, size = packed.unpack_from, packed.size

    def read_float(data, at):
        return float_text(unpack(data, at)[0]), at + size
    return read_float


def _int24(signed: bool):
    def read24(data, at):
        v = int.from_bytes(data[at:at + 3], "little")
        return str(v - 0x1000000 if signed and v >= 0x800000 else v), at + 3
    return read24


def _string(length_size: int, encoding: str | None, errors: str):
    """mysql-replication's __read_string: the column's charset's codec (source.text_columns:
    the server's reading of it), utf-8 where the binlog names none (binary, which no codec
    reads, is raw bytes: _spec)."""
    codec = encoding or "utf-8"

    def read_text(data, at):
        start = at + length_size
        end = start + int.from_bytes(data[at:start], "little")
        return json_string(data[start:end].decode(codec, errors)), end
    return read_text


def _bytes(length_size: int, size: int):
    """Raw bytes (a charset no codec reads: binary), padded with zero bytes to `size`
    (column_types.read_fixed_binary says why)."""
    def read_bytes(data, at):
        start = at + length_size
        end = start + int.from_bytes(data[at:start], "little")
        raw = data[start:end].ljust(size, b"\0")
        # CPython decodes b"" to "" before it looks the codec up, so the original gives "" there
        return ('{"b":"' + base64.b64encode(raw).decode("ascii") + '"}') if raw else '""', end
    return read_bytes


def _temporal(size: int, byte_order: str, fsp: int | None, value):
    """DATE, DATETIME2, TIMESTAMP2: `size` stored bytes, then the fraction (column_types)."""
    n = column_types.frac_size(fsp)
    frac_at, end = size, size + n

    def read_temporal(data, at):
        stored = int.from_bytes(data[at:at + size], byte_order)
        us = column_types.frac_us(int.from_bytes(data[at + frac_at:at + end], "big"), n) if n else 0
        return temporal_text(value(stored, us)), at + end
    return read_temporal


_DECIMAL_BYTES = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4]  # bytes of a group of 0..9 leftover digits
_DIGITS = 9  # per full 4-byte group


def _decimal(precision: int, scale: int):
    """NEWDECIMAL as mysql-replication's __read_new_decimal builds it: the groups' digits
    written out (a negative value stores them inverted), read by decimal.Decimal."""
    whole, lead = divmod(precision - scale, _DIGITS)
    full, tail = divmod(scale, _DIGITS)
    # (bytes, text format) of each group in order; the first leftover is written unpadded
    groups = [(_DECIMAL_BYTES[lead], "d")] * bool(lead) + [(4, "09d")] * whole
    fraction = [(4, "09d")] * full + [(_DECIMAL_BYTES[tail], f"0{tail}d")] * bool(tail)
    layout = groups + fraction
    size = sum(n for n, _ in layout)
    point = len(groups)  # the decimal point goes before this group (after the last one if none follows)

    def read_decimal(data, at):
        stored = bytearray(data[at:at + size])
        negative = not stored[0] & 0x80
        stored[0] ^= 0x80
        if negative:
            stored = bytes(b ^ 0xFF for b in stored)
        parts, i = ["-" if negative else ""], 0
        for n, fmt in layout:
            parts.append(format(int.from_bytes(stored[i:i + n], "big"), fmt))
            i += n
        parts.insert(point + 1, ".")  # parts[0] is the sign
        return '{"d":"' + str(decimal.Decimal("".join(parts))) + '"}', at + size
    return read_decimal


def _spec(column, ignore_decode_errors: bool) -> tuple | None:
    """What reads the column's text, as data both readers build from (this module's closures,
    source/compiled_reader.pyx's compiled readers), or None where mysql-replication's own code
    must decode it:
    ("int", bytes, signed), ("float", bytes), ("date",), ("datetime2", fsp), ("timestamp2", fsp),
    ("decimal", precision, scale), ("string", length bytes, encoding or None for UTF-8, errors),
    ("bytes", length bytes, padded size)."""
    from pymysqlreplication.constants import FIELD_TYPE as T  # lazy: only binlog readers load mysql-replication
    from pymysqlreplication.row_event import RowsEvent  # lazy: as above

    t = column.type
    ints = {T.TINY: 1, T.SHORT: 2, T.INT24: 3, T.LONG: 4, T.LONGLONG: 8}
    if t in ints:
        return ("int", ints[t], not column.unsigned)
    if t in (T.FLOAT, T.DOUBLE):
        return ("float", 4 if t == T.FLOAT else 8)
    if t == T.DATE:
        return ("date",)
    if t == T.DATETIME2:
        return ("datetime2", column.fsp)
    if t == T.TIMESTAMP2:
        return ("timestamp2", column.fsp)
    if t == T.NEWDECIMAL:
        return ("decimal", column.precision, column.decimals)
    if t not in (T.VARCHAR, T.STRING, T.BLOB):
        return None
    errors = "ignore" if ignore_decode_errors else "strict"
    charset = getattr(column, "character_set_name", None)
    encoding = RowsEvent.charset_to_encoding(charset) if charset is not None else None
    length_size = column.length_size if t == T.BLOB else 2 if column.max_length > 255 else 1
    if column_types.is_fixed_binary(column):
        return ("bytes", length_size, column.max_length)
    if encoding is not None:
        try:
            codecs.lookup(encoding)
        except LookupError:
            return ("bytes", length_size, 0)  # a charset no codec reads: raw bytes (binary)
    return ("string", length_size, encoding, errors)


_INT_FORMATS = {(1, True): "<b", (1, False): "<B", (2, True): "<h", (2, False): "<H", (4, True): "<i",
                (4, False): "<I", (8, True): "<q", (8, False): "<Q"}


def _int_reader(size: int, signed: bool):
    return _int24(signed) if size == 3 else _integer(_INT_FORMATS[size, signed])


_READERS = {
    "int": _int_reader,
    "float": lambda size: _float("<f" if size == 4 else "<d"),
    "date": lambda: _temporal(3, "little", 0, lambda v, _us: column_types.date_value(v)),
    "datetime2": lambda fsp: _temporal(5, "big", fsp, column_types.datetime2_value),
    "timestamp2": lambda fsp: _temporal(4, "big", fsp, column_types.timestamp2_value),
    "decimal": _decimal,
    "string": _string,
    "bytes": _bytes,
}


def _reader(event, column):
    """A fast reader of the column's text, or None where mysql-replication's own code must
    decode it."""
    spec = _spec(column, event._ignore_decode_errors)
    return None if spec is None else _READERS[spec[0]](*spec[1:])


def column_specs(event) -> list[tuple[str, tuple | None]] | None:
    """[(the text of '"name":', _spec)] of a Table_map event's columns, or None where a column
    has no name (they come from information_schema: mysql-replication's path fetches them)."""
    columns = event.get_table().columns
    if not all(c.name for c in columns):
        return None
    return [(_encode(c.name).decode() + ":", _spec(c, event._ignore_decode_errors)) for c in columns]


def is_full(cols_bitmap: bytes, full: bytes) -> bool:
    """Whether a rows event's columns-present bitmap is a FULL image's (`full`: every column's
    bit): MariaDB leaves the bits past the last column clear, MySQL 8 sets them."""
    if cols_bitmap == full:
        return True
    n = len(full)
    return len(cols_bitmap) == n and int.from_bytes(cols_bitmap, "little") & (m := int.from_bytes(full, "little")) == m


def _plan(event):
    """(the bitmap of a FULL image, [(the text of '"name":', reader or None)], the columns' bits
    of a NULL bitmap where every column has a reader, else None) for the event's table, or None."""
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
        readers = [(_encode(c.name).decode() + ":", _reader(event, c)) for c in columns]
        # a row whose NULL bitmap has none of these bits set takes the shortest path
        shortest = int.from_bytes(full, "little") if all(r is not None for _, r in readers) else None
        plan = (full, readers, shortest)
    table._cdcflow_row_plan = (event._ignore_decode_errors, plan)
    return plan


def install() -> None:
    """Route mysql-replication's row decoding through the plans (idempotent)."""
    global _original, _original_none_sources
    if _original is not None:
        return
    from pymysqlreplication.constants import BINLOG  # lazy: only binlog readers load mysql-replication
    from pymysqlreplication.row_event import RowsEvent  # lazy: only binlog readers load mysql-replication

    original = _original = RowsEvent._read_column_data

    def read_column_data(self, cols_bitmap, row_image_type=None):
        plan = None
        if getattr(self, IMAGE_TEXT, False) and self.event_type != BINLOG.PARTIAL_UPDATE_ROWS_EVENT:
            plan = _plan(self)
        wrapper = self.packet
        if plan is None or not is_full(cols_bitmap, plan[0]) or wrapper._BinLogPacketWrapper__data_buffer:
            return original(self, cols_bitmap, row_image_type)
        self.is_partial_json_update = False
        full, readers, shortest = plan
        # the values are read at offsets into the packet's bytes, not through the wrapper's
        # read() per value; the wrapper's count and the packet's position are set after
        packet = wrapper.packet
        data, at = packet._data, packet._position
        begin, at = at, at + len(full)
        null_bitmap = data[begin:at]
        parts = []
        # the common row: no NULL (the bitmap's bits past the last column may be set), every
        # column read here
        if shortest is not None and not int.from_bytes(null_bitmap, "little") & shortest:
            for name, reader in readers:
                text, at = reader(data, at)
                parts.append(name + text)
            readers = ()
        slow = self._RowsEvent__read_values_name
        for i, (name, reader) in enumerate(readers):
            if null_bitmap[i >> 3] & (1 << (i & 7)):
                parts.append(name + "null")
            elif reader is not None and at is not None:
                text, at = reader(data, at)
                parts.append(name + text)
            else:  # mysql-replication's own reader, from where this one got to
                if at is not None:
                    wrapper.read_bytes += at - begin
                    packet._position = at
                column = self.columns[i]
                parts.append(name + value_text(slow(column, null_bitmap, i, False, cols_bitmap, column.unsigned, i)))
                # bytes pushed back into the wrapper's buffer: the rest goes through read() too
                at = None if wrapper._BinLogPacketWrapper__data_buffer else packet._position
                begin = at
        if at is not None:
            if at > len(data):  # as pymysql's read() says of a short packet
                raise AssertionError(f"a row image ends {at - len(data)} bytes past its binlog packet")
            wrapper.read_bytes += at - begin
            packet._position = at
        return "{" + ",".join(parts) + "}"

    RowsEvent._read_column_data = read_column_data
    none_sources = _original_none_sources = RowsEvent._get_none_sources
    # which NULLs the server left out of an image: nothing to say of an image already text
    RowsEvent._get_none_sources = lambda self, data: {} if type(data) is str else none_sources(self, data)


def uninstall() -> None:
    """Back to mysql-replication's own decoding (tests compare the two)."""
    global _original
    if _original is not None:
        from pymysqlreplication.row_event import RowsEvent  # lazy: only binlog readers load mysql-replication

        RowsEvent._read_column_data, _original = _original, None
        RowsEvent._get_none_sources = _original_none_sources
