"""The nearest known name to a mistyped one: the "did you mean …?" of config keys, URI
parameters, SQL modes, event types and the CLI's subcommands, one rule for all of them."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

# difflib's similarity ratio a guess must reach: 'qeury' -> 'query', 'worker-cuont' -> 'worker-count',
# and nothing for a name that resembles none of the known ones
CUTOFF = 0.6


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name most like `name`, or None when none is close enough."""
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=CUTOFF)
    return close[0] if close else None


def did_you_mean(name: str, known: Iterable[str], prefix: str = "") -> str | None:
    """The hint "did you mean '<prefix><closest>'?", or None when nothing is close."""
    guess = closest(name, known)
    return f"did you mean '{prefix}{guess}'?" if guess else None
