"""The downstream tables a changefeed writes, as Airflow Assets, so other DAGs can be scheduled
on them.

One Asset per downstream table, its URI in the MySQL provider's form
`mysql://host:port/database/table` (what the provider's sanitizer makes of a URI: the port
always given, 3306 by default; exactly a database and a table; TiDB is reached as MySQL too),
named by that URI.  A consumer DAG writes `schedule=[table_asset(sink_uri, "db", "t")]` or
the literal URI.

The changefeed's tables are not known when Airflow parses the DAG: the filter selects them
from whatever the upstream holds, and DDL creates, renames and drops them between runs.  So the
DAG declares one AssetAlias (`changefeed__<id>__tables`) as the finish task's outlet, and
each run adds, through the alias, an event for each table it changed (rows or DDL) and no
other: Airflow resolves the alias to the tables' Assets as they appear (creating an Asset the
first time), and queues the DAGs scheduled on them.  A declared Asset outlet would get an event
on every successful run, changed or not, which is why there is none.  The event's extra says
which changefeed and cycle wrote it and the checkpoint it left: every change committed
upstream at or below `checkpoint_ts` (commit time `checkpoint_time`, UTC) is in the table.

A run that skipped, failed, or only dry-ran emits nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

from airflow.sdk import Asset, AssetAlias

from cdcflow.core.uri import parse_sink_uri

if TYPE_CHECKING:  # the DAG imports this module to parse: the cycle's modules are the task's
    from cdcflow.launch.cycle_tables import CycleTables


def alias_for(changefeed_id: str) -> AssetAlias:
    """The alias the changefeed's runs emit their table events through."""
    return AssetAlias(name=f"changefeed__{changefeed_id}__tables")


def server_uri(host: str, port: int) -> str:
    """`mysql://host:port`: the asset URIs' and OpenLineage's namespace of a MySQL or TiDB server."""
    return f"mysql://[{host}]:{port}" if ":" in host else f"mysql://{host}:{port}"


def table_uri(host: str, port: int, schema: str, table: str) -> str:
    """`mysql://host:port/database/table`, names percent-encoded (a '/' or '#' in a name)."""
    return f"{server_uri(host, port)}/{quote(schema, safe='')}/{quote(table, safe='')}"


def table_asset(sink_uri: str, schema: str, table: str) -> Asset:
    """The Asset of downstream table schema.table of a changefeed with this sink URI."""
    sink = parse_sink_uri(sink_uri)
    uri = table_uri(sink.host, sink.port, schema, table)
    return Asset(uri=uri, name=uri)


def event_extra(tables: "CycleTables") -> dict:
    return {"changefeed": tables.changefeed_id, "cycle": tables.run_id,
            "checkpoint_ts": tables.checkpoint_ts, "checkpoint_time": tables.checkpoint_time}


def emit_table_events(outlet_events, tables: "CycleTables") -> list[str]:
    """Add an event for every table the cycle changed through the changefeed's alias;
    returns their URIs."""
    alias = outlet_events[alias_for(tables.changefeed_id)]
    uris = []
    for schema, table in tables.changed:
        uri = table_uri(tables.sink.host, tables.sink.port, schema, table)
        alias.add(Asset(uri=uri, name=uri), extra=event_extra(tables))
        uris.append(uri)
    return uris
