"""Secondary indexes built after the copy, as myloader's --innodb-optimize-keys builds them: a
table is created downstream without them, its rows are copied into the primary key alone, and
each index is built once over all the rows (a sort) instead of row by row.

When they may be built: the chunks are read at different moments, so before the replay two
copied rows may hold the same unique value (a value that moved from one row to another
between two chunks' reads) and a row may hold a value the upstream no longer has.  Once a
cycle has replayed the binlog past the copy's last read (`copied_to`, the upstream's head
read after every chunk's read), the downstream holds the upstream as of that cycle's
checkpoint: each row is its last replayed image, or its copy when no change of it came after
the point.  So the build runs at the end of the first apply whose checkpoint reaches
`copied_to` (stages/snapshot_indexes.py), and a unique index built then finds no duplicate.  A copy
during which the upstream's binlog did not move needs no replay: `create --snapshot` builds
them itself.

While they are missing the replay stays exact: it writes in safe mode by the table's valid
index (REPLACE / DELETE by that key), which is kept, and a unique index that would have made
a REPLACE delete a second row only rejects what the upstream's order never leaves in place
once the replay is past the copy's last read.  With every unique secondary index deferred,
InnoDB's only unique check during the copy is the clustered key's, which unique_checks=0 does
not skip: turning it off would change nothing, so the copy leaves it on.  A replicated DDL
that drops, renames or hides one of them, in any cycle before the build, changes its kept
clause instead of running that part, and a rename of the table moves the clauses to the new
name (sink/pending_indexes.py): the build adds what the upstream has then.

Kept at creation (not deferred), so that the definitions end identical and the replay finds
its rows:
- the valid index (TableInfo.valid_key): the primary key, or the unique key that is the handle
  of a table without one; the replay and the sink key rows by it;
- an index a foreign key needs: the child's index on the FK columns and the parent's on the
  referenced ones (InnoDB would otherwise create one of its own under the constraint's name);
- FULLTEXT and SPATIAL: InnoDB adds a FULLTEXT index to a filled table by rebuilding it, one at
  a time; SPATIAL ones are rare;
- any index listed before a kept one of its kind: the server lists unique indexes first,
  FULLTEXT ones last, each kind in the order they were added, so one added later would come
  after the kept one.
Prefix lengths, ordering, comments, IGNORED / INVISIBLE and indexes on generated columns are in
the clause SHOW CREATE TABLE prints, which is what the build sends.

On MariaDB/MySQL the missing indexes of a table are one ALTER TABLE; on TiDB each is an ADD
INDEX sent the way a replicated one is (sink/async_index.py): an asynchronous job, recorded
for the wait_index stage and polled by the next cycles; the table counts as built once every
index exists.

A table that joins a running changefeed (`add-tables`, `resync-tables`: snapshot/table_join.py)
is created the same way, its clauses kept with its copy (store.table_copies: an IndexRecord of
its own), and built by the same `build` at the same moment: the first cycle whose checkpoint is
past its copy's last read, when its copy is done."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from types import SimpleNamespace

import pymysql

from cdcflow.core.errors import SNAPSHOT_INDEX_FAILED, CdcflowError
from cdcflow.core.per_thread import PerThread
from cdcflow.core.row_codec import quote_ident
from cdcflow.ddl import tidb_only
from cdcflow.ddl.classify import classify
from cdcflow.ddl.index_edits import clause_name, index_lines
from cdcflow.ddl.table_def import TableInfo
from cdcflow.ddl.tidb_only import for_downstream
from cdcflow.ddl.tracker import UNKNOWN
from cdcflow.sink import connection, downstream
from cdcflow.sink.async_index import IndexDDL
from cdcflow.sink.pending_indexes import downstream_indexes
from cdcflow.source.binlog import head_position
from cdcflow.source.position import Position
from cdcflow.store import index_jobs, schema_versions, snapshots

log = logging.getLogger(__name__)

_ALWAYS_KEPT = ("FULLTEXT ", "SPATIAL ")
DUPLICATE_KEY_NAME = 1061


def split(create: str, keep: set[str]) -> tuple[str, list[str]]:
    """The CREATE TABLE text without the indexes it may defer, and their clauses in the order listed.
    `keep`: index names (lower-cased) that must stay."""
    lines = create.split("\n")
    found = index_lines(create)
    # the server lists unique indexes before the others and FULLTEXT ones last, each kind in the
    # order they were added: a kept index holds back the earlier ones of its kind (a kept unique one, all)
    def last(unique: bool) -> int:
        return max((n for n, name, kind, _ in found if (kind == "UNIQUE ") == unique
                    and (name.lower() in keep or kind == "SPATIAL ")), default=-1)

    held_unique, held_plain = last(True), last(False)
    deferred = [(n, clause) for n, name, kind, clause in found
                if kind not in _ALWAYS_KEPT and name.lower() not in keep and n > held_unique
                and (kind == "UNIQUE " or n > held_plain)]
    if not deferred:
        return create, []
    gone = {n for n, _ in deferred}
    body = [line for i, line in enumerate(lines) if i not in gone]
    # the line before the closing parenthesis loses the comma the removed lines followed
    close = max(i for i, line in enumerate(body) if line.startswith(")"))
    body[close - 1] = body[close - 1].rstrip(",")
    return "\n".join(body), [clause for _, clause in deferred]


def needed(up, schema: str, table: str, info: TableInfo) -> set[str]:
    """The index names (lower-cased) the table keeps: its valid index and those its foreign keys use."""
    keep = set()
    handle = info.valid_key_index()
    if handle:
        keep.add(handle.lower())
    with up.cursor() as cur:
        cur.execute("SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = %s "
                    "AND TABLE_NAME = %s ORDER BY INDEX_NAME, SEQ_IN_INDEX", (schema, table))
        columns: dict[str, list[str]] = {}
        for name, col in cur.fetchall():
            columns.setdefault(name, []).append(col.lower())
        # the columns of each foreign key of the table (child side), then of each referencing it (parent side)
        uses: dict[tuple, list[str]] = {}
        for side, cols, where in (("child", "COLUMN_NAME", "TABLE_SCHEMA = %s AND TABLE_NAME = %s"),
                                  ("parent", "REFERENCED_COLUMN_NAME",
                                   "REFERENCED_TABLE_SCHEMA = %s AND REFERENCED_TABLE_NAME = %s")):
            cur.execute(f"SELECT TABLE_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, {cols} FROM "
                        f"information_schema.KEY_COLUMN_USAGE WHERE REFERENCED_TABLE_NAME IS NOT NULL AND {where} "
                        "ORDER BY TABLE_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION", (schema, table))
            for c_schema, c_table, c_name, col in cur.fetchall():
                uses.setdefault((side, c_schema, c_table, c_name), []).append(col.lower())
    for cols in uses.values():
        keep |= {name.lower() for name, have in columns.items() if have[:len(cols)] == cols}
    return keep


class IndexBuildFailed(CdcflowError):
    """A table's deferred indexes could not be built: what failed (`table`, the `clauses` not
    built) and the server's word (`why`), for an IndexRecord to tell it its own way."""

    def __init__(self, changefeed_id: str, table: str, clauses: list[str], why: str, what: str = "snapshot",
                 code=SNAPSHOT_INDEX_FAILED, or_else: str = ""):
        super().__init__(
            f"the {what}'s deferred index build on {table} failed ({'; '.join(clauses)}): {why}",
            changefeed=changefeed_id, code=code,
            hint="the rows are replicated, the indexes are not: a duplicate of a unique value means the downstream "
                 "holds rows the upstream does not (a filter, or a write made downstream) - find them with "
                 f"`cdcflow changefeed verify -c {changefeed_id}`, fix them downstream, then `cdcflow changefeed "
                 f"resume -c {changefeed_id}`: the next cycle builds the indexes not built yet{or_else}")
        self.table, self.clauses, self.why = table, clauses, why


