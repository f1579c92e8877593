"""MySQL expressions evaluated over one row, with the comparison rules of TiDB's expression
engine (which TiCDC's value filters run on), in Python.

`compile_expr(tree, cols)` turns a parsed expression (sqlglot, MySQL dialect) into a function
of a row's values (in `cols` order, as `typed_value` makes them) returning its MySQL value:
None for NULL, 1/0 for a condition.  The rules, as MySQL's manual ("Type Conversion in
Expression Evaluation") and TiDB state them:

* NULL in, NULL out (except `<=>`, IS [NOT] NULL, and AND/OR where one side decides).
* two strings compare as strings, byte by byte (UTF-8 for text), case and trailing spaces
  significant whatever the column's collation: TiCDC runs TiDB's expression engine with the
  new collation framework disabled (cmd/cdc/main.go in pingcap/tiflow and pingcap/ticdc), so
  every collation compares as the binary collator.  ENUM and SET compare by their text.
* a temporal column against a string compares as time, the string read as TiDB's ParseTime
  and ParseDuration read it (tidb_datetime, tidb_duration): a trailing zone offset ('+08:00',
  '+0800', '+08', 'Z') converts the value to the session's zone, UTC (the zone TIMESTAMP
  columns are read in: '2021-01-01 12:34:56.5678+08:00' is the TIMESTAMP 04:34:56.5678 UTC),
  fraction digits past the sixth round half up, 'T' may separate date and time, two-digit
  years are 20xx (00-69) or 19xx; a string that is no date/time makes the comparison NULL
  (TiDB fails the event: TiCDC's filter session is strict).  Against a number: a DATE as
  numbers (YYYYMMDD); a DATETIME/TIMESTAMP as the DATETIME TiDB converts an integer or
  decimal to (YYYYMMDDhhmmss, YYMMDD...; a decimal's fraction rounded to the second), as
  numbers where it converts none and for a DOUBLE; a TIME as the TIME it reads (hhmmss).  A
  YEAR reads a constant as TiDB's refineArgs does (_year_operand: 21 and '21' are 2021).
* two integers compare as integers, integers and decimals exactly as decimals, anything
  else numeric as DOUBLE; a string read as a number takes its numeric prefix ('abc' is 0,
  '2x' is 2); an ENUM against a number is its index, a SET its bit mask, a hex or bit literal
  its unsigned integer.

Functions are a table, FUNCTIONS (name -> implementation, arity); CASE, CAST/CONVERT,
DATE_ADD/DATE_SUB/`+ INTERVAL` and TIMESTAMPDIFF, which have their own syntax, are compiled
here.  `unsupported` names what is outside both, and value_expr refuses it at `create`.  The
expression is parsed as TiCDC parses it (the WHERE clause of `SELECT * FROM t WHERE <expr>`) in
`dialect()`, sqlglot's MySQL dialect keeping function calls as written.  JSON values (`->`,
JSON_EXTRACT) compare as JSON with MySQL's type order; a JSON column read directly is its text.

NOW() as TiCDC evaluates it.  pkg/filter/expr_filter.go (pingcap/tiflow): newExprFilter(tz, ...)
builds one session per changefeed filter with utils.NewSessionCtx({"time_zone": tz})
(dm/pkg/utils), and each expression is evaluated in that session's expression context;
cdc/processor/processor.go passes the capture's time zone (the server's `tz`, the zone the
mounter also reads TIMESTAMP columns in).  TiDB's NOW() (pkg/expression/builtin_time.go,
evalNowWithFsp -> getStmtTimestamp -> the `timestamp` session variable) is the statement's
cached time (StmtCtx's StmtNowTsCacheKey, pkg/sessionctx/variable/sysvar.go), taken at the
first evaluation and, since the filter's session never starts a new statement, kept until the
processor restarts; it is shown in the session's zone.  cdcflow does the same per cycle: the
filter stage takes the wall clock once (value_expr.value_rules) and every row of the cycle
reads that instant, in UTC, the zone the evaluator reads TIMESTAMP columns in (a TiCDC capture
with tz = UTC).  CURRENT_TIMESTAMP, LOCALTIMESTAMP, UTC_TIMESTAMP, CURDATE/CURRENT_DATE,
UTC_DATE and UNIX_TIMESTAMP() read the same instant.
"""

from __future__ import annotations

import calendar
import datetime as dt
import decimal
import functools
import hashlib
import json
import math
import re
import struct
import unicodedata
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

from cdcflow.core.errors import ConfigError


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


# --- strings and numbers read as date/time values, as TiDB reads them --------------------------
#
# A string compared with (or cast to) a DATE, DATETIME or TIMESTAMP is read by TiDB's ParseTime
# (pkg/types/time.go: splitDateTime, GetTimezone, ParseDateFormat, parseDatetime), at 6 fraction
# digits (expression.WrapWithCastAsTime gives a string MaxFsp); one compared with a TIME by
# ParseDuration (matchDuration, and a date and time where canFallbackToDateTime); a number with a
# DATETIME/TIMESTAMP by ParseTimeFromNum (an integer) or ParseTimeFromFloatString (a decimal), as
# compareFunctionClass.refineArgs rewrites it (refineNumericConstantCmpDatetime).  What TiDB reads
# unlike MariaDB: a trailing time-zone offset (+08:00, +0800, +08, Z: the value is converted to the
# session's zone, UTC here, as MySQL 8.0.19+ does), digits past the sixth rounded (half up, carrying
# into the second), and a string that is no date/time is an error in TiCDC's filter session (its
# statement context has TiDB's strict default flags) where MariaDB reads the zero date: the
# comparison is NULL here and the row is kept.  Column values are read apart (typed_value:
# parse_temporal), as the binlog gives them, zero-in-date parts included.

_MAX_DATETIME = (9999, 12, 31, 23, 59, 59, 999999)
_TZ_SHAPES = {100: (0, 0), 30: (2, 0), 50: (4, 2), 63: (5, 2)}  # Z, +hh, +hhmm, +hh:mm
_SPACE = " \t\n\v\f\r"


def _digit(c: str) -> bool:
    return "0" <= c <= "9"


def _punct(c: str) -> bool:
    """TiDB's isPunctuation: printable ASCII that is neither a letter, a digit nor a space."""
    o = ord(c)
    return 0x21 <= o <= 0x2F or 0x3A <= o <= 0x40 or 0x5B <= o <= 0x60 or 0x7B <= o <= 0x7E


def _timezone(lit: str) -> tuple[int, str, str, str, str]:
    """TiDB's GetTimezone: (where a trailing zone starts or -1, its sign, hours, ':' or '', minutes)."""
    n, z, sign, sep = len(lit), -1, -1, -1
    for i in range(n - 1, -1, -1):
        if lit[i] == "Z":
            z = i
            break
        if sign == -1 and lit[i] in "+-":
            sign = i
        if sep == -1 and lit[i] == ":":
            sep = i
    k = (100 if n - z == 1 else 0) + ((n - sign) * 10 if n - sign in (3, 5, 6) else 0) + (3 if n - sep == 3 else 0)
    shape = _TZ_SHAPES.get(k)
    if shape is None:
        return -1, "", "", "", ""
    hour, minute = (lit[n - w:n - w + 2] if w else "" for w in shape)
    if any(x and not (_digit(x[0]) and _digit(x[-1])) for x in (hour, minute)):
        return -1, "", "", "", ""
    idx = z if z != -1 else sign
    return idx, lit[sign] if sign != -1 else "", hour, ":" if n - sep == 3 else "", minute


def _frac_index(s: str) -> int:
    """TiDB's GetFracIndex: the '.' before the fraction (a trailing zone aside), -1 if none."""
    tz = _timezone(s)[0]
    for i in range(tz - 1 if tz != -1 else len(s) - 1, -1, -1):
        if s[i] not in "+-" and _punct(s[i]):
            return i if s[i] == "." else -1
    return -1


def _date_seps(fmt: str) -> list[str] | None:
    """TiDB's ParseDateFormat: the digit groups of a date and time; punctuation separates any two,
    a space or 'T' only the date from the time."""
    fmt = fmt.strip()
    if not fmt or not _digit(fmt[0]):
        return None
    seps, start, i = [], 0, 1
    while i < len(fmt) - 1:
        if _valid_sep(fmt[i], len(seps)):
            prev = len(seps)
            seps.append(fmt[start:i])
            start = i + 1
            j = i + 1
            while j < len(fmt) and _valid_sep(fmt[j], prev):
                start, i, j = start + 1, i + 1, j + 1
        elif not _digit(fmt[i]):
            return None
        i += 1
    seps.append(fmt[start:])
    return seps


def _valid_sep(c: str, parts: int) -> bool:
    return _punct(c) or (parts == 2 and (c == "T" or c in _SPACE)) or (parts > 4 and not _digit(c))


def _split_datetime(s: str):
    """TiDB's splitDateTime: (digit groups, fraction digits, has a zone, sign, hours, sep, minutes)."""
    tz, sign, hour, sep, minute = _timezone(s)
    has_tz = tz > 0
    if has_tz:
        while tz > 0 and _punct(s[tz - 1]):
            tz -= 1
        s = s[:tz]
    frac = ""
    dot = _frac_index(s)
    if dot > 0:
        end = dot + 1
        while end < len(s) and _digit(s[end]):
            end += 1
        frac = s[dot + 1:end]
        while dot > 0 and _punct(s[dot - 1]):
            dot -= 1
        s = s[:dot]
    return _date_seps(s), frac, has_tz, sign, hour, sep, minute


def _round_frac(frac: str, fsp: int) -> tuple[int, bool]:
    """TiDB's ParseTimeFrac: (microseconds, whether it rounded up into the next second)."""
    if not frac:
        return 0, False
    if fsp >= len(frac):
        return int(frac) * 10 ** (6 - len(frac)), False
    n = (int(frac[:fsp + 1]) + 5) // 10  # half up
    if n >= 10 ** fsp:
        return 0, True
    return n * 10 ** (6 - fsp), False


def _two_digit_year(y: int) -> int:
    return y + 2000 if 0 <= y <= 69 else y + 1900 if 70 <= y <= 99 else y


