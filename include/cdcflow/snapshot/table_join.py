"""A table joins a running changefeed with its rows (`changefeed add-tables`, a filter `update
--config` widened), or is copied again (`resync-tables`), while the changefeed goes on
replicating its other tables.

The method is the snapshot's (package docstring), per table and spread over cycles:

* **The join.** At the end of a cycle's apply (under its lease, so no other apply writes), a
  consistent point P of the upstream is taken (point.open_point), the table is created
  downstream from its upstream definition (a resynced one is dropped first) without the
  secondary indexes a snapshot defers (deferred_indexes.split), and its key-range chunks are
  planned.  The table's events in transactions that start before P are dropped by
  filter (filter/table_joins.py): every chunk is read at or after P, so they are in the copy.
  From P on its events are applied, in safe mode (REPLACE / DELETE by key, full row images).
* **The copy.** Each cycle, at the end of its apply, copies chunks for at most
  `table-copy-seconds`, each in a consistent snapshot of its own read at S, later than the head
  that cycle applied up to and earlier than any change a later cycle applies.  A change at or
  before S that a later cycle writes again over the chunk's row converges, since every change
  of that key after it follows in commit order; a change after S is written once.  A keyless
  table (force-replicate) is read whole in the point's own transaction, exactly at P, and its
  changes from P on are applied once.
* **The end.** With its last chunk copied, the table records the upstream's head (copied_to);
  safe mode holds until the checkpoint is past it, and the copy is done.  Its deferred indexes
  are built then, as a snapshot's are once its replay is past the copy's last read (one ALTER
  TABLE; TiDB's asynchronous ADD INDEX jobs), and again by each next cycle until they are: an
  index that exists is not added twice.  Until they are, a replicated DDL that drops, renames
  or hides one of them edits its kept clause instead of running that part, and one that
  renames the table takes the copy along (sink/pending_indexes.py), as for a snapshot's.

Why not DBLog's watermarks (Debezium's incremental snapshot)?  They need a signal table the
changefeed writes on the upstream, or chunk rows reconciled inside pull; a point per table needs
only SELECT on MariaDB (its consistent snapshot names its binlog position), and reuses the
snapshot's chunk planner and copier.  The cost is one cycle's delay per `table-copy-seconds` of
copying, which bounds how much the other tables' lag grows."""

from __future__ import annotations

import logging
import time

from cdcflow.core.errors import TABLE_COPY_FAILED, TABLE_COPY_INDEX_FAILED, CdcflowError
from cdcflow.core.row_codec import quote_ident
from cdcflow.filter.assembled import Filter
from cdcflow.sink import connection
from cdcflow.snapshot import chunk_copies
from cdcflow.snapshot.deferred_indexes import IndexBuildFailed, IndexRecord, build_replayed, needed, replayed_past
from cdcflow.snapshot.point import create_downstream, open_point
from cdcflow.source.binlog import Position, head_position, replay_horizon
from cdcflow.store import metastore, table_copies
from cdcflow.store.schema_versions import read_catalogue
from cdcflow.verify.comparison import reading_session
from cdcflow.core import tso

log = logging.getLogger(__name__)


class Ledger(chunk_copies.SnapshotLedger):
    """The chunks of added tables, recorded in store.table_copies; a failure names add-tables."""

    def chunk_done(self, done: dict) -> None:
        table_copies.chunk_done(self.changefeed_id, done["table"], done["index"], done["rows"], done["seconds"])

    def progress(self) -> dict:
        tables = [p for p in table_copies.progress(self.changefeed_id) if p["status"] == table_copies.COPYING]
        return {"chunks_done": sum(p["chunks_done"] for p in tables),
                "chunks_total": sum(p["chunks_total"] for p in tables),
                "rows_copied": sum(p["rows_copied"] for p in tables), "rows_per_second": None}

    def progress_line(self, progress: dict) -> str:
        return (f"table copy {self.changefeed_id}: {progress['chunks_done']}/{progress['chunks_total']} chunks, "
                f"{progress['rows_copied']} rows")

    def failed(self, table: str, e: Exception) -> CdcflowError:
        return chunk_copies._copy_failed(self.changefeed_id, table, e, "table copy", TABLE_COPY_FAILED,
                                   "; the next cycle copies on from the chunk that failed")

    def stuck(self, tables: list[str]) -> CdcflowError:
        return CdcflowError(f"table copy: the chunks of {tables} each wait for another's", changefeed=self.changefeed_id,
                            code=TABLE_COPY_FAILED,
                            hint=f"copy them again: `cdcflow changefeed resync-tables -c {self.changefeed_id} "
                                 f"--tables {','.join(tables)}`")


