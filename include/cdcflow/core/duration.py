"""Go's duration syntax (`time.ParseDuration`), which TiCDC's config and sink URI use: '2m', '1h30m', '500ms'.

Written here because no Python library reads Go's syntax exactly (chained units from ns to h,
fractions of any unit, a bare '0', the two micro signs): the ones that parse durations read
ISO 8601 or their own human formats, and a value TiCDC refuses must be refused here too.
"""

from __future__ import annotations

import re
from fractions import Fraction

_GO_UNITS_NS = {"ns": 1, "us": 10**3, "\u00b5s": 10**3, "\u03bcs": 10**3, "ms": 10**6,
                "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9}
# Longer units first so "ms" is not read as "m" followed by "s".
_GO_COMPONENT = re.compile(r"(\d*)(?:\.(\d*))?(ns|us|\u00b5s|\u03bcs|ms|s|m|h)")


def go_duration_ns(text: str) -> int:
    """Go's time.ParseDuration, exactly (in integer nanoseconds); ValueError when it would fail."""
    s = text
    sign = 1
    if s.startswith(("+", "-")):
        sign = -1 if s[0] == "-" else 1
        s = s[1:]
    if s == "0":
        return 0
    if not s:
        raise ValueError("empty duration")
    total = Fraction(0)
    pos = 0
    while pos < len(s):
        m = _GO_COMPONENT.match(s, pos)
        if not m:
            raise ValueError("missing or unknown unit" if s[pos:pos + 1].isdigit() or s[pos] == "."
                             else f"unexpected {s[pos:]!r}")
        whole, frac, unit = m.groups()
        if not whole and not frac:
            raise ValueError("a number is needed before each unit")
        value = Fraction(int(whole or "0")) + (Fraction(int(frac), 10 ** len(frac)) if frac else 0)
        total += value * _GO_UNITS_NS[unit]
        pos = m.end()
    # Go truncates fractions of a nanosecond.
    return sign * int(total)


def go_duration_seconds(text: str) -> float:
    """A Go duration in seconds (fractions kept); ValueError when Go would refuse it."""
    return go_duration_ns(text) / 10**9
