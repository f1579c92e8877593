"""Exact decoding of the binlog column types mysql-replication gets wrong.

mysql-replication (1.0.x) turns zero dates and dates with zero parts into None,
reads YEAR 0000 as 1900, an empty SET as None, BIT as a text of '0'/'1' digits
(which the sink would write as characters), and negative TIME(n) with a fraction
with the fraction counted the wrong way.  `install()` puts decoders for those
types in front of its own; every other type, and NULL, still goes through
mysql-replication.  The formats are MySQL's (mysys/my_time.cc, the "mysql56"
temporal formats MariaDB also writes by default).
"""

from __future__ import annotations

import datetime as dt

from cdcflow.core.row_codec import TemporalText

_EPOCH = dt.datetime(1970, 1, 1)


def _int_be(packet, n: int) -> int:
    return int.from_bytes(packet.read(n), "big")


def frac_size(fsp: int | None) -> int:
    """Bytes of a DATETIME2/TIMESTAMP2/TIME2 fraction: 0, 1, 2 or 3."""
    return ((fsp or 0) + 1) // 2


def frac_us(stored: int, size: int) -> int:
    """The fraction's stored value in microseconds."""
    return stored * 100 ** (3 - size) if size else 0


def _frac(packet, fsp: int) -> int:
    n = frac_size(fsp)
    return frac_us(_int_be(packet, n), n) if n else 0


def _date_or_text(y: int, mo: int, d: int):
    try:
        return dt.date(y, mo, d)
    except ValueError:  # 0000-00-00 or a zero month/day, which the SQL mode allowed upstream
        return TemporalText(f"{y:04d}-{mo:02d}-{d:02d}")


def date_value(v: int):
    """DATE from its 3 stored bytes (little-endian)."""
    return _date_or_text(v >> 9, (v >> 5) & 15, v & 31)


def read_date(packet, column):
    return date_value(packet.read_uint24())


def datetime2_value(v: int, us: int):
    """DATETIME2 from its 5 stored bytes (big-endian) and its fraction."""
    ym = (v >> 22) & ((1 << 17) - 1)
    y, mo, d = ym // 13, ym % 13, (v >> 17) & 31
    h, mi, s = (v >> 12) & 31, (v >> 6) & 63, v & 63
    try:
        return dt.datetime(y, mo, d, h, mi, s, us)
    except ValueError:
        return TemporalText(f"{y:04d}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{s:02d}.{us:06d}")


def read_datetime2(packet, column):
    v = _int_be(packet, 5)
    return datetime2_value(v, _frac(packet, column.fsp))


def timestamp2_value(secs: int, us: int):
    """TIMESTAMP2 from its 4 stored bytes (big-endian) and its fraction."""
    if secs == 0 and us == 0:
        return TemporalText("0000-00-00 00:00:00")
    # seconds since the epoch in UTC: the sink writes in a UTC session, so the instant is kept
    return _EPOCH + dt.timedelta(seconds=secs, microseconds=us)


def read_timestamp2(packet, column):
    secs = _int_be(packet, 4)
    return timestamp2_value(secs, _frac(packet, column.fsp))


def read_time2(packet, column):
    """MySQL's TIME2 packed value: 24 bits of sign/hour/minute/second, then the fraction,
    both offset so that negative times sort below positive ones."""
    fsp = column.fsp or 0
    if fsp >= 5:
        packed = _int_be(packet, 6) - 0x800000000000
    else:
        intpart = _int_be(packet, 3) - 0x800000
        if fsp == 0:
            frac, unit, width = 0, 0, 0
        elif fsp <= 2:
            frac, unit, width = _int_be(packet, 1), 10_000, 0x100
        else:
            frac, unit, width = _int_be(packet, 2), 100, 0x10000
        if intpart < 0 and frac:
            intpart += 1
            frac -= width
        packed = (intpart << 24) + frac * unit
    sign = -1 if packed < 0 else 1
    packed = abs(packed)
    hms, us = packed >> 24, packed % (1 << 24)
    h, mi, s = (hms >> 12) % (1 << 10), (hms >> 6) % 64, hms % 64
    return sign * dt.timedelta(hours=h, minutes=mi, seconds=s, microseconds=us)


def read_year(packet, column):
    v = packet.read_uint8()
    return 0 if v == 0 else v + 1900


def read_bit(packet, column):
    # an integer: BIT columns take integer literals, and filters compare them as numbers
    return _int_be(packet, column.bytes)


def read_set(packet, column):
    mask = packet.read_uint_by_size(column.size)
    if not column.set_values:
        return mask  # no metadata: the member bitmask is also a valid SET literal
    return frozenset(v for i, v in enumerate(column.set_values) if mask & (1 << i))


def _decoders() -> dict:
    from pymysqlreplication.constants import FIELD_TYPE as T

    return {T.DATE: read_date, T.DATETIME2: read_datetime2, T.TIMESTAMP2: read_timestamp2, T.TIME2: read_time2,
            T.YEAR: read_year, T.BIT: read_bit, T.SET: read_set}


_installed = False


def install() -> None:
    """Route the types above through these decoders (idempotent)."""
    global _installed
    if _installed:
        return
    from pymysqlreplication.bitmap import BitGet
    from pymysqlreplication.row_event import RowsEvent

    decoders = _decoders()
    original = RowsEvent._RowsEvent__read_values_name

    def read_values_name(self, column, null_bitmap, null_bitmap_index, is_partial, cols_bitmap, unsigned, i):
        decode = decoders.get(column.type)
        if decode is None or BitGet(cols_bitmap, i) == 0 or self._is_null(null_bitmap, null_bitmap_index):
            return original(self, column, null_bitmap, null_bitmap_index, is_partial, cols_bitmap, unsigned, i)
        return decode(self.packet, column)

    RowsEvent._RowsEvent__read_values_name = read_values_name
    _installed = True
