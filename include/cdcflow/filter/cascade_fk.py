"""Foreign keys whose referential actions change rows the binlog never shows: which the
changefeed can replicate exactly, and which it refuses.

InnoDB applies ON DELETE / ON UPDATE CASCADE and SET NULL (SET DEFAULT) inside the storage
engine: the child rows it deletes or updates are not in a MariaDB/MySQL row binlog (TiDB's
change stream carries them; a binlog does not).  A native replica gets them from its own
foreign key when it applies the parent's change, and so does the sink (sink.foreign_keys):
exact as long as the parent's changes reach the downstream.  A replicated child whose parent
the filter leaves out would keep the rows the upstream's cascade changed, so a changefeed
refuses it: at create from the upstream's catalogue, and at the DDL that adds such a key.  A
replicated parent whose child is left out is exact: the child is not replicated, and the
parent's rows are written as they are (the downstream's copy of the child, if any, gets the
downstream's cascade, as the upstream's did).
"""

from __future__ import annotations

from cdcflow.core.errors import CASCADING_FOREIGN_KEY, CdcflowError
from cdcflow.ddl.lexer import Cursor, tokenize
from cdcflow.filter.table import TableFilter

# referential actions that change child rows (RESTRICT / NO ACTION only refuse the parent's change)
CHANGING = frozenset({"CASCADE", "SET NULL", "SET DEFAULT"})
_REMEDY = ("replicate the parent too (add it to filter.rules), or leave {table} out of filter.rules, or make the "
           "key RESTRICT / NO ACTION upstream")
_DDL_REMEDY = ("add the parent to filter.rules, or leave {table} out of them (`cdcflow changefeed update -c "
               "<changefeed> --config …`), and resume; or, to run it anyway knowing the child's cascaded changes "
               "will not be replicated, `cdcflow changefeed replace-ddl -c <changefeed> --commit-ts <ts> "
               "--sql '<the same statement>'`")
_CATALOGUE = """SELECT CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, UNIQUE_CONSTRAINT_SCHEMA, REFERENCED_TABLE_NAME,
DELETE_RULE, UPDATE_RULE FROM information_schema.REFERENTIAL_CONSTRAINTS
WHERE DELETE_RULE IN ('CASCADE', 'SET NULL', 'SET DEFAULT') OR UPDATE_RULE IN ('CASCADE', 'SET NULL', 'SET DEFAULT')
ORDER BY CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME"""


def keys_in_ddl(query: str, sql_mode: str | None) -> list[tuple[str | None, str, list[str]]]:
    """The foreign keys a CREATE / ALTER TABLE statement defines whose actions change rows:
    (the referenced table's schema as written, or None; its name; the actions, 'ON DELETE
    CASCADE', ...), in order."""
    r, found = Cursor(tokenize(query, sql_mode)), []
    while r.peek() is not None:
        if not r.take("REFERENCES"):
            r.i += 1
            continue
        schema, table = None, r.name()
        if r.take_punct("."):
            schema, table = table, r.name()
        r.group()  # the referenced columns
        actions = []
        while r.take("ON") and r.word() in ("DELETE", "UPDATE"):
            event = r.word()
            r.i += 1
            action = "SET " + r.word(1) if r.word() == "SET" else "NO ACTION" if r.word() == "NO" else r.word()
            r.i += len(action.split())
            if action in CHANGING:
                actions.append(f"ON {event} {action}")
        if actions and table:
            found.append((schema, table, actions))
    return found


