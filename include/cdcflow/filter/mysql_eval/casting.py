"""CAST(v AS type) and CONVERT(v, type): a value as SIGNED/UNSIGNED, CHAR, BINARY, DECIMAL,
DOUBLE/FLOAT, DATE, DATETIME, TIME or JSON, as TiDB casts it."""

from __future__ import annotations

import datetime as dt
import decimal
import re
import struct

from cdcflow.filter.mysql_eval.conversions import as_json, as_text, is_string, number, to_int, to_temporal
from cdcflow.filter.mysql_eval.date_time import datetime_of, temporal_of
from cdcflow.filter.mysql_eval.json_functions import json_of
from cdcflow.filter.mysql_eval.numeric import EXACT
from cdcflow.filter.mysql_eval.strings import digest_bytes
from cdcflow.filter.mysql_eval.tidb_time import tidb_duration
from cdcflow.filter.mysql_eval.values import Float32, Hex, Temporal

# CAST's target types (sqlglot's names) as cast() takes them
CAST_TO = {"BIGINT": "SIGNED", "INT": "SIGNED", "UBIGINT": "UNSIGNED", "UINT": "UNSIGNED", "CHAR": "CHAR",
           "NCHAR": "CHAR", "CHARACTER_SET": "CHAR", "BINARY": "BINARY", "DECIMAL": "DECIMAL",
           "DOUBLE": "DOUBLE", "FLOAT": "FLOAT", "DATE": "DATE", "DATETIME": "DATETIME", "TIME": "TIME",
           "JSON": "JSON"}


def _clip_int(n: int, unsigned: bool) -> int:
    return n % 2 ** 64 if unsigned else max(-2 ** 63, min(2 ** 63 - 1, n))


def cast(v, to: str, length: int | None = None, scale: int | None = None, now: dt.datetime | None = None):
    """CAST(v AS to): SIGNED/UNSIGNED, CHAR(n), BINARY(n), DECIMAL(m,d), DOUBLE/FLOAT, DATE,
    DATETIME(fsp), TIME(fsp), JSON.  `now`: the day a TIME is on when cast to a date."""
    if to in ("SIGNED", "UNSIGNED"):
        if isinstance(v, (str, bytes)) and not isinstance(v, Hex):
            m = re.match(r"\s*([-+]?\d+)", as_text(v))
            return _clip_int(int(m.group(1)) if m else 0, to == "UNSIGNED")
        n = number(v)
        if isinstance(n, int):  # an integer wraps (CAST(-1 AS UNSIGNED) is 2**64 - 1) ...
            return _clip_int(n, to == "UNSIGNED")
        r = to_int(n)  # ... a DECIMAL, DOUBLE or time value is clipped to the type's range
        return max(0, min(2 ** 64 - 1, r)) if to == "UNSIGNED" else max(-2 ** 63, min(2 ** 63 - 1, r))
    if to == "CHAR":
        s = as_text(v)
        return s[:length] if length is not None else s
    if to == "BINARY":
        b = digest_bytes(v)
        return b[:length].ljust(length, b"\0") if length is not None else b
    if to == "DECIMAL":
        m, d = min(length if length is not None else 10, 65), min(scale or 0, 30)  # MySQL's largest DECIMAL
        x = decimal.Decimal(number(v)) if not isinstance(number(v), float) else decimal.Decimal(repr(number(v)))
        limit = decimal.Decimal(10) ** (m - d) - decimal.Decimal(1).scaleb(-d)
        if not x.is_finite() or abs(x) > limit:  # clipped to the type's range
            return limit.copy_sign(x)
        with decimal.localcontext(EXACT):
            x = x.quantize(decimal.Decimal(1).scaleb(-d), decimal.ROUND_HALF_UP)
        return max(-limit, min(limit, x))
    if to == "DOUBLE":
        return float(number(v))
    if to == "FLOAT":
        return Float32(struct.unpack("f", struct.pack("f", float(number(v))))[0])
    if to in ("DATE", "DATETIME"):
        if isinstance(v, Temporal) and v.kind == "time" and now is not None:  # the time of day today
            v = temporal_of(dt.datetime(now.year, now.month, now.day) + dt.timedelta(microseconds=v.parts[0]),
                             "datetime", v.fsp)
        t = datetime_of(v)
        if t is None:
            return None
        if to == "DATE":
            return Temporal(t.parts[:3] + (0, 0, 0, 0), "date")
        fsp = length or 0
        us = t.parts[6] // 10 ** (6 - fsp) * 10 ** (6 - fsp)
        return Temporal(t.parts[:6] + (us,), "datetime", fsp)
    if to == "TIME":
        if is_string(v) and not isinstance(v, Hex):  # TiDB's ParseDuration; NULL where it fails
            t = tidb_duration(v if isinstance(v, str) else v.decode("latin-1"))
            if t is None:
                return None
        else:
            t = v if isinstance(v, Temporal) and v.kind == "time" else to_temporal(v, "time")
        return Temporal(t.parts, "time", length or 0)
    if to == "JSON":
        return json_of(v) if isinstance(v, (str, bytes)) else as_json(v)
    raise ValueError(to)
