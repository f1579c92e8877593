"""The metadata store's tables and statements, in the SQL its two databases share.

The store is a dozen small tables read and written by primary key.  SQLAlchemy Core served it,
at 0.15-0.2 s of import in every process that opened the store (a third of a cycle's fixed
cost) for a sliver of what it does; the statements here are plain SQL that SQLite and
MySQL/TiDB both run, with `?` placeholders, through the drivers cdcflow has anyway (sqlite3,
pymysql).  What differs between the two is declared once: the column types (TYPES) and the
placeholder style (Connection.execute).
"""

from __future__ import annotations

from dataclasses import dataclass, field

SQLITE, MYSQL = "sqlite", "mysql"

# a column's kind -> its type in (SQLite, MySQL/TiDB).  Epoch seconds need a double: MySQL's
# FLOAT is single precision, about two minutes apart at today's epoch.  MySQL's TEXT holds
# 64 KiB, less than a wide table's schema version or a verify result may take.
TYPES = {
    "bigint": ("BIGINT", "BIGINT"),
    "integer": ("INTEGER", "INT"),
    "double": ("FLOAT", "DOUBLE"),
    "boolean": ("BOOLEAN", "BOOL"),
    "text": ("TEXT", "LONGTEXT"),
    "string": ("VARCHAR({length})", "VARCHAR({length})"),
}


@dataclass(frozen=True)
class Column:
    name: str
    kind: str  # a key of TYPES
    length: int | None = None  # a string's
    primary_key: bool = False
    nullable: bool = True
    default: object = None  # given to an insert that names no value (and to a column added later)
    note: str = ""  # what it holds (the reference page of the store: cdcflow_devtools.docs_reference)

    def type_in(self, dialect: str) -> str:
        return TYPES[self.kind][dialect == MYSQL].format(length=self.length)

    def ddl(self, dialect: str) -> str:
        null = "" if self.nullable and not self.primary_key else " NOT NULL"
        return f"{quoted(self.name)} {self.type_in(dialect)}{null}"


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    owner: str = "changefeed_id"  # the column naming the changefeed a row belongs to ("": none does)
    note: str = ""  # what a row is
    names: frozenset = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "names", frozenset(c.name for c in self.columns))

    def create(self, dialect: str) -> str:
        key = ", ".join(quoted(c.name) for c in self.columns if c.primary_key)
        cols = ",\n  ".join(c.ddl(dialect) for c in self.columns)
        return f"CREATE TABLE IF NOT EXISTS {self.name} (\n  {cols},\n  PRIMARY KEY ({key}))"

    def check(self, names) -> None:
        """Refuse a statement naming a column the table lacks."""
        unknown = set(names) - self.names
        if unknown:
            raise KeyError(f"{self.name} has no column {sorted(unknown)}")

    def row(self, values: dict) -> dict:
        """`values` with each column it does not name at its default, as an insert writes it."""
        self.check(values)
        return {c.name: values.get(c.name, c.default) for c in self.columns}


def quoted(name: str) -> str:
    """A column's name as both databases read it whatever it is (`rows` is a reserved word of
    MySQL 8; SQLite takes MySQL's backquotes too)."""
    return f"`{name}`"


def column(name: str, kind: str, length: int | None = None, *, key: bool = False, null: bool = True,
           default: object = None, note: str = "") -> Column:
    """A column, as tables.py declares them (NOT NULL where `null` is False or `key`)."""
    if kind not in TYPES:
        raise ValueError(f"column {name}: unknown kind {kind!r}")
    return Column(name, kind, length, key, null and not key, default, note)


class Result:
    """A statement's rows, read whole (the store's answers are small), and its row count."""

    def __init__(self, cursor):
        self.rowcount = cursor.rowcount
        self.names = [d[0] for d in cursor.description] if cursor.description else []
        self.rows = [tuple(r) for r in cursor.fetchall()] if cursor.description else []

    def __iter__(self):
        return iter(self.rows)

    def all(self) -> list[tuple]:
        return self.rows

    def first(self) -> tuple | None:
        return self.rows[0] if self.rows else None

    def one(self) -> tuple:
        if len(self.rows) != 1:
            raise LookupError(f"expected one row, got {len(self.rows)}")
        return self.rows[0]

    def scalar(self):
        return self.rows[0][0] if self.rows else None

    def mappings(self) -> list[dict]:
        return [dict(zip(self.names, r)) for r in self.rows]


class Connection:
    """One driver connection of the store (store/engine.py lends them), with the statements the
    store's modules use.  Placeholders are `?`, as SQLite takes them; pymysql's `%s` is made
    here, so no statement is written twice."""

    def __init__(self, raw, dialect: str):
        self.raw, self.dialect = raw, dialect

    def _sql(self, sql: str) -> str:
        return sql.replace("%", "%%").replace("?", "%s") if self.dialect == MYSQL else sql

    def execute(self, sql: str, *params) -> Result:
        cur = self.raw.cursor()
        try:
            cur.execute(self._sql(sql), params)
            return Result(cur)
        finally:
            cur.close()

    def insert(self, table: Table, *rows: dict) -> None:
        if not rows:
            return
        full = [table.row(r) for r in rows]
        names = list(full[0])
        sql = f"INSERT INTO {table.name} ({', '.join(map(quoted, names))}) VALUES ({', '.join('?' * len(names))})"
        cur = self.raw.cursor()
        try:
            cur.executemany(self._sql(sql), [tuple(r[n] for n in names) for r in full])
        finally:
            cur.close()

    def update(self, table: Table, values: dict, where: str, *params) -> int:
        """Set `values` in the rows `where` (SQL with `?`, bound to `params`) selects; how many."""
        table.check(values)
        sets = ", ".join(f"{quoted(n)} = ?" for n in values)
        return self.execute(f"UPDATE {table.name} SET {sets} WHERE {where}", *values.values(), *params).rowcount

    def delete(self, table: Table, where: str, *params) -> int:
        return self.execute(f"DELETE FROM {table.name} WHERE {where}", *params).rowcount

    def select(self, table: Table, where: str, *params, columns: str = "*", order: str = "",
               limit: int | None = None, offset: int = 0) -> Result:
        sql = f"SELECT {columns} FROM {table.name} WHERE {where}"
        if order:
            sql += f" ORDER BY {order}"
        if limit is not None:
            sql += f" LIMIT {int(limit)} OFFSET {int(offset)}"
        return self.execute(sql, *params)


def like_suffix(text: str) -> str:
    """A LIKE pattern (with ESCAPE '/') of the values ending in `text`."""
    return "%" + text.replace("/", "//").replace("%", "/%").replace("_", "/_")