class Indexes(IndexRecord):
    """The indexes added tables were created without, kept with their copies (store.table_copies):
    those of the copies done; a failure is recorded there and names resync-tables too."""
    what = "table copy"

    def deferred(self) -> list[dict]:
        return table_copies.indexes_due(self.changefeed_id)

    def phase(self, table: str, status: str) -> None:
        table_copies.index_phase(self.changefeed_id, table, status)

    def failed(self, e: IndexBuildFailed) -> CdcflowError:
        told = IndexBuildFailed(self.changefeed_id, e.table, e.clauses, e.why, self.what, TABLE_COPY_INDEX_FAILED,
                                f"; or copy the table again: `cdcflow changefeed resync-tables -c {self.changefeed_id} "
                                f"--tables {e.table}`")
        table_copies.index_phase(self.changefeed_id, e.table, table_copies.FAILED, str(told))
        return told


def step(changefeed_id: str, cfg, up_args: dict, down_args: dict, scheme: str, checkpoint_pos: dict | None,
         checkpoint_ts: int, log_event, renew=lambda: None) -> bool:
    """A cycle's part of its changefeed's table copies, after its apply moved the checkpoint to
    `checkpoint_ts` / `checkpoint_pos`: copies past their replay are done, requested tables join,
    chunks are copied for up to `cfg.table_copy_seconds`, and the deferred indexes of the copies
    done are built.  Returns whether any copy was active or had indexes to build."""
    copies = table_copies.active(changefeed_id)
    if not copies:
        return _build_indexes(changefeed_id, checkpoint_ts, down_args, scheme, log_event, renew)
    for copy in copies:
        if copy["status"] == table_copies.REPLAYING and replayed_past(checkpoint_pos, copy["copied_to"]):
            table_copies.done(changefeed_id, copy["table_name"])
            log_event("table copy done", table=copy["table_name"], kind=copy["kind"])
    requested = [c for c in copies if c["status"] == table_copies.REQUESTED]
    if requested:
        _join(changefeed_id, cfg, up_args, down_args, scheme, requested, log_event)
        renew()
    todo = table_copies.pending_chunks(changefeed_id)
    if todo:
        options = chunk_copies.SnapshotOptions.of(cfg)
        deadline = time.monotonic() + cfg.table_copy_seconds
        chunk_copies._copy_chunks(changefeed_id, todo, up_args, down_args, None, options,
                            lambda progress: renew(), lambda table: None, Ledger(changefeed_id), deadline)
    _copied(changefeed_id, up_args, checkpoint_pos, log_event)
    _build_indexes(changefeed_id, checkpoint_ts, down_args, scheme, log_event, renew)
    return True


def _build_indexes(changefeed_id: str, checkpoint_ts: int, down_args: dict, scheme: str, log_event, renew) -> bool:
    """The deferred indexes of the copies done (their replay is past their last read) and not
    built yet: pending, or left by a cycle killed or failed in their build.  Whether any were."""
    due = table_copies.indexes_due(changefeed_id)
    if not due:
        return False
    build_replayed(changefeed_id, checkpoint_ts, down_args, scheme, renew, log_event, Indexes(changefeed_id))
    status = {c["table_name"]: c["index_status"] for c in table_copies.all_of(changefeed_id)}
    for copy in due:
        log_event("table indexes", table=copy["table"], status=status.get(copy["table"]))
    return True


