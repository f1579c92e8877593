"""A table's whole definition beyond its columns' names, types and nullability, as
information_schema gives it, for compare: each column's default, character set and
collation, generation expression and extra attributes (auto_increment, ON UPDATE, generated,
invisible), the indexes (name, uniqueness, type, columns in order with prefix length and
direction), the partitioning, and the table's default collation.  The table's AUTO_INCREMENT
counter is no part of it: the downstream's moves with the rows it was given.

Differences come out by aspect (ASPECTS), so that a test which sets one up on purpose (the
downstream's own keys, a clause a filter left out) can allow exactly that aspect of exactly
those tables and nothing else.
"""

from __future__ import annotations

import fnmatch
import re

ASPECTS = ("default", "collation", "generated", "extra", "indexes", "partitions", "table collation")

_WHOLE = ("indexes", "partitions", "table collation")  # aspects of the table, not of a column
Allow = dict[str, set[str]]  # "schema.table" pattern (fnmatch) -> aspects whose differences are expected


def _in(column: str, values) -> tuple[str, list]:
    values = sorted(values)
    if not values:
        return " AND FALSE", []
    return f" AND {column} IN (" + ",".join(["%s"] * len(values)) + ")", values


def _rows(conn, sql: str, schemas) -> list[tuple]:
    where, args = _in("TABLE_SCHEMA", schemas)
    with conn.cursor() as cur:
        cur.execute(sql.format(where=where), args)
        return list(cur.fetchall())


def _default(value) -> str | None:
    """MariaDB quotes string defaults and spells NULL and CURRENT_TIMESTAMP its own way."""
    if value is None or str(value).upper() == "NULL":
        return None
    return re.sub(r"current_timestamp(\(\))?", "current_timestamp()", str(value), flags=re.I)


def _text(value) -> str | None:
    return None if value is None else " ".join(str(value).split()).lower() or None


def table_definitions(conn, schemas) -> dict[tuple[str, str], dict[str, dict]]:
    """(schema, table) -> {aspect: {part: description}} for the tables of `schemas`."""
    out: dict[tuple[str, str], dict[str, dict]] = {}

    def part(key, aspect):
        return out.setdefault(key, {a: {} for a in ASPECTS})[aspect]

    for s, t, name, default, charset, coll, gen, extra in _rows(
            conn, "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, COLUMN_DEFAULT, CHARACTER_SET_NAME, "
                  "COLLATION_NAME, GENERATION_EXPRESSION, EXTRA FROM information_schema.COLUMNS "
                  "WHERE TRUE{where}", schemas):
        key = (s, t)
        part(key, "default")[name] = _default(default) if not gen else None
        part(key, "collation")[name] = f"{charset} {coll}" if coll else None
        part(key, "generated")[name] = _text(gen)
        part(key, "extra")[name] = _text(re.sub(r"(?i)\bpersistent\b", "stored", extra or ""))  # MariaDB's synonym
    for s, t, name, non_unique, seq, column, sub_part, order, itype in _rows(
            conn, "SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, NON_UNIQUE, SEQ_IN_INDEX, COLUMN_NAME, SUB_PART, "
                  "COLLATION, INDEX_TYPE FROM information_schema.STATISTICS WHERE TRUE{where} "
                  "ORDER BY TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX", schemas):
        indexes = part((s, t), "indexes")
        head = f"{'non-unique' if int(non_unique) else 'unique'} {itype.lower()}"
        col = column + (f"({sub_part})" if sub_part else "") + (" desc" if order == "D" else "")
        indexes[name] = f"{indexes[name]}, {col}" if name in indexes else f"{head} ({col}"
    for key, indexes in ((k, v["indexes"]) for k, v in out.items()):
        for name in indexes:
            indexes[name] += ")"
    for s, t, name, sub, method, sub_method, expr, sub_expr, desc in _rows(
            conn, "SELECT TABLE_SCHEMA, TABLE_NAME, PARTITION_NAME, SUBPARTITION_NAME, PARTITION_METHOD, "
                  "SUBPARTITION_METHOD, PARTITION_EXPRESSION, SUBPARTITION_EXPRESSION, PARTITION_DESCRIPTION "
                  "FROM information_schema.PARTITIONS WHERE PARTITION_NAME IS NOT NULL{where} "
                  "ORDER BY TABLE_SCHEMA, TABLE_NAME, PARTITION_ORDINAL_POSITION, SUBPARTITION_ORDINAL_POSITION",
            schemas):
        label = name + (f".{sub}" if sub else "")
        part((s, t), "partitions")[label] = " ".join(
            x for x in (method, _text(expr), f"values {desc}" if desc else None, sub_method, _text(sub_expr)) if x)
    for s, t, coll in _rows(conn, "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_COLLATION FROM information_schema.TABLES "
                                  "WHERE TABLE_TYPE = 'BASE TABLE'{where}", schemas):
        part((s, t), "table collation")["table"] = coll
    return out


def allowed(allow: Allow | None, schema: str, table: str) -> set[str]:
    """The aspects `allow` lets differ for schema.table."""
    return {a for pattern, aspects in (allow or {}).items() if fnmatch.fnmatchcase(f"{schema}.{table}", pattern)
            for a in aspects}


def definition_problems(up: dict[str, dict] | None, down: dict[str, dict] | None, skip=()) -> list[str]:
    """What differs between two definitions (table_definitions' values), aspect by aspect,
    leaving out the aspects in `skip`; [] when equal."""
    problems = []
    for aspect in ASPECTS:
        if aspect in skip:
            continue
        a, b = (up or {}).get(aspect, {}), (down or {}).get(aspect, {})
        names = set(a) | set(b) if aspect in _WHOLE else set(a) & set(b)  # a missing column is a column problem
        for name in sorted(names, key=str):
            if a.get(name) != b.get(name):
                what = "" if aspect == "table collation" else f" {name}"
                problems.append(f"{aspect}{what}: up {a.get(name)!r}, down {b.get(name)!r}"
                                if name in a and name in b else
                                f"{aspect}{what} {'only up' if name in a else 'only down'}: "
                                f"{a.get(name, b.get(name))!r}")
    return problems
