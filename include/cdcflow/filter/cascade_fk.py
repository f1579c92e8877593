"""Foreign keys whose referential actions change rows the binlog never shows.

InnoDB applies ON DELETE / ON UPDATE CASCADE and SET NULL (SET DEFAULT) inside the storage
engine: the child rows it deletes or updates are not in a MariaDB/MySQL row binlog (TiDB's
change stream carries them; a binlog does not), and the sink writes with foreign_key_checks
= 0.  A replicated child table of such a key would keep rows the upstream changed, so a
changefeed refuses one: at create from the upstream's catalogue, and at the DDL that adds it.
A child table the filter drops is of no concern; its parent's side does not matter.
"""

from __future__ import annotations

from cdcflow.core.errors import CASCADING_FOREIGN_KEY, CdcflowError
from cdcflow.ddl.lexer import Cursor, tokenize
from cdcflow.filter.table import TableFilter

# referential actions that change child rows (RESTRICT / NO ACTION only refuse the parent's change)
CHANGING = frozenset({"CASCADE", "SET NULL", "SET DEFAULT"})
_REMEDY = "make the key RESTRICT / NO ACTION upstream, or leave {table} out of filter.rules"
_DDL_REMEDY = ("leave {table} out of filter.rules (`cdcflow changefeed update -c <changefeed> --config …`) and "
               "resume; or, to run it anyway knowing such changes will not be replicated, `cdcflow changefeed "
               "replace-ddl -c <changefeed> --commit-ts <ts> --sql '<the same statement>'`")
_CATALOGUE = """SELECT CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, REFERENCED_TABLE_NAME, DELETE_RULE, UPDATE_RULE
FROM information_schema.REFERENTIAL_CONSTRAINTS
WHERE DELETE_RULE IN ('CASCADE', 'SET NULL', 'SET DEFAULT') OR UPDATE_RULE IN ('CASCADE', 'SET NULL', 'SET DEFAULT')
ORDER BY CONSTRAINT_SCHEMA, TABLE_NAME, CONSTRAINT_NAME"""


def actions_in_ddl(query: str, sql_mode: str | None) -> list[str]:
    """The row-changing referential actions a CREATE / ALTER TABLE statement defines
    ('ON DELETE CASCADE', ...), in order."""
    r, found = Cursor(tokenize(query, sql_mode)), []
    while r.peek() is not None:
        if r.take("ON") and r.word() in ("DELETE", "UPDATE"):
            event = r.word()
            r.i += 1
            action = "SET " + r.word(1) if r.word() == "SET" else r.word()
            if action in CHANGING:
                found.append(f"ON {event} {action}")
        else:
            r.i += 1
    return found


def check_ddl(info, query: str, sql_mode: str | None, tf: TableFilter) -> None:
    """Refuse a CREATE / ALTER TABLE that gives a replicated table a row-changing foreign key."""
    if not info.tables or not info.statement_name.startswith(("CREATE TABLE", "ALTER TABLE")):
        return
    child = info.tables[0]
    if not tf.match_table(child.schema, child.table):
        return
    actions = actions_in_ddl(query, sql_mode)
    if actions:
        name = f"{child.schema}.{child.table}"
        raise CdcflowError(
            f"{info.statement_name} gives table {name} a foreign key {' '.join(actions)}: the rows the upstream "
            "changes by it are not in the binlog, so the downstream would keep them",
            code=CASCADING_FOREIGN_KEY, hint=_DDL_REMEDY.format(table=name))


def check_catalogue(conn, tf: TableFilter, changefeed_id: str) -> None:
    """Refuse, at create, replicated tables that already have a row-changing foreign key."""
    with conn.cursor() as cur:
        cur.execute(_CATALOGUE)
        rows = [r for r in cur.fetchall() if tf.match_table(r[0], r[1])]
    if rows:
        keys = "; ".join(f"{s}.{t} key {k} → {s}.{p} ON DELETE {d} ON UPDATE {u}" for s, t, k, p, d, u in rows)
        tables = ", ".join(sorted({f"{r[0]}.{r[1]}" for r in rows}))
        raise CdcflowError(
            f"replicated tables have foreign keys whose actions change rows the binlog does not carry: {keys}",
            changefeed=changefeed_id, code=CASCADING_FOREIGN_KEY,
            hint=_REMEDY.format(table=tables))
