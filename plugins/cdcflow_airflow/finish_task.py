"""The finish task: closes the cycle (cycle_tasks.finish_cycle), then says what the cycle wrote:
an asset event per downstream table it changed (assets.py) and, where the OpenLineage provider
is installed, its upstream tables as inputs and downstream tables as outputs (lineage.py)."""

from __future__ import annotations

import logging

from airflow.providers.standard.operators.python import PythonOperator

from cdcflow.core.errors import CdcflowError
from cdcflow_airflow.assets import alias_for, emit_table_events
from cdcflow_airflow.cycle_tasks import task_home
from cdcflow_airflow.lineage import operator_lineage

log = logging.getLogger(__name__)
_UNREAD = object()


class FinishOperator(PythonOperator):
    def __init__(self, *, changefeed_id: str, cdcflow_home: str, **kwargs):
        super().__init__(outlets=[alias_for(changefeed_id)], **kwargs)
        self.changefeed_id, self.cdcflow_home = changefeed_id, cdcflow_home
        self._written = _UNREAD  # what execute read, for the lineage the provider asks for after it

    def _cycle_tables(self, ti):
        """What the cycle wrote (None: prepare opened no cycle)."""
        from cdcflow.launch.cycle_tables import cycle_tables  # lazy: task time, not DAG parse time

        run_id = ti.xcom_pull(task_ids="prepare", key="run_id")
        if run_id is None:
            return None
        with task_home(self.cdcflow_home).entered():
            return cycle_tables(self.changefeed_id, run_id)

    def execute(self, context):
        result = super().execute(context)  # raises when the cycle failed: no event then
        try:
            tables = self._written = self._cycle_tables(context["ti"])
        except CdcflowError as e:  # the changefeed was removed meanwhile: its cycle is closed all the same
            log.warning("changefeed %s: no asset events: %s", self.changefeed_id, e)
            return result
        if tables is not None:
            uris = emit_table_events(context["outlet_events"], tables)
            log.info("changefeed %s: cycle %s: asset events for %s", self.changefeed_id, tables.run_id,
                     ", ".join(uris) or "no table (the cycle changed none)")
        return result

    def get_openlineage_facets_on_complete(self, task_instance):
        """Called by the OpenLineage provider (only when it is installed) after a success."""
        tables = self._written
        return operator_lineage(self._cycle_tables(task_instance) if tables is _UNREAD else tables)
