"""A value read as another type, as TiDB's expression engine reads it: in numeric context
(`number`, `to_int`), as text (`as_text`: MySQL's text of a temporal value, a float, a BIT), as JSON
(`as_json`), as a temporal value, a constant against a YEAR; and the three-way comparison of two
values (`compare`), which picks among them by the pair's types."""

from __future__ import annotations

import decimal
import math
import re
import struct

from cdcflow.filter.mysql_eval.tidb_time import (
    datetime_from_number,
    duration_from_number,
    tidb_datetime,
    tidb_duration,
    two_digit_year,
)
from cdcflow.filter.mysql_eval.values import (
    ZERO,
    Bit,
    Float32,
    Hex,
    Json,
    Member,
    Temporal,
    Year,
    json_cmp,
    numeric_pair,
)


_NUM_PREFIX = re.compile(r"[ \t\n\r\f\v]*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")


def _str_number(s: str) -> float:
    m = _NUM_PREFIX.match(s)
    return float(m.group(1)) if m else 0.0


def _temporal_number(t: Temporal):
    if t.kind == "time":
        us = abs(t.parts[0])
        h, rem = divmod(us, 3_600_000_000)
        m, rem = divmod(rem, 60_000_000)
        s, frac = divmod(rem, 1_000_000)
        n = decimal.Decimal(h * 10000 + m * 100 + s) + decimal.Decimal(frac).scaleb(-6)
        return -n if t.parts[0] < 0 else n
    y, mo, d, h, mi, s, us = t.parts
    if t.kind == "date":
        return y * 10000 + mo * 100 + d
    return decimal.Decimal(((y * 100 + mo) * 100 + d) * 1_000_000 + h * 10000 + mi * 100 + s) + \
        decimal.Decimal(us).scaleb(-6)


def number(v):
    """A value in numeric context: int, Decimal or float."""
    if isinstance(v, (bool, Year, Bit)):
        return int(v)
    if isinstance(v, (int, float, decimal.Decimal)):
        return v
    if isinstance(v, Member):
        return v.number
    if isinstance(v, Hex):
        return int.from_bytes(v, "big") if v else 0
    if isinstance(v, Temporal):
        return _temporal_number(v)
    if isinstance(v, Json):
        d = v.doc
        return int(d) if isinstance(d, bool) else d if isinstance(d, (int, float)) else \
            _str_number(d) if isinstance(d, str) else 0
    if isinstance(v, bytes):
        return _str_number(v.decode("latin-1"))
    return _str_number(str(v))


def is_string(v) -> bool:
    return isinstance(v, (str, bytes)) and not isinstance(v, Temporal)


def compare(a, b, op: str = "EQ") -> int | None:
    """MySQL's three-way comparison of two non-NULL values, as TiDB makes it; None where TiDB
    cannot read one side as the other's type (a string that is no date/time against a temporal
    value: an error in TiCDC's filter session, the row kept).  `op` (EQ, NEQ, LT, LTE, GT, GTE: a
    op b) is what TiDB's reading of a constant against a YEAR depends on (_year_operand)."""
    if isinstance(a, Json) or isinstance(b, Json):  # the other side read as JSON (a string a JSON string)
        return json_cmp(as_json(a).doc, as_json(b).doc)
    if isinstance(a, Temporal) or isinstance(b, Temporal):
        if isinstance(a, Temporal) and isinstance(b, Temporal):
            x, y = _as_datetime(a), _as_datetime(b)
            return (x > y) - (x < y)
        if isinstance(a, Temporal):
            return _temporal_cmp(a, b)
        c = _temporal_cmp(b, a)
        return None if c is None else -c
    if isinstance(a, Year) != isinstance(b, Year):  # a constant against YEAR is read as a year
        if isinstance(a, Year):
            b = _year_operand(b, op)
        else:
            a = _year_operand(a, _MIRROR.get(op, op))
        if a is None or b is None:
            return None
    if is_string(a) and is_string(b):
        if isinstance(a, bytes) or isinstance(b, bytes):
            x, y = _bytes(a), _bytes(b)
        else:
            x, y = str(a), str(b)  # code point order is UTF-8's byte order
        return (x > y) - (x < y)
    x, y = numeric_pair(number(a), number(b))
    return (x > y) - (x < y)


_MIRROR = {"LT": "GT", "GT": "LT", "LTE": "GTE", "GTE": "LTE"}


