"""Row images as JSON text, exact for every MySQL value the binlog reader returns.

JSON has no bytes, decimals or temporal types, so those travel as one-key
objects ({"b": base64}, {"d": "1.50"}, ...).  The encoding is canonical
(same value, same text), so a key column's JSON text can serve as the key
when Spark groups changes per row.  `sql_literal` turns a decoded value into
the literal the downstream parses back to the same value.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import math

import msgspec
from pymysql.converters import escape_string


class TemporalText(str):
    """A DATE/DATETIME/TIMESTAMP value Python's types cannot hold ('0000-00-00', '2000-00-15',
    the zero TIMESTAMP), kept as MySQL's own text; written back as that text."""

    __slots__ = ()


def _encode_value(v):
    if isinstance(v, TemporalText):
        return {"tt": str(v)}
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return {"f": repr(v)}
        return v
    if isinstance(v, decimal.Decimal):
        return {"d": str(v)}
    if isinstance(v, (bytes, bytearray, memoryview)):
        return {"b": base64.b64encode(bytes(v)).decode("ascii")}
    if isinstance(v, dt.datetime):
        return {"dt": _datetime_text(v)}
    if isinstance(v, dt.date):
        return {"da": v.isoformat()}
    if isinstance(v, dt.timedelta):
        return {"t": format_time(v)}
    if isinstance(v, (set, frozenset)):
        return {"set": sorted(str(x) for x in v)}
    if isinstance(v, (dict, list)):
        return {"j": json.dumps(v, separators=(",", ":"), ensure_ascii=False, default=str)}
    raise TypeError(f"cannot encode a {type(v).__name__} value in a row image")


def _datetime_text(v: dt.datetime) -> str:
    if v.tzinfo is None:
        return v.isoformat(" ", "microseconds")  # the year always in 4 digits, as MySQL reads it
    # %Y gives '999' for year 999, which neither strptime nor MySQL reads as intended
    return f"{v.year:04d}-" + v.strftime("%m-%d %H:%M:%S.%f")


def format_time(v: dt.timedelta) -> str:
    """MySQL TIME text: sign, hours beyond 24, microseconds."""
    us = v.days * 86_400_000_000 + v.seconds * 1_000_000 + v.microseconds
    sign = "-" if us < 0 else ""
    us = abs(us)
    h, rem = divmod(us, 3_600_000_000)
    m, rem = divmod(rem, 60_000_000)
    s, frac = divmod(rem, 1_000_000)
    return f"{sign}{h:02d}:{m:02d}:{s:02d}.{frac:06d}"


_encode_json = msgspec.json.Encoder().encode  # compact JSON, as json.dumps with separators, faster


_AS_IS = frozenset({int, str, type(None), bool})  # exact types: a str subclass is TemporalText


def encode_image(row: dict | str | None) -> str | None:
    """A decoded row's image text (an image already decoded to its text, source.row_decoder's,
    as it is)."""
    if row is None or type(row) is str:
        return row
    return _encode_json({k: v if type(v) in _AS_IS else _encode_value(v) for k, v in row.items()}).decode()


def value_text(v) -> str:
    """One value's text in an image, as encode_image writes it."""
    return _encode_json(v if type(v) in _AS_IS else _encode_value(v)).decode()


def temporal_text(v) -> str:
    """A DATE, DATETIME or TIMESTAMP value's text in an image, as value_text writes it, without
    its tests of every other type (the binlog decoder's per-value path)."""
    if type(v) is dt.datetime:
        return '{"dt":"' + _datetime_text(v) + '"}'
    if type(v) is dt.date:
        return '{"da":"' + v.isoformat() + '"}'
    return value_text(v)


class _Tagged:
    """A decoded value that must be written as a specific SQL literal."""

    __slots__ = ("literal",)

    def __init__(self, literal: str):
        self.literal = literal

    def __eq__(self, other):
        return isinstance(other, _Tagged) and other.literal == self.literal

    def __hash__(self):
        return hash(self.literal)

    def __repr__(self):
        return f"SQL({self.literal})"


# tag -> the plain Python value; TIME, SET and JSON have no exact Python type and stay text
_PLAIN = {"d": decimal.Decimal, "b": base64.b64decode, "dt": dt.datetime.fromisoformat,
          "da": dt.date.fromisoformat, "f": float, "tt": TemporalText, "t": str, "set": ",".join, "j": str}
_AS_TEXT_LITERAL = {"t", "set", "j"}


