"""A cycle's lineage for the OpenLineage provider: the upstream tables it read changes of as
inputs, the downstream tables it wrote as outputs, named as OpenLineage names MySQL datasets
(namespace `mysql://host:port`, name `database.table`; TiDB speaks MySQL).

The provider is optional.  Only the finish task's `get_openlineage_facets_on_complete`
(finish_task.py) reaches for it, and the provider calls that only when it is installed, so
without it nothing here is imported and nothing changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cdcflow_airflow.assets import server_uri

if TYPE_CHECKING:  # the DAG imports this module to parse: the cycle's modules are the task's
    from cdcflow.launch.cycle_tables import CycleTables

Dataset = tuple[str, str]  # (namespace, name)


def cycle_datasets(tables: "CycleTables | None") -> tuple[list[Dataset], list[Dataset]]:
    """(inputs, outputs): every table the cycle changed, upstream and downstream (none without a cycle)."""
    if tables is None:
        return [], []
    names = [f"{schema}.{table}" for schema, table in tables.changed]
    up, down = (server_uri(s.host, s.port) for s in (tables.source, tables.sink))
    return [(up, n) for n in names], [(down, n) for n in names]


def operator_lineage(tables: "CycleTables | None"):
    """The provider's OperatorLineage of the cycle."""
    # lazy: the OpenLineage provider is optional; only it calls this, so it is installed
    from airflow.providers.common.compat.openlineage.facet import Dataset as OLDataset
    from airflow.providers.openlineage.extractors import OperatorLineage

    inputs, outputs = cycle_datasets(tables)
    return OperatorLineage(inputs=[OLDataset(namespace=ns, name=n) for ns, n in inputs],
                           outputs=[OLDataset(namespace=ns, name=n) for ns, n in outputs])
