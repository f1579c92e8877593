"""A snapshot's chunk copies from start to end: the consistent point, the tables created
downstream, the chunks planned and recorded (store/snapshots.py) in the same metadata-store
transaction as the changefeed's start at the point (the caller's), keyless tables copied at
the point, then the keyed chunks copied `workers` at a time: in Spark tasks, one job per run of
chunks of a table, or in threads here where the only Spark would be a local one to start
(continue_copy); each recorded done as its job or call ends (a killed copy loses only the
chunks in flight)."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from cdcflow.config.keys import ChangefeedConfig
from cdcflow.core.errors import SNAPSHOT_FAILED, CdcflowError, access_denied
from cdcflow.core.per_thread import PerThread
from cdcflow.filter.table import TableFilter
from cdcflow.sink import connection
from cdcflow.ddl.tidb_only import flavour
from cdcflow.sink.downstream import TIDB, detect
from cdcflow.sink.downstream_errors import SinkError
from cdcflow.sink.row_writer import RowWriter, qualified
from cdcflow.sink.foreign_keys import read_keys
from cdcflow.snapshot import copy_order, deferred_indexes
from cdcflow.snapshot.copy import BATCH_BYTES, copy_chunk, copy_partition, copy_rows, copy_sequence
from cdcflow.snapshot.point import create_downstream, open_point
from cdcflow.source.binlog import Position, head_position
from cdcflow.store import snapshots
from cdcflow.store.schema_versions import read_catalogue
from cdcflow.verify.chunks import table_chunks
from cdcflow.verify.comparison import reading_session

log = logging.getLogger(__name__)
# what follows fixing what stopped a snapshot: the copy continues where it stood
AGAIN = ("then run `cdcflow changefeed create … --snapshot` again (in Airflow: trigger mode snapshot again): "
         "the chunks done are not copied again")


@dataclass
class Point:
    """What start hands its caller to record in one transaction with the changefeed's start: the
    consistent point, how it was taken, the chunk tasks, and the upstream's catalogue read in
    the point's transaction (the tracked schema at the start)."""
    position: Position
    method: str
    tasks: list[dict]
    catalogue: dict
    deferred: dict[str, list[str]] = field(default_factory=dict)  # "schema.table" -> index clauses built later

    def record(self, changefeed_id: str, conn) -> None:
        """The copy's plan, inside the caller's transaction `conn`."""
        snapshots.begin(changefeed_id, {**self.position.to_dict(), "method": self.method}, self.tasks, conn,
                        self.deferred)


@dataclass
class SnapshotOptions:
    chunk_size: int = ChangefeedConfig.snapshot_chunk_size  # upstream rows per chunk
    batch_rows: int = 1000  # rows per multi-row statement (and per fetch); a chunk's first batch
    batch_bytes: int = BATCH_BYTES  # a grouped batch's VALUES text aimed at, after the first (copy.py)
    workers: int = ChangefeedConfig.snapshot_workers  # Spark tasks copying chunks at once
    point: str = ChangefeedConfig.snapshot_point  # how the consistent point is taken (point.py)

    @classmethod
    def of(cls, cfg: ChangefeedConfig, **given) -> SnapshotOptions:
        """The config's [cdcflow] snapshot-* values, overridden by those `given` (not None)."""
        values = {"chunk_size": cfg.snapshot_chunk_size, "workers": cfg.snapshot_workers, "point": cfg.snapshot_point}
        return cls(**(values | {k: v for k, v in given.items() if v is not None}))