def _scan(text: str, widths: tuple[int, ...]) -> list[int] | None:
    """Go's Sscanf("%4d%2d..."): each field up to its width of digits, at least one."""
    out, i = [], 0
    for w in widths:
        j = i
        while j < len(text) and j - i < w and _digit(text[j]):
            j += 1
        if j == i:
            return None
        out.append(int(text[i:j]))
        i = j
    return out


def _atoi(text: str) -> int | None:
    return int(text) if re.fullmatch(r"[+-]?\d+", text) else None


def _real_instant(parts) -> dt.datetime | None:
    """Go's CoreTime.GoTime: the parts as a real instant (no zero month or day), None if none."""
    try:
        return dt.datetime(*parts)
    except (ValueError, OverflowError):
        return None


def _checked(parts) -> Temporal | None:
    """TiDB's Time.Check for a DATETIME in TiCDC's filter session (strict flags): the zero date, or
    a real date (no zero month or day, the day within its month) and time of day."""
    y, mo, d, h, mi, s, _us = parts
    if (y, mo, d) != (0, 0, 0):
        if mo == 0 or d == 0 or tuple(parts) > _MAX_DATETIME or mo > 12:
            return None
        if d > (calendar.monthrange(y, mo)[1] if y > 0 else (29 if mo == 2 else calendar.mdays[mo])):
            return None
    if h >= 24 or mi >= 60 or s >= 60:
        return None
    return Temporal(tuple(parts), "datetime", 6)


# a string of digits with no separator, by length: (field widths, YY, has seconds)
_DIGITS_ONLY = {14: ((4, 2, 2, 2, 2, 2), False, True), 12: ((2, 2, 2, 2, 2, 2), True, True),
                11: ((2, 2, 2, 2, 2, 1), True, True), 10: ((2, 2, 2, 2, 2), True, False),
                9: ((2, 2, 2, 2, 1), True, False), 8: ((4, 2, 2), False, False), 7: ((2, 2, 2, 1), True, False),
                6: ((2, 2, 2), True, False), 5: ((2, 2, 2), True, False)}


