"""Which tables a snapshot reads at its point, and which it reads only after others, so that the
replay from the point redoes every cascade a foreign key ran upstream.

The replay sets each key to its upstream image, but the rows a key's action (CASCADE, SET NULL,
SET DEFAULT) changed are not in the binlog: the replay gets them from the downstream's key when
it applies the parent's change, and only finds them if the copy holds them as they were before
that change.  A child read before the parent's change and a parent read after it loses them:
the copy has the parent gone and the children still there, and the replayed DELETE of a parent
row that is not there cascades to nothing.  Reading every parent before its children rules that
out: a change between the two reads is in the parent's copy's past (replayed over a row already
changed: nothing to cascade, the child's copy already shows it) or in both copies' future
(replayed over both, cascading as upstream); one before the parent's read is in both copies.

Where no such order exists, the tables are read inside the point's own transaction, one
snapshot, exactly at the point, as keyless tables are: a table keyed to itself or a cycle of
keys (its chunks would be read at different moments), and every parent, to any depth, of a
table read at the point (a keyless child, for one): its children's copy is at the point, so its
own must be too.
"""

from __future__ import annotations

from collections.abc import Iterable

from cdcflow.filter.cascade_fk import CHANGING


def cascade_parents(keys: Iterable[tuple], tables: set[str]) -> dict[str, set[str]]:
    """{child: its parents} over the keys (sink.foreign_keys.read_keys rows) whose actions change
    rows, between two of `tables` ("schema.table")."""
    parents: dict[str, set[str]] = {}
    for schema, table, parent_schema, parent, delete_rule, update_rule in keys:
        child, parent = f"{schema}.{table}", f"{parent_schema}.{parent}"
        if (delete_rule in CHANGING or update_rule in CHANGING) and child in tables and parent in tables:
            parents.setdefault(child, set()).add(parent)
    return parents


def _ancestors(table: str, parents: dict[str, set[str]]) -> set[str]:
    seen, todo = set(), list(parents.get(table, ()))
    while todo:
        t = todo.pop()
        if t not in seen:
            seen.add(t)
            todo.extend(parents.get(t, ()))
    return seen


def plan(tables: set[str], keyless: set[str], parents: dict[str, set[str]]) -> tuple[set[str], dict[str, list[str]]]:
    """(the tables read at the point, {table: the parents whose chunks must all be read first})."""
    ancestors = {t: _ancestors(t, parents) for t in tables}
    at_point = set(keyless) | {t for t in tables if t in ancestors[t]}
    at_point |= {a for t in list(at_point) for a in ancestors[t]}
    after = {t: sorted(parents[t] - at_point) for t in tables if t not in at_point and parents.get(t, set()) - at_point}
    return at_point, after
