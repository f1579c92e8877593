"""The rows of MariaDB's system-versioned tables, as a replica that keeps no upstream timestamps
writes them.

A versioned table's rows in a binlog carry its period (the invisible row_start / row_end, or the
columns PERIOD FOR SYSTEM_TIME names), and the binlog shows the versioning's own writes: an
UPDATE is the current row's update plus an insert of the history row (its end in the past), a
DELETE an update of the period's end, DELETE HISTORY deletes of history rows.  A downstream either
versions the table itself (MariaDB: it computes the period, and writes the history row of an
UPDATE or DELETE on its own) or has no versioning (TiDB, MySQL: it holds the current rows).  Either
way the changefeed writes what the user's statement did to the current row, without the period
columns: inserts and updates of current rows as they are, the end-of-period update as the DELETE
it was, and drops the history rows' own writes.  The downstream's history then has a version for
each of the upstream's, its timestamps its own (a MariaDB replica of the binlog would copy them;
no TiDB or MySQL can hold them).  DELETE HISTORY is not replicated: a downstream purges its own.
"""

from __future__ import annotations

import msgspec

# The end of a current row's period: TIMESTAMP(6)'s largest value as the binlog reader gives it
# (UTC; MariaDB 11.5+ on 64-bit servers: 2106), or a transaction-precise period's largest id.
_OPEN_TIMESTAMPS = frozenset({"2038-01-19 03:14:07.999999", "2106-02-07 06:28:15.999999"})
_OPEN_TRX_ID = (1 << 64) - 1

# (op, the before image is current, the after image is current) -> the op the downstream gets,
# None: the versioning's own write, which the downstream does itself or has no place for
_WRITES = {
    ("insert", None, True): "insert",
    ("insert", None, False): None,  # the history row of an UPDATE
    ("update", True, True): "update",
    ("update", True, False): "delete",  # a DELETE ends the row's period
    ("update", False, True): None,
    ("update", False, False): None,
    ("delete", True, None): "delete",
    ("delete", False, None): None,  # DELETE HISTORY
}

_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode


def _is_open(value) -> bool:
    if isinstance(value, dict):
        return value.get("dt") in _OPEN_TIMESTAMPS
    return value is None or value == _OPEN_TRX_ID  # None: the image lacks the column (not versioned then)


def _value(image: dict, column: str):
    low = column.lower()
    return next((v for k, v in image.items() if k.lower() == low), None)


def _without(image: dict | None, period: tuple[str, str]) -> str | None:
    if image is None:
        return None
    drop = {c.lower() for c in period}
    return _encode({k: v for k, v in image.items() if k.lower() not in drop}).decode()


def replica_write(op: str, before: str | None, after: str | None, pk: str | None,
                  period: tuple[str, str]) -> tuple[str, str | None, str | None, str | None] | None:
    """(op, before, after, pk) of one row event of a versioned table as the downstream gets it,
    the period's columns left out; None where it gets nothing.  Images as core.row_codec encodes them."""
    b = _decode(before) if before is not None else None
    a = _decode(after) if after is not None else None
    current = tuple(None if img is None else _is_open(_value(img, period[1])) for img in (b, a))
    out = _WRITES.get((op, *current))
    if out is None:
        return None
    if out == "delete":
        a = None
    keys = [c for c in _decode(pk) if c.lower() != period[1].lower()] if pk else None
    return out, _without(b, period), _without(a, period), None if keys is None else _encode(keys).decode()


def period_spans(periods: dict[tuple[str, str], list]) -> tuple[tuple[str, str, int, int, str, str], ...]:
    """(schema, table, lo, hi, period start, period end) of each span (lo, hi] of commit ts in which a
    table is system-versioned, its rows rewritten by replica_write (filter.row_rules).  `periods`:
    (schema, table) -> SchemaTracker.period_ranges(), [[from_ts, period or None], ...]."""
    big = (1 << 63) - 1
    return tuple((s, t, lo, rs[i + 1][0] if i + 1 < len(rs) else big, period[0], period[1])
                 for (s, t), rs in sorted(periods.items()) for i, (lo, period) in enumerate(rs) if period)