def tidb_datetime(s: str, fsp: int = 6, is_float: bool = False) -> Temporal | None:
    """A string as TiDB's ParseTime reads it as a DATETIME (parseDatetime, then Check): in the
    session's zone, UTC (a trailing offset converted to it), the fraction rounded to `fsp` digits,
    two-digit years as 20xx/19xx; None where TiDB fails (an error in TiCDC's filter session).
    `is_float`: the text of a decimal number (ParseTimeFromFloatString)."""
    seps, frac, has_tz, sign, tz_h, tz_sep, tz_m = _split_datetime(s)
    seps = seps or []

    def whole(groups):  # too many groups to take a fraction or a zone's digits as more of them
        return len(groups) > 5 or (len(groups) == 1 and len(groups[0]) > 4)
    if frac and not is_float and not whole(seps):
        seps, frac = seps + [frac], ""
    if has_tz and sign and not whole(seps) and not (tz_m and not tz_sep):
        seps, has_tz = seps + [x for x in (tz_h, tz_m) if x], False
    hhmmss = False
    if len(seps) in (0, 2):
        return None
    if len(seps) == 1:
        digits = seps[0]
        if is_float:
            t = _datetime_from_int(int(digits)) if digits.isdigit() else None
            if t is None:
                return None
            y, mo, d, h, mi, sec = t.parts[:6]
            hhmmss = digits == "0" or 9 <= len(digits) <= 14
        else:
            if len(digits) not in _DIGITS_ONLY:
                return None
            widths, yy, hhmmss = _DIGITS_ONLY[len(digits)]
            got = _scan(digits, widths)
            if got is None:
                return None
            y, mo, d, h, mi, sec = (got + [0, 0, 0, 0, 0])[:6]
            y = _two_digit_year(y) if yy else y
            if len(digits) in (5, 6, 8) and frac:  # '20170118.123423': the fraction is the time
                h, mi, sec = ((_scan(frac, (2, 2, 2)[:min(3, (len(frac) + 1) // 2)]) or []) + [0, 0, 0])[:3]
            if len(digits) in (9, 10):
                sec = (_scan(frac, (2,)) or [0])[0] if frac else 0
    else:
        got = [_atoi(x) for x in seps[:6]]
        if any(v is None for v in got):
            return None
        y, mo, d, h, mi, sec = (got + [0, 0, 0])[:6]
        hhmmss = len(seps) >= 6
    if len(seps[0]) <= 2 and not is_float and not (y == mo == d == h == mi == sec == 0 and not frac):
        y = _two_digit_year(y)
    us, carry = _round_frac(frac, fsp) if hhmmss else (0, False)
    parts = [y, mo, d, h, mi, sec, us]
    if not (0 <= y < 16384 and 0 <= mo < 16 and 0 <= d < 32 and 0 <= h < 32 and 0 <= mi < 64 and 0 <= sec < 64):
        return None
    if carry:
        when = _real_instant(parts)
        if when is None:
            return None
        parts = _parts_of(when + dt.timedelta(seconds=1))
    if has_tz:
        hours, minutes = int(tz_h or 0), int(tz_m or 0)
        if not hhmmss or hours > 14 or minutes > 59 or (hours == 14 and minutes) or (sign == "-" and not hours
                                                                                    and not minutes):
            return None
        when = _real_instant(parts)
        if when is None:
            return None
        offset = dt.timedelta(hours=hours, minutes=minutes) * (-1 if sign == "-" else 1)
        try:
            parts = _parts_of(when - offset)  # into the session's zone, UTC
        except OverflowError:
            return None
    return _checked(parts)


def _parts_of(d: dt.datetime) -> list[int]:
    return [d.year, d.month, d.day, d.hour, d.minute, d.second, d.microsecond]


def _datetime_from_int(n: int) -> Temporal | None:
    """TiDB's ParseTimeFromNum as a DATETIME: 0 the zero date, YYMMDD, YYYYMMDD, YYMMDDhhmmss or
    YYYYMMDDhhmmss (two-digit years 00-69 as 20xx, 70-99 as 19xx); None where TiDB fails."""
    if n == 0:
        return Temporal(_ZERO, "datetime")
    if n >= 10000101000000:
        full = n
    elif n < 101 or 691231 < n < 700101 or 99991231 < n < 101000000 or 691231235959 < n < 700101000000:
        return None
    elif n <= 691231:
        full = (n + 20000000) * 1000000
    elif n <= 991231:
        full = (n + 19000000) * 1000000
    elif n <= 99991231:
        full = n * 1000000
    elif n <= 691231235959:
        full = n + 20000000000000
    elif n <= 991231235959:
        full = n + 19000000000000
    else:
        full = n
    day, tod = divmod(full, 1000000)
    y, mo, d, h, mi, s = day // 10000, day // 100 % 100, day % 100, tod // 10000, tod // 100 % 100, tod % 100
    if not (y < 16384 and mo < 16 and d < 32 and h < 32 and mi < 64 and s < 64):
        return None
    return _checked([y, mo, d, h, mi, s, 0])


def _datetime_from_number(v) -> Temporal | None:
    """A number compared with a DATETIME/TIMESTAMP, as refineNumericConstantCmpDatetime converts
    it (to a DATETIME of 0 fraction digits); None where TiDB keeps the number (compared as one)."""
    if isinstance(v, decimal.Decimal):
        if not v.is_finite():
            return None
        text = format(v, "f")
        if text.startswith("0.0"):
            return Temporal(_ZERO, "datetime")
        return tidb_datetime(text, 0, is_float=True)
    if isinstance(v, int) and not isinstance(v, (bool, Year, Bit)):
        return _datetime_from_int(v)
    return None  # a DOUBLE is not converted (Datum.convertToMysqlTime): compared as a number


def _get_fsp(s: str) -> int:
    """TiDB's GetFsp: the digits after the fraction's '.', at most 6."""
    i = _frac_index(s)
    return 0 if i < 0 else min(6, len(s) - i - 1)


_NUMBER = re.compile(r"\d+")


def _hms(rest: str, require_colon: bool):
    """TiDB's matchHHMMSSDelimited: ([h, m, s], rest) or None."""
    m = _NUMBER.match(rest)
    if not m:
        return None
    hms, rest = [int(m.group()), 0, 0], rest[m.end():]
    for i in (1, 2):
        colon = re.match(r"[ \t\n\v\f\r]*:[ \t\n\v\f\r]*", rest)
        if not colon:
            if i == 1 and require_colon:
                return None
            break
        num = _NUMBER.match(rest, colon.end())
        if not num:
            return None
        hms[i], rest = int(num.group()), rest[num.end():]
    return hms, rest


def _match_duration(s: str, fsp: int) -> Temporal | None:
    """TiDB's matchDuration: [-][D ]hh:mm[:ss][.frac] or [-]hhmmss[.frac], wholly; None if not."""
    if not s:
        return None
    neg = s.startswith("-")
    rest = (s[1:] if neg else s).lstrip(_SPACE)
    day = re.match(r"(\d+)[ \t\n\v\f\r]+", rest)
    got = _hms(rest[day.end():], False) if day else None
    if got is not None:
        got[0][0] += 24 * int(day.group(1))
    else:
        got = _hms(rest, True)
        if got is None:
            m = _NUMBER.match(rest)
            if not m:
                return None
            n = int(m.group())
            got = [n // 10000, n // 100 % 100, n % 100], rest[m.end():]
    (h, mi, sec), rest = got
    rest = rest.lstrip(_SPACE)
    us, carry = 0, False
    if rest.startswith("."):
        digits = re.match(r"\d*", rest[1:]).group()
        us, carry = _round_frac(digits, fsp)
        rest = rest[1 + len(digits):]
    if rest:  # anything left over is an error (a truncation, strict in TiCDC's session)
        return None
    if carry:
        sec, us = sec + 1, 0
        if sec == 60:
            sec, mi = 0, mi + 1
            if mi == 60:
                mi, h = 0, h + 1
    if mi >= 60 or sec >= 60 or h > 838:
        return None
    total = (h * 3600 + mi * 60 + sec) * 1_000_000 + us
    if total > 3_020_399_000_000:  # 838:59:59
        return None
    return Temporal((-total if neg else total,), "time", fsp)


def _can_be_datetime(s: str) -> bool:
    """TiDB's canFallbackToDateTime: 12 or 14 leading digits, or a date before ' ' or 'T' (digits,
    a punctuation character, digits, another, digits)."""
    m = _NUMBER.match(s)
    if not m:
        return False
    if len(m.group()) in (12, 14):
        return True
    i = m.end()
    for _ in range(2):
        if i >= len(s) or not unicodedata.category(s[i]).startswith("P"):
            return False
        m = _NUMBER.match(s, i + 1)
        if not m:
            return False
        i = m.end()
    return i < len(s) and s[i] in " T"


def tidb_duration(s: str, fsp: int = 6) -> Temporal | None:
    """A string as TiDB's ParseDuration reads it as a TIME: hh:mm:ss, D hh:mm:ss, hhmmss, with a
    fraction rounded to `fsp` digits, or a date and time (its time of day, a zone converted to
    UTC); None where TiDB fails (an error in TiCDC's filter session)."""
    s = s.strip()
    got = _match_duration(s, fsp)
    if got is not None or not _can_be_datetime(s):
        return got
    t = tidb_datetime(s, _get_fsp(s))
    if t is None:
        return None
    y, mo, d, h, mi, sec, us = t.parts
    return Temporal((((h * 60 + mi) * 60 + sec) * 1_000_000 + us,), "time", fsp)


def _duration_from_number(v) -> Temporal | None:
    """A number compared with a TIME: an integer as TiDB's NumberToDuration (hhmmss, or a date and
    time of 11+ digits), a decimal or double as its text through ParseDuration."""
    if isinstance(v, int) and not isinstance(v, (bool, Bit)):
        n = int(v)
        if n > 8385959:
            t = _datetime_from_int(n) if n >= 10000000000 else None
            return None if t is None else Temporal((((t.parts[3] * 60 + t.parts[4]) * 60 + t.parts[5])
                                                     * 1_000_000,), "time")
        if n < -8385959:
            return None
        a = abs(n)
        if a // 10000 > 838 or a % 100 >= 60 or a // 100 % 100 >= 60:
            return None
        us = ((a // 10000 * 60 + a // 100 % 100) * 60 + a % 100) * 1_000_000
        return Temporal((-us if n < 0 else us,), "time")
    if isinstance(v, decimal.Decimal):
        return tidb_duration(format(v, "f")) if v.is_finite() else None
    if isinstance(v, float):
        return tidb_duration(format(decimal.Decimal(repr(v)), "f")) if math.isfinite(v) else None
    return None


# --- conversions ------------------------------------------------------------------------

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


def _is_string(v) -> bool:
    return isinstance(v, (str, bytes)) and not isinstance(v, Temporal)


def _cmp(a, b, op: str = "EQ") -> int | None:
    """MySQL's three-way comparison of two non-NULL values, as TiDB makes it; None where TiDB
    cannot read one side as the other's type (a string that is no date/time against a temporal
    value: an error in TiCDC's filter session, the row kept).  `op` (EQ, NEQ, LT, LTE, GT, GTE: a
    op b) is what TiDB's reading of a constant against a YEAR depends on (_year_operand)."""
    if isinstance(a, Json) or isinstance(b, Json):  # the other side read as JSON (a string a JSON string)
        return _json_cmp(_as_json(a).doc, _as_json(b).doc)
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
    if _is_string(a) and _is_string(b):
        if isinstance(a, bytes) or isinstance(b, bytes):
            x, y = _bytes(a), _bytes(b)
        else:
            x, y = str(a), str(b)  # code point order is UTF-8's byte order
        return (x > y) - (x < y)
    x, y = _numeric_pair(number(a), number(b))
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
    if _is_string(v) and not isinstance(v, Hex):
        s = v if isinstance(v, str) else v.decode("latin-1")
        other = tidb_duration(s) if t.kind == "time" else tidb_datetime(s)
        if other is None:
            return None
    elif _plain_number(v):
        other = _duration_from_number(v) if t.kind == "time" else None if t.kind == "date" else \
            _datetime_from_number(v)
        if other is None and t.kind != "time":  # compared as numbers (DOUBLE)
            x, y = _numeric_pair(number(t), number(v))
            return (x > y) - (x < y)
        if other is None:
            return None
    else:  # a hex literal, a YEAR, BIT, ENUM or SET value
        other = _to_temporal(v, t.kind)
    x, y = _as_datetime(t), _as_datetime(other)
    return (x > y) - (x < y)


class Bit(int):
    """A BIT(M) column's value: a number, and M/8 bytes as a string (LENGTH, IFNULL(b, 'x'))."""
    size: int


class Float32(float):
    """A FLOAT (single precision) column's value: its text has FLOAT's shortest digits."""


class Year(int):
    """A YEAR column's value: a number compared with it is read as a year (1-69: 20xx, 70-99: 19xx)."""


def _to_year(v):
    n = number(v)
    r = int(decimal.Decimal(n).to_integral_value(decimal.ROUND_HALF_UP)) if not isinstance(n, int) else n
    return r + 2000 if 0 < r < 70 else r + 1900 if 70 <= r < 100 else r


def _adjust_year(n: int, zero_too: bool = False) -> int | None:
    """TiDB's AdjustYear: 1-69 as 20xx, 70-99 as 19xx (0 as 2000 only if `zero_too`); None outside
    1901-2155 (0 aside)."""
    if n == 0 and not zero_too:
        return 0
    y = _two_digit_year(n)
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


_ZERO = (0, 0, 0, 0, 0, 0, 0)


def _to_temporal(v, kind: str) -> Temporal:
    """A number (a hex literal, YEAR or BIT value among them) read as a temporal value where TiDB's
    own readings (tidb_datetime, _datetime_from_number, _duration_from_number) do not apply: as
    YYYYMMDD[hhmmss] or hhmmss; what is none reads as zero, as MySQL does with a warning."""
    if kind == "time":
        n = decimal.Decimal(number(v))
        whole = int(abs(n))
        h, rest = divmod(whole, 10000)
        us = ((h * 60 + rest // 100) * 60 + rest % 100) * 1_000_000 + int((abs(n) - whole) * 1_000_000)
        return Temporal((-us if n < 0 else us,), "time")
    if isinstance(v, Hex):
        return Temporal(_ZERO, kind)
    n = decimal.Decimal(number(v))
    if n < 0:
        return Temporal(_ZERO, kind)
    whole, us = int(n), int((n - int(n)) * 1_000_000)
    if len(str(whole)) <= 8:  # a date; its fraction only counts for 0 (0.5 is 00:00:00.5 of the zero date)
        parts = (whole // 10000, whole // 100 % 100, whole % 100, 0, 0, 0, 0 if whole else us)
    else:
        day, tod = divmod(whole, 1_000_000)
        parts = (day // 10000, day // 100 % 100, day % 100, tod // 10000, tod // 100 % 100, tod % 100, us)
    if whole and not (1 <= parts[1] <= 12 and 1 <= parts[2] <= 31 and parts[3] < 24 and parts[4] < 60
                      and parts[5] < 60):
        return Temporal(_ZERO, kind)
    return Temporal(parts, kind)


def _bytes(v) -> bytes:
    return v if isinstance(v, bytes) else v.encode("utf-8")


def _as_datetime(t: Temporal) -> tuple:
    return t.parts if t.kind != "time" else (0, 0, 0) + (t.parts[0],)


def _numeric_pair(x, y):
    if isinstance(x, float) or isinstance(y, float):
        return float(x), float(y)
    if isinstance(x, decimal.Decimal) or isinstance(y, decimal.Decimal):
        return decimal.Decimal(x), decimal.Decimal(y)
    return x, y


def truth(v) -> bool | None:
    """A value where a condition stands: NULL, or whether it is non-zero."""
    if v is None:
        return None
    return number(v) != 0


# --- compiling a tree --------------------------------------------------------------------

UNSUPPORTED_HINT = ("use comparisons, IN, BETWEEN, LIKE, REGEXP, IS [NOT] NULL, AND/OR/XOR/NOT, + - * / DIV %, "
                    "CASE, CAST/CONVERT, INTERVAL arithmetic and the functions docs/guides/filters.md lists")
_CMP = {"EQ": lambda c: c == 0, "NEQ": lambda c: c != 0, "GT": lambda c: c > 0, "GTE": lambda c: c >= 0,
        "LT": lambda c: c < 0, "LTE": lambda c: c <= 0}
# CAST's target types (sqlglot's names) as the evaluator's cast() takes them
_CAST_TO = {"BIGINT": "SIGNED", "INT": "SIGNED", "UBIGINT": "UNSIGNED", "UINT": "UNSIGNED", "CHAR": "CHAR",
            "NCHAR": "CHAR", "CHARACTER_SET": "CHAR", "BINARY": "BINARY", "DECIMAL": "DECIMAL",
            "DOUBLE": "DOUBLE", "FLOAT": "FLOAT", "DATE": "DATE", "DATETIME": "DATETIME", "TIME": "TIME",
            "JSON": "JSON"}
_DATE_ARITH = {"DATE_ADD": 1, "ADDDATE": 1, "DATE_SUB": -1, "SUBDATE": -1}
_TIMESTAMPDIFF_UNITS = ("MICROSECOND", "SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "QUARTER", "YEAR")


def _literal(node):
    from sqlglot import exp  # lazy: sqlglot only where a config has expressions (filter.value_expr)

    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Boolean):
        return 1 if node.this else 0
    if isinstance(node, exp.HexString):
        h = node.this if len(node.this) % 2 == 0 else "0" + node.this
        return Hex(bytes.fromhex(h))
    if isinstance(node, exp.BitString):
        n = int(node.this or "0", 2)
        return Hex(n.to_bytes(max(1, (len(node.this) + 7) // 8), "big"))
    text = node.this
    if node.is_string:
        return text
    if "e" in text.lower():
        return float(text)
    if "." in text:
        return decimal.Decimal(text)
    return int(text)


def _like(pattern: str, escape: str = "\\") -> re.Pattern:
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == escape and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
        i += 1
    return re.compile("".join(out), re.S)


def _call_of(node):
    """(NAME, argument nodes) of a function call written as one, whatever node sqlglot made of it."""
    from sqlglot import exp  # lazy: sqlglot loads only where an expression is parsed or compiled

    if isinstance(node, exp.Anonymous):
        return node.name.upper(), list(node.expressions)
    if isinstance(node, exp.Substring):
        return "SUBSTRING", [a for a in (node.this, node.args.get("start"), node.args.get("length")) if a]
    if isinstance(node, exp.RegexpLike):
        return "REGEXP", [node.this, node.expression]
    if isinstance(node, exp.StrPosition):  # POSITION(sub IN s)
        return "POSITION", [node.args["substr"], node.this]
    if isinstance(node, (exp.CurrentTimestamp, exp.Localtimestamp)):
        return "NOW", [node.this] if node.this else []
    if isinstance(node, exp.CurrentDate):
        return "CURDATE", []
    if isinstance(node, exp.If):  # IF(c, a, b); a CASE's arms are If nodes too, compiled by _case
        return "IF", [node.this, node.args["true"], node.args.get("false") or exp.Null()]
    return None


def _problem(node) -> str | None:
    """What the evaluator does not know about this node itself (its children are walked apart)."""
    from sqlglot import exp  # lazy: sqlglot loads only where an expression is parsed or compiled

    call = _call_of(node)
    if call is not None:
        name, args = call
        if name in _DATE_ARITH:
            ok = len(args) == 2 and isinstance(args[1], exp.Interval)
            return None if ok else f"{name} (written {name}(date, INTERVAL n unit))"
        if name not in FUNCTIONS:
            return name
        least, most = FUNCTIONS[name].arity
        if len(args) < least or (most is not None and len(args) > most):
            given = f"{least}" if least == most else f"{least} or more" if most is None else f"{least} to {most}"
            return f"{name} with {len(args)} arguments (it takes {given})"
        if name == "REGEXP" and isinstance(args[1], exp.Literal):
            try:
                re.compile(args[1].name)
            except re.error as e:
                return f"REGEXP {args[1].sql(dialect='mysql')} ({e})"
        return None
    if isinstance(node, exp.Interval):
        unit = node.args.get("unit")
        return None if unit is not None and unit.name.upper() in _UNITS else f"INTERVAL {node.sql(dialect='mysql')}"
    if isinstance(node, exp.TimestampDiff):
        unit = node.args.get("unit")
        return None if unit is not None and unit.name.upper() in _TIMESTAMPDIFF_UNITS else "TIMESTAMPDIFF unit"
    if isinstance(node, exp.Cast):
        to = node.args["to"].this.name
        return None if to in _CAST_TO else f"CAST AS {node.args['to'].sql(dialect='mysql')}"
    if isinstance(node, exp.Like) and node.args.get("escape"):
        return "LIKE ... ESCAPE"
    return None if isinstance(node, _known()) else (node.sql_name() if isinstance(node, exp.Func) else node.key.upper())


def unsupported(tree) -> list[str]:
    """The operators and functions of `tree` the evaluator does not know, by SQL name."""
    return sorted({p for n in tree.walk() if (p := _problem(n)) is not None})


def _known():
    from sqlglot import exp  # lazy: sqlglot only where a config has expressions (filter.value_expr)

    return (exp.Column, exp.Identifier, exp.Literal, exp.Null, exp.Boolean, exp.HexString, exp.BitString,
            exp.Paren, exp.Neg, exp.Not, exp.And, exp.Or, exp.Xor, exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT,
            exp.LTE, exp.NullSafeEQ, exp.Is, exp.In, exp.Between, exp.Like, exp.Add, exp.Sub, exp.Mul,
            exp.Div, exp.IntDiv, exp.Mod, exp.Case, exp.If, exp.Cast, exp.DataType, exp.DataTypeParam, exp.Var,
            exp.Interval, exp.Trim, exp.TimestampDiff)


def compile_expr(tree, cols: list[Col], now: dt.datetime | None = None) -> Callable[[list], object]:
    """`tree` as a function of a row's typed values (cols order); see the module docstring.
    `now`: the instant NOW() and its kin read (naive UTC); the wall clock if None."""
    from sqlglot import exp  # lazy: sqlglot only where a config has expressions (filter.value_expr)

    index = {c.name.lower(): i for i, c in enumerate(cols)}
    bad = unsupported(tree)
    if bad:
        raise ConfigError(f"the value expression {tree.sql(dialect='mysql')!r} uses {', '.join(bad)}, "
                          "which cdcflow's value filter does not evaluate", hint=UNSUPPORTED_HINT)
    clock = now or dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    by_name = {c.name.lower(): c for c in cols}

    def c(node) -> Callable[[list], object]:
        if node.args.get("negate"):  # `x NOT LIKE p` and the like: the node's value negated
            plain = node.copy()
            plain.set("negate", None)
            inner = c(plain)
            return lambda row: _not(truth(inner(row)))
        if isinstance(node, exp.Column):
            i = index[node.name.lower()]
            return lambda row: row[i]
        if isinstance(node, (exp.Literal, exp.Null, exp.Boolean, exp.HexString, exp.BitString)):
            v = _literal(node)
            return lambda row: v
        if isinstance(node, exp.Paren):
            return c(node.this)
        name = type(node).__name__
        if name in _CMP:
            test, left, right = _CMP[name], c(node.left), c(node.right)

            def compare(row):
                a, b = left(row), right(row)
                if a is None or b is None:
                    return None
                c = _cmp(a, b, name)
                return None if c is None else int(test(c))
            return compare
        if isinstance(node, exp.NullSafeEQ):
            left, right = c(node.left), c(node.right)

            def null_safe(row):
                a, b = left(row), right(row)
                if a is None or b is None:
                    return int(a is None and b is None)
                c = _cmp(a, b)
                return None if c is None else int(c == 0)
            return null_safe
        if isinstance(node, exp.Not):
            inner = c(node.this)
            return lambda row: _not(truth(inner(row)))
        if isinstance(node, (exp.And, exp.Or, exp.Xor)):
            return _logic(type(node).__name__, c(node.left), c(node.right))
        if isinstance(node, exp.Is):
            return _is(c(node.this), node.expression)
        if isinstance(node, exp.In):
            return _in(c(node.this), [c(e) for e in node.expressions])
        if isinstance(node, exp.Between):
            return _between(c(node.this), c(node.args["low"]), c(node.args["high"]))
        if isinstance(node, exp.Like):
            return _like_of(c(node.this), c(node.expression))
        if isinstance(node, exp.Neg):
            inner = c(node.this)
            return lambda row: None if (v := inner(row)) is None else -number(v)
        if isinstance(node, (exp.Add, exp.Sub)) and isinstance(node.expression, exp.Interval):
            return _date_arith(c(node.this), node.expression, c, 1 if isinstance(node, exp.Add) else -1)
        if isinstance(node, exp.Add) and isinstance(node.this, exp.Interval):
            return _date_arith(c(node.expression), node.this, c, 1)
        if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.IntDiv, exp.Mod)):
            return _arith(type(node).__name__, c(node.left), c(node.right))
        if isinstance(node, exp.Case):
            return _case(node, c, by_name)
        if isinstance(node, exp.Cast):
            return _cast_of(node, c, clock)
        if isinstance(node, exp.Trim):
            where = (node.args.get("position") or "BOTH").upper()
            rem = c(node.expression) if node.expression else (lambda row: " ")
            return _strict(lambda s, r: trim(s, r, where), [c(node.this), rem])
        if isinstance(node, exp.TimestampDiff):
            unit = node.args["unit"].name.upper()
            return _strict(lambda a, b: timestampdiff(unit, a, b), [c(node.expression), c(node.this)])
        fname, arg_nodes = _call_of(node)
        if fname in _DATE_ARITH:
            return _date_arith(c(arg_nodes[0]), arg_nodes[1], c, _DATE_ARITH[fname])
        return _function(fname, arg_nodes, c, clock, by_name)

    return c(tree)


def _strict(f, args):
    """f of the arguments' values; NULL if any is NULL."""
    def run(row):
        vs = [a(row) for a in args]
        return None if any(v is None for v in vs) else f(*vs)
    return run


def _date_arith(date, interval, c, sign: int):
    unit = interval.args["unit"].name.upper()
    amount = c(interval.this)

    def run(row):
        v = date(row)
        return None if v is None else date_add(v, _interval(amount(row), unit), unit, sign)
    return run


def _static_kind(node, cols: dict[str, Col]) -> str | None:
    """string, temporal or number: what a literal or column is before any row is read (None: unknown)."""
    from sqlglot import exp  # lazy: sqlglot loads only where an expression is parsed or compiled

    if isinstance(node, exp.Literal):
        return "string" if node.is_string else "number"
    if isinstance(node, exp.Column) and node.name.lower() in cols:
        kind = cols[node.name.lower()].kind
        return "string" if kind in ("text", "binary", "enum", "set", "json") else \
            "temporal" if kind in ("date", "datetime", "time") else "number"
    return None


def _stringly(results, cols: dict[str, Col]) -> Callable:
    """MySQL's type of IF/IFNULL/COALESCE/CASE: a string among the results, or temporal values
    mixed with numbers, make the result a string (COALESCE(time_col, 0) is the TIME's text)."""
    kinds = {_static_kind(r, cols) for r in results if r is not None}
    if "string" in kinds or {"temporal", "number"} <= kinds:
        return lambda v: _as_text(v) if v is not None and not isinstance(v, (str, bytes)) else v
    return lambda v: v


def _case(node, c, cols: dict[str, Col]):
    subject = c(node.this) if node.this else None
    ifs = node.args.get("ifs") or []
    arms = [(c(i.this), c(i.args["true"])) for i in ifs]
    default = c(node.args["default"]) if node.args.get("default") else (lambda row: None)
    typed = _stringly([i.args["true"] for i in ifs] + [node.args.get("default")], cols)

    def run(row):
        s = subject(row) if subject else None
        for cond, value in arms:
            v = cond(row)
            hit = (s is not None and v is not None and _cmp(s, v) == 0) if subject else truth(v)
            if hit:
                return typed(value(row))
        return typed(default(row))
    return run


def _cast_of(node, c, clock):
    to = node.args["to"]
    params = [int(p.this.this) for p in to.expressions if hasattr(p.this, "this")]
    target = _CAST_TO[to.this.name]
    length = params[0] if params else None
    scale = params[1] if len(params) > 1 else None
    inner = c(node.this)
    return lambda row: None if (v := inner(row)) is None else cast(v, target, length, scale, clock)


def _function(name: str, arg_nodes, c, clock, cols: dict[str, Col]):
    fn = FUNCTIONS[name]
    args = [c(a) for a in arg_nodes]
    impl = functools.partial(fn.impl, clock) if fn.now else fn.impl
    if not fn.nulls:
        typed = _stringly(arg_nodes[_RESULT_ARGS[name]], cols) if name in _RESULT_ARGS else (lambda v: v)
        return lambda row: typed(impl(*[a(row) for a in args]))
    return _strict(impl, args)


def _not(t):
    return None if t is None else int(not t)


def _logic(op: str, left, right):
    def run(row):
        a, b = truth(left(row)), truth(right(row))
        if op == "And":
            return 0 if a is False or b is False else None if a is None or b is None else 1
        if op == "Or":
            return 1 if a or b else None if a is None or b is None else 0
        return None if a is None or b is None else int(a != b)
    return run


def _is(inner, what):
    from sqlglot import exp  # lazy: sqlglot only where a config has expressions (filter.value_expr)

    if isinstance(what, exp.Null):
        return lambda row: int(inner(row) is None)
    want = bool(what.this)
    return lambda row: int(truth(inner(row)) is want)


def _in(left, options):
    def run(row):
        a = left(row)
        if a is None:
            return None
        unknown = False
        for o in options:
            b = o(row)
            if b is None:
                unknown = True
            else:
                c = _cmp(a, b)
                if c is None:
                    unknown = True
                elif c == 0:
                    return 1
        return None if unknown else 0
    return run


def _between(this, low, high):
    def run(row):
        v, lo, hi = this(row), low(row), high(row)
        a = None if v is None or lo is None else _cmp(v, lo, "GTE")  # TiDB: v >= lo AND v <= hi
        b = None if v is None or hi is None else _cmp(v, hi, "LTE")
        if (a is not None and a < 0) or (b is not None and b > 0):
            return 0
        return None if a is None or b is None else 1
    return run


def _temporal_text(t: Temporal) -> str:
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


def _as_text(v) -> str:
    if isinstance(v, Temporal):
        return _temporal_text(v)
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


def _like_of(this, pattern):
    cache: dict = {}

    def run(row):
        v, p = this(row), pattern(row)
        if v is None or p is None:
            return None
        key = _as_text(p)
        if key not in cache:
            cache[key] = _like(key)
        return int(cache[key].fullmatch(_as_text(v)) is not None)
    return run


_EXACT = decimal.Context(prec=160)  # DECIMAL(65,30) sums, products and quotients, without rounding


def _arith(op: str, left, right):
    def run(row):
        a, b = left(row), right(row)
        if a is None or b is None:
            return None
        with decimal.localcontext(_EXACT):
            return _compute(op, *_numeric_pair(number(a), number(b)))
    return run


def _compute(op: str, x, y):
    """x op y, both already of one numeric type (_numeric_pair)."""
    if op == "Add":
        return x + y
    if op == "Sub":
        return x - y
    if op == "Mul":
        return x * y
    if y == 0:
        return None  # MySQL: division by zero is NULL
    if op == "Mod":  # the sign of the dividend, as MySQL's MOD
        return math.fmod(x, y) if isinstance(x, float) else (abs(x) % abs(y)) * (1 if x >= 0 else -1)
    if op == "IntDiv":  # truncated toward zero
        q = abs(decimal.Decimal(x) / decimal.Decimal(y)) if not isinstance(x, float) else abs(x / y)
        return int(q) * (1 if (x >= 0) == (y >= 0) else -1)
    if isinstance(x, float):
        return x / y
    # MySQL's quotient has the dividend's scale plus div_precision_increment (4) digits
    scale = max(0, -decimal.Decimal(x).as_tuple().exponent) + 4
    q = decimal.Decimal(x) / decimal.Decimal(y)
    return q.quantize(decimal.Decimal(1).scaleb(-scale), decimal.ROUND_HALF_UP)



# --- JSON values ----------------------------------------------------------------------------

class Json:
    """A JSON value (MySQL's and TiDB's JSON type): `doc` as json.loads reads it."""
    __slots__ = ("doc",)

    def __init__(self, doc):
        self.doc = doc

    def __eq__(self, other):
        return isinstance(other, Json) and _json_cmp(self.doc, other.doc) == 0

    def __hash__(self):
        return hash(self.text())

    def text(self) -> str:
        """MySQL's text of the value: `, ` and `: ` between items, characters unescaped."""
        return json.dumps(self.doc, ensure_ascii=False, separators=(", ", ": "))


def _json_of(v) -> Json | None:
    """A function's JSON argument: a JSON value as is, a string read as JSON text (None if it is none)."""
    if isinstance(v, Json):
        return v
    try:
        return Json(json.loads(_as_text(v)))
    except ValueError:
        return None


def _as_json(v) -> Json:
    """A SQL value compared with or placed in JSON: a number a JSON number, a string a JSON string."""
    if isinstance(v, Json):
        return v
    if isinstance(v, (bool, int, float, decimal.Decimal)) and not isinstance(v, (Hex, Member)):
        return Json(int(v) if isinstance(v, (bool, int)) else v)
    return Json(_as_text(v))


_JSON_TYPE_RANK = {"null": 0, "number": 1, "string": 2, "object": 3, "array": 4, "boolean": 5}


def _json_kind(d) -> str:
    if d is None:
        return "null"
    if isinstance(d, bool):
        return "boolean"
    if isinstance(d, (int, float, decimal.Decimal)):
        return "number"
    return {str: "string", dict: "object", list: "array"}[type(d)]


def _json_cmp(x, y) -> int:
    """Two JSON documents in MySQL's order: by type precedence across types (BOOLEAN > ARRAY >
    OBJECT > STRING > number > NULL), numbers by value, strings by bytes, arrays item by item."""
    kx, ky = _json_kind(x), _json_kind(y)
    if kx != ky:
        return (_JSON_TYPE_RANK[kx] > _JSON_TYPE_RANK[ky]) - (_JSON_TYPE_RANK[kx] < _JSON_TYPE_RANK[ky])
    if kx == "array":
        for a, b in zip(x, y):
            c = _json_cmp(a, b)
            if c:
                return c
        return (len(x) > len(y)) - (len(x) < len(y))
    if kx == "object":
        same = x.keys() == y.keys() and all(_json_cmp(x[k], y[k]) == 0 for k in x)
        return 0 if same else 1
    if kx == "null":
        return 0
    if kx == "number":
        a, b = _numeric_pair(x, y)
        return (a > b) - (a < b)
    return (x > y) - (x < y)


_PATH_STEP = re.compile(r'\s*(?:\.\s*(?:"((?:[^"\\]|\\.)*)"|([A-Za-z_$][\w$]*)|(\*))|\[\s*(\d+|\*|last)\s*\])')


def _json_path(path: str) -> list | None:
    """A JSON path ('$.a[0]."b c"[*]') as steps: a key, an index, or '*' for every member; None if
    it is no path."""
    s = path.strip()
    if not s.startswith("$"):
        return None
    steps, i = [], 1
    while i < len(s):
        m = _PATH_STEP.match(s, i)
        if not m:
            return None
        quoted, key, star, index = m.groups()
        if quoted is not None:
            steps.append(("key", json.loads(f'"{quoted}"')))
        elif key is not None:
            steps.append(("key", key))
        elif star or index == "*":
            steps.append(("any", "object" if star else "array"))
        else:
            steps.append(("index", index))
        i = m.end()
    return steps


def _json_find(doc, steps) -> list:
    """The values at `steps` of `doc`."""
    found = [doc]
    for kind, arg in steps:
        nxt = []
        for d in found:
            if kind == "key" and isinstance(d, dict) and arg in d:
                nxt.append(d[arg])
            elif kind == "index":
                items = d if isinstance(d, list) else [d]  # a scalar is an array of one ([0] is itself)
                n = len(items) - 1 if arg == "last" else int(arg)
                if 0 <= n < len(items):
                    nxt.append(items[n])
            elif kind == "any" and arg == "object" and isinstance(d, dict):
                nxt.extend(d.values())
            elif kind == "any" and arg == "array" and isinstance(d, list):
                nxt.extend(d)
        found = nxt
    return found


def _json_at(doc: Json, path) -> list | None:
    steps = _json_path(_as_text(path))
    return None if steps is None else _json_find(doc.doc, steps)


def json_extract(doc, *paths):
    d = _json_of(doc)
    if d is None:
        return None
    found, wild = [], len(paths) > 1
    for p in paths:
        at = _json_at(d, p)
        if at is None:
            return None
        wild = wild or any(k == "any" for k, _ in _json_path(_as_text(p)))
        found.extend(at)
    if not found:
        return None
    return Json(found) if wild else Json(found[0])


def json_unquote(v):
    if isinstance(v, Json):
        return v.doc if isinstance(v.doc, str) else v.text()
    s = _as_text(v)
    if len(s) >= 2 and s[0] == s[-1] == '"':
        try:
            return json.loads(s)
        except ValueError:
            return s
    return s


def _json_contains(target, candidate) -> bool:
    if isinstance(target, dict):
        return isinstance(candidate, dict) and all(
            k in target and _json_contains(target[k], v) for k, v in candidate.items())
    if isinstance(target, list):
        if isinstance(candidate, list):
            return all(any(_json_contains(t, c) for t in target) for c in candidate)
        return any(_json_contains(t, candidate) for t in target)
    return _json_kind(target) == _json_kind(candidate) and _json_cmp(target, candidate) == 0


def _json_under(doc, path) -> Json | None:
    """The document (JSON text or value) at `path` (the whole if None); None if not there."""
    d = _json_of(doc)
    if d is None or path is None:
        return d
    at = _json_at(d, path)
    return Json(at[0]) if at else None


def json_contains(target, candidate, path=None):
    t, c = _json_under(target, path), _json_of(candidate)
    return None if t is None or c is None else int(_json_contains(t.doc, c.doc))


def json_length(doc, path=None):
    d = _json_under(doc, path)
    return None if d is None else len(d.doc) if isinstance(d.doc, (list, dict)) else 1


def json_type(doc):
    d = _json_of(doc)
    if d is None:
        return None
    x = d.doc
    if isinstance(x, bool):
        return "BOOLEAN"
    if isinstance(x, int):
        return "UNSIGNED INTEGER" if x > 2 ** 63 - 1 else "INTEGER"
    if isinstance(x, (float, decimal.Decimal)):
        return "DOUBLE"
    return {type(None): "NULL", str: "STRING", list: "ARRAY", dict: "OBJECT"}[type(x)]


# --- date and time --------------------------------------------------------------------------

def _datetime_of(v) -> Temporal | None:
    """A date/time function's argument as a DATETIME (a DATE at midnight); None if it is none."""
    if isinstance(v, Temporal):
        if v.kind == "time":
            return None
        return Temporal(v.parts, "datetime", v.fsp) if v.kind == "datetime" else v
    if isinstance(v, (str, bytes)) and not isinstance(v, Hex):
        s = v if isinstance(v, str) else v.decode("latin-1")
        t = tidb_datetime(s)  # as TiDB casts a string argument (a zone converted, 7+ digits rounded)
        if t is None:
            return None
        shape = parse_temporal(s, "datetime")  # a date alone stays a DATE (DATE_ADD('2000-01-01', ...))
        date = shape is not None and shape.kind == "date" and t.parts[3:] == (0, 0, 0, 0)
        return Temporal(t.parts, "date" if date else "datetime")
    if v is None or isinstance(v, (Json, Hex)):
        return None
    t = _to_temporal(v, "datetime")
    return None if t.parts == _ZERO and number(v) != 0 else t


def _real_date(t: Temporal | None) -> dt.datetime | None:
    """A Python datetime of a valid date (no zero year, month or day)."""
    if t is None:
        return None
    y, mo, d, h, mi, s, us = t.parts
    try:
        return dt.datetime(y, mo, d, h, mi, s, us)
    except ValueError:
        return None


def _temporal_of(d: dt.datetime, kind: str, fsp: int = 0) -> Temporal:
    return Temporal((d.year, d.month, d.day, d.hour, d.minute, d.second, d.microsecond), kind, fsp)


def _part(i: int):
    """YEAR(), MONTH(), DAY(): a part of a date, zero dates included (YEAR('0000-00-00') is 0)."""
    def run(v):
        t = _datetime_of(v)
        return None if t is None else t.parts[i]
    return run


def hour(v):
    if isinstance(v, Temporal) and v.kind == "time":
        return abs(v.parts[0]) // 3_600_000_000
    if isinstance(v, (str, bytes)) and not isinstance(v, Hex):  # read as a TIME (TiDB's ParseDuration)
        tm = tidb_duration(v if isinstance(v, str) else v.decode("latin-1"))
        return None if tm is None else abs(tm.parts[0]) // 3_600_000_000
    t = _datetime_of(v)
    return None if t is None else t.parts[3]


def date_of(v):
    t = _datetime_of(v)
    return None if t is None else Temporal(t.parts[:3] + (0, 0, 0, 0), "date")


# INTERVAL units: (unit of each part, from the largest)
_UNITS = {
    "MICROSECOND": ("us",), "SECOND": ("s",), "MINUTE": ("mi",), "HOUR": ("h",), "DAY": ("d",),
    "WEEK": ("w",), "MONTH": ("mo",), "QUARTER": ("q",), "YEAR": ("y",),
    "SECOND_MICROSECOND": ("s", "us"), "MINUTE_MICROSECOND": ("mi", "s", "us"), "MINUTE_SECOND": ("mi", "s"),
    "HOUR_MICROSECOND": ("h", "mi", "s", "us"), "HOUR_SECOND": ("h", "mi", "s"), "HOUR_MINUTE": ("h", "mi"),
    "DAY_MICROSECOND": ("d", "h", "mi", "s", "us"), "DAY_SECOND": ("d", "h", "mi", "s"),
    "DAY_MINUTE": ("d", "h", "mi"), "DAY_HOUR": ("d", "h"), "YEAR_MONTH": ("y", "mo"),
}
_US = {"us": 1, "s": 1_000_000, "mi": 60_000_000, "h": 3_600_000_000, "d": 86_400_000_000,
       "w": 7 * 86_400_000_000}
_MONTHS = {"mo": 1, "q": 3, "y": 12}


def _interval(amount, unit: str) -> tuple[int, int] | None:
    """An INTERVAL as (months, microseconds); None if its value is NULL."""
    if amount is None:
        return None
    parts = _UNITS[unit]
    if len(parts) == 1:
        if parts[0] == "us" or parts[0] == "s":
            n = decimal.Decimal(number(amount))
            return 0, int((n * _US[parts[0]]).to_integral_value(decimal.ROUND_HALF_UP))
        n = number(amount)
        n = int(decimal.Decimal(n).to_integral_value(decimal.ROUND_HALF_UP))
        return (n * _MONTHS[parts[0]], 0) if parts[0] in _MONTHS else (0, n * _US[parts[0]])
    text = _as_text(amount).strip()
    sign = -1 if text.startswith("-") else 1
    nums = [int(x) for x in re.findall(r"\d+", text)]
    if not nums or len(nums) > len(parts):
        return None
    nums = [0] * (len(parts) - len(nums)) + nums
    if parts[-1] == "us":
        nums[-1] = int(str(nums[-1]).ljust(6, "0")[:6]) if re.search(r"\.\d+$", text) else nums[-1]
    months = sum(n * _MONTHS[p] for n, p in zip(nums, parts) if p in _MONTHS)
    us = sum(n * _US[p] for n, p in zip(nums, parts) if p in _US)
    return sign * months, sign * us


def date_add(v, interval: tuple[int, int] | None, unit: str, sign: int = 1):
    """DATE_ADD/DATE_SUB/`+ INTERVAL`: a DATE stays a DATE for day and larger units, a string
    gives a string, NULL past year 9999 or before year 1, or for a date with zero parts."""
    if v is None or interval is None:
        return None
    t = _datetime_of(v)
    d = _real_date(t)
    if d is None:
        return None
    months, us = interval[0] * sign, interval[1] * sign
    try:
        if months:
            y, mo = divmod(d.year * 12 + d.month - 1 + months, 12)
            if not 1 <= y <= 9999:
                return None
            d = d.replace(year=y, month=mo + 1, day=min(d.day, calendar.monthrange(y, mo + 1)[1]))
        d = d + dt.timedelta(microseconds=us)
    except (ValueError, OverflowError):
        return None
    day_unit = all(p in ("d", "w", "mo", "q", "y") for p in _UNITS[unit])
    kind = "date" if t.kind == "date" and day_unit else "datetime"
    fsp = 6 if "us" in _UNITS[unit] or d.microsecond else (t.fsp if isinstance(v, Temporal) else 0)
    out = _temporal_of(d, kind, fsp)
    return _temporal_text(out) if isinstance(v, (str, bytes)) else out


def datediff(a, b):
    x, y = _real_date(_datetime_of(a)), _real_date(_datetime_of(b))
    if x is None or y is None:
        return None
    return (x.date() - y.date()).days


def _months_between(x: dt.datetime, y: dt.datetime) -> int:
    """Whole months from x to y, as TIMESTAMPDIFF counts them (a month is done when the day and
    time of day are reached)."""
    n = (y.year - x.year) * 12 + (y.month - x.month)
    tail_x, tail_y = (x.day, x.time()), (y.day, y.time())
    if n > 0 and tail_y < tail_x:
        n -= 1
    elif n < 0 and tail_y > tail_x:
        n += 1
    return n


def timestampdiff(unit: str, a, b):
    x, y = _real_date(_datetime_of(a)), _real_date(_datetime_of(b))
    if x is None or y is None:
        return None
    unit = unit.upper()
    if unit in ("MONTH", "QUARTER", "YEAR"):
        return int(_months_between(x, y) / _MONTHS[{"MONTH": "mo", "QUARTER": "q", "YEAR": "y"}[unit]])
    us = (y - x) // dt.timedelta(microseconds=1)
    per = _US[{"MICROSECOND": "us", "SECOND": "s", "MINUTE": "mi", "HOUR": "h", "DAY": "d", "WEEK": "w"}[unit]]
    return int(us / per) if us >= 0 else -int(-us / per)


_EPOCH = dt.datetime(1970, 1, 1)
# UNIX_TIMESTAMP's range in TiDB (and MySQL from 8.0.28): 0 outside it (pkg/expression's
# goTimeToMysqlUnixTimestamp); MariaDB 10.11 says NULL there, and ends at 2038
_UNIX_MIN, _UNIX_MAX = dt.datetime(1970, 1, 1, 0, 0, 1), dt.datetime(3001, 1, 18, 23, 59, 59, 999999)


def unix_timestamp(now, v=None):
    """Seconds since 1970 of a date/time read in the evaluator's time zone (UTC); 0 outside
    TiDB's range or for a date that is none; a fraction when the value has one."""
    if v is None:
        return int((now - _EPOCH).total_seconds())
    t = _datetime_of(v)
    d = _real_date(t)
    if d is None or d < _UNIX_MIN or d > _UNIX_MAX:
        return 0
    delta = d - _EPOCH
    whole = delta.days * 86400 + delta.seconds
    fsp = t.fsp if isinstance(v, Temporal) else len(m.group(1)) if (m := re.search(r"\.(\d+)", _as_text(v))) else 0
    if not fsp:
        return whole
    return (decimal.Decimal(whole) + decimal.Decimal(delta.microseconds).scaleb(-6)).quantize(
        decimal.Decimal(1).scaleb(-min(fsp, 6)), decimal.ROUND_HALF_EVEN)


def from_unixtime(v, fmt=None):
    n = decimal.Decimal(number(v))
    if n < 0 or n > 32536771199:
        return None
    whole = int(n)
    us = int((n - whole) * 1_000_000)
    fsp = min(6, max(0, -n.as_tuple().exponent)) if isinstance(number(v), decimal.Decimal) else 0
    out = _temporal_of(_EPOCH + dt.timedelta(seconds=whole, microseconds=us), "datetime", fsp)
    return out if fmt is None else date_format(out, fmt)


_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
                "October", "November", "December")
_DAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _format_spec(c: str, t: Temporal, d: dt.datetime | None) -> str | None:
    """One DATE_FORMAT specifier; None where it needs a real date the value is not."""
    y, mo, day, h, mi, s, us = t.parts
    h12 = h % 12 or 12
    simple = {"Y": f"{y:04d}", "y": f"{y % 100:02d}", "m": f"{mo:02d}", "c": str(mo), "d": f"{day:02d}",
              "e": str(day), "H": f"{h:02d}", "k": str(h), "h": f"{h12:02d}", "I": f"{h12:02d}", "l": str(h12),
              "i": f"{mi:02d}", "s": f"{s:02d}", "S": f"{s:02d}", "f": f"{us:06d}", "p": "AM" if h < 12 else "PM",
              "T": f"{h:02d}:{mi:02d}:{s:02d}", "r": f"{h12:02d}:{mi:02d}:{s:02d} {'AM' if h < 12 else 'PM'}",
              "M": _MONTH_NAMES[mo - 1] if mo else None, "b": _MONTH_NAMES[mo - 1][:3] if mo else None,
              "D": _ordinal(day)}
    if c in simple:
        return simple[c]
    if d is None:
        return None
    return {"W": _DAY_NAMES[d.weekday()], "a": _DAY_NAMES[d.weekday()][:3], "w": str((d.weekday() + 1) % 7),
            "j": f"{d.timetuple().tm_yday:03d}"}.get(c, c)


def date_format(v, fmt):
    t = _datetime_of(v)
    if t is None:
        return None
    d = _real_date(t)
    f, out, i = _as_text(fmt), [], 0
    while i < len(f):
        if f[i] == "%" and i + 1 < len(f):
            piece = _format_spec(f[i + 1], t, d)
            if piece is None:
                return None
            out.append(piece)
            i += 2
        else:
            out.append(f[i])
            i += 1
    return "".join(out)


# --- strings --------------------------------------------------------------------------------

def _binary(*vs) -> bool:
    """Whether a string function works on bytes: a binary string among its arguments."""
    return any(isinstance(v, bytes) for v in vs)


def _str(v, binary: bool):
    if binary:
        return v if isinstance(v, bytes) else _as_text(v).encode("utf-8")
    return _as_text(v)


def _int(v) -> int:
    n = number(v)
    return n if isinstance(n, int) else int(decimal.Decimal(n).to_integral_value(decimal.ROUND_HALF_UP))


def concat(*vs):
    b = _binary(*vs)
    return (b"" if b else "").join(_str(v, b) for v in vs)


def concat_ws(sep, *vs):
    return concat_sep(sep, [v for v in vs if v is not None])


def concat_sep(sep, vs):
    b = _binary(sep, *vs)
    return _str(sep, b).join(_str(v, b) for v in vs)


def substring(s, pos, length=None):
    b = _binary(s)
    x, p = _str(s, b), _int(pos)
    if p == 0 or abs(p) > len(x):
        return x[:0]
    start = p - 1 if p > 0 else len(x) + p
    if length is None:
        return x[start:]
    n = _int(length)
    return x[start:start + n] if n > 0 else x[:0]


def left(s, n):
    x, k = _str(s, _binary(s)), _int(n)
    return x[:max(k, 0)]


def right(s, n):
    x, k = _str(s, _binary(s)), _int(n)
    return x[len(x) - k:] if k > 0 else x[:0]


def trim(s, rem=" ", where="BOTH"):
    b = _binary(s, rem)
    x, r = _str(s, b), _str(rem, b)
    if not r:
        return x
    if where in ("BOTH", "LEADING"):
        while x.startswith(r):
            x = x[len(r):]
    if where in ("BOTH", "TRAILING"):
        while x.endswith(r):
            x = x[:-len(r)]
    return x


def replace(s, old, new):
    b = _binary(s, old, new)
    x, o, n = _str(s, b), _str(old, b), _str(new, b)
    return x.replace(o, n) if o else x


def locate(sub, s, pos=None):
    b = _binary(sub, s)
    x, y = _str(s, b), _str(sub, b)
    start = 1 if pos is None else _int(pos)
    if start < 1 or start > len(x) + 1:
        return 0
    return x.find(y, start - 1) + 1


# a string function's result longer than TiDB's default max_allowed_packet is NULL (with a warning)
_MAX_ALLOWED_PACKET = 67_108_864


def _pad(is_left: bool):
    def run(s, n, pad):
        b = _binary(s, pad)
        x, k, p = _str(s, b), _int(n), _str(pad, b)
        if k < 0 or k > _MAX_ALLOWED_PACKET:
            return None
        if len(x) >= k:
            return x[:k]
        if not p:
            return None
        fill = (p * (k // len(p) + 1))[:k - len(x)]
        return fill + x if is_left else x + fill
    return run


def regexp(s, pattern):
    b = _binary(s, pattern)
    try:
        return int(re.search(_str(pattern, b), _str(s, b)) is not None)
    except re.error:
        return None  # a pattern that is none (a literal one is refused at create)


def hex_of(v):
    if isinstance(v, bytes):
        return v.hex().upper()
    if isinstance(v, (int, float, decimal.Decimal, Year)) and not isinstance(v, (Member, Hex)):
        n = _int(v)
        return format(n if n >= 0 else n + 2 ** 64, "X")
    return _as_text(v).encode("utf-8").hex().upper()


def _digest_bytes(v) -> bytes:
    return v if isinstance(v, bytes) else _as_text(v).encode("utf-8")


# --- numbers --------------------------------------------------------------------------------

def _round_with(mode: str):
    """ROUND (half away from zero) and TRUNCATE (toward zero) to d digits after the point."""
    def run(v, d=0):
        x, k = number(v), max(-70, min(30, _int(d)))  # MySQL keeps at most 30 decimals
        q = decimal.Decimal(1).scaleb(-k)
        if isinstance(x, float):
            if not math.isfinite(x) or abs(x) >= 2 ** 53 and k >= 0:
                return x  # no fraction left to round
            with decimal.localcontext(decimal.Context(prec=800)):  # a DOUBLE has up to 309 integer digits
                return float(decimal.Decimal(repr(x)).quantize(q, mode)) if k <= 30 else x
        with decimal.localcontext(_EXACT):
            r = decimal.Decimal(x).quantize(q, mode) if k >= 0 else \
                (decimal.Decimal(x).scaleb(k).quantize(decimal.Decimal(1), mode)).scaleb(-k)
            return int(r) if isinstance(x, int) else r.quantize(decimal.Decimal(1).scaleb(-max(k, 0)))
    return run


def _to_integral(mode: str):
    def run(v):
        x = number(v)
        if isinstance(x, int):
            return x
        if isinstance(x, float):
            return float(math.floor(x) if mode == decimal.ROUND_FLOOR else math.ceil(x)) \
                if math.isfinite(x) else x
        return int(x.to_integral_value(mode))
    return run


def power(x, y):
    try:
        r = math.pow(float(number(x)), float(number(y)))
    except (OverflowError, ValueError):
        return None  # TiDB fails the statement (out of range); the row is kept
    return r if math.isfinite(r) else None


def _extreme(pick: int):
    """GREATEST (pick 1) and LEAST (-1): the argument MySQL's comparison puts first."""
    def run(*vs):
        best = vs[0]
        for v in vs[1:]:
            if (_cmp(v, best) or 0) * pick > 0:
                best = v
        return best
    return run


# --- CAST -----------------------------------------------------------------------------------

def _clip_int(n: int, unsigned: bool) -> int:
    return n % 2 ** 64 if unsigned else max(-2 ** 63, min(2 ** 63 - 1, n))


def cast(v, to: str, length: int | None = None, scale: int | None = None, now: dt.datetime | None = None):
    """CAST(v AS to): SIGNED/UNSIGNED, CHAR(n), BINARY(n), DECIMAL(m,d), DOUBLE/FLOAT, DATE,
    DATETIME(fsp), TIME(fsp), JSON.  `now`: the day a TIME is on when cast to a date."""
    if to in ("SIGNED", "UNSIGNED"):
        if isinstance(v, (str, bytes)) and not isinstance(v, Hex):
            m = re.match(r"\s*([-+]?\d+)", _as_text(v))
            return _clip_int(int(m.group(1)) if m else 0, to == "UNSIGNED")
        n = number(v)
        if isinstance(n, int):  # an integer wraps (CAST(-1 AS UNSIGNED) is 2**64 - 1) ...
            return _clip_int(n, to == "UNSIGNED")
        r = _int(n)  # ... a DECIMAL, DOUBLE or time value is clipped to the type's range
        return max(0, min(2 ** 64 - 1, r)) if to == "UNSIGNED" else max(-2 ** 63, min(2 ** 63 - 1, r))
    if to == "CHAR":
        s = _as_text(v)
        return s[:length] if length is not None else s
    if to == "BINARY":
        b = _digest_bytes(v)
        return b[:length].ljust(length, b"\0") if length is not None else b
    if to == "DECIMAL":
        m, d = min(length if length is not None else 10, 65), min(scale or 0, 30)  # MySQL's largest DECIMAL
        x = decimal.Decimal(number(v)) if not isinstance(number(v), float) else decimal.Decimal(repr(number(v)))
        limit = decimal.Decimal(10) ** (m - d) - decimal.Decimal(1).scaleb(-d)
        if not x.is_finite() or abs(x) > limit:  # clipped to the type's range
            return limit.copy_sign(x)
        with decimal.localcontext(_EXACT):
            x = x.quantize(decimal.Decimal(1).scaleb(-d), decimal.ROUND_HALF_UP)
        return max(-limit, min(limit, x))
    if to == "DOUBLE":
        return float(number(v))
    if to == "FLOAT":
        return Float32(struct.unpack("f", struct.pack("f", float(number(v))))[0])
    if to in ("DATE", "DATETIME"):
        if isinstance(v, Temporal) and v.kind == "time" and now is not None:  # the time of day today
            v = _temporal_of(dt.datetime(now.year, now.month, now.day) + dt.timedelta(microseconds=v.parts[0]),
                             "datetime", v.fsp)
        t = _datetime_of(v)
        if t is None:
            return None
        if to == "DATE":
            return Temporal(t.parts[:3] + (0, 0, 0, 0), "date")
        fsp = length or 0
        us = t.parts[6] // 10 ** (6 - fsp) * 10 ** (6 - fsp)
        return Temporal(t.parts[:6] + (us,), "datetime", fsp)
    if to == "TIME":
        if _is_string(v) and not isinstance(v, Hex):  # TiDB's ParseDuration; NULL where it fails
            t = tidb_duration(v if isinstance(v, str) else v.decode("latin-1"))
            if t is None:
                return None
        else:
            t = v if isinstance(v, Temporal) and v.kind == "time" else _to_temporal(v, "time")
        return Temporal(t.parts, "time", length or 0)
    if to == "JSON":
        return _json_of(v) if isinstance(v, (str, bytes)) else _as_json(v)
    raise ValueError(to)


# --- the function table ---------------------------------------------------------------------

@dataclass(frozen=True)
class Fn:
    """A function the evaluator knows: `impl` of its arguments' values, `arity` (least, most;
    None: any number); `nulls`: NULL in any argument is NULL without calling impl (False for the
    control-flow functions, which look at NULL themselves); `now`: impl takes the evaluation's
    NOW (a naive UTC datetime) first."""
    impl: Callable
    arity: tuple[int, int | None]
    nulls: bool = True
    now: bool = False


def _first_not_null(*vs):
    return next((v for v in vs if v is not None), None)


def _now(fsp: int = 0):
    def run(now, d=None):
        digits = max(0, min(6, _int(d))) if d is not None else fsp  # TiDB refuses more than 6
        us = now.microsecond // 10 ** (6 - digits) * 10 ** (6 - digits) if digits else 0
        return _temporal_of(now.replace(microsecond=us), "datetime", digits)
    return run


def _text(f):
    """A function of the argument's text (bytes of a binary string), e.g. UPPER of a BLOB is itself."""
    return lambda v: v if isinstance(v, bytes) else f(_as_text(v))


def _byte_length(v):
    return v.size if isinstance(v, Bit) else len(v) if isinstance(v, bytes) else len(_as_text(v).encode("utf-8"))


def _char_length(v):
    return v.size if isinstance(v, Bit) else len(v) if isinstance(v, bytes) else len(_as_text(v))


FUNCTIONS: dict[str, Fn] = {
    # JSON (TiDB's JSON type; `->` is JSON_EXTRACT, `->>` JSON_UNQUOTE(JSON_EXTRACT))
    "JSON_EXTRACT": Fn(json_extract, (2, None)),
    "JSON_UNQUOTE": Fn(json_unquote, (1, 1)),
    "JSON_CONTAINS": Fn(json_contains, (2, 3)),
    "JSON_LENGTH": Fn(json_length, (1, 2)),
    "JSON_TYPE": Fn(json_type, (1, 1)),
    # date and time; NOW and its kin are the cycle's one instant in UTC (module docstring)
    "NOW": Fn(_now(), (0, 1), now=True),
    "CURRENT_TIMESTAMP": Fn(_now(), (0, 1), now=True),
    "LOCALTIMESTAMP": Fn(_now(), (0, 1), now=True),
    "UTC_TIMESTAMP": Fn(_now(), (0, 1), now=True),
    "CURDATE": Fn(lambda now: _temporal_of(now.replace(hour=0, minute=0, second=0, microsecond=0), "date"),
                  (0, 0), now=True),
    "CURRENT_DATE": Fn(lambda now: _temporal_of(now.replace(hour=0, minute=0, second=0, microsecond=0), "date"),
                       (0, 0), now=True),
    "UTC_DATE": Fn(lambda now: _temporal_of(now.replace(hour=0, minute=0, second=0, microsecond=0), "date"),
                   (0, 0), now=True),
    "DATE": Fn(date_of, (1, 1)),
    "YEAR": Fn(_part(0), (1, 1)),
    "MONTH": Fn(_part(1), (1, 1)),
    "DAY": Fn(_part(2), (1, 1)),
    "DAYOFMONTH": Fn(_part(2), (1, 1)),
    "HOUR": Fn(hour, (1, 1)),
    "DATEDIFF": Fn(datediff, (2, 2)),
    "UNIX_TIMESTAMP": Fn(unix_timestamp, (0, 1), now=True),
    "FROM_UNIXTIME": Fn(from_unixtime, (1, 2)),
    "DATE_FORMAT": Fn(date_format, (2, 2)),
    # strings: characters of text, bytes of a binary string
    "CONCAT": Fn(concat, (1, None)),
    "CONCAT_WS": Fn(lambda sep, *vs: None if sep is None else concat_ws(sep, *vs), (2, None), nulls=False),
    "SUBSTRING": Fn(substring, (2, 3)),
    "SUBSTR": Fn(substring, (2, 3)),
    "MID": Fn(substring, (3, 3)),
    "LEFT": Fn(left, (2, 2)),
    "RIGHT": Fn(right, (2, 2)),
    "TRIM": Fn(trim, (1, 1)),
    "LTRIM": Fn(lambda s: trim(s, " ", "LEADING"), (1, 1)),
    "RTRIM": Fn(lambda s: trim(s, " ", "TRAILING"), (1, 1)),
    "REPLACE": Fn(replace, (3, 3)),
    "LOCATE": Fn(locate, (2, 3)),
    "POSITION": Fn(locate, (2, 2)),
    "INSTR": Fn(lambda s, sub: locate(sub, s), (2, 2)),
    "LPAD": Fn(_pad(True), (3, 3)),
    "RPAD": Fn(_pad(False), (3, 3)),
    "REGEXP": Fn(regexp, (2, 2)),
    "HEX": Fn(hex_of, (1, 1)),
    "MD5": Fn(lambda v: hashlib.md5(_digest_bytes(v)).hexdigest(), (1, 1)),
    "CRC32": Fn(lambda v: zlib.crc32(_digest_bytes(v)), (1, 1)),
    "LENGTH": Fn(_byte_length, (1, 1)),
    "OCTET_LENGTH": Fn(_byte_length, (1, 1)),
    "CHAR_LENGTH": Fn(_char_length, (1, 1)),
    "CHARACTER_LENGTH": Fn(_char_length, (1, 1)),
    "UPPER": Fn(_text(str.upper), (1, 1)),
    "UCASE": Fn(_text(str.upper), (1, 1)),
    "LOWER": Fn(_text(str.lower), (1, 1)),
    "LCASE": Fn(_text(str.lower), (1, 1)),
    # numbers
    "ABS": Fn(lambda v: abs(number(v)), (1, 1)),
    "MOD": Fn(lambda a, b: _arith_values("Mod", a, b), (2, 2)),
    "ROUND": Fn(_round_with(decimal.ROUND_HALF_UP), (1, 2)),
    "TRUNCATE": Fn(_round_with(decimal.ROUND_DOWN), (2, 2)),
    "FLOOR": Fn(_to_integral(decimal.ROUND_FLOOR), (1, 1)),
    "CEIL": Fn(_to_integral(decimal.ROUND_CEILING), (1, 1)),
    "CEILING": Fn(_to_integral(decimal.ROUND_CEILING), (1, 1)),
    "POW": Fn(power, (2, 2)),
    "POWER": Fn(power, (2, 2)),
    "GREATEST": Fn(_extreme(1), (2, None)),
    "LEAST": Fn(_extreme(-1), (2, None)),
    # control flow
    "IF": Fn(lambda cond, then, other: then if truth(cond) else other, (3, 3), nulls=False),
    "IFNULL": Fn(_first_not_null, (2, 2), nulls=False),
    "COALESCE": Fn(_first_not_null, (1, None), nulls=False),
    "NULLIF": Fn(lambda a, b: None if a is not None and b is not None and _cmp(a, b) == 0 else a, (2, 2),
                 nulls=False),
}

# functions written with their own syntax, evaluated by compile_expr itself (not FUNCTIONS)
SYNTAX = ("CASE", "CAST", "CONVERT", "DATE_ADD", "DATE_SUB", "ADDDATE", "SUBDATE", "INTERVAL", "TIMESTAMPDIFF")

# the results a control-flow function returns: a string literal among them makes the result a
# string (MySQL's type of IF/IFNULL/COALESCE/CASE)
_RESULT_ARGS = {"IF": slice(1, None), "IFNULL": slice(None), "COALESCE": slice(None)}


def supported_functions() -> list[str]:
    """Every function name a value expression may use (docs/guides/filters.md's list is checked against this)."""
    return sorted(set(FUNCTIONS) | set(SYNTAX) - {"INTERVAL"})


def _arith_values(op: str, a, b):
    with decimal.localcontext(_EXACT):
        return _compute(op, *_numeric_pair(number(a), number(b)))


@functools.cache
def dialect():
    """sqlglot's MySQL dialect with every function of FUNCTIONS left a plain call (sqlglot would
    rewrite some: YEAR(d) into YEAR(DATE(d)), MOD into %, `->` into its own JSON path), so the
    compiler sees the calls as written."""
    from sqlglot import exp  # lazy: sqlglot loads only where an expression is parsed
    from sqlglot.dialects.mysql import MySQL  # lazy: as above
    from sqlglot.tokens import TokenType  # lazy: as above

    def call(name, *args):
        return exp.Anonymous(this=name, expressions=list(args))

    class CallsAsWritten(MySQL.Parser):
        FUNCTIONS = {k: v for k, v in MySQL.Parser.FUNCTIONS.items() if k not in FUNCTIONS and k not in _DATE_ARITH}
        FUNCTION_PARSERS = {k: v for k, v in MySQL.Parser.FUNCTION_PARSERS.items() if k not in ("CEIL", "FLOOR")}
        COLUMN_OPERATORS = {**MySQL.Parser.COLUMN_OPERATORS,
                            TokenType.ARROW: lambda self, this, path: call("JSON_EXTRACT", this, path),
                            TokenType.DARROW: lambda self, this, path: call(
                                "JSON_UNQUOTE", call("JSON_EXTRACT", this, path))}

    class CdcflowMySQL(MySQL):
        Parser = CallsAsWritten
    return CdcflowMySQL
