"""What the downstream's catalogue (information_schema) says of a table: whether it exists,
its valid index and the collations of that key's string columns, the columns it computes
itself (generated columns, never written) and the others, whether a unique index finds rows by
the upstream's key, and whether triggers fire on its writes."""

from __future__ import annotations

from cdcflow.ddl.table_def import PRIMARY, TableInfo


def catalogue_key(conn, schema: str, table: str) -> tuple[list[str] | None, dict[str, str | None]]:
    """The table's valid index (TableInfo.valid_key) as the downstream's catalogue has it, and
    its string columns' collations; None when the table has none or does not exist."""
    with conn.cursor() as cur:
        cur.execute(
            "SELECT s.INDEX_NAME, s.COLUMN_NAME, c.IS_NULLABLE, s.SUB_PART, c.DATA_TYPE, c.COLLATION_NAME "
            "FROM information_schema.STATISTICS s "
            "JOIN information_schema.COLUMNS c ON c.TABLE_SCHEMA = s.TABLE_SCHEMA "
            "AND c.TABLE_NAME = s.TABLE_NAME AND c.COLUMN_NAME = s.COLUMN_NAME "
            "WHERE s.TABLE_SCHEMA = %s AND s.TABLE_NAME = %s AND s.NON_UNIQUE = 0 "
            "ORDER BY s.INDEX_NAME, s.SEQ_IN_INDEX",
            (schema, table),
        )
        info = TableInfo()
        for name, col, nullable, sub_part, data_type, collation in cur.fetchall():
            ix = info.indexes.setdefault(name, {"columns": [], "unique": True, "primary": name == PRIMARY,
                                                "prefix": False})
            ix["columns"].append(col)
            ix["prefix"] |= sub_part is not None
            if info.column(col) is None:
                info.columns.append({"name": col, "type": data_type.lower(), "nullable": nullable == "YES",
                                     "collation": collation and collation.lower()})
    key = info.valid_key()
    return key, info.key_collations(key) if key else {}


def valid_key(conn, schema: str, table: str) -> list[str] | None:
    """The table's valid index as the downstream's catalogue has it (catalogue_key)."""
    return catalogue_key(conn, schema, table)[0]


def table_exists(conn, schema: str, table: str) -> bool:
    with conn.cursor() as cur:
        cur.execute("SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA=%s AND TABLE_NAME=%s",
                    (schema, table))
        return cur.fetchone() is not None


FEW_TABLES = 16  # up to this many tables are looked up one by one (_rows_of)


def _rows_of(conn, query: str, tables: list[tuple[str, str]],
             on: tuple[str, str] = ("TABLE_SCHEMA", "TABLE_NAME")) -> list[tuple]:
    """The rows of `query` (an information_schema SELECT whose first columns are the schema's and
    the table's names, `on`, and whose WHERE clause ends in AND) for `tables`."""
    in_schema, named = on
    with conn.cursor() as cur:
        if len(set(tables)) <= FEW_TABLES:
            # by schema and name: the server opens only these tables, not every table of the schema
            # (a window creating a table per tenant writes a few rows between thousands of DDLs);
            # one statement of a branch per table, which keeps that lookup in each (MariaDB's
            # EXPLAIN: "Scanned 0 databases"), where a statement per table cost a round trip
            # each: 12 of them at every segment of a 4-table window, 4.1 ms against 1.9
            wanted = sorted(set(tables))
            branch = f"({query} {in_schema} = %s AND {named} = %s)"
            cur.execute(" UNION ALL ".join([branch] * len(wanted)), [x for t in wanted for x in t])
            return list(cur.fetchall())
        schemas = sorted({s for s, _ in tables})
        cur.execute(query + f" {in_schema} IN ({', '.join(['%s'] * len(schemas))})", schemas)
        wanted = set(tables)
        return [r for r in cur.fetchall() if (r[0], r[1]) in wanted]


