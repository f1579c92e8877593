"""The values the evaluator computes with, and a row's values read as them: MySQL's types as
Python values (a YEAR, BIT or FLOAT column's value, an ENUM or SET member, a hex literal, a
temporal value by its parts, a JSON document) and the order of JSON documents, which their
equality needs."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Col:
    """A column as the evaluator reads it: `kind` is int, bit, year, decimal, float, text, binary,
    enum, set, date, datetime, time or json; `length` BINARY(n)'s n (the binlog leaves its
    trailing zero bytes out), a temporal column's fraction digits, BIT(M)'s bytes, or 4 for a
    FLOAT (single precision); `members` an ENUM's or SET's values."""
    name: str
    kind: str
    length: int = 0
    members: tuple[str, ...] = field(default=())


class Hex(bytes):
    """A hex or bit literal: bytes against a string, an unsigned integer against a number."""


class Member(str):
    """An ENUM's or SET's value: text against a string, `number` against a number."""
    __slots__ = ("number",)


@dataclass(frozen=True, order=True)
class Temporal:
    """A DATE, DATETIME or TIMESTAMP as its parts (zero dates included), or a TIME as signed
    microseconds (parts = (us,))."""
    parts: tuple[int, ...]
    kind: str = field(compare=False)  # date, datetime, time
    fsp: int = field(default=0, compare=False)  # the column's fraction digits, for its text


class Bit(int):
    """A BIT(M) column's value: a number, and M/8 bytes as a string (LENGTH, IFNULL(b, 'x'))."""
    size: int


class Float32(float):
    """A FLOAT (single precision) column's value: its text has FLOAT's shortest digits."""


class Year(int):
    """A YEAR column's value: a number compared with it is read as a year (1-69: 20xx, 70-99: 19xx)."""


# the zero date's parts (0000-00-00 00:00:00), what MySQL reads a value that is no date as
ZERO = (0, 0, 0, 0, 0, 0, 0)


def numeric_pair(x, y):
    """Two numbers as one type, as MySQL compares and computes them: DOUBLE if either is one, else
    DECIMAL if either is one, else integers."""
    if isinstance(x, float) or isinstance(y, float):
        return float(x), float(y)
    if isinstance(x, decimal.Decimal) or isinstance(y, decimal.Decimal):
        return decimal.Decimal(x), decimal.Decimal(y)
    return x, y


class Json:
    """A JSON value (MySQL's and TiDB's JSON type): `doc` as json.loads reads it."""
    __slots__ = ("doc",)

    def __init__(self, doc):
        self.doc = doc

    def __eq__(self, other):
        return isinstance(other, Json) and json_cmp(self.doc, other.doc) == 0

    def __hash__(self):
        return hash(self.text())

    def text(self) -> str:
        """MySQL's text of the value: `, ` and `: ` between items, characters unescaped."""
        return json.dumps(self.doc, ensure_ascii=False, separators=(", ", ": "))


_JSON_TYPE_RANK = {"null": 0, "number": 1, "string": 2, "object": 3, "array": 4, "boolean": 5}


def json_kind(d) -> str:
    if d is None:
        return "null"
    if isinstance(d, bool):
        return "boolean"
    if isinstance(d, (int, float, decimal.Decimal)):
        return "number"
    return {str: "string", dict: "object", list: "array"}[type(d)]


def json_cmp(x, y) -> int:
    """Two JSON documents in MySQL's order: by type precedence across types (BOOLEAN > ARRAY >
    OBJECT > STRING > number > NULL), numbers by value, strings by bytes, arrays item by item."""
    kx, ky = json_kind(x), json_kind(y)
    if kx != ky:
        return (_JSON_TYPE_RANK[kx] > _JSON_TYPE_RANK[ky]) - (_JSON_TYPE_RANK[kx] < _JSON_TYPE_RANK[ky])
    if kx == "array":
        for a, b in zip(x, y):
            c = json_cmp(a, b)
            if c:
                return c
        return (len(x) > len(y)) - (len(x) < len(y))
    if kx == "object":
        same = x.keys() == y.keys() and all(json_cmp(x[k], y[k]) == 0 for k in x)
        return 0 if same else 1
    if kx == "null":
        return 0
    if kx == "number":
        a, b = numeric_pair(x, y)
        return (a > b) - (a < b)
    return (x > y) - (x < y)


# --- row values ---------------------------------------------------------------------

_DATE_RE = re.compile(r"\s*(\d{1,4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{0,6})\d*)?)?\s*$")
_TIME_RE = re.compile(r"\s*(-)?(\d+):(\d{1,2})(?::(\d{1,2})(?:\.(\d{0,6})\d*)?)?\s*$")


def parse_temporal(s: str, kind: str) -> Temporal | None:
    """A string read as `kind` (a date or datetime reads either form); None if it is neither."""
    if kind == "time":
        m = _TIME_RE.match(s)
        if not m:
            return None
        sign, h, mi, sec, frac = m.groups()
        us = ((int(h) * 60 + int(mi)) * 60 + int(sec or 0)) * 1_000_000 + int((frac or "").ljust(6, "0"))
        return Temporal((-us if sign else us,), "time")
    m = _DATE_RE.match(s)
    if not m:
        return None
    y, mo, d, h, mi, sec, frac = m.groups()
    parts = (int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(sec or 0), int((frac or "").ljust(6, "0")))
    if parts[1] > 12 or parts[2] > 31 or parts[3] > 23 or parts[4] > 59 or parts[5] > 59:
        return None
    return Temporal(parts, "datetime" if h is not None else "date")


def typed_value(col: Col, v):
    """A row image's plain value (row_codec.plain_value) as the evaluator compares it."""
    if v is None:
        return None
    k = col.kind
    if k == "int":
        return int(v)
    if k == "year":
        return Year(v)
    if k == "decimal":
        return decimal.Decimal(v)
    if k == "float":
        return Float32(v) if col.length == 4 else float(v)
    if k == "bit":
        b = Bit(v)
        b.size = col.length
        return b
    if k == "binary":
        b = v.encode("utf-8", "surrogateescape") if isinstance(v, str) else bytes(v)
        return b.ljust(col.length, b"\0")
    if k in ("date", "datetime"):
        if isinstance(v, dt.datetime):
            v = v.astimezone(dt.timezone.utc).replace(tzinfo=None) if v.tzinfo else v
            return Temporal((v.year, v.month, v.day, v.hour, v.minute, v.second, v.microsecond), k, col.length)
        if isinstance(v, dt.date):
            return Temporal((v.year, v.month, v.day, 0, 0, 0, 0), k, col.length)
        t = parse_temporal(str(v), k)
        return None if t is None else Temporal(t.parts, k, col.length)
    if k == "time":
        t = parse_temporal(str(v), "time")
        return None if t is None else Temporal(t.parts, k, col.length)
    if k in ("enum", "set"):
        s = str(v)
        m = Member(s)
        if k == "enum":
            m.number = col.members.index(s) + 1 if s in col.members else 0
        else:
            m.number = sum(1 << col.members.index(x) for x in s.split(",") if x in col.members)
        return m
    if isinstance(v, (bytes, bytearray)):
        v = bytes(v).decode("utf-8", "replace")
    return str(v)
