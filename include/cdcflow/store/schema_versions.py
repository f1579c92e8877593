"""Where a changefeed's tracked schema lives: one row per table version in the metadata
store, and the snapshot of the upstream's catalogue taken when the changefeed is created."""

from __future__ import annotations

import json

from cdcflow.core.system_schemas import SYSTEM_SCHEMAS
from cdcflow.ddl.table_def import IMPLICIT_PERIOD, TableInfo
from cdcflow.ddl.tracker import UNKNOWN, SchemaTracker
from cdcflow.store.engine import engine, transaction
from cdcflow.store.tables import schema_versions as versions


def _encode(info) -> str:
    if info is UNKNOWN:
        return '"unknown"'
    return json.dumps(info.to_dict() if info is not None else None)


def _decode(text: str):
    d = json.loads(text)
    if d == "unknown":
        return UNKNOWN
    return TableInfo.from_dict(d) if d is not None else None


def save(changefeed_id: str, rows, conn=None) -> None:
    """Upsert versions [(schema, table, ts, info)]: a re-read window writes the same rows."""
    rows = list(rows)
    if not rows:
        return
    with transaction(conn) as c:
        _delete(c, changefeed_id, ((s, tb, ts) for s, tb, ts, _ in rows))
        c.insert(versions, *({"changefeed_id": changefeed_id, "schema_name": s, "table_name": tb, "version_ts": ts,
                              "info": _encode(info)} for s, tb, ts, info in rows))


def _delete(c, changefeed_id: str, keys) -> None:
    for s, tb, ts in keys:
        c.delete(versions, "changefeed_id = ? AND schema_name = ? AND table_name = ? AND version_ts = ?",
                 changefeed_id, s, tb, ts)


def load(changefeed_id: str) -> SchemaTracker:
    tracker = SchemaTracker()
    with engine().connect() as c:
        for s, tb, ts, info in c.select(versions, "changefeed_id = ?", changefeed_id,
                                        columns="schema_name, table_name, version_ts, info", order="version_ts"):
            tracker.versions.setdefault((s, tb), []).append((ts, _decode(info)))
    return tracker


def forget(changefeed_id: str, gone, conn=None) -> None:
    with transaction(conn) as c:
        _delete(c, changefeed_id, gone)


def delete(changefeed_id: str, conn=None) -> None:
    with transaction(conn) as c:
        c.delete(versions, "changefeed_id = ?", changefeed_id)


_SYSTEM = tuple(sorted(SYSTEM_SCHEMAS))
# information_schema.TABLES' TABLE_TYPE of the tables a binlog carries rows of (MariaDB's own two)
_VERSIONED, _SEQUENCE = "SYSTEM VERSIONED", "SEQUENCE"
_TABLE_TYPES = ("BASE TABLE", _VERSIONED, _SEQUENCE)


def read_catalogue(conn) -> dict[tuple[str, str], TableInfo]:
    """Every base table of the upstream (system schemas aside) as information_schema shows it,
    MariaDB's system-versioned tables (their period: the columns generated AS ROW START / END, or
    the implicit ones information_schema does not list) and sequences among them."""
    marks = ", ".join(["%s"] * len(_SYSTEM))
    tables: dict[tuple[str, str], TableInfo] = {}
    with conn.cursor() as cur:
        cur.execute(
            "SELECT c.TABLE_SCHEMA, c.TABLE_NAME, c.COLUMN_NAME, c.COLUMN_TYPE, c.IS_NULLABLE, c.COLLATION_NAME, "
            "t.TABLE_TYPE, c.GENERATION_EXPRESSION "
            "FROM information_schema.COLUMNS c JOIN information_schema.TABLES t "
            "ON t.TABLE_SCHEMA = c.TABLE_SCHEMA AND t.TABLE_NAME = c.TABLE_NAME "
            f"WHERE t.TABLE_TYPE IN ({', '.join(['%s'] * len(_TABLE_TYPES))}) AND c.TABLE_SCHEMA NOT IN ({marks}) "
            "ORDER BY c.TABLE_SCHEMA, c.TABLE_NAME, c.ORDINAL_POSITION", (*_TABLE_TYPES, *_SYSTEM))
        periods: dict[tuple[str, str], dict[str, str]] = {}
        for s, tb, col, typ, nullable, collation, table_type, expr in cur.fetchall():
            info = tables.setdefault((s, tb), TableInfo(sequence=table_type == _SEQUENCE))
            info.columns.append({"name": col, "type": typ, "nullable": nullable == "YES"}
                                | ({"collation": collation.lower()} if collation else {}))
            if table_type == _VERSIONED:
                periods.setdefault((s, tb), {})
                if expr in ("ROW START", "ROW END"):
                    periods[(s, tb)][expr] = col
        for name, ends in periods.items():
            tables[name].period = ([ends["ROW START"], ends["ROW END"]] if len(ends) == 2
                                   else list(IMPLICIT_PERIOD))
        cur.execute(
            "SELECT TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, NON_UNIQUE, COLUMN_NAME, SUB_PART "
            f"FROM information_schema.STATISTICS WHERE TABLE_SCHEMA NOT IN ({marks}) "
            "ORDER BY TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX", _SYSTEM)
        for s, tb, name, non_unique, col, sub_part in cur.fetchall():
            info = tables.get((s, tb))
            if info is None:
                continue
            ix = info.indexes.setdefault(name, {"columns": [], "unique": not int(non_unique),
                                                "primary": name == "PRIMARY", "prefix": False})
            ix["columns"].append(col)
            ix["prefix"] = ix["prefix"] or sub_part is not None
    return tables


def upstream_catalogue(source_uri) -> dict[tuple[str, str], TableInfo]:
    conn = source_uri.connect()
    try:
        return read_catalogue(conn)
    finally:
        conn.close()


def start_from(changefeed_id: str, tables: dict[tuple[str, str], TableInfo], ts: int, conn=None) -> int:
    """Replace the changefeed's tracked schema by `tables` (a catalogue), as the version at `ts`
    (the changefeed's start).  Returns the number of tables."""
    with transaction(conn) as c:
        delete(changefeed_id, c)
        save(changefeed_id, [(s, tb, ts, info) for (s, tb), info in tables.items()], c)
    return len(tables)


def snapshot(changefeed_id: str, source_uri, ts: int) -> int:
    """start_from the upstream's catalogue now."""
    return start_from(changefeed_id, upstream_catalogue(source_uri), ts)
