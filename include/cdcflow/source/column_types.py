"""Exact decoding of the binlog column types mysql-replication gets wrong.

mysql-replication (1.0.x) turns zero dates and dates with zero parts into None,
reads YEAR 0000 as 1900, an empty SET as None, an ENUM whose members it has not as None, BIT as a text of '0'/'1' digits
(which the sink would write as characters), negative TIME(n) with a fraction
with the fraction counted the wrong way, a fixed-size binary value (BINARY(n), UUID,
INET6, INET4) without its trailing zero bytes, and the pre-5.6 temporal formats with
MariaDB's fractions not at all.  `install()` puts decoders for those
types in front of its own; every other type, and NULL, still goes through
mysql-replication.  The formats are MySQL's (mysys/my_time.cc, the "mysql56"
temporal formats MariaDB also writes by default).
"""

from __future__ import annotations

import datetime as dt

import pymysql

from cdcflow.core.errors import CdcflowError
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
    return datetime_value(y, mo, d, (v >> 12) & 31, (v >> 6) & 63, v & 63, us)


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


# -- the pre-5.6 temporal formats (MYSQL_TYPE_DATETIME, TIME, TIMESTAMP), MariaDB's included: a
# table created with mysql56_temporal_format=OFF (or upgraded in place from an old server) still
# has them.  Without a fraction they are MySQL's old packed integers; with one, MariaDB 5.3's
# "hires" layouts (sql/field.cc, sql-common/my_time.c), whose byte count the fraction's digits
# give -- the binlog gives no metadata for these types, so table_maps reads the digits from the
# upstream's definition (old_temporal_fsp).
_DATETIME_HIRES_BYTES = (5, 6, 6, 7, 7, 7, 8)  # by fractional digits 0..6
_TIME_HIRES_BYTES = (3, 4, 4, 5, 5, 5, 6)
_SEC_PART_BYTES = (0, 1, 1, 2, 2, 3, 3)
_TIME_ZERO_POINT_US = (838 * 3600 + 59 * 60 + 59 + 1) * 1_000_000  # a hires TIME's stored 0 is -838:59:59.999999 - 1 us
OLD_TEMPORAL_NAMES = {"datetime", "time", "timestamp"}  # information_schema's DATA_TYPE of these columns


def _unshift(stored: int, fsp: int) -> int:
    """A hires value's stored fraction-scaled integer in microseconds (sec_part_unshift)."""
    return stored * 10 ** (6 - fsp)


def _unpack_datetime(us: int):
    """MariaDB's unpack_time of a packed date and time: ((((year*13+month)*32+day)*24+hour)*60+minute)*60+second,
    in microseconds."""
    us, frac = divmod(us, 1_000_000)
    us, s = divmod(us, 60)
    us, mi = divmod(us, 60)
    us, h = divmod(us, 24)
    us, d = divmod(us, 32)
    y, mo = divmod(us, 13)
    return datetime_value(y, mo, d, h, mi, s, frac)


def datetime_value(y: int, mo: int, d: int, h: int, mi: int, s: int, us: int):
    """A DATETIME's parts as a datetime, or as its text where they are no date Python has (zero
    dates and zero parts, which the SQL mode allowed upstream)."""
    try:
        return dt.datetime(y, mo, d, h, mi, s, us)
    except ValueError:
        return TemporalText(f"{y:04d}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{s:02d}.{us:06d}")


def read_old_datetime(packet, column):
    fsp = _old_fsp(column)
    if fsp:
        return _unpack_datetime(_unshift(_int_be(packet, _DATETIME_HIRES_BYTES[fsp]), fsp))
    v = int.from_bytes(packet.read(8), "little")  # YYYYMMDDhhmmss as a number
    date, time = divmod(v, 1_000_000)
    return datetime_value(date // 10_000, date // 100 % 100, date % 100, time // 10_000, time // 100 % 100,
                          time % 100, 0)


