"""Is the downstream a faithful copy of the upstream?

Used by the tests, `make demo` and the benchmark.  Two servers are consistent
when they hold the same set of tables, each table has the same columns (name,
column type, nullability, in order), the same definition otherwise (defaults,
collations, generated columns, indexes, partitions: table_definition) and the
same rows as a multiset, with exact values: bytes stay bytes, decimals keep
their scale, temporal values keep their fraction.  `allow` names the aspects of
a definition a caller expects to differ, by table pattern.

Rows are digested on the client, so the same digest comes out of MariaDB,
MySQL and TiDB for the same data: each row's `repr` (which carries the Python
type of every value) is hashed to 128 bits and the hashes are summed modulo
2**128.  A sum, unlike XOR, keeps duplicate rows in tables without a key from
cancelling out, and is independent of the order the server returns rows in.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass

import pymysql.cursors

from cdcflow.core.row_codec import quote_ident
from cdcflow.core.system_schemas import SYSTEM_SCHEMAS
from cdcflow.verify.catalogue import normalize_column_type
from cdcflow_devtools.table_definition import Allow, allowed, definition_problems, table_definitions

_MOD = 1 << 128
_FETCH = 5000
# Tables up to this size get example rows in format_report.
_SAMPLE_LIMIT = 20000

Column = tuple[str, str, bool]  # name, column type, nullable


@dataclass
class TableDiff:
    schema: str
    table: str
    problem: str

    def __str__(self) -> str:
        return f"{self.schema}.{self.table}: {self.problem}"


def _schema_filter(schemas, exclude) -> tuple[str, list]:
    sql = ""
    args: list = []
    if schemas is not None:
        if not schemas:
            return " AND FALSE", []
        sql += " AND TABLE_SCHEMA IN (" + ",".join(["%s"] * len(schemas)) + ")"
        args += list(schemas)
    exclude = sorted(exclude)
    if exclude:
        sql += " AND TABLE_SCHEMA NOT IN (" + ",".join(["%s"] * len(exclude)) + ")"
        args += exclude
    return sql, args


def list_tables(conn, schemas: list[str] | None = None, exclude_schemas=SYSTEM_SCHEMAS) -> list[tuple[str, str]]:
    """Base tables (no views, no sequences), sorted."""
    where, args = _schema_filter(schemas, set(SYSTEM_SCHEMAS) | set(exclude_schemas))
    with conn.cursor() as cur:
        cur.execute(
            "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES"
            " WHERE TABLE_TYPE = 'BASE TABLE'" + where,
            args,
        )
        return sorted((s, t) for s, t in cur.fetchall())


def table_columns(
    conn, schemas: list[str] | None = None, exclude_schemas=SYSTEM_SCHEMAS
) -> dict[tuple[str, str], list[Column]]:
    """(schema, table) -> [(column name, column type, nullable)] in ordinal order."""
    where, args = _schema_filter(schemas, set(SYSTEM_SCHEMAS) | set(exclude_schemas))
    tables = set(list_tables(conn, schemas, exclude_schemas))
    out: dict[tuple[str, str], list[Column]] = {}
    with conn.cursor() as cur:
        cur.execute(
            "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE"
            " FROM information_schema.COLUMNS WHERE TRUE" + where + " ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION",
            args,
        )
        for schema, table, name, ctype, nullable in cur.fetchall():
            if (schema, table) in tables:
                out.setdefault((schema, table), []).append((name, normalize_column_type(ctype), nullable == "YES"))
    return out


def _canonical(value):
    # SET values may arrive as Python sets, whose iteration order is arbitrary.
    if isinstance(value, (set, frozenset)):
        return tuple(sorted(value))
    return value


def row_key(row) -> str:
    """The exact, type-carrying text a row is digested from."""
    return repr(tuple(_canonical(v) for v in row))


def row_hash(row) -> int:
    return int.from_bytes(hashlib.blake2b(row_key(row).encode("utf-8", "surrogatepass"), digest_size=16).digest(), "big")


def _use_utc(conn) -> None:
    # TIMESTAMP values are rendered in the session time zone; fix it so two
    # servers in different zones agree.
    with conn.cursor() as cur:
        cur.execute("SET time_zone = '+00:00'")


def _stream_rows(conn, schema: str, table: str):
    cur = conn.cursor(pymysql.cursors.SSCursor)
    try:
        cur.execute(f"SELECT * FROM {quote_ident(schema)}.{quote_ident(table)}")
        while True:
            rows = cur.fetchmany(_FETCH)
            if not rows:
                break
            yield from rows
    finally:
        cur.close()  # drains what is left, so the connection stays usable


def table_checksum(conn, schema: str, table: str) -> tuple[int, str]:
    """(row count, order-independent digest) of one table, streamed."""
    _use_utc(conn)
    count = 0
    total = 0
    for row in _stream_rows(conn, schema, table):
        count += 1
        total = (total + row_hash(row)) % _MOD
    return count, f"{total:032x}"


def table_checksums(
    conn, schemas: list[str] | None = None, exclude_schemas=SYSTEM_SCHEMAS
) -> dict[tuple[str, str], tuple[int, str]]:
    """(schema, table) -> (row count, digest) for every base table; the
    system schemas are always left out."""
    return {key: table_checksum(conn, *key) for key in list_tables(conn, schemas, exclude_schemas)}


def _describe(col: Column) -> str:
    name, ctype, nullable = col
    return f"{name} {ctype} {'NULL' if nullable else 'NOT NULL'}"


def column_problems(up: list[Column], down: list[Column]) -> list[str]:
    """What differs between two column lists, in words; [] when equal."""
    if up == down:
        return []
    up_names = [c[0] for c in up]
    down_names = [c[0] for c in down]
    problems = []
    missing = [n for n in up_names if n not in down_names]
    extra = [n for n in down_names if n not in up_names]
    if missing:
        problems.append("missing downstream " + ", ".join(missing))
    if extra:
        problems.append("extra downstream " + ", ".join(extra))
    common_up = [n for n in up_names if n in down_names]
    common_down = [n for n in down_names if n in up_names]
    if common_up != common_down:
        problems.append(f"order up ({', '.join(common_up)}) down ({', '.join(common_down)})")
    down_by_name = {c[0]: c for c in down}
    for col in up:
        other = down_by_name.get(col[0])
        if other is not None and other != col:
            problems.append(f"{_describe(col)} up, {_describe(other)} down")
    return problems


def compare(up_conn, down_conn, schemas: list[str] | None = None, ignore_schemas=("cdcflow",),
            allow: Allow | None = None) -> list[TableDiff]:
    """Every difference between upstream and downstream; [] means consistent.  `allow`:
    {"schema.table" pattern: aspects expected to differ}: table_definition.ASPECTS, or "rows"
    (a filter the test sets leaves rows out)."""
    return _compare(up_conn, down_conn, schemas, ignore_schemas, allow)[0]


def _compare(up_conn, down_conn, schemas, ignore_schemas, allow=None):
    exclude = tuple(SYSTEM_SCHEMAS) + tuple(ignore_schemas)
    up_cols = table_columns(up_conn, schemas, exclude)
    down_cols = table_columns(down_conn, schemas, exclude)
    # Tables without columns visible in information_schema still count.
    up_tables = set(list_tables(up_conn, schemas, exclude))
    down_tables = set(list_tables(down_conn, schemas, exclude))
    in_schemas = sorted({s for s, _ in up_tables | down_tables})
    up_defs, down_defs = table_definitions(up_conn, in_schemas), table_definitions(down_conn, in_schemas)
    diffs: list[TableDiff] = []
    counts: dict[tuple[str, str], tuple[int, int]] = {}  # (up rows, down rows)
    for key in sorted(up_tables | down_tables):
        schema, table = key
        if key not in down_tables:
            diffs.append(TableDiff(schema, table, "missing downstream"))
            continue
        if key not in up_tables:
            diffs.append(TableDiff(schema, table, "extra downstream"))
            continue
        problems = column_problems(up_cols.get(key, []), down_cols.get(key, []))
        if problems:
            diffs.append(TableDiff(schema, table, "columns differ: " + "; ".join(problems)))
        expected = allowed(allow, schema, table)
        problems = definition_problems(up_defs.get(key), down_defs.get(key), expected)
        if problems:
            diffs.append(TableDiff(schema, table, "definition differs: " + "; ".join(problems)))
        up_sum = table_checksum(up_conn, schema, table)
        down_sum = table_checksum(down_conn, schema, table)
        counts[key] = (up_sum[0], down_sum[0])
        if up_sum != down_sum and "rows" not in expected:
            diffs.append(TableDiff(schema, table, f"rows differ (up {up_sum[0]}, down {down_sum[0]})"))
    return diffs, counts, sorted(up_tables | down_tables)


def row_differences(up_conn, down_conn, schema: str, table: str, limit: int = 3) -> tuple[list[str], list[str]]:
    """Up to `limit` rows only upstream and only downstream (as multisets),
    shown as their digest text.  Loads both tables: for small tables only."""
    _use_utc(up_conn)
    _use_utc(down_conn)
    up = Counter(row_key(r) for r in _stream_rows(up_conn, schema, table))
    down = Counter(row_key(r) for r in _stream_rows(down_conn, schema, table))
    only_up = sorted((up - down).elements())[:limit]
    only_down = sorted((down - up).elements())[:limit]
    return only_up, only_down


def format_report(up_conn, down_conn, schemas: list[str] | None = None, ignore_schemas=("cdcflow",),
                  replicated=None, allow: Allow | None = None) -> str:
    """One line per table, `db.t  rows=N  ok` or `db.t  DIFF: ...`, example
    rows under small tables whose rows differ, and a summary line.  `replicated(schema,
    table)`, when given, names the tables a changefeed's filter leaves out: shown as such,
    not compared."""
    diffs, counts, tables = _compare(up_conn, down_conn, schemas, ignore_schemas, allow)
    left_out = [key for key in tables if replicated is not None and not replicated(*key)]
    by_table: dict[tuple[str, str], list[TableDiff]] = {}
    for d in diffs:
        if (d.schema, d.table) not in left_out:
            by_table.setdefault((d.schema, d.table), []).append(d)
    lines = []
    for key in tables:
        name = f"{key[0]}.{key[1]}"
        found = by_table.get(key)
        if key in left_out:
            lines.append(f"{name}  left out by the changefeed's filter (not compared)")
            continue
        if not found:
            lines.append(f"{name}  rows={counts[key][0]}  ok")
            continue
        for d in found:
            lines.append(f"{name}  DIFF: {d.problem}")
            if d.problem.startswith("rows differ") and max(counts[key]) <= _SAMPLE_LIMIT:
                only_up, only_down = row_differences(up_conn, down_conn, *key)
                lines += [f"    only up:   {r}" for r in only_up]
                lines += [f"    only down: {r}" for r in only_down]
    bad, compared = len(by_table), len(tables) - len(left_out)
    if bad:
        lines.append(f"{bad} of {compared} tables differ")
    else:
        lines.append(f"{compared} tables consistent")
    return "\n".join(lines)
