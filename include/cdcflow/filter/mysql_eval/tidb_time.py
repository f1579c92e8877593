"""Strings and numbers read as date/time values, as TiDB reads them.

A string compared with (or cast to) a DATE, DATETIME or TIMESTAMP is read by TiDB's ParseTime
(pkg/types/time.go: splitDateTime, GetTimezone, ParseDateFormat, parseDatetime), at 6 fraction
digits (expression.WrapWithCastAsTime gives a string MaxFsp); one compared with a TIME by
ParseDuration (matchDuration, and a date and time where canFallbackToDateTime); a number with a
DATETIME/TIMESTAMP by ParseTimeFromNum (an integer) or ParseTimeFromFloatString (a decimal), as
compareFunctionClass.refineArgs rewrites it (refineNumericConstantCmpDatetime).  What TiDB reads
unlike MariaDB: a trailing time-zone offset (+08:00, +0800, +08, Z: the value is converted to the
session's zone, UTC here, as MySQL 8.0.19+ does), digits past the sixth rounded (half up, carrying
into the second), and a string that is no date/time is an error in TiCDC's filter session (its
statement context has TiDB's strict default flags) where MariaDB reads the zero date: the
comparison is NULL here and the row is kept.  Column values are read apart (typed_value:
values.parse_temporal), as the binlog gives them, zero-in-date parts included."""

from __future__ import annotations

import calendar
import datetime as dt
import decimal
import math
import re
import unicodedata

from cdcflow.filter.mysql_eval.values import ZERO, Bit, Temporal, Year


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


def two_digit_year(y: int) -> int:
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
    if frac and not is_float and not _whole(seps):
        seps, frac = seps + [frac], ""
    if has_tz and sign and not _whole(seps) and not (tz_m and not tz_sep):
        seps, has_tz = seps + [x for x in (tz_h, tz_m) if x], False
    if len(seps) in (0, 2):
        return None
    read = _read_digits(seps[0], frac, is_float) if len(seps) == 1 else _read_groups(seps)
    if read is None:
        return None
    (y, mo, d, h, mi, sec), hhmmss = read
    if len(seps[0]) <= 2 and not is_float and not (y == mo == d == h == mi == sec == 0 and not frac):
        y = two_digit_year(y)
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
        parts = _in_utc(parts, hhmmss, sign, tz_h, tz_m)
        if parts is None:
            return None
    return _checked(parts)


def _whole(groups) -> bool:
    """Too many groups to take a fraction or a zone's digits as more of them."""
    return len(groups) > 5 or (len(groups) == 1 and len(groups[0]) > 4)


def _read_digits(digits: str, frac: str, is_float: bool):
    """A date and time written as one run of digits: ((y, mo, d, h, mi, s), whether it has seconds),
    or None where TiDB fails."""
    if is_float:
        t = _datetime_from_int(int(digits)) if digits.isdigit() else None
        if t is None:
            return None
        return t.parts[:6], digits == "0" or 9 <= len(digits) <= 14
    if len(digits) not in _DIGITS_ONLY:
        return None
    widths, yy, hhmmss = _DIGITS_ONLY[len(digits)]
    got = _scan(digits, widths)
    if got is None:
        return None
    y, mo, d, h, mi, sec = (got + [0, 0, 0, 0, 0])[:6]
    y = two_digit_year(y) if yy else y
    if len(digits) in (5, 6, 8) and frac:  # '20170118.123423': the fraction is the time
        h, mi, sec = ((_scan(frac, (2, 2, 2)[:min(3, (len(frac) + 1) // 2)]) or []) + [0, 0, 0])[:3]
    if len(digits) in (9, 10):
        sec = (_scan(frac, (2,)) or [0])[0] if frac else 0
    return (y, mo, d, h, mi, sec), hhmmss


def _read_groups(seps: list[str]):
    """A date and time written as groups between separators: as _read_digits."""
    got = [_atoi(x) for x in seps[:6]]
    if any(v is None for v in got):
        return None
    return tuple((got + [0, 0, 0])[:6]), len(seps) >= 6


def _in_utc(parts, hhmmss: bool, sign: str, tz_h: str, tz_m: str) -> list[int] | None:
    """The parts of a value written with a trailing zone offset, moved into the session's zone, UTC;
    None where TiDB refuses the offset or the value is no real instant."""
    hours, minutes = int(tz_h or 0), int(tz_m or 0)
    if not hhmmss or hours > 14 or minutes > 59 or (hours == 14 and minutes) or (sign == "-" and not hours
                                                                                and not minutes):
        return None
    when = _real_instant(parts)
    if when is None:
        return None
    offset = dt.timedelta(hours=hours, minutes=minutes) * (-1 if sign == "-" else 1)
    try:
        return _parts_of(when - offset)
    except OverflowError:
        return None


def _parts_of(d: dt.datetime) -> list[int]:
    return [d.year, d.month, d.day, d.hour, d.minute, d.second, d.microsecond]


def _datetime_from_int(n: int) -> Temporal | None:
    """TiDB's ParseTimeFromNum as a DATETIME: 0 the zero date, YYMMDD, YYYYMMDD, YYMMDDhhmmss or
    YYYYMMDDhhmmss (two-digit years 00-69 as 20xx, 70-99 as 19xx); None where TiDB fails."""
    if n == 0:
        return Temporal(ZERO, "datetime")
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


def datetime_from_number(v) -> Temporal | None:
    """A number compared with a DATETIME/TIMESTAMP, as refineNumericConstantCmpDatetime converts
    it (to a DATETIME of 0 fraction digits); None where TiDB keeps the number (compared as one)."""
    if isinstance(v, decimal.Decimal):
        if not v.is_finite():
            return None
        text = format(v, "f")
        if text.startswith("0.0"):
            return Temporal(ZERO, "datetime")
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


def duration_from_number(v) -> Temporal | None:
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