def _plain_number(v) -> bool:
    """A number as a literal or arithmetic gives it (not a YEAR, BIT, ENUM or SET value)."""
    return isinstance(v, (int, float, decimal.Decimal)) and not isinstance(v, (Year, Bit))


def _temporal_cmp(t: Temporal, v) -> int | None:
    """A DATE/DATETIME/TIMESTAMP/TIME value against one of another type, as TiDB's
    GetAccurateCmpType and refineArgs compare them: a string read as the temporal type (TiDB's
    ParseTime, or ParseDuration for a TIME); a number against a DATE as numbers (YYYYMMDD), against
    a DATETIME/TIMESTAMP as the DATETIME TiDB converts an integer or decimal to (as numbers where
    it converts none, and for a double), against a TIME as the TIME it reads (hhmmss)."""
    if is_string(v) and not isinstance(v, Hex):
        s = v if isinstance(v, str) else v.decode("latin-1")
        other = tidb_duration(s) if t.kind == "time" else tidb_datetime(s)
        if other is None:
            return None
    elif _plain_number(v):
        other = duration_from_number(v) if t.kind == "time" else None if t.kind == "date" else \
            datetime_from_number(v)
        if other is None and t.kind != "time":  # compared as numbers (DOUBLE)
            x, y = numeric_pair(number(t), number(v))
            return (x > y) - (x < y)
        if other is None:
            return None
    else:  # a hex literal, a YEAR, BIT, ENUM or SET value
        other = to_temporal(v, t.kind)
    x, y = _as_datetime(t), _as_datetime(other)
    return (x > y) - (x < y)


def _to_year(v):
    n = number(v)
    r = int(decimal.Decimal(n).to_integral_value(decimal.ROUND_HALF_UP)) if not isinstance(n, int) else n
    return r + 2000 if 0 < r < 70 else r + 1900 if 70 <= r < 100 else r


def _adjust_year(n: int, zero_too: bool = False) -> int | None:
    """TiDB's AdjustYear: 1-69 as 20xx, 70-99 as 19xx (0 as 2000 only if `zero_too`); None outside
    1901-2155 (0 aside)."""
    if n == 0 and not zero_too:
        return 0
    y = two_digit_year(n)
    return y if 1901 <= y <= 2155 else None