def plain_value(v):
    """An image value as plain Python (TIME, SET, JSON as their MySQL text)."""
    if not isinstance(v, dict):
        return v
    (tag, x), = v.items()
    if tag not in _PLAIN:
        raise ValueError(f"unknown row-image tag {tag!r}")
    return _PLAIN[tag](x)


def _decode_value(v: dict):
    """A tagged image value (a one-key dict) as decode_image gives it."""
    (tag, x), = v.items()
    decode = _PLAIN.get(tag)
    if decode is None:
        raise ValueError(f"unknown row-image tag {tag!r}")
    return _Tagged(_quote(decode(x))) if tag in _AS_TEXT_LITERAL else decode(x)


_decode_json = msgspec.json.Decoder().decode  # the same Python values as json.loads, faster


def decode_image(text: str | None) -> dict | None:
    if text is None:
        return None
    return decoded(_decode_json(text))


def _quote(s: str) -> str:
    return "'" + escape_string(s) + "'"


def raw_image(text: str) -> dict:
    """An image's JSON as it is: tagged values stay one-key dicts (what raw_literal reads)."""
    return _decode_json(text)


def decoded(raw: dict) -> dict:
    """A raw_image as decode_image gives it."""
    return {k: _decode_value(v) if type(v) is dict else v for k, v in raw.items()}


def raw_literal(v) -> str:
    """The SQL literal of a raw image value: sql_literal of the value decode_image gives, without
    building it (a DATETIME's text is already the literal's, a DECIMAL's too unless it has an
    exponent).  The reference of sink's compiled twin (sink/compiled_literals.pyx)."""
    if type(v) is not dict:
        return sql_literal(v)
    (tag, x), = v.items()
    fast = _RAW_TAGGED.get(tag)
    out = fast(x) if fast is not None else None
    return out if out is not None else sql_literal(_decode_value(v))


def _decimal_text(x: str) -> str | None:
    return None if "E" in x or "e" in x or not x[-1:].isdigit() else x


def _normal(length: int, sep: int):
    """A temporal text _datetime_text / isoformat wrote, as it is (None: another spelling)."""
    return lambda x: "'" + x + "'" if len(x) == length and (sep < 0 or x[sep] == " ") else None


# tag -> its literal from the tagged text (None: the decoded value's literal, the slow way)
_RAW_TAGGED = {"d": _decimal_text, "dt": _normal(26, 10), "da": _normal(10, -1),
               "b": lambda x: "X'" + base64.b64decode(x).hex() + "'" if x else "''",
               "tt": _quote, "t": _quote, "j": _quote, "set": lambda x: _quote(",".join(x))}


def values_text(literal, image: dict, columns) -> str:
    """An image's VALUES tuple over `columns`, "(l1, l2, …)", each value's text by `literal`."""
    return "(" + ", ".join([literal(image[c]) for c in columns]) + ")"


def raw_values(raw: dict, columns) -> str:
    """A raw image's VALUES tuple over `columns` (values_text of raw_literal)."""
    return values_text(raw_literal, raw, columns)


def sql_literal(v) -> str:
    """The SQL literal for a decoded value (the session must not use NO_BACKSLASH_ESCAPES)."""
    plain = _PLAIN_LITERALS.get(type(v))  # NULL, tagged values and the common exact types at one lookup
    if plain is not None:
        return plain(v)
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _float_literal(v)
    if isinstance(v, decimal.Decimal):
        return format(v, "f")  # str() may give '1E-8', which MySQL reads as an approximate DOUBLE
    if isinstance(v, str):
        return _quote(v)
    if isinstance(v, (bytes, bytearray)):
        return "X'" + bytes(v).hex() + "'" if v else "''"
    if isinstance(v, dt.datetime):
        return "'" + _datetime_text(v) + "'"
    if isinstance(v, dt.date):
        return "'" + v.isoformat() + "'"
    raise TypeError(f"no SQL literal for a {type(v).__name__} value")


def _float_literal(v: float) -> str:
    if math.isnan(v) or math.isinf(v):
        raise ValueError(f"MySQL has no literal for the float {v!r}")
    return repr(v)


# by exact type (a subclass, such as TemporalText, takes sql_literal's checks), at one lookup
_PLAIN_LITERALS = {type(None): lambda _v: "NULL", int: str, str: _quote, _Tagged: lambda v: v.literal,
                   bool: lambda v: "1" if v else "0", float: _float_literal,
                   decimal.Decimal: lambda v: format(v, "f"),
                   dt.datetime: lambda v: "'" + _datetime_text(v) + "'", dt.date: lambda v: "'" + v.isoformat() + "'"}


def quote_ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
