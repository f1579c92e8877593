"""The function table: every function a value expression may call by name (FUNCTIONS: name ->
implementation, arity), and the few written with a syntax of their own, which the compiler
evaluates itself (SYNTAX)."""

from __future__ import annotations

import decimal
import hashlib
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from cdcflow.filter.mysql_eval.conversions import as_text, compare, number, to_int, truth
from cdcflow.filter.mysql_eval.date_time import (
    date_format,
    date_of,
    date_part,
    datediff,
    from_unixtime,
    hour,
    temporal_of,
    unix_timestamp,
)
from cdcflow.filter.mysql_eval.json_functions import json_contains, json_extract, json_length, json_type, json_unquote
from cdcflow.filter.mysql_eval.numeric import arithmetic, extreme, power, round_with, to_integral
from cdcflow.filter.mysql_eval.strings import (
    concat,
    concat_ws,
    digest_bytes,
    hex_of,
    left,
    locate,
    pad,
    regexp,
    replace,
    right,
    substring,
    trim,
)
from cdcflow.filter.mysql_eval.values import Bit


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
        digits = max(0, min(6, to_int(d))) if d is not None else fsp  # TiDB refuses more than 6
        us = now.microsecond // 10 ** (6 - digits) * 10 ** (6 - digits) if digits else 0
        return temporal_of(now.replace(microsecond=us), "datetime", digits)
    return run


def _text(f):
    """A function of the argument's text (bytes of a binary string), e.g. UPPER of a BLOB is itself."""
    return lambda v: v if isinstance(v, bytes) else f(as_text(v))


def _byte_length(v):
    return v.size if isinstance(v, Bit) else len(v) if isinstance(v, bytes) else len(as_text(v).encode("utf-8"))


def _char_length(v):
    return v.size if isinstance(v, Bit) else len(v) if isinstance(v, bytes) else len(as_text(v))


FUNCTIONS: dict[str, Fn] = {
    # JSON (TiDB's JSON type; `->` is JSON_EXTRACT, `->>` JSON_UNQUOTE(JSON_EXTRACT))
    "JSON_EXTRACT": Fn(json_extract, (2, None)),
    "JSON_UNQUOTE": Fn(json_unquote, (1, 1)),
    "JSON_CONTAINS": Fn(json_contains, (2, 3)),
    "JSON_LENGTH": Fn(json_length, (1, 2)),
    "JSON_TYPE": Fn(json_type, (1, 1)),
    # date and time; NOW and its kin are the cycle's one instant in UTC (the package docstring)
    "NOW": Fn(_now(), (0, 1), now=True),
    "CURRENT_TIMESTAMP": Fn(_now(), (0, 1), now=True),
    "LOCALTIMESTAMP": Fn(_now(), (0, 1), now=True),
    "UTC_TIMESTAMP": Fn(_now(), (0, 1), now=True),
    "CURDATE": Fn(lambda now: temporal_of(now.replace(hour=0, minute=0, second=0, microsecond=0), "date"),
                  (0, 0), now=True),
    "CURRENT_DATE": Fn(lambda now: temporal_of(now.replace(hour=0, minute=0, second=0, microsecond=0), "date"),
                       (0, 0), now=True),
    "UTC_DATE": Fn(lambda now: temporal_of(now.replace(hour=0, minute=0, second=0, microsecond=0), "date"),
                   (0, 0), now=True),
    "DATE": Fn(date_of, (1, 1)),
    "YEAR": Fn(date_part(0), (1, 1)),
    "MONTH": Fn(date_part(1), (1, 1)),
    "DAY": Fn(date_part(2), (1, 1)),
    "DAYOFMONTH": Fn(date_part(2), (1, 1)),
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
    "LPAD": Fn(pad(True), (3, 3)),
    "RPAD": Fn(pad(False), (3, 3)),
    "REGEXP": Fn(regexp, (2, 2)),
    "HEX": Fn(hex_of, (1, 1)),
    "MD5": Fn(lambda v: hashlib.md5(digest_bytes(v)).hexdigest(), (1, 1)),
    "CRC32": Fn(lambda v: zlib.crc32(digest_bytes(v)), (1, 1)),
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
    "MOD": Fn(lambda a, b: arithmetic("Mod", a, b), (2, 2)),
    "ROUND": Fn(round_with(decimal.ROUND_HALF_UP), (1, 2)),
    "TRUNCATE": Fn(round_with(decimal.ROUND_DOWN), (2, 2)),
    "FLOOR": Fn(to_integral(decimal.ROUND_FLOOR), (1, 1)),
    "CEIL": Fn(to_integral(decimal.ROUND_CEILING), (1, 1)),
    "CEILING": Fn(to_integral(decimal.ROUND_CEILING), (1, 1)),
    "POW": Fn(power, (2, 2)),
    "POWER": Fn(power, (2, 2)),
    "GREATEST": Fn(extreme(1), (2, None)),
    "LEAST": Fn(extreme(-1), (2, None)),
    # control flow
    "IF": Fn(lambda cond, then, other: then if truth(cond) else other, (3, 3), nulls=False),
    "IFNULL": Fn(_first_not_null, (2, 2), nulls=False),
    "COALESCE": Fn(_first_not_null, (1, None), nulls=False),
    "NULLIF": Fn(lambda a, b: None if a is not None and b is not None and compare(a, b) == 0 else a, (2, 2),
                 nulls=False),
}

# functions written with their own syntax, evaluated by compile_expr itself (not FUNCTIONS)
SYNTAX = ("CASE", "CAST", "CONVERT", "DATE_ADD", "DATE_SUB", "ADDDATE", "SUBDATE", "INTERVAL", "TIMESTAMPDIFF")
# those of them written as calls, DATE_ADD(date, INTERVAL n unit) and its kin: the sign of the interval
DATE_ARITH = {"DATE_ADD": 1, "ADDDATE": 1, "DATE_SUB": -1, "SUBDATE": -1}

# the results a control-flow function returns: a string literal among them makes the result a
# string (MySQL's type of IF/IFNULL/COALESCE/CASE)
RESULT_ARGS = {"IF": slice(1, None), "IFNULL": slice(None), "COALESCE": slice(None)}


def supported_functions() -> list[str]:
    """Every function name a value expression may use (docs/guides/filters.md's list is checked against this)."""
    return sorted(set(FUNCTIONS) | set(SYNTAX) - {"INTERVAL"})