@dataclass
class IndexRecord:
    """Where the clauses a table was created without are kept and each table's phase recorded:
    a snapshot's (store.snapshots); a joined table's copy has its own (table_join.Indexes)."""
    changefeed_id: str
    what = "snapshot"  # how the log names whose indexes they are

    def deferred(self) -> list[dict]:
        """{table, clauses, status} of each table whose indexes are to be built now."""
        return snapshots.deferred(self.changefeed_id)

    def phase(self, table: str, status: str) -> None:
        snapshots.index_phase(self.changefeed_id, table, status)

    def failed(self, e: IndexBuildFailed) -> CdcflowError:
        """The error the build raises; a snapshot's table stays `building` for the next build."""
        return e


def build(changefeed_id: str, down, kind: str, flavour: str, index_ddl=None, renew=lambda: None,
          tracked=None, at_once: tuple[Callable, int] | None = None, record: IndexRecord | None = None) -> None:
    """Build the deferred indexes not built yet, table by table, recording each table's phase in
    `record` (the snapshot's by default).
    `kind`: the downstream (sink.downstream); `index_ddl` (sink.async_index.IndexDDL): sends
    TiDB's as asynchronous jobs; `renew()` between tables (the cycle's lease); `tracked(schema,
    table)`: the changefeed's tracked definition at its checkpoint (TableInfo, None when dropped),
    so an index a replayed DDL dropped upstream is not built.  An index present already is not
    added again.  `at_once`: (a new downstream session, how many): the ALTERs of that many
    tables run at once, each in a session of its own (an ALTER builds on one core)."""
    record = record or IndexRecord(changefeed_id)
    alters = []  # (table, schema, name, ALTERs' index groups) left to run at once
    for entry in record.deferred():
        renew()
        table, clauses = entry["table"], entry["clauses"]
        schema, name = table.split(".", 1)
        record.phase(table, snapshots.BUILDING)
        info = tracked(schema, name) if tracked else UNKNOWN
        if isinstance(info, TableInfo):
            have = {n.lower() for n in info.indexes}
            clauses = [c for c in clauses if clause_name(c).lower() in have]
        missing = None if info is None else _missing(down, schema, name, clauses)
        try:
            if missing is None:
                log.warning("%s %s: %s no longer exists: its deferred indexes are not built",
                            record.what, changefeed_id, table)
            elif kind == downstream.TIDB and index_ddl is not None and index_ddl.can_poll:
                if not _submit_each(changefeed_id, index_ddl, flavour, schema, name, missing):
                    continue  # jobs still building: a later cycle sees them done
            else:  # TiDB synchronously: one ADD INDEX a statement, as it replicates them
                groups = ([missing] if kind != downstream.TIDB else [[m] for m in missing]) if missing else []
                if at_once is not None and groups:
                    alters.append((table, schema, name, groups))
                    continue
                for group in groups:
                    _alter(changefeed_id, down, flavour, schema, name, group)
        except IndexBuildFailed as e:
            raise record.failed(e) from None
        _built(record, table)
    if alters:
        _alter_at_once(changefeed_id, flavour, alters, *at_once)


