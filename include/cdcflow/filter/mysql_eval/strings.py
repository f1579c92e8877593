"""The string functions: characters of text, bytes where an argument is a binary string
(CONCAT, SUBSTRING, LEFT/RIGHT, TRIM, REPLACE, LOCATE, LPAD/RPAD, REGEXP, HEX)."""

from __future__ import annotations

import decimal
import re

from cdcflow.filter.mysql_eval.conversions import as_text, to_int
from cdcflow.filter.mysql_eval.values import Hex, Member, Year


def _binary(*vs) -> bool:
    """Whether a string function works on bytes: a binary string among its arguments."""
    return any(isinstance(v, bytes) for v in vs)


def _str(v, binary: bool):
    if binary:
        return v if isinstance(v, bytes) else as_text(v).encode("utf-8")
    return as_text(v)


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
    x, p = _str(s, b), to_int(pos)
    if p == 0 or abs(p) > len(x):
        return x[:0]
    start = p - 1 if p > 0 else len(x) + p
    if length is None:
        return x[start:]
    n = to_int(length)
    return x[start:start + n] if n > 0 else x[:0]


def left(s, n):
    x, k = _str(s, _binary(s)), to_int(n)
    return x[:max(k, 0)]


def right(s, n):
    x, k = _str(s, _binary(s)), to_int(n)
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
    start = 1 if pos is None else to_int(pos)
    if start < 1 or start > len(x) + 1:
        return 0
    return x.find(y, start - 1) + 1


# a string function's result longer than TiDB's default max_allowed_packet is NULL (with a warning)
_MAX_ALLOWED_PACKET = 67_108_864


def pad(is_left: bool):
    def run(s, n, pad):
        b = _binary(s, pad)
        x, k, p = _str(s, b), to_int(n), _str(pad, b)
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
        n = to_int(v)
        return format(n if n >= 0 else n + 2 ** 64, "X")
    return as_text(v).encode("utf-8").hex().upper()


def digest_bytes(v) -> bytes:
    return v if isinstance(v, bytes) else as_text(v).encode("utf-8")