def start(changefeed_id: str, up_args: dict, down_args: dict, scheme: str, rules: list[str], case_sensitive: bool,
          force_replicate: bool, options: SnapshotOptions, record: Callable[[Point], None]) -> int:
    """Take the consistent point, create the filter's tables downstream, plan their chunks,
    call `record(point)` (the changefeed starts there and the plan is recorded, in one
    transaction: Point.record) and copy the keyless tables inside the point's transaction.
    Returns the number of chunks."""
    up, down = reading_session(up_args), connection.connect(down_args)
    try:
        position, method = open_point(up, options.point)
        log.info("snapshot %s: consistent point %s:%s (by %s)", changefeed_id, position.file, position.pos, method)
        keep = TableFilter(list(rules), case_sensitive)
        tables, deferred, sequences = [], {}, []
        catalogue = read_catalogue(up)
        # sequences first: a table's DEFAULT NEXTVAL(seq) needs its sequence to be created
        for (schema, name), info in sorted(catalogue.items(), key=lambda kv: (not kv[1].sequence, kv[0])):
            if not keep.match_table(schema, name):
                continue
            if info.sequence:  # created, and its one row (its state) written at the point, below
                create_downstream(up, down, scheme, schema, name, changefeed_id, sequence=True)
                sequences.append((schema, name))
                continue
            key = info.valid_key()
            if not key and not force_replicate:
                continue  # as the changefeed: a table without a valid index only with force-replicate
            # a keyless table is read at the point and replayed once: it keeps its indexes
            kept = deferred_indexes.needed(up, schema, name, info) if key else None
            clauses = create_downstream(up, down, scheme, schema, name, changefeed_id, kept)
            if clauses:
                deferred[f"{schema}.{name}"] = clauses
            tables.append((schema, name, key))
        tasks = _plan(up_args, tables, options)
        _order(up, tasks)
        record(Point(position, method, tasks, catalogue, deferred))
        tidb = bool(sequences) and detect(down, scheme)[0] == TIDB
        for schema, name in sequences:
            copy_sequence(up, down, schema, name, tidb)
        copy_at_point(up, down, tasks, options, SnapshotLedger(changefeed_id))
        up.rollback()
        return len(tasks)
    except Exception as e:  # noqa: BLE001 - a user without rights on the tables it creates is named as such
        denied = access_denied(e, "snapshot: creating or writing the tables downstream", changefeed_id, then=AGAIN)
        if denied:
            raise denied from None
        raise
    finally:
        up.close()
        down.close()


def copy_at_point(up, down, tasks: list[dict], options: SnapshotOptions, ledger: Ledger) -> None:
    """The tasks to be read at the point (`at_point`), on `up` inside the point's transaction,
    each recorded done in `ledger`: a keyless table whole (an earlier partial copy deleted first),
    a keyed one as its chunks are."""
    writer = RowWriter(down, options.batch_rows)
    for task in tasks:
        if not task["at_point"]:
            continue
        t0 = time.monotonic()
        try:
            if task["key"]:
                rows = copy_rows(up, writer, task, batch_bytes=options.batch_bytes)
            else:
                with down.cursor() as cur:  # a keyless table is copied whole: an earlier partial copy goes
                    cur.execute(f"DELETE FROM {qualified(task['schema'], task['name'])}")
                rows = copy_rows(up, writer, task, verb="INSERT")
        except SinkError as e:  # a row the downstream refused: named as the chunks' copy names it
            raise ledger.failed(task["table"], e) from None
        ledger.chunk_done({"table": task["table"], "index": task["chunk"]["index"], "rows": rows,
                           "seconds": time.monotonic() - t0})


def _plan(up_args: dict, tables: list[tuple[str, str, list[str] | None]], options: SnapshotOptions) -> list[dict]:
    """The chunk tasks of `tables` (schema, name, key), in their order.  Each table's bounds
    are a walk of its key's index on the upstream, so the tables are walked `workers` at a
    time, each in a session of its own: bounds need no snapshot, since the chunks cover the
    whole key range whatever they are."""
    sessions = PerThread(lambda: reading_session(up_args))

    def chunks(table: tuple[str, str, list[str] | None]) -> list[dict]:
        schema, name, key = table
        found = table_chunks(sessions.get(), qualified(schema, name), key, options.chunk_size)
        return [{"table": f"{schema}.{name}", "schema": schema, "name": name, "key": key, "chunk": c.__dict__}
                for c in found]

    try:
        with ThreadPoolExecutor(max(1, min(options.workers, len(tables))), thread_name_prefix="snapshot-plan") as pool:
            return [task for found in pool.map(chunks, tables) for task in found]
    finally:
        sessions.close()