def table_columns(conn, tables: list[tuple[str, str]]) -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """Per "schema.table", as the downstream has them now: its generated columns (VIRTUAL and
    STORED), for the tables that have any, and its other columns, lower-cased (the ones a row
    written sets or leaves at their defaults).  MySQL, MariaDB and TiDB all say `VIRTUAL
    GENERATED` / `STORED GENERATED` in EXTRA (MySQL's `DEFAULT_GENERATED` is an expression
    default: such a column is written)."""
    if not tables:
        return {}, {}
    is_generated = "(EXTRA LIKE '%%VIRTUAL GENERATED%%' OR EXTRA LIKE '%%STORED GENERATED%%')"
    found: dict[str, tuple[set[str], set[str]]] = {}
    for schema, table, column, generated in _rows_of(
            conn, f"SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, {is_generated} FROM information_schema.COLUMNS WHERE",
            tables):
        computed, stored = found.setdefault(f"{schema}.{table}", (set(), set()))
        if generated:
            computed.add(column)
        else:
            stored.add(column.lower())
    return ({name: frozenset(computed) for name, (computed, _) in found.items() if computed},
            {name: frozenset(stored) for name, (_, stored) in found.items()})


def triggered(conn, tables: list[tuple[str, str]]) -> frozenset[str]:
    """The `tables` ("schema.table") on which the downstream fires triggers: a REPLACE that
    removes a row fires its DELETE triggers, where an UPSERT fires UPDATE ones instead."""
    if not tables:
        return frozenset()
    query = "SELECT EVENT_OBJECT_SCHEMA, EVENT_OBJECT_TABLE FROM information_schema.TRIGGERS WHERE"
    return frozenset(f"{s}.{t}" for s, t in _rows_of(conn, query, tables, ("EVENT_OBJECT_SCHEMA", "EVENT_OBJECT_TABLE")))


# MariaDB's own kinds of table (information_schema.TABLES' TABLE_TYPE) whose rows are written in
# commit order, one statement per change (row_sink): a system-versioned table makes a history row
# per change written, none may be folded into another; a sequence refuses DELETE, and each INSERT
# replaces its one row, as a replica writes it
SYSTEM_VERSIONED, SEQUENCE = "SYSTEM VERSIONED", "SEQUENCE"


def own_kinds(conn, tables: list[tuple[str, str]]) -> dict[str, str]:
    """"schema.table" -> its kind (SYSTEM_VERSIONED, SEQUENCE) for the `tables` the downstream
    holds as one of MariaDB's own kinds of table."""
    if not tables:
        return {}
    query = ("SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES "
             f"WHERE TABLE_TYPE IN ('{SYSTEM_VERSIONED}', '{SEQUENCE}') AND")
    return {f"{s}.{t}": kind for s, t, kind in _rows_of(conn, query, tables)}


def key_indexed(conn, keys: dict[str, list[str]]) -> frozenset[str]:
    """The tables of `keys` ("schema.table" -> the upstream's key) whose downstream table has a
    unique index on exactly the key's columns (whole columns, not prefixes): the index that
    finds a key's row for `INSERT … ON DUPLICATE KEY UPDATE` (row_writer.StreamingWriter)."""
    tables = [tuple(name.split(".", 1)) for name in keys]
    if not tables:
        return frozenset()
    indexes: dict[tuple[str, str, str], set[str]] = {}
    prefixed = set()
    for schema, table, index, column, sub_part in _rows_of(
            conn, "SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, COLUMN_NAME, SUB_PART "
                  "FROM information_schema.STATISTICS WHERE NON_UNIQUE = 0 AND", tables):
        indexes.setdefault((schema, table, index), set()).add(column)
        if sub_part is not None:
            prefixed.add((schema, table, index))
    return frozenset(f"{s}.{t}" for (s, t, ix), cols in indexes.items()
                     if (s, t, ix) not in prefixed
                     and {c.lower() for c in cols} == {c.lower() for c in keys[f"{s}.{t}"]})