def _built(record: IndexRecord, table: str) -> None:
    record.phase(table, snapshots.BUILT)
    log.info("%s %s: the deferred indexes of %s are built", record.what, record.changefeed_id, table)


def _alter_at_once(changefeed_id: str, flavour: str, alters: list[tuple], connect: Callable, workers: int) -> None:
    """The tables' ALTERs, `workers` tables at once; each recorded built by this thread as it ends."""
    builds = ParallelBuild(changefeed_id, flavour, connect, min(workers, len(alters)))
    try:
        for table, schema, name, groups in alters:
            builds.submit(table, functools.partial(_alter_groups, changefeed_id, flavour, schema, name, groups))
        builds.record(wait=True)
    finally:
        builds.close()


def _alter_groups(changefeed_id: str, flavour: str, schema: str, name: str, groups: list, down) -> None:
    for group in groups:
        _alter(changefeed_id, down, flavour, schema, name, group)


class ParallelBuild:
    """Tables' index builds in threads, `workers` tables at once, each in a downstream session
    of its own (an ALTER builds on one core); a table is recorded built by the thread that
    submits (the store's only writer) once its build ended: at `record()`.  `leave_failed`: a
    build that fails is left unrecorded (logged) for a later build to run again and report,
    instead of raised."""

    def __init__(self, changefeed_id: str, flavour: str, connect: Callable, workers: int, leave_failed: bool = False):
        self.changefeed_id, self.flavour, self.leave_failed = changefeed_id, flavour, leave_failed
        self.sessions = PerThread(connect)
        self.pool = ThreadPoolExecutor(max(1, workers), thread_name_prefix="snapshot-index")
        self.running: dict = {}  # future -> table

    def submit(self, table: str, run: Callable) -> None:
        """`run(down=session)` builds the table's indexes."""
        self.running[self.pool.submit(lambda: run(down=self.sessions.get()))] = table

    def record(self, wait: bool = False) -> None:
        """Record the builds that ended (with `wait`, all, as they end)."""
        ended = as_completed(list(self.running)) if wait else [f for f in list(self.running) if f.done()]
        for future in ended:
            table = self.running.pop(future)
            try:
                future.result()
            except CdcflowError as e:
                if not self.leave_failed:
                    raise
                log.warning("snapshot %s: the indexes of %s are left to the build after the copy: %s",
                            self.changefeed_id, table, e)
                continue
            _built(IndexRecord(self.changefeed_id), table)

    def close(self) -> None:
        self.pool.shutdown(cancel_futures=True)
        self.sessions.close()