def check_ddl(info, query: str, sql_mode: str | None, tf: TableFilter) -> None:
    """Refuse a CREATE / ALTER TABLE that gives a replicated table a row-changing foreign key to a
    parent the filter leaves out (an unqualified parent is in the child's schema, as InnoDB reads it)."""
    if not info.tables or not info.statement_name.startswith(("CREATE TABLE", "ALTER TABLE")):
        return
    child = info.tables[0]
    if not tf.match_table(child.schema, child.table):
        return
    for schema, table, actions in keys_in_ddl(query, sql_mode):
        parent = (schema or child.schema, table)
        if not tf.match_table(*parent):
            name = f"{child.schema}.{child.table}"
            raise CdcflowError(
                f"{info.statement_name} gives table {name} a foreign key {' '.join(actions)} to "
                f"{parent[0]}.{parent[1]}, which the filter leaves out: the child rows the upstream changes by it "
                "are not in the binlog, and without the parent's changes the downstream cannot redo them",
                code=CASCADING_FOREIGN_KEY, hint=_DDL_REMEDY.format(table=name))


def runs_downstream(info, query: str, sql_mode: str | None, tf: TableFilter) -> bool:
    """Whether an ALTER TABLE outside TiCDC's allow list runs downstream all the same: one that
    adds a row-changing foreign key to a replicated table (its parent replicated: check_ddl), or
    drops a foreign key of one.  The downstream's keys redo the upstream's cascades, so they must
    follow the upstream's (TiCDC replicates no foreign-key DDL of its own: TiDB's change stream
    carries the cascaded rows)."""
    if info.allowed or not info.tables or not info.statement_name.startswith("ALTER TABLE"):
        return False
    child = info.tables[0]
    if not tf.match_table(child.schema, child.table):
        return False
    return "DROP FOREIGN KEY" in info.statement_name or (
        "ADD FOREIGN KEY" in info.statement_name and bool(keys_in_ddl(query, sql_mode)))


def check_catalogue(conn, tf: TableFilter, changefeed_id: str, downstream=None) -> None:
    """Refuse, at create, replicated tables that have a row-changing foreign key to a parent the
    filter leaves out, and (given the `downstream`'s connection) such a key of a replicated table
    the downstream has without it: there the downstream would not redo the cascade."""
    with conn.cursor() as cur:
        cur.execute(_CATALOGUE)
        rows = [r for r in cur.fetchall() if tf.match_table(r[0], r[1])]
    refused = [r for r in rows if not tf.match_table(r[3], r[4])]
    if refused:
        tables = ", ".join(sorted({f"{r[0]}.{r[1]}" for r in refused}))
        raise CdcflowError(
            "replicated tables have foreign keys whose actions change rows the binlog does not carry, to parents "
            f"the filter leaves out (the downstream cannot redo those changes without the parent's): "
            f"{_keys(refused)}", changefeed=changefeed_id, code=CASCADING_FOREIGN_KEY,
            hint=_REMEDY.format(table=tables))
    missing = _missing_downstream(rows, downstream) if rows and downstream is not None else []
    if missing:
        raise CdcflowError(
            "the downstream has replicated tables without the foreign keys that redo the upstream's cascades: "
            f"{_keys(missing)}", changefeed=changefeed_id, code=CASCADING_FOREIGN_KEY,
            hint="add the keys to the downstream's tables as the upstream has them (ALTER TABLE … ADD FOREIGN KEY … "
                 "ON DELETE … ON UPDATE …), or drop those tables downstream so the snapshot or the replicated DDL "
                 "creates them, or leave them out of filter.rules")


def _keys(rows) -> str:
    return "; ".join(f"{s}.{t} key {k} → {ps}.{p} ON DELETE {d} ON UPDATE {u}" for s, t, k, ps, p, d, u in rows)


def _missing_downstream(rows, downstream) -> list:
    """The upstream's keys (catalogue rows) of tables the downstream holds without a key of the same
    child, parent and actions."""
    with downstream.cursor() as cur:
        cur.execute("SELECT CONSTRAINT_SCHEMA, TABLE_NAME, UNIQUE_CONSTRAINT_SCHEMA, REFERENCED_TABLE_NAME, "
                    "DELETE_RULE, UPDATE_RULE FROM information_schema.REFERENTIAL_CONSTRAINTS")
        have = set(cur.fetchall())
        cur.execute("SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES")
        tables = set(cur.fetchall())
    return [r for r in rows if (r[0], r[1]) in tables and (r[0], r[1], *r[3:]) not in have]
