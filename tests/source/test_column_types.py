"""The binlog decoders that replace mysql-replication's for zero dates, TIME2, YEAR, BIT and
SET, on byte strings laid out as MySQL's mysys/my_time.cc packs them; and every type's value
through the event store (row image → Parquet → Spark → image → SQL literal)."""

from __future__ import annotations

import datetime as dt
import decimal
import struct
from types import SimpleNamespace

import pytest

from cdcflow.core.event import Event
from cdcflow.core.row_codec import TemporalText, decode_image, encode_image, sql_literal
from cdcflow.source import column_types as bt
from cdcflow.store.events import RunFolder


class Packet:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def read(self, n):
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def read_uint8(self):
        return self.read(1)[0]

    def read_uint24(self):
        return int.from_bytes(self.read(3), "little")

    def read_uint_by_size(self, n):
        return int.from_bytes(self.read(n), "little")

    def done(self):
        return self.pos == len(self.data)


def decode(fn, data: bytes, **column):
    p = Packet(data)
    v = fn(p, SimpleNamespace(**column))
    assert p.done(), "the decoder must consume exactly the value's bytes"
    return v


# --- packers written from MySQL's formats, independent of the decoders ------------------

def pack_date(y, m, d):
    return (y << 9 | m << 5 | d).to_bytes(3, "little")