class AsTablesEnd(ParallelBuild):
    """create's build of a table's deferred indexes as soon as its last chunk is copied, beside
    the copy of the other tables, while the upstream's binlog has not moved since the point
    (its head read in a session of `up_connect()`'s still at the `point`): every chunk of the
    table then read the point's rows, so no unique value is held twice and no replay is due
    (the module's first lines).  The tables with indexes to build are started first (`first`),
    so their builds overlap the copy of the rest where there are more tables than workers.  A
    build that fails is left to the build after the copy, which reports it; on an error of the
    copy, close() waits for the ALTERs already running (their sessions are closed after)."""

    def __init__(self, changefeed_id: str, flavour: str, connect: Callable, workers: int, up_connect: Callable,
                 point: dict):
        super().__init__(changefeed_id, flavour, connect, workers, leave_failed=True)
        self.clauses = {e["table"]: e["clauses"] for e in snapshots.deferred(changefeed_id)}
        self.up_connect, self.up, self.point, self.moved = up_connect, None, point, False

    def unmoved(self) -> bool:
        self.up = self.up or self.up_connect()
        return at_point(self.point, head_position(self.up))

    def first(self, tasks: list[dict]) -> list[dict]:
        return sorted(tasks, key=lambda t: t["table"] not in self.clauses)  # stable: the plan's order within

    def table_done(self, table: str) -> None:
        self.record()
        if table not in self.clauses or self.moved:
            return
        self.moved = not self.unmoved()  # once moved, it stays so
        if self.moved:
            return
        snapshots.index_phase(self.changefeed_id, table, snapshots.BUILDING)
        schema, name = table.split(".", 1)

        def run(down) -> None:
            missing = _missing(down, schema, name, self.clauses[table])
            if missing:
                _alter(self.changefeed_id, down, self.flavour, schema, name, missing)

        self.submit(table, run)

    def close(self) -> None:
        super().close()
        if self.up is not None:
            self.up.close()


def _missing(down, schema: str, name: str, clauses: list[str]) -> list[tuple[str, str]] | None:
    """(index name, clause) of each clause whose index the downstream table lacks; None: no such table."""
    have = downstream_indexes(down, schema, name)
    if have is None:
        return None
    return [(clause_name(c), c) for c in clauses if clause_name(c).lower() not in have]


def downstream_statement(flavour: str, schema: str, query: str, changefeed_id: str) -> str:
    """A DDL of the snapshot's as the downstream of `flavour` takes it (tidb_only.for_downstream)."""
    info = classify(query, schema)
    entry = SimpleNamespace(type=info.type, sub_types=list(info.sub_types), query=query, sql_mode=None,
                            name=info.statement_name, commit_ts=None)
    return for_downstream(entry, flavour, changefeed_id)


def _alter(changefeed_id: str, down, flavour: str, schema: str, name: str, missing: list[tuple[str, str]]) -> None:
    target = f"{quote_ident(schema)}.{quote_ident(name)}"
    for _ in range(2):  # an ALTER a killed build left running may add some of them meanwhile (1061)
        query = f"ALTER TABLE {target} " + ", ".join(f"ADD {c}" for _, c in missing)
        try:
            with down.cursor() as cur:
                cur.execute(downstream_statement(flavour, schema, query, changefeed_id))
            return
        except pymysql.MySQLError as e:
            code = e.args[0] if e.args else None
            if code == DUPLICATE_KEY_NAME:
                missing = _missing(down, schema, name, [c for _, c in missing]) or []
                if not missing:
                    return
                continue
            raise _failed(changefeed_id, schema, name, [c for _, c in missing], e) from None
    raise _failed(changefeed_id, schema, name, [c for _, c in missing], None)


