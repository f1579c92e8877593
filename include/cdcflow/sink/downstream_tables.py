"""What the downstream's catalogue (information_schema) says of a table: whether it exists,
its valid index and the collations of that key's string columns, and the columns it
computes itself (generated columns, never written)."""

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


FEW_TABLES = 16  # up to this many tables are looked up one by one (generated_columns)


def generated_columns(conn, tables: list[tuple[str, str]]) -> dict[str, frozenset[str]]:
    """"schema.table" -> the table's generated columns (VIRTUAL and STORED) as the downstream
    has them now, for the tables that have any.  MySQL, MariaDB and TiDB all say
    `VIRTUAL GENERATED` / `STORED GENERATED` in EXTRA (MySQL's `DEFAULT_GENERATED` is an
    expression default: such a column is written)."""
    wanted = {f"{s}.{t}" for s, t in tables}
    if not wanted:
        return {}
    generated = "(EXTRA LIKE '%%VIRTUAL GENERATED%%' OR EXTRA LIKE '%%STORED GENERATED%%')"
    query = f"SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS WHERE {generated} AND "
    with conn.cursor() as cur:
        if len(wanted) <= FEW_TABLES:
            # by schema and name: the server opens only these tables, not every table of the schema
            # (a window creating a table per tenant writes a few rows between thousands of DDLs)
            rows = []
            for s, t in sorted(set(tables)):
                cur.execute(query + "TABLE_SCHEMA = %s AND TABLE_NAME = %s", (s, t))
                rows += cur.fetchall()
        else:
            schemas = sorted({s for s, _ in tables})
            cur.execute(query + f"TABLE_SCHEMA IN ({', '.join(['%s'] * len(schemas))})", schemas)
            rows = cur.fetchall()
    found: dict[str, set[str]] = {}
    for schema, table, column in rows:
        if f"{schema}.{table}" in wanted:
            found.setdefault(f"{schema}.{table}", set()).add(column)
    return {name: frozenset(cols) for name, cols in found.items()}
