"""What a stage may use but need not: a Spark session, a DataFrame, built the first time any of
its attributes is asked for.

Filter, barrier and apply read a window the cycle's engine keeps here (stages.engine) with pyarrow in their
own process; only a window or a segment the engine sends to Spark needs it.  `cdcflow changefeed run` hands them an embedded session as a Lazy: a cycle
whose stages never touch it starts no JVM, which on two cores took 6-9 core-seconds beside pull
and kept filter waiting for its start (docs/performance.md).  A frame built from it is a Lazy
too, so that building the plan does not start the session either.  pyspark's column functions
(`F.col`, `F.broadcast`) need the session up: code given a frame that may be a Lazy touches the
frame (or the session, `built`) before it builds a column."""

from __future__ import annotations

from collections.abc import Callable


class Lazy:
    """`build()`'s value, built when first used: every attribute is the value's."""

    __slots__ = ("_build", "_value")

    def __init__(self, build: Callable[[], object]):
        self._build, self._value = build, None

    def __getattr__(self, name: str):
        return getattr(built(self), name)


def built(value):
    """`value` itself, or a Lazy's value (built now if it was not)."""
    if type(value) is not Lazy:
        return value
    if value._value is None:
        value._value = value._build()
    return value._value


def was_built(value) -> bool:
    """Whether `value` is there: not a Lazy, or a Lazy something used."""
    return type(value) is not Lazy or value._value is not None
