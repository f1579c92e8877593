"""The date and time functions: parts of a date (YEAR, MONTH, DAY, HOUR, DATE), INTERVAL
arithmetic (DATE_ADD, DATE_SUB, `+ INTERVAL`), DATEDIFF and TIMESTAMPDIFF, UNIX_TIMESTAMP and
FROM_UNIXTIME, DATE_FORMAT; an argument that is a string is read as TiDB casts one
(tidb_time.tidb_datetime)."""

from __future__ import annotations

import calendar
import datetime as dt
import decimal
import re

from cdcflow.filter.mysql_eval.conversions import as_text, number, temporal_text, to_temporal
from cdcflow.filter.mysql_eval.tidb_time import tidb_datetime, tidb_duration
from cdcflow.filter.mysql_eval.values import ZERO, Hex, Json, Temporal, parse_temporal


def datetime_of(v) -> Temporal | None:
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
    t = to_temporal(v, "datetime")
    return None if t.parts == ZERO and number(v) != 0 else t


def _real_date(t: Temporal | None) -> dt.datetime | None:
    """A Python datetime of a valid date (no zero year, month or day)."""
    if t is None:
        return None
    y, mo, d, h, mi, s, us = t.parts
    try:
        return dt.datetime(y, mo, d, h, mi, s, us)
    except ValueError:
        return None


def temporal_of(d: dt.datetime, kind: str, fsp: int = 0) -> Temporal:
    return Temporal((d.year, d.month, d.day, d.hour, d.minute, d.second, d.microsecond), kind, fsp)


def date_part(i: int):
    """YEAR(), MONTH(), DAY(): a part of a date, zero dates included (YEAR('0000-00-00') is 0)."""
    def run(v):
        t = datetime_of(v)
        return None if t is None else t.parts[i]
    return run


def hour(v):
    if isinstance(v, Temporal) and v.kind == "time":
        return abs(v.parts[0]) // 3_600_000_000
    if isinstance(v, (str, bytes)) and not isinstance(v, Hex):  # read as a TIME (TiDB's ParseDuration)
        tm = tidb_duration(v if isinstance(v, str) else v.decode("latin-1"))
        return None if tm is None else abs(tm.parts[0]) // 3_600_000_000
    t = datetime_of(v)
    return None if t is None else t.parts[3]


def date_of(v):
    t = datetime_of(v)
    return None if t is None else Temporal(t.parts[:3] + (0, 0, 0, 0), "date")


# INTERVAL units: (unit of each part, from the largest)
UNITS = {
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
# the units TIMESTAMPDIFF counts in
TIMESTAMPDIFF_UNITS = ("MICROSECOND", "SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "QUARTER", "YEAR")


def interval_of(amount, unit: str) -> tuple[int, int] | None:
    """An INTERVAL as (months, microseconds); None if its value is NULL."""
    if amount is None:
        return None
    parts = UNITS[unit]
    if len(parts) == 1:
        if parts[0] == "us" or parts[0] == "s":
            n = decimal.Decimal(number(amount))
            return 0, int((n * _US[parts[0]]).to_integral_value(decimal.ROUND_HALF_UP))
        n = number(amount)
        n = int(decimal.Decimal(n).to_integral_value(decimal.ROUND_HALF_UP))
        return (n * _MONTHS[parts[0]], 0) if parts[0] in _MONTHS else (0, n * _US[parts[0]])
    text = as_text(amount).strip()
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
    t = datetime_of(v)
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
    day_unit = all(p in ("d", "w", "mo", "q", "y") for p in UNITS[unit])
    kind = "date" if t.kind == "date" and day_unit else "datetime"
    fsp = 6 if "us" in UNITS[unit] or d.microsecond else (t.fsp if isinstance(v, Temporal) else 0)
    out = temporal_of(d, kind, fsp)
    return temporal_text(out) if isinstance(v, (str, bytes)) else out


def datediff(a, b):
    x, y = _real_date(datetime_of(a)), _real_date(datetime_of(b))
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
    x, y = _real_date(datetime_of(a)), _real_date(datetime_of(b))
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
    t = datetime_of(v)
    d = _real_date(t)
    if d is None or d < _UNIX_MIN or d > _UNIX_MAX:
        return 0
    delta = d - _EPOCH
    whole = delta.days * 86400 + delta.seconds
    fsp = t.fsp if isinstance(v, Temporal) else len(m.group(1)) if (m := re.search(r"\.(\d+)", as_text(v))) else 0
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
    out = temporal_of(_EPOCH + dt.timedelta(seconds=whole, microseconds=us), "datetime", fsp)
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
    t = datetime_of(v)
    if t is None:
        return None
    d = _real_date(t)
    f, out, i = as_text(fmt), [], 0
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