def _join(changefeed_id: str, cfg, up_args: dict, down_args: dict, scheme: str, requested: list[dict],
          log_event) -> None:
    """The requested tables join at one consistent point: created downstream, chunks planned and
    recorded, keyless tables copied in the point's transaction."""
    up, down = reading_session(up_args), connection.connect(down_args)
    try:
        position, method = open_point(up, cfg.snapshot_point)
        catalogue = read_catalogue(up)
        tables, gone, flt, deferred = [], [], Filter.build(cfg), {}
        for copy in requested:
            schema, name = copy["table_name"].split(".", 1)
            info = catalogue.get((schema, name))
            if info is None or info.sequence or not flt.replicates_rows(schema, name):
                gone.append(copy["table_name"])
                continue
            key = info.valid_key()
            if copy["kind"] == table_copies.RESYNC:
                _drop_downstream(down, schema, name)
            # as create --snapshot: a keyless table is read at the point and replayed once, it keeps its indexes
            kept = needed(up, schema, name, info) if key else None
            deferred[f"{schema}.{name}"] = create_downstream(up, down, scheme, schema, name, changefeed_id, kept)
            tables.append((schema, name, key))
        options = chunk_copies.SnapshotOptions.of(cfg)
        tasks = chunk_copies._plan(up_args, tables, options)
        chunk_copies._order(up, tasks)
        for schema, name, _ in tables:
            table = f"{schema}.{name}"
            table_copies.joined(changefeed_id, table, position.to_dict(),
                                [t for t in tasks if t["table"] == table], deferred[table])
            log_event("table joined", table=table, position=position.to_dict(), method=method,
                      chunks=sum(1 for t in tasks if t["table"] == table), indexes_deferred=deferred[table])
        for table in gone:
            table_copies.done(changefeed_id, table)
            log_event("table copy dropped", table=table,
                      why="the table is gone from the upstream, or the filter no longer replicates it")
        # a DDL of a joined table between the point and its CREATE downstream is in the table already
        feed = metastore.get_feed(changefeed_id)
        metastore.update_feed(changefeed_id, replay_until=replay_horizon(tso.now(), feed.replay_until))
        # read at the point: a keyless table's changes from it apply once
        chunk_copies.copy_at_point(up, down, tasks, options, Ledger(changefeed_id))
        up.rollback()
    finally:
        up.close()
        down.close()


def _drop_downstream(down, schema: str, name: str) -> None:
    """A resynced table is created again from the upstream's definition: what drifted goes too.
    Foreign keys of other tables that point at it do not stop the drop (the copy refills it)."""
    with down.cursor() as cur:
        cur.execute("SET @cdcflow_fk = @@foreign_key_checks, foreign_key_checks = 0")
        try:
            cur.execute(f"DROP TABLE IF EXISTS {quote_ident(schema)}.{quote_ident(name)}")
        finally:
            cur.execute("SET foreign_key_checks = @cdcflow_fk")


def _copied(changefeed_id: str, up_args: dict, checkpoint_pos: dict | None, log_event) -> None:
    """Tables copying with no chunk left record the upstream's head: their replay ends there."""
    finished = [c for c in table_copies.active(changefeed_id) if c["status"] == table_copies.COPYING]
    left = {t["table"] for t in table_copies.pending_chunks(changefeed_id)}
    finished = [c for c in finished if c["table_name"] not in left]
    if not finished:
        return
    up = reading_session(up_args)
    try:
        head = head_position(up)
    finally:
        up.close()
    for copy in finished:
        table_copies.copied(changefeed_id, copy["table_name"], head.to_dict())
        log_event("table copied", table=copy["table_name"], replay_until=head.to_dict())
        if replayed_past(checkpoint_pos, head.to_dict()):  # the binlog did not move: nothing to replay
            table_copies.done(changefeed_id, copy["table_name"])
            log_event("table copy done", table=copy["table_name"], kind=copy["kind"])