def _submit_each(changefeed_id: str, index_ddl, flavour: str, schema: str, name: str,
                 missing: list[tuple[str, str]]) -> bool:
    """TiDB: one ADD INDEX job per missing index not already building.  True: all exist."""
    building = {(j.schema_name.lower(), j.table_name.lower(), (j.index_name or "").lower())
                for j in index_jobs.pending(changefeed_id)}
    target = f"{quote_ident(schema)}.{quote_ident(name)}"
    for index, clause in missing:
        if (schema.lower(), name.lower(), index.lower()) in building:
            continue
        query = downstream_statement(flavour, schema, f"ALTER TABLE {target} ADD {clause}", changefeed_id)
        ddl = SimpleNamespace(type=classify(query, schema).type, tables=[(schema, name)], query=query,
                              default_schema=schema, sql_mode=None, session=None, commit_ts=None)
        try:
            outcome = index_ddl.execute(ddl, replay=True)
        except pymysql.MySQLError as e:
            raise _failed(changefeed_id, schema, name, [clause], e) from None
        log.info("snapshot %s: deferred index %s on %s.%s: %s", changefeed_id, index, schema, name, outcome)
    return not missing


def _failed(changefeed_id: str, schema: str, name: str, clauses: list[str], e: Exception | None) -> IndexBuildFailed:
    why = e.args[-1] if e is not None and e.args else "indexes of the same names appeared and went while it ran"
    return IndexBuildFailed(changefeed_id, f"{schema}.{name}", clauses, str(why))


def at_point(point: dict, head: Position) -> bool:
    """Whether the upstream's binlog `head` is still the snapshot's `point` (nothing written since)."""
    return (point.get("file"), point.get("pos")) == (head.file, head.pos)


def replayed_past(checkpoint_pos: dict | None, copied_to: dict) -> bool:
    """Whether a checkpoint at `checkpoint_pos` is at or past the copy's last read."""
    if not checkpoint_pos or not checkpoint_pos.get("file") or not copied_to.get("file"):
        return False
    return Position.from_dict(checkpoint_pos).key() >= Position.from_dict(copied_to).key()


def after_apply(changefeed_id: str, checkpoint_pos: dict | None, checkpoint_ts: int, sink: dict, scheme: str,
                renew, log_event) -> bool:
    """At the end of an apply that moved the checkpoint to `checkpoint_ts` / `checkpoint_pos`:
    build the deferred indexes once that is past the copy's last read (build_replayed).
    Returns whether it tried."""
    copied_to = snapshots.indexing(changefeed_id)
    if copied_to is None or not replayed_past(checkpoint_pos, copied_to):
        return False
    build_replayed(changefeed_id, checkpoint_ts, sink, scheme, renew, log_event)
    log_event("snapshot indexes", status=snapshots.get(changefeed_id)["status"])
    return True


def build_replayed(changefeed_id: str, checkpoint_ts: int, sink: dict, scheme: str, renew, log_event,
                   record: IndexRecord | None = None) -> None:
    """Build `record`'s deferred indexes (the snapshot's by default), the replay being past the
    copy's last read at the checkpoint `checkpoint_ts`, on a connection of their own without a
    read timeout (an index build takes as long as the table's size says); an index the tracked
    schema at the checkpoint no longer has is not built.  `sink`: the downstream's connection
    arguments; `renew` keeps the cycle's lease; `log_event` records what the downstream is."""
    conn = connection.connect(sink, read_timeout=None)
    try:
        index_ddl = IndexDDL.open(changefeed_id, conn, sink, scheme, None, log_event)
        tracker, at = schema_versions.load(changefeed_id), checkpoint_ts + 1
        build(changefeed_id, conn, index_ddl.kind, tidb_only.flavour(index_ddl.kind, index_ddl.version),
              index_ddl, renew=renew, tracked=lambda s, t: tracker.at(s, t, at), record=record)
    finally:
        conn.close()