def read_old_time(packet, column):
    fsp = _old_fsp(column)
    if fsp:
        us = _unshift(_int_be(packet, _TIME_HIRES_BYTES[fsp]), fsp) - _TIME_ZERO_POINT_US
        return dt.timedelta(microseconds=us)
    v = int.from_bytes(packet.read(3), "little", signed=True)  # [-]HHMMSS as a number
    sign, v = (-1 if v < 0 else 1), abs(v)
    return sign * dt.timedelta(hours=v // 10_000, minutes=v // 100 % 100, seconds=v % 100)


def read_old_timestamp(packet, column):
    fsp = _old_fsp(column)
    if fsp:
        secs = _int_be(packet, 4)
        return timestamp2_value(secs, _unshift(_int_be(packet, _SEC_PART_BYTES[fsp]), fsp))
    return timestamp2_value(int.from_bytes(packet.read(4), "little"), 0)


def set_old_temporal_fsp(event) -> None:
    """Give the pre-5.6 temporal columns of a Table_map event their fractional digits (`fsp`),
    which the binlog leaves out, from the upstream's definition of the table.  MariaDB marks such
    a column's type `/* mariadb-5.3 */`; a column without the mark and with a fraction, or one the
    table no longer has, was changed since the event was written: its values cannot be read
    (`fsp` stays None, and the decoder says so)."""
    from pymysqlreplication.constants import FIELD_TYPE as T  # lazy: only binlog readers load mysql-replication

    old = [c for c in event.columns if c.type in (T.DATETIME, T.TIME, T.TIMESTAMP)]
    if not old:
        return
    with event._ctl_connection.cursor(pymysql.cursors.Cursor) as cur:  # its own default gives dicts
        cur.execute("SELECT COLUMN_NAME, DATETIME_PRECISION, COLUMN_TYPE FROM information_schema.COLUMNS "
                    "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s", (event.schema, event.table))
        now = {str(name).lower(): (int(p or 0), str(kind)) for name, p, kind in cur.fetchall()}
    for c in old:
        fsp, kind = now.get(str(c.name).lower(), (None, ""))
        c.fsp = fsp if fsp == 0 or "mariadb-5.3" in kind else None
        c.old_temporal_now = kind or "no such column"  # what the error names when fsp is None
        c.old_temporal_table = f"{event.schema}.{event.table}"


def _old_fsp(column) -> int:
    fsp = getattr(column, "fsp", 0)
    if fsp is None:
        raise CdcflowError(
            f"cannot read column {column.name!r} of {column.old_temporal_table}: the binlog holds it in the "
            f"pre-5.6 temporal format, whose "
            f"fractional digits only the table's definition gives, and the upstream's definition is now "
            f"{column.old_temporal_now!r}",
            hint="the table changed after these rows were written: start the changefeed after that change "
                 "(create --start-ts, or a snapshot)",
        )
    return fsp


def read_fixed_binary(packet, column):
    """BINARY(n), and MariaDB's UUID, INET6 and INET4 (a fixed-size binary in the binlog): the
    server leaves the value's trailing zero bytes out of the row image (Field_string::pack strips
    the pad character, 0x00 for binary) and a replica pads them back, as here."""
    size = 2 if column.max_length > 255 else 1
    return packet.read_length_coded_pascal_string(size).ljust(column.max_length, b"\0")


def is_fixed_binary(column) -> bool:
    from pymysqlreplication.constants import FIELD_TYPE as T  # lazy: only binlog readers load mysql-replication

    return column.type == T.STRING and getattr(column, "character_set_name", None) == "binary"


def read_year(packet, column):
    v = packet.read_uint8()
    return 0 if v == 0 else v + 1900


def read_bit(packet, column):
    # an integer: BIT columns take integer literals, and filters compare them as numbers
    return _int_be(packet, column.bytes)


def read_enum(packet, column):
    index = packet.read_uint_by_size(column.size)
    if not column.enum_values:
        return index  # members unknown or not text (enum_members): the member number is also a valid ENUM literal
    return column.enum_values[index] if index < len(column.enum_values) else index


def read_set(packet, column):
    mask = packet.read_uint_by_size(column.size)
    if not column.set_values:
        return mask  # no metadata: the member bitmask is also a valid SET literal
    return frozenset(v for i, v in enumerate(column.set_values) if mask & (1 << i))


def _decoders() -> dict:
    from pymysqlreplication.constants import FIELD_TYPE as T  # lazy: only binlog readers load mysql-replication

    return {T.DATE: read_date, T.DATETIME2: read_datetime2, T.TIMESTAMP2: read_timestamp2, T.TIME2: read_time2,
            T.YEAR: read_year, T.BIT: read_bit, T.ENUM: read_enum, T.SET: read_set,
            T.DATETIME: read_old_datetime, T.TIME: read_old_time, T.TIMESTAMP: read_old_timestamp}


_installed = False


def install() -> None:
    """Route the types above through these decoders (idempotent)."""
    global _installed
    if _installed:
        return
    from pymysqlreplication.bitmap import BitGet  # lazy: only binlog readers load mysql-replication
    from pymysqlreplication.row_event import RowsEvent  # lazy: only binlog readers load mysql-replication

    decoders = _decoders()
    original = RowsEvent._RowsEvent__read_values_name

    def read_values_name(self, column, null_bitmap, null_bitmap_index, is_partial, cols_bitmap, unsigned, i):
        decode = read_fixed_binary if is_fixed_binary(column) else decoders.get(column.type)
        if decode is None or BitGet(cols_bitmap, i) == 0 or self._is_null(null_bitmap, null_bitmap_index):
            return original(self, column, null_bitmap, null_bitmap_index, is_partial, cols_bitmap, unsigned, i)
        return decode(self.packet, column)

    RowsEvent._RowsEvent__read_values_name = read_values_name
    _installed = True
