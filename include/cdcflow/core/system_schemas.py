"""The schemas no changefeed replicates, whatever its filter rules say.

TiCDC's filter (pkg/filter isSysSchema) skips TiDB's system schemas (util/filter
IsSystemSchema), the schemas TiDB's tools write (DM's heartbeat, Lightning's task
info, the workload repository) and its own `tidb_cdc`; cdcflow's own schema
(`cdcflow`) takes the same place.  Extra names cost nothing on a MySQL or MariaDB
upstream, which simply has no such schema.
"""

from __future__ import annotations

SYSTEM_SCHEMAS: frozenset[str] = frozenset({
    "mysql", "sys", "information_schema", "performance_schema", "metrics_schema", "inspection_schema",
    "dm_heartbeat", "lightning_task_info", "workload_schema", "tidb_cdc", "cdcflow",
})


def is_system_schema(schema: str) -> bool:
    """TiDB compares schema names case-insensitively here, whatever case-sensitive says."""
    return schema.lower() in SYSTEM_SCHEMAS


def sql_not_system(column: str) -> tuple[str, list[str]]:
    """A catalogue query's condition leaving the system schemas out, and its parameters."""
    names = sorted(SYSTEM_SCHEMAS)
    return f"{column} NOT IN ({', '.join(['%s'] * len(names))})", names