def pack_datetime2(y, mo, d, h, mi, s, us, fsp):
    v = (1 << 39) | ((y * 13 + mo) << 22) | (d << 17) | (h << 12) | (mi << 6) | s
    n = (fsp + 1) // 2
    return v.to_bytes(5, "big") + ((us // 100 ** (3 - n)).to_bytes(n, "big") if n else b"")


def pack_time2(neg, h, mi, s, us, fsp):
    """my_time_packed_to_binary(TIME_to_longlong_time_packed(...)), with C's shift (floor)
    and C's remainder and division (truncating toward zero)."""
    packed = ((h << 12 | mi << 6 | s) << 24) + us
    packed = -packed if neg else packed
    if fsp >= 5:
        return (packed + 0x800000000000).to_bytes(6, "big")
    head = ((packed >> 24) + 0x800000).to_bytes(3, "big")
    frac = -((-packed) % (1 << 24)) if packed < 0 else packed % (1 << 24)
    if fsp == 0:
        return head
    if fsp <= 2:
        return head + (int(frac / 10000) & 0xFF).to_bytes(1, "big")
    return head + (int(frac / 100) & 0xFFFF).to_bytes(2, "big")


@pytest.mark.parametrize("ymd, want", [
    ((2024, 2, 29), dt.date(2024, 2, 29)),
    ((1000, 1, 1), dt.date(1000, 1, 1)),
    ((9999, 12, 31), dt.date(9999, 12, 31)),
    ((0, 0, 0), TemporalText("0000-00-00")),
    ((2000, 0, 0), TemporalText("2000-00-00")),
    ((2000, 1, 0), TemporalText("2000-01-00")),
    ((2001, 2, 30), TemporalText("2001-02-30")),  # ALLOW_INVALID_DATES
])
def test_dates_and_zero_dates(ymd, want):
    got = decode(bt.read_date, pack_date(*ymd))
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize("fsp", [0, 1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("parts, valid", [
    ((9999, 12, 31, 23, 59, 59, 999999), True),
    ((1000, 1, 1, 0, 0, 0, 0), True),
    ((0, 0, 0, 0, 0, 0, 0), False),
    ((2000, 0, 1, 12, 30, 0, 500000), False),
])
def test_datetime2_every_precision(fsp, parts, valid):
    us = parts[6] - parts[6] % 10 ** (6 - fsp)  # what a column of this precision can hold
    got = decode(bt.read_datetime2, pack_datetime2(*parts[:6], us, fsp), fsp=fsp)
    if valid:
        assert got == dt.datetime(*parts[:6], us)
    else:
        y, mo, d, h, mi, s = parts[:6]
        assert got == TemporalText(f"{y:04d}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{s:02d}.{us:06d}")


@pytest.mark.parametrize("fsp", [0, 1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("neg, h, mi, s, us", [
    (False, 0, 0, 0, 0), (True, 0, 0, 0, 10), (True, 838, 59, 59, 0), (False, 838, 59, 59, 0),
    (True, 12, 34, 56, 789000), (False, 25, 0, 0, 500000), (True, 0, 0, 1, 990000), (True, 100, 0, 0, 120000),
])
def test_time2_negative_and_beyond_a_day(fsp, neg, h, mi, s, us):
    us -= us % 10 ** (6 - fsp)
    got = decode(bt.read_time2, pack_time2(neg, h, mi, s, us, fsp), fsp=fsp)
    want = dt.timedelta(hours=h, minutes=mi, seconds=s, microseconds=us) * (-1 if neg else 1)
    assert got == want


def test_timestamp2_is_utc_and_zero_is_the_zero_timestamp():
    assert decode(bt.read_timestamp2, (1).to_bytes(4, "big"), fsp=0) == dt.datetime(1970, 1, 1, 0, 0, 1)
    assert decode(bt.read_timestamp2, (2**31 - 1).to_bytes(4, "big") + (999999).to_bytes(3, "big"), fsp=6) \
        == dt.datetime(2038, 1, 19, 3, 14, 7, 999999)
    assert decode(bt.read_timestamp2, bytes(6), fsp=4) == TemporalText("0000-00-00 00:00:00")


@pytest.mark.parametrize("stored, year", [(0, 0), (1, 1901), (100, 2000), (255, 2155)])
def test_year_zero_is_not_1900(stored, year):
    assert decode(bt.read_year, bytes([stored])) == year


@pytest.mark.parametrize("data, nbytes, value", [
    (b"\x00", 1, 0), (b"\x01", 1, 1), (b"\x15", 1, 21), (b"\xff" * 8, 8, 2**64 - 1),
    (b"\x80\x00\x00\x00\x00\x00\x00\x01", 8, 2**63 + 1), (b"\x01\x00", 2, 256),
])
def test_bit_is_an_integer(data, nbytes, value):
    assert decode(bt.read_bit, data, bytes=nbytes) == value
    assert sql_literal(value) == str(value)


def test_set_members_and_the_empty_set():
    col = dict(size=1, set_values=["a", "b", "c", "d"])
    assert decode(bt.read_set, b"\x09", **col) == {"a", "d"}
    empty = decode(bt.read_set, b"\x00", **col)
    assert empty == frozenset() and empty is not None
    assert sql_literal(decode_image(encode_image({"s": empty}))["s"]) == "''"
    assert decode(bt.read_set, b"\x05\x00", size=2, set_values=None) == 5


# --- every type through the event store ---------------------------------------------------

VALUES = {
    "tinyint": (-128, "-128"), "bigint unsigned max": (2**64 - 1, "18446744073709551615"),
    "bigint min": (-2**63, "-9223372036854775808"),
    "decimal(65,30)": (decimal.Decimal("-99999999999999999999999999999999999.999999999999999999999999999999"),
                       "-99999999999999999999999999999999999.999999999999999999999999999999"),
    "decimal tiny": (decimal.Decimal("0.000000000000000000000000000001"), "0.000000000000000000000000000001"),
    "float": (struct.unpack("<f", struct.pack("<f", 0.1))[0], "0.10000000149011612"),
    "double": (1.7976931348623157e308, "1.7976931348623157e+308"),
    "date": (dt.date(1000, 1, 1), "'1000-01-01'"),
    "zero date": (TemporalText("0000-00-00"), "'0000-00-00'"),
    "zero datetime": (TemporalText("0000-00-00 00:00:00.000000"), "'0000-00-00 00:00:00.000000'"),
    "datetime(6)": (dt.datetime(9999, 12, 31, 23, 59, 59, 999999), "'9999-12-31 23:59:59.999999'"),
    "time negative": (-dt.timedelta(hours=838, minutes=59, seconds=59), "'-838:59:59.000000'"),
    "time tiny negative": (-dt.timedelta(microseconds=1), "'-00:00:00.000001'"),
    "year": (0, "0"),
    "utf8mb4": ("ÿ😀𝄞汉字 \\ ' \0", "'ÿ😀𝄞汉字 \\\\ \\' \\0'"),
    "latin1 text": ("café ÿ ½ €", "'café ÿ ½ €'"),
    "bytes": (bytes(range(256)), "X'" + bytes(range(256)).hex() + "'"),
    "empty bytes": (b"", "''"),
    "enum": ("c d", "'c d'"),
    "set": (frozenset({"a", "d"}), "'a,d'"),
    "bit(64)": (2**64 - 1, "18446744073709551615"),
    "json text": ('{"a": [1, 2.50, null]}', "'{\\\"a\\\": [1, 2.50, null]}'"),
    "json document": ({"a": [1, "x"]}, "'{\\\"a\\\":[1,\\\"x\\\"]}'"),
    "null": (None, "NULL"),
}


def test_every_type_through_the_event_store(tmp_path, spark):
    folder = RunFolder(str(tmp_path), "cf", "run")
    w = folder.writer("raw", batch_rows=3)  # several row groups
    names = list(VALUES)
    for i, name in enumerate(names):
        w.add(Event(commit_ts=i, seq=0, schema="s", table="t", op="insert", after=encode_image({"v": VALUES[name][0]})))
    w.close()
    rows = spark.read.parquet(folder.path("raw")).orderBy("commit_ts").select("after").collect()
    for name, r in zip(names, rows):
        value, literal = VALUES[name]
        decoded = decode_image(r["after"])["v"]
        assert sql_literal(decoded) == literal, name
        if not isinstance(value, (dict, frozenset, dt.timedelta)):  # these decode to their literal
            assert decoded == value and type(decoded) is type(value), name
