"""A replicated DDL of a table whose deferred secondary indexes are not built yet
(snapshot/deferred_indexes.py: `create --snapshot` keeps their clauses in store.snapshots, a
table that joins a running changefeed in store.table_copies).  The downstream table has none
of them, so what the DDL does to one is done to its kept clause instead, and that part of the
statement does not run; the rest of it runs as replicated:

| the DDL                                                  | the kept clauses            | the statement           |
|----------------------------------------------------------|-----------------------------|-------------------------|
| drops a pending index (DROP INDEX / KEY / CONSTRAINT of  | the clause goes: the build  | without that part; none |
| a unique one in an ALTER, or DROP INDEX … ON)            | will not create it          | runs if nothing is left |
| RENAME INDEX of a pending one                            | the clause renamed          | without that part       |
| ALTER INDEX … [NOT] IGNORED / [IN]VISIBLE of one         | the clause's visibility     | without that part       |
| RENAME TABLE / ALTER TABLE … RENAME of the table         | follow it to the new name   | as is                   |
| DROP TABLE                                               | kept: the build finds no table and ends them | as is  |

A pending index the downstream has already (a build killed after its ALTER ran) is dropped,
renamed or hidden by the statement as any index; its clause changes all the same.  The kept
clauses change only once the statement ran: a crash between leaves the DDL in flight, and its
run again is a replay (sink/ddl_exec.py), which finds the clause still kept and runs the same
rest, or finds it changed and runs the whole statement, whose "already applied" it accepts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from cdcflow.ddl.classify import classify
from cdcflow.ddl.index_edits import (DROP, RENAME, IndexPart, clause_name, index_parts, renamed, with_visibility,
                                     without_parts)
from cdcflow.store import snapshots, table_copies

# where a table's clauses are kept: (set_clauses, rename_table) of each record
_RECORDS = {"snapshot": (snapshots.set_clauses, snapshots.rename_table),
            "table copy": (table_copies.set_clauses, table_copies.rename_table)}


def held(changefeed_id: str) -> dict[str, dict[str, list[str]]]:
    """"schema.table" -> {record: the clauses it waits for} of each table with indexes not
    built (an active table copy without any: [], for a rename to move its copy)."""
    out: dict[str, dict[str, list[str]]] = {}
    for entry in snapshots.deferred(changefeed_id):
        out.setdefault(entry["table"], {})["snapshot"] = list(entry["clauses"])
    for table, clauses in table_copies.held(changefeed_id).items():
        out.setdefault(table, {})["table copy"] = list(clauses)
    return out


def downstream_indexes(down, schema: str, name: str) -> set[str] | None:
    """The index names (lower-cased) the downstream table has; None: no such table."""
    with down.cursor() as cur:
        cur.execute("SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
                    (schema, name))
        if cur.fetchone() is None:
            return None
        cur.execute("SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = %s "
                    "AND TABLE_NAME = %s", (schema, name))
        return {r[0].lower() for r in cur.fetchall()}


@dataclass
class Edit:
    """A DDL's statements as they run (`statements`, maybe none), the kept clauses' changes to
    record once they ran (`record()`), and what was taken out (`notes`)."""
    changefeed_id: str
    statements: list[str] = field(default_factory=list)
    changes: list[Callable[[], None]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def record(self) -> None:
        for change in self.changes:
            change()

    def outcome(self, ran: str) -> str:
        """What happened, `ran` saying what the statements did."""
        taken = "; ".join(self.notes)
        if not self.statements:
            return f"not run downstream: {taken}"
        return f"{ran} ({taken})" if taken else ran


def edit(changefeed_id: str, down, ddl, sources: list[str]) -> Edit | None:
    """`sources` (the DDL entry `ddl`'s statements, in the upstream's words) with the parts
    that touch a pending index taken out, and the kept clauses' changes; None when no table
    the DDL names has indexes pending (or a copy to follow a rename)."""
    tables = held(changefeed_id)
    if not tables or not any(f"{s}.{t}" in tables for s, t in ddl.tables):
        return None
    out = Edit(changefeed_id)
    for query in sources:
        info = classify(query, ddl.default_schema, ddl.sql_mode or "")
        if info.tables and (info.statement_name == "DROP INDEX" or info.statement_name.startswith("ALTER TABLE")):
            target = info.tables[0]
            query = _indexes(out, down, tables, target.schema, target.table, query, ddl.sql_mode)
        if query is not None:
            out.statements.append(query)
        for old, new in info.renames:  # RENAME TABLE, ALTER TABLE … RENAME
            _follow(out, tables, f"{old.schema}.{old.table}", f"{new.schema}.{new.table}")
    return out


def _indexes(out: Edit, down, tables: dict, schema: str, name: str, query: str, sql_mode: str | None) -> str | None:
    """`query` without its parts on the pending indexes of `schema`.`name` (None: nothing left)."""
    table = f"{schema}.{name}"
    kept = tables.get(table)
    parts = index_parts(query, sql_mode) if kept and any(kept.values()) else []
    if not parts:
        return query
    have = downstream_indexes(down, schema, name) or set()
    gone: list[IndexPart] = []
    changed = False
    for part in parts:
        touched = False
        for record, clauses in kept.items():
            at = next((i for i, c in enumerate(clauses) if clause_name(c).lower() == part.index.lower()), None)
            if at is None or (part.constraint and not clauses[at].startswith("UNIQUE ")):
                continue  # not a pending index (DROP CONSTRAINT of a non-unique key's name: a CHECK's)
            touched = True
            if part.kind == DROP:
                del clauses[at]
            elif part.kind == RENAME:
                clauses[at] = renamed(clauses[at], part.new)
            else:
                clauses[at] = with_visibility(clauses[at], part.hidden)
        changed |= touched
        if touched and part.index.lower() not in have:
            gone.append(part)
            out.notes.append(f"{part.kind} of index {part.index} of {table}, created without it and not built yet: "
                             "done to the clause its build adds")
    if changed:
        out.changes += [_setter(out.changefeed_id, record, table, list(clauses)) for record, clauses in kept.items()]
    return without_parts(query, sql_mode, gone)


def _setter(changefeed_id: str, record: str, table: str, clauses: list[str]) -> Callable[[], None]:
    return lambda: _RECORDS[record][0](changefeed_id, table, clauses)


def _follow(out: Edit, tables: dict, old: str, new: str) -> None:
    """The kept clauses (and a table copy) of `old` move to `new`."""
    kept = tables.pop(old, None)
    tables.pop(new, None)  # a record of the new name is of a table gone from it
    if kept is None:
        return
    tables[new] = kept
    for record in kept:
        out.changes.append(lambda rename=_RECORDS[record][1]: rename(out.changefeed_id, old, new))
    out.notes.append(f"the indexes {old} waits for follow it to {new}")
