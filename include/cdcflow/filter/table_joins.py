"""The events of a table that joins a running changefeed before its join point (snapshot/
table_join.py): its rows in transactions that start before the point, and its DDLs there, are
in the table's copy and are not written again; a table requested and not joined yet has none of
its events replicated.  Its DDLs after the point run as any (one that touches an index it was
created without and has not built yet edits the index's kept clause: sink/pending_indexes.py)."""

from __future__ import annotations

# (schema, table) -> the join point, a binlog (file, offset); None: not joined yet
Joins = dict[tuple[str, str], tuple[str, int] | None]


def before_join(joins: Joins, table: tuple[str, str], start: tuple[str | None, int | None]) -> bool:
    """Whether an event of `table` in a transaction starting at binlog (file, offset) `start`
    comes before its join (binlog files are numbered with a fixed-width suffix: names order
    like the log)."""
    if table not in joins:
        return False
    point = joins[table]
    return point is None or start[0] is None or start < point


def ddl_before_join(joins: Joins, tables: list[tuple[str, str]], start: tuple[str | None, int | None],
                    replicated) -> str | None:
    """Why a DDL on `tables` at `start` is not run downstream (its tables' copies hold it), or None:
    every table it names that `replicated(schema, table)` is a table before its join."""
    mine = [t for t in tables if replicated(*t)]
    if not mine or not all(before_join(joins, t, start) for t in mine):
        return None
    names = ", ".join(f"{s}.{t}" for s, t in mine)
    return f"{names} joins the changefeed with a copy that holds this DDL (add-tables / resync-tables)"
