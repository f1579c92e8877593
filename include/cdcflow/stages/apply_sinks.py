"""The two sinks apply drives (tiflow's ddlsink and dmlsink), opened for a cycle on one
downstream session: the rows go on the DDL sink's session, so the catalogue they are keyed by
is the one its DDLs left."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from cdcflow.ddl import tidb_only
from cdcflow.sink.ddl_sink import DdlSink
from cdcflow.sink.foreign_keys import marker_id
from cdcflow.sink.row_sink import RowSink
from cdcflow.sink.table_keys import by_table
from cdcflow.stages import contracts
from cdcflow.stages.cycle import Cycle


@contextmanager
def opened(spark, cycle: Cycle, window: contracts.Window, safe: bool) -> Iterator[tuple[DdlSink, RowSink]]:
    """(the DDL sink, the row sink) of the cycle's sink, writing rows in safe mode where `safe`;
    both closed at the end, the row sink first."""
    ddl_sink = DdlSink.open(cycle.changefeed_id, cycle.sink, cycle.sink_options, cycle.log_event)
    try:
        keys_known = {(k.schema, k.table): k.ranges for k in contracts.KEYS.read(cycle.folder)}
        row_sink = RowSink(spark, ddl_sink.conn, ddl_sink.args, cycle.sink_options,
                           keys_known, changefeed_id=cycle.changefeed_id,
                           force_replicate=cycle.config.force_replicate,
                           marker=marker_id(cycle.changefeed_id, cycle.spec.created_at), safe=safe,
                           replay_until=window.replay_until, event=cycle.log_event,
                           key_spans=by_table(contracts.KEY_SPANS.read(cycle.folder))
                           if cycle.folder.exists(contracts.KEY_SPANS.name) else None,
                           tidb=ddl_sink.flavour == tidb_only.TIDB)
        try:
            yield ddl_sink, row_sink
        finally:
            row_sink.close()
    finally:
        ddl_sink.close()