def _order(up, tasks: list[dict]) -> None:
    """Mark each task read at the point (`at_point`) or with the tables whose chunks it waits for
    (`after`), so the replay redoes the cascades of the upstream's foreign keys (copy_order)."""
    tables = {t["table"] for t in tasks}
    parents = copy_order.cascade_parents(read_keys(up), tables)
    at_point, after = copy_order.plan(tables, {t["table"] for t in tasks if not t["key"]}, parents)
    for task in tasks:
        task["at_point"] = task["table"] in at_point
        task["after"] = after.get(task["table"], [])


def progress_line(changefeed_id: str, p: dict) -> str:
    """The progress a person follows, in the CLI and in the task log."""
    return (f"snapshot {changefeed_id}: {p['chunks_done']}/{p['chunks_total']} chunks, {p['rows_copied']} rows, "
            f"{p['rows_per_second']} rows/s")


def needs_new_point(changefeed_id: str) -> bool:
    """A table to be read at the point and not copied yet cannot be copied later (a keyless
    table's replay would apply changes twice; a cascade would be lost, copy_order): the snapshot
    then starts again from a new point."""
    return any(not t["key"] or t.get("at_point") for t in snapshots.pending(changefeed_id))


def continue_copy(changefeed_id: str, up_args: dict, down_args: dict, scheme: str, spark_for: Callable[[], object],
                  options: SnapshotOptions, report: Callable[[dict], None]) -> dict:
    """Copy the chunks not done yet, recording each as it ends; `report(progress)` as they do
    (at most every REPORT_SECONDS).  `spark_for()`: the session whose tasks copy, or None for
    threads of this process (an embedded Spark would only add its JVM: each chunk's work is
    two servers' and a relay of their bytes).  A table's deferred indexes are built as soon as
    its chunks are done while the binlog has not moved (deferred_indexes.AsTablesEnd).
    Returns the progress at the end (store.snapshots.progress)."""
    todo = snapshots.pending(changefeed_id)
    # (kind, flavour): asked only where indexes are left to build (the copy does not add any)
    kind, flavour_ = _downstream(down_args, scheme) if snapshots.deferred(changefeed_id) else (None, None)
    if todo:
        early = _as_tables_end(changefeed_id, up_args, down_args, kind, flavour_, options.workers)
        try:
            _copy_chunks(changefeed_id, early.first(todo) if early else todo, up_args, down_args, spark_for(),
                         options, report, early.table_done if early else lambda table: None)
            if early:
                early.record(wait=True)
        finally:
            if early:
                early.close()
    _copied(changefeed_id, up_args, down_args, kind, flavour_, options.workers)
    return snapshots.progress(changefeed_id)


def _downstream(down_args: dict, scheme: str) -> tuple[str, str]:
    """(kind, flavour) of the downstream."""
    down = connection.connect(down_args)
    try:
        kind, version = detect(down, scheme)
    finally:
        down.close()
    return kind, flavour(kind, version)


def _as_tables_end(changefeed_id: str, up_args: dict, down_args: dict, kind: str, flavour_: str,
                   workers: int) -> deferred_indexes.AsTablesEnd | None:
    """The build of each table's deferred indexes as its copy ends, where they are ALTERs (not
    TiDB's jobs, which the sensor waits for) and some are left (`kind` None: none); None otherwise."""
    if kind in (None, TIDB):
        return None
    return deferred_indexes.AsTablesEnd(
        changefeed_id, flavour_, lambda: connection.connect(down_args, read_timeout=None), workers,
        lambda: reading_session(up_args), snapshots.get(changefeed_id)["position"])


