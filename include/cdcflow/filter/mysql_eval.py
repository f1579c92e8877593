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
* a temporal column against a string compares as time (the string read as a date/time; one
  that is none is NULL); against a number, the temporal value as a number (YYYYMMDD...).
* two integers compare as integers, integers and decimals exactly as decimals, anything
  else numeric as DOUBLE; a string read as a number takes its numeric prefix ('abc' is 0,
  '2x' is 2); an ENUM against a number is its index, a SET its bit mask, a hex or bit literal
  its unsigned integer.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
import struct
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
    if isinstance(v, bytes):
        return _str_number(v.decode("latin-1"))
    return _str_number(str(v))


def _is_string(v) -> bool:
    return isinstance(v, (str, bytes)) and not isinstance(v, Temporal)


def _cmp(a, b) -> int:
    """MySQL's three-way comparison of two non-NULL values."""
    if isinstance(a, Temporal) or isinstance(b, Temporal):
        if isinstance(a, Temporal) and isinstance(b, Temporal):
            x, y = _as_datetime(a), _as_datetime(b)
        elif isinstance(a, Temporal):
            x, y = _as_datetime(a), _as_datetime(_to_temporal(b, a.kind))
        else:
            x, y = _as_datetime(_to_temporal(a, b.kind)), _as_datetime(b)
        return (x > y) - (x < y)
    if isinstance(a, Year) != isinstance(b, Year):  # a constant against YEAR is read as a year
        a, b = (a, _to_year(b)) if isinstance(a, Year) else (_to_year(a), b)
    if _is_string(a) and _is_string(b):
        if isinstance(a, bytes) or isinstance(b, bytes):
            x, y = _bytes(a), _bytes(b)
        else:
            x, y = str(a), str(b)  # code point order is UTF-8's byte order
        return (x > y) - (x < y)
    x, y = _numeric_pair(number(a), number(b))
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


_ZERO = (0, 0, 0, 0, 0, 0, 0)


def _to_temporal(v, kind: str) -> Temporal:
    """A value compared with a temporal column, read as one: a string as a date/time (what is
    none reads as zero, as MySQL does with a warning), a number as YYYYMMDD[hhmmss] or HHMMSS."""
    if kind == "time":
        if _is_string(v) and not isinstance(v, Hex):
            s = v if isinstance(v, str) else v.decode("latin-1")
            t = parse_temporal(s, "time")
            if t is not None:
                return t
            d = parse_temporal(s, "datetime")
            if d is not None:  # a date and time: its time of day
                return Temporal((((d.parts[3] * 60 + d.parts[4]) * 60 + d.parts[5]) * 1_000_000 + d.parts[6],),
                                "time")
        n = decimal.Decimal(number(v))
        whole = int(abs(n))
        h, rest = divmod(whole, 10000)
        us = ((h * 60 + rest // 100) * 60 + rest % 100) * 1_000_000 + int((abs(n) - whole) * 1_000_000)
        return Temporal((-us if n < 0 else us,), "time")
    if _is_string(v) and not isinstance(v, Hex):
        t = parse_temporal(v if isinstance(v, str) else v.decode("latin-1"), kind)
        return t if t is not None else Temporal(_ZERO, kind)
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

UNSUPPORTED_HINT = ("use comparisons, IN, BETWEEN, LIKE, IS [NOT] NULL, AND/OR/XOR/NOT, + - * / DIV %, and "
                    "LENGTH, CHAR_LENGTH, UPPER, LOWER, ABS, IFNULL/COALESCE, IF")
_CMP = {"EQ": lambda c: c == 0, "NEQ": lambda c: c != 0, "GT": lambda c: c > 0, "GTE": lambda c: c >= 0,
        "LT": lambda c: c < 0, "LTE": lambda c: c <= 0}


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


def unsupported(tree) -> list[str]:
    """The operators and functions of `tree` the evaluator does not know, by SQL name."""
    from sqlglot import exp  # lazy: sqlglot only where a config has expressions (filter.value_expr)

    return sorted({n.sql(dialect="mysql").split("(")[0] if isinstance(n, exp.Anonymous) else n.key.upper()
                   for n in tree.walk() if not isinstance(n, _known())})


def _known():
    from sqlglot import exp  # lazy: sqlglot only where a config has expressions (filter.value_expr)

    return (exp.Column, exp.Identifier, exp.Literal, exp.Null, exp.Boolean, exp.HexString, exp.BitString,
            exp.Paren, exp.Neg, exp.Not, exp.And, exp.Or, exp.Xor, exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT,
            exp.LTE, exp.NullSafeEQ, exp.Is, exp.In, exp.Between, exp.Like, exp.Add, exp.Sub, exp.Mul,
            exp.Div, exp.IntDiv, exp.Mod, exp.Length, exp.Upper, exp.Lower, exp.Abs, exp.Coalesce, exp.If)


def compile_expr(tree, cols: list[Col]) -> Callable[[list], object]:
    """`tree` as a function of a row's typed values (cols order); see the module docstring."""
    from sqlglot import exp  # lazy: sqlglot only where a config has expressions (filter.value_expr)

    index = {c.name.lower(): i for i, c in enumerate(cols)}
    bad = unsupported(tree)
    if bad:
        raise ConfigError(f"the value expression {tree.sql(dialect='mysql')!r} uses {', '.join(bad)}, "
                          "which cdcflow's value filter does not evaluate", hint=UNSUPPORTED_HINT)

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
                return int(test(_cmp(a, b)))
            return compare
        if isinstance(node, exp.NullSafeEQ):
            left, right = c(node.left), c(node.right)

            def null_safe(row):
                a, b = left(row), right(row)
                if a is None or b is None:
                    return int(a is None and b is None)
                return int(_cmp(a, b) == 0)
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
        if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.IntDiv, exp.Mod)):
            return _arith(type(node).__name__, c(node.left), c(node.right))
        return _function(node, c)

    return c(tree)


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
            elif _cmp(a, b) == 0:
                return 1
        return None if unknown else 0
    return run


