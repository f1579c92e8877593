"""Arithmetic as MySQL computes it (exact DECIMAL sums, products and quotients; NULL for a
division by zero) and the numeric functions (ROUND, TRUNCATE, FLOOR, CEIL, POWER, GREATEST, LEAST)."""

from __future__ import annotations

import decimal
import math

from cdcflow.filter.mysql_eval.conversions import compare, number, to_int
from cdcflow.filter.mysql_eval.values import numeric_pair

EXACT = decimal.Context(prec=160)  # DECIMAL(65,30) sums, products and quotients, without rounding


def compute(op: str, x, y):
    """x op y, both already of one numeric type (numeric_pair)."""
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


def arithmetic(op: str, a, b):
    """a op b (Add, Sub, Mul, Div, IntDiv, Mod) of two non-NULL values in numeric context."""
    with decimal.localcontext(EXACT):
        return compute(op, *numeric_pair(number(a), number(b)))


def round_with(mode: str):
    """ROUND (half away from zero) and TRUNCATE (toward zero) to d digits after the point."""
    def run(v, d=0):
        x, k = number(v), max(-70, min(30, to_int(d)))  # MySQL keeps at most 30 decimals
        q = decimal.Decimal(1).scaleb(-k)
        if isinstance(x, float):
            if not math.isfinite(x) or abs(x) >= 2 ** 53 and k >= 0:
                return x  # no fraction left to round
            with decimal.localcontext(decimal.Context(prec=800)):  # a DOUBLE has up to 309 integer digits
                return float(decimal.Decimal(repr(x)).quantize(q, mode)) if k <= 30 else x
        with decimal.localcontext(EXACT):
            r = decimal.Decimal(x).quantize(q, mode) if k >= 0 else \
                (decimal.Decimal(x).scaleb(k).quantize(decimal.Decimal(1), mode)).scaleb(-k)
            return int(r) if isinstance(x, int) else r.quantize(decimal.Decimal(1).scaleb(-max(k, 0)))
    return run


def to_integral(mode: str):
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


def extreme(pick: int):
    """GREATEST (pick 1) and LEAST (-1): the argument MySQL's comparison puts first."""
    def run(*vs):
        best = vs[0]
        for v in vs[1:]:
            if (compare(v, best) or 0) * pick > 0:
                best = v
        return best
    return run