def _copied(changefeed_id: str, up_args: dict, down_args: dict, kind: str, flavour_: str, workers: int) -> None:
    """Record the copy's last read: the upstream's head now, after every chunk's read.  If the
    binlog has not moved since the point, no change waits for a replay and the deferred indexes
    not built yet are built now (synchronously, `workers` tables at once); else the first cycle
    past that head builds them (deferred_indexes.after_apply)."""
    up = reading_session(up_args)
    try:
        head = head_position(up)
    finally:
        up.close()
    snapshots.copied(changefeed_id, head.to_dict())
    point = snapshots.get(changefeed_id)["position"]
    if not snapshots.deferred(changefeed_id) or not deferred_indexes.at_point(point, head):
        return
    down = connection.connect(down_args, read_timeout=None)
    try:
        deferred_indexes.build(changefeed_id, down, kind, flavour_,
                               at_once=(lambda: connection.connect(down_args, read_timeout=None), workers))
    finally:
        down.close()


REPORT_SECONDS = 1.0


def _copy_chunks(changefeed_id: str, todo: list[dict], up_args: dict, down_args: dict, spark, options: SnapshotOptions,
                 report: Callable[[dict], None], table_done: Callable[[str], None], ledger: Ledger | None = None,
                 deadline: float | None = None) -> None:
    """`options.workers` at a time: on `spark` runs of chunks, each a Spark job of one task, or
    (`spark` None) chunks, each a call in a thread here; each started from a driver thread as
    soon as a worker is free (not in waves, which wait for their slowest chunk), a chunk of the
    table with the fewest in flight, and a table's
    chunks only once every chunk of the tables it must be read after is done (copy_order); the
    store is written by this thread alone (`ledger`: the snapshot's by default); `table_done(table)`
    as a table's last chunk is.  No chunk starts after `deadline` (time.monotonic())."""
    ledger = ledger or SnapshotLedger(changefeed_id)
    if spark is not None:
        per_job = min(MOST_CHUNKS_PER_JOB, -(-len(todo) // (2 * max(1, options.workers))))
        _schedule(ledger, todo, lambda ts: copy_in_spark(spark, ts, up_args, down_args, options),
                  per_job, options.workers, report, table_done, deadline)
        return
    here = _ThreadCopies(up_args, down_args, options)
    try:
        _schedule(ledger, todo, lambda ts: [here(t) for t in ts], 1, options.workers, report, table_done, deadline)
    finally:
        here.close()


# A Spark job costs about 0.35 s of CPU on a warm Connect server whatever it does (measured:
# 48 empty one-task jobs), against a chunk's 1 to 2 s: a job copies a run of up to this many
# chunks of one table, at most so many that each worker still gets two jobs to balance with.
MOST_CHUNKS_PER_JOB = 4


@dataclass
class SnapshotLedger:
    """Where a copy's chunks are recorded and how its failure is told: a snapshot's (store.snapshots);
    an added table's copy has its own (table_join)."""
    changefeed_id: str

    def chunk_done(self, done: dict) -> None:
        snapshots.chunk_done(self.changefeed_id, done["table"], done["index"], done["rows"], done["seconds"])

    def progress(self) -> dict:
        return snapshots.progress(self.changefeed_id)

    def progress_line(self, progress: dict) -> str:
        return progress_line(self.changefeed_id, progress)

    def failed(self, table: str, e: Exception) -> CdcflowError:
        return _copy_failed(self.changefeed_id, table, e)

    def stuck(self, tables: list[str]) -> CdcflowError:
        return CdcflowError(f"snapshot copy: the chunks of {tables} each wait for another's",
                            changefeed=self.changefeed_id, code=SNAPSHOT_FAILED,
                            hint=f"copy again from a new point: `cdcflow changefeed create -c {self.changefeed_id} "
                                 "… --snapshot`")


Ledger = SnapshotLedger  # the interface: table_join's ledger has the same methods


def _schedule(ledger: Ledger, todo: list[dict], copy: Callable[[list[dict]], list[dict]], per_job: int,
              workers: int, report: Callable[[dict], None], table_done: Callable[[str], None],
              deadline: float | None = None) -> None:
    last = 0.0
    left = Counter(t["table"] for t in todo)  # chunks not done yet, per table
    waiting: dict[str, list[list[dict]]] = {}  # per table, runs of its chunks in the plan's order
    for t in todo:
        runs = waiting.setdefault(t["table"], [[]])
        if len(runs[-1]) == per_job:
            runs.append([])
        runs[-1].append(t)
    running, busy = {}, Counter()
    with ThreadPoolExecutor(max(1, workers), thread_name_prefix="snapshot-copy") as pool:
        while running or (waiting and not (deadline and time.monotonic() >= deadline)):
            ready = [table for table, runs in waiting.items() if not any(left[p] for p in runs[0][0].get("after", ()))]
            if deadline and time.monotonic() >= deadline:
                ready = []  # the chunks in flight end; the rest wait for the next call
            elif not ready and not running:
                raise ledger.stuck(sorted(waiting))
            while ready and len(running) < max(1, workers):
                # the table with the fewest runs in flight (the plan's first among equals): InnoDB
                # serialises concurrent inserts into one table's index (2,000,000 rows: the copy
                # took 6.3-6.6 s spread over the tables, 7.7-8.3 s table after table)
                table = min(ready, key=lambda t: busy[t])
                run = waiting[table].pop(0)
                if not waiting[table]:
                    del waiting[table]
                    ready.remove(table)
                busy[table] += 1
                running[pool.submit(copy, run)] = run
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                run = running.pop(future)
                busy[run[0]["table"]] -= 1
                try:
                    results = future.result()
                except Exception as e:  # noqa: BLE001 - a task's error reaches the driver wrapped by Spark
                    pool.shutdown(cancel_futures=True)
                    raise ledger.failed(run[0]["table"], e) from None
                for done in results:
                    left[done["table"]] -= 1
                    ledger.chunk_done(done)
                    if not left[done["table"]]:
                        table_done(done["table"])
                progress = ledger.progress()
                if time.monotonic() - last >= REPORT_SECONDS or progress["chunks_done"] == progress["chunks_total"]:
                    last = time.monotonic()
                    log.info("%s", ledger.progress_line(progress))
                    report(progress)


def copy_in_spark(spark, tasks: list[dict], up_args: dict, down_args: dict, options: SnapshotOptions) -> list[dict]:
    """A run of chunks as a Spark job of one task, one after the other; their results
    (copy.copy_chunk)."""
    # coalesced: one task, not one per core
    df = spark.createDataFrame([(json.dumps(t),) for t in tasks], "task string").coalesce(1)
    batch_rows, batch_bytes = options.batch_rows, options.batch_bytes
    rows = df.mapInArrow(lambda it: copy_partition(it, up_args, down_args, batch_rows, batch_bytes),
                         "result string").collect()
    return [json.loads(r["result"]) for r in rows]


class _ThreadCopies(PerThread):
    """copy_in_spark's work in the calling thread: each thread keeps its pair of sessions for
    the chunks it copies (a Python worker keeps them for its task's)."""

    def __init__(self, up_args: dict, down_args: dict, options: SnapshotOptions):
        super().__init__(
            lambda: (reading_session(up_args), RowWriter(connection.connect(down_args), options.batch_rows)),
            lambda pair: (pair[0].close(), pair[1].conn.close()))
        self.batch_bytes = options.batch_bytes

    def __call__(self, task: dict) -> dict:
        return copy_chunk(*self.get(), task, self.batch_bytes)


def _copy_failed(changefeed_id: str, table: str, e: Exception, what: str = "snapshot copy",
                 code=SNAPSHOT_FAILED, then: str | None = None) -> CdcflowError:
    """A chunk's failure as `what` tells it; `then`: what follows fixing its cause (by default,
    create --snapshot again)."""
    sink = SinkError.parse(str(e))
    why = f"{sink['what']}: {sink['text']}" if sink else str(e).strip().splitlines()[0][:500]
    cause = "widen or change the downstream column so it holds the upstream's value" \
        if sink and sink.get("value_error") else "fix the cause"
    then = then or (f", then run `cdcflow changefeed create -c {changefeed_id} … --snapshot` again: the chunks "
                    "done are not copied again")
    return CdcflowError(f"{what} failed in a chunk of {table}: {why}", changefeed=changefeed_id, code=code,
                        hint=cause + then)