def _year_operand(v, op: str):
    """A value compared with a YEAR, as TiDB's compareFunctionClass.refineArgs reads a constant
    there: an integer as a year (21 is 2021, AdjustYear).  A decimal, double or numeric string
    (RefineComparedConstant): the year it converts to where that equals it (2021.0); else for
    < and >= rounded up, for <= and > down (a double's or string's as a year again, a decimal's
    as the integer CEIL/FLOOR give: y < 21.5 is y < 22), for = a string that is an integer its
    year ('21' is 2021, '0' and '00' 2000), and any other value, and any for <>, the number itself
    (y = 21.0 and y <> '21' compare with 21).  A string that is no number is None: TiDB fails."""
    if isinstance(v, (str, bytes)) and not isinstance(v, (Hex, Member)):
        text = v if isinstance(v, str) else v.decode("latin-1")
        trimmed = text.strip()
        if not re.fullmatch(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", trimmed):
            return None
        f = decimal.Decimal(trimmed)
        if f.adjusted() > 40:  # no year, nor a BIGINT: compared as the number it is
            return f
        n = int(f.to_integral_value(decimal.ROUND_HALF_UP))
        year = _adjust_year(n, len(text) != 4 and n == 0 and trimmed.startswith("0"))
    elif isinstance(v, (float, decimal.Decimal)):
        if not (math.isfinite(v) if isinstance(v, float) else v.is_finite()):
            return v
        f = decimal.Decimal(repr(v)) if isinstance(v, float) else v
        year = _adjust_year(int(f.to_integral_value(decimal.ROUND_HALF_UP)))
    else:
        return _to_year(v)
    if year is None or year == f:
        return f if year is None else year
    if op in ("LT", "GTE", "LTE", "GT"):
        n = int(f.to_integral_value(decimal.ROUND_CEILING if op in ("LT", "GTE") else decimal.ROUND_FLOOR))
        if isinstance(v, decimal.Decimal):
            return n  # CEIL/FLOOR of a DECIMAL is an integer, which TiDB leaves as it is
        adjusted = _adjust_year(n)
        return n if adjusted is None else adjusted
    if op == "EQ" and isinstance(v, (str, bytes)) and f == f.to_integral_value():
        return year
    return f


def to_temporal(v, kind: str) -> Temporal:
    """A number (a hex literal, YEAR or BIT value among them) read as a temporal value where TiDB's
    own readings (tidb_datetime, datetime_from_number, duration_from_number) do not apply: as
    YYYYMMDD[hhmmss] or hhmmss; what is none reads as zero, as MySQL does with a warning."""
    if kind == "time":
        n = decimal.Decimal(number(v))
        whole = int(abs(n))
        h, rest = divmod(whole, 10000)
        us = ((h * 60 + rest // 100) * 60 + rest % 100) * 1_000_000 + int((abs(n) - whole) * 1_000_000)
        return Temporal((-us if n < 0 else us,), "time")
    if isinstance(v, Hex):
        return Temporal(ZERO, kind)
    n = decimal.Decimal(number(v))
    if n < 0:
        return Temporal(ZERO, kind)
    whole, us = int(n), int((n - int(n)) * 1_000_000)
    if len(str(whole)) <= 8:  # a date; its fraction only counts for 0 (0.5 is 00:00:00.5 of the zero date)
        parts = (whole // 10000, whole // 100 % 100, whole % 100, 0, 0, 0, 0 if whole else us)
    else:
        day, tod = divmod(whole, 1_000_000)
        parts = (day // 10000, day // 100 % 100, day % 100, tod // 10000, tod // 100 % 100, tod % 100, us)
    if whole and not (1 <= parts[1] <= 12 and 1 <= parts[2] <= 31 and parts[3] < 24 and parts[4] < 60
                      and parts[5] < 60):
        return Temporal(ZERO, kind)
    return Temporal(parts, kind)


def _bytes(v) -> bytes:
    return v if isinstance(v, bytes) else v.encode("utf-8")


def _as_datetime(t: Temporal) -> tuple:
    return t.parts if t.kind != "time" else (0, 0, 0) + (t.parts[0],)


def truth(v) -> bool | None:
    """A value where a condition stands: NULL, or whether it is non-zero."""
    if v is None:
        return None
    return number(v) != 0


def temporal_text(t: Temporal) -> str:
    """MySQL's text of a temporal value, its fraction to the column's digits."""
    if t.kind == "time":
        us = abs(t.parts[0])
        h, rem = divmod(us, 3_600_000_000)
        text = f"{'-' if t.parts[0] < 0 else ''}{h:02d}:{rem // 60_000_000:02d}:{rem // 1_000_000 % 60:02d}"
        frac = rem % 1_000_000
    else:
        y, mo, d, h, mi, sec, frac = t.parts
        text = f"{y:04d}-{mo:02d}-{d:02d}" + (f" {h:02d}:{mi:02d}:{sec:02d}" if t.kind == "datetime" else "")
    return text + (f".{frac:06d}"[:t.fsp + 1] if t.fsp and t.kind != "date" else "")


def _float_text(v: float) -> str:
    """MySQL's text of a FLOAT or DOUBLE: the fewest digits that read back the same value."""
    if v == 0:
        return "0"
    for digits in range(1, 18):
        text = f"{v:.{digits}g}"
        back = float(text)
        if (struct.unpack("f", struct.pack("f", back))[0] == v) if isinstance(v, Float32) else back == v:
            break
    return re.sub(r"e([+-])0*(\d)", lambda m: "e" + m.group(1).replace("+", "") + m.group(2), text)


def as_text(v) -> str:
    if isinstance(v, Temporal):
        return temporal_text(v)
    if isinstance(v, Bit):
        return v.to_bytes(v.size, "big").decode("latin-1")
    if isinstance(v, Year):
        return f"{int(v):04d}"
    if isinstance(v, float):
        return _float_text(v)
    if isinstance(v, bytes):
        return v.decode("latin-1")
    if isinstance(v, Json):
        return v.text()
    if isinstance(v, decimal.Decimal):
        return format(v, "f")  # 0.000001, not 1E-6
    return str(v)


def as_json(v) -> Json:
    """A SQL value compared with or placed in JSON: a number a JSON number, a string a JSON string."""
    if isinstance(v, Json):
        return v
    if isinstance(v, (bool, int, float, decimal.Decimal)) and not isinstance(v, (Hex, Member)):
        return Json(int(v) if isinstance(v, (bool, int)) else v)
    return Json(as_text(v))


def to_int(v) -> int:
    n = number(v)
    return n if isinstance(n, int) else int(decimal.Decimal(n).to_integral_value(decimal.ROUND_HALF_UP))
