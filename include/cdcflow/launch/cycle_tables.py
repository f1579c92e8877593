"""What one finished cycle wrote, as plain values: the tables it changed (rows or DDL, as apply
recorded them), the servers they live on, and the checkpoint the cycle left.  The DAG's finish
task announces it as Airflow asset events and OpenLineage inputs and outputs
(plugins/cdcflow_airflow/assets.py, lineage.py); no Airflow here.

A table has the same schema and table name upstream and downstream: cdcflow routes no table.
"""

from __future__ import annotations

from dataclasses import dataclass

from cdcflow.core import tso
from cdcflow.core.errors import CdcflowError
from cdcflow.config.spec_store import load_spec
from cdcflow.core.uri import parse_sink_uri, parse_source_uri
from cdcflow.stages import contracts
from cdcflow.store import metastore


@dataclass(frozen=True)
class Server:
    host: str
    port: int


@dataclass(frozen=True)
class CycleTables:
    changefeed_id: str
    run_id: str
    source: Server
    sink: Server
    changed: tuple[tuple[str, str], ...]  # (schema, table), sorted; empty when the cycle wrote nothing
    checkpoint_ts: int | None  # where the cycle left the checkpoint (None: it did not finish)
    checkpoint_time: str | None  # the commit time that ts maps to (UTC, TiCDC's checkpoint_time format)


def table_pairs(names) -> tuple[tuple[str, str], ...]:
    """Apply's changed tables (schema.table) as CycleTables.changed has them: (schema, table), sorted."""
    return tuple(sorted(tuple(name.split(".", 1)) for name in names))


def servers(changefeed_id: str) -> tuple[Server, Server]:
    """The upstream's and the downstream's host and port, from the changefeed's spec."""
    spec = load_spec(changefeed_id)
    source, sink = parse_source_uri(spec.source_uri), parse_sink_uri(spec.sink_uri)
    return Server(source.host, source.port), Server(sink.host, sink.port)


def cycle_tables(changefeed_id: str, run_id: str) -> CycleTables:
    """What cycle `run_id` wrote.  Only a cycle that finished done counts: a dry run, a failed
    or a replaced cycle changed nothing a reader may rely on.  Raises CdcflowError when the
    changefeed's spec is gone."""
    source, sink = servers(changefeed_id)
    try:
        run = metastore.get_run(changefeed_id, run_id)
    except CdcflowError:  # prepare skipped the cycle (a stopped changefeed): no run was recorded
        return CycleTables(changefeed_id, run_id, source, sink, (), None, None)
    applied = contracts.recorded(run.stats, "apply", contracts.ApplyResult)
    done = run.status == "done" and not run.dry_run
    changed = table_pairs(applied.changed_tables) if done and applied else ()
    checkpoint = run.stats.get(metastore.RUN_END, {}).get("checkpoint_ts")
    return CycleTables(changefeed_id, run_id, source, sink, changed, checkpoint, tso.to_text(checkpoint))