def _between(this, low, high):
    def run(row):
        v, lo, hi = this(row), low(row), high(row)
        a = None if v is None or lo is None else _cmp(v, lo)
        b = None if v is None or hi is None else _cmp(v, hi)
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


def _function(node, c):
    from sqlglot import exp  # lazy: sqlglot only where a config has expressions (filter.value_expr)

    args = [c(a) for a in node.iter_expressions()]
    if isinstance(node, (exp.Coalesce, exp.If)):
        # a string among the results makes the result a string (MySQL's type of IFNULL/IF)
        results = list(node.iter_expressions())[1:] if isinstance(node, exp.If) else list(node.iter_expressions())
        text = any(isinstance(r, exp.Literal) and r.is_string for r in results)

        def typed(v):
            return _as_text(v) if text and v is not None and not isinstance(v, (str, bytes)) else v
        if isinstance(node, exp.Coalesce):
            return lambda row: typed(next((v for v in (a(row) for a in args) if v is not None), None))
        cond, then = c(node.this), c(node.args["true"])
        other = c(node.args["false"]) if node.args.get("false") else (lambda row: None)
        return lambda row: typed(then(row) if truth(cond(row)) else other(row))
    arg = args[0]

    def apply(f):
        return lambda row: None if (v := arg(row)) is None else f(v)
    if isinstance(node, exp.Length) and node.args.get("binary"):  # LENGTH: bytes
        return apply(lambda v: v.size if isinstance(v, Bit) else len(v) if isinstance(v, bytes)
                     else len(_as_text(v).encode("utf-8")))
    if isinstance(node, exp.Length):  # CHAR_LENGTH: characters (bytes of a binary string)
        return apply(lambda v: v.size if isinstance(v, Bit) else len(v) if isinstance(v, bytes)
                     else len(_as_text(v)))
    if isinstance(node, exp.Upper):
        return apply(lambda v: v if isinstance(v, bytes) else _as_text(v).upper())
    if isinstance(node, exp.Lower):
        return apply(lambda v: v if isinstance(v, bytes) else _as_text(v).lower())
    if isinstance(node, exp.Abs):
        return apply(lambda v: abs(number(v)))
    raise ConfigError(f"{node.sql(dialect='mysql')!r} is not evaluated by cdcflow's value filter")

