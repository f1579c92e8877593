"""The row sink (as tiflow's dmlsink): one segment's row changes written downstream.

`write_segment` finds each table's key (the tracked schema's, the downstream catalogue's for a
table the tracker does not know), then writes: keyed tables keyed (by the texts pull wrote where
pull keyed the segment's changes by the same key: stages.pull_keys), compacted to one final image
per key and spread over the writers by the same Arrow functions (sink.compaction): from this
process for a small segment already here; in one Spark task for a segment within the same bounds
that Spark writes (the same two functions as this process's, in the task); after Spark's shuffle,
in a task per writer, for a larger one.  Tables without a
valid key (force-replicate) whole rows in commit order; the tables a row-changing foreign key
binds in commit order in one downstream transaction (sink.foreign_keys).  A refused row leaves
as a CdcflowError placed in the segment (core.errors.classify).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache, partial

import pyarrow as pa
import pyarrow.compute as pc

from cdcflow.core.arrow_rows import spark_schema
from cdcflow.core.errors import TABLE_NOT_EXISTS, CdcflowError, classify
from cdcflow.core.sink_params import SinkOptions
from cdcflow.ddl.tracker import lookup_key
from cdcflow.sink import statement_timeline
from cdcflow.sink.collation_key import KeyFolder
from cdcflow.sink.compaction import (KEYED_ARROW, as_sources, compacted_order, compacted_partition, finals_of,
                                     images_of, keyed_batches, keyed_changes, keyed_sources, spread_compacted,
                                     with_images)
from cdcflow.sink.ddl_sink import Ddl
from cdcflow.sink.downstream_tables import (
    SEQUENCE,
    SYSTEM_VERSIONED,
    catalogue_key,
    key_indexed,
    own_kinds,
    table_columns,
    table_exists,
    triggered,
)
from cdcflow.sink.foreign_keys import CascadeGroup, ForeignKeys, applied_up_to, write_group
from cdcflow.sink.partitions import (COUNTS_SCHEMA, SOURCED, TABLE_RUN, Sessions, apply_partition,
                                     apply_partition_txns)
from cdcflow.sink.row_writer import apply_ordered
from cdcflow.sink.table_keys import keyed_by_pull, table_key, tangled_by_pull

# the columns of a row event the writers read
ROW_COLUMNS = ("schema", "table", "commit_ts", "seq", "op", "before", "after")
KEY_TEXTS = ("before_key", "after_key")  # the texts of its keys pull wrote (stages.pull_keys)
# what a part's rows are read with when this process writes them (PartRows): the writers' columns,
# the key texts, and whether the upstream ran a change with foreign_key_checks off (the tables
# foreign keys bind)
PART_COLUMNS = (*ROW_COLUMNS, *KEY_TEXTS, "fk_checks_off")
# what a segment's compacted changes are spread over the writers by (Spark partitions, the driver's threads)
SPREAD_BY = ("schema", "table", "part")
# Changes written in commit order (keyless tables, tables foreign keys bind) reach this process
# a Spark partition at a time, which the JVM holds whole: a segment's are cut into range
# partitions of about this many rows, so a huge transaction never sits in the heap at once.
ORDERED_ROWS = 100_000


@dataclass
class Written:
    """What one segment's rows did downstream (stages.contracts.ApplyResult sums them)."""

    rows: int = 0
    statements: int = 0
    workers: int | None = None  # Spark partitions (or threads) that wrote keyed rows; None: none did
    rows_held: int = 0  # the most row images one writer held at once
    upsert_fallbacks: int = 0
    skipped_tables: list[str] = field(default_factory=list)  # no valid key, force-replicate off
    keyed_by_pull: int = 0  # keyed tables Spark keyed by pull's texts (contracts.ApplyResult)
    keyed_here: int = 0  # keyed tables keyed in Python (a small segment's in this process)
    in_process: bool = False  # its rows were held here and written from this process


@dataclass(frozen=True)
class WriterInput:
    """A part's rows as the writer threads take them, made ahead of its write where every table
    of it is keyed by pull's texts (_writer_shares): keyed, compacted and spread over the writer
    threads, `parts` (each thread's share, or what makes it: stages.read_ahead makes them, and
    hands them over as the Futures of their making); made for the tables `tables`
    ("schema.table"), the tangled keys `tangles` and the rows above `lo`, and used only where the
    write finds the same."""

    tables: frozenset[str]
    tangles: dict
    lo: int
    parts: list


@dataclass
class PartRows:
    """The rows of a part written from this process (a small segment whole, or a slice of one),
    read by stages.read_ahead, and what RowSink.writer_input_ahead made of them (None: nothing)."""

    rows: pa.Table
    ahead: WriterInput | None = None


@dataclass
class _Plan:
    """A segment's tables by how they are written: keyed (with the collations of the key's string
    columns), unkeyed in commit order, or bound by a foreign key; and the columns the downstream
    computes."""

    keys: dict[str, list[str]] = field(default_factory=dict)
    names: dict[str, tuple[str, str]] = field(default_factory=dict)  # "schema.table": (schema, table)
    collations: dict[str, dict] = field(default_factory=dict)
    unkeyed: list[tuple[str, str]] = field(default_factory=list)
    bound: dict[str, list[str] | None] = field(default_factory=dict)
    group: CascadeGroup = field(default_factory=CascadeGroup)
    generated: dict[str, frozenset[str]] = field(default_factory=dict)
    stored: dict[str, frozenset[str]] = field(default_factory=dict)
    # of the keyed tables written compacted: those whose downstream has a unique index on the key
    # (key_indexed), and in safe mode those written in place (RowSink._in_place)
    indexed: frozenset[str] = frozenset()
    in_place: dict[str, frozenset[str]] | None = None


class RowSink:
    """The rows of one apply, segment by segment, on `conn` (the session the catalogue is read
    and commit-order changes are written on) and `sink` (the parameters each Spark partition
    connects with)."""

    def __init__(self, spark, conn, sink: dict, options: SinkOptions, keys_known: dict, *, changefeed_id: str,
                 force_replicate: bool, marker: str, safe: bool, replay_until: int, event: Callable[..., None],
                 key_spans: dict | None = None, tidb: bool = False):
        self.spark, self.conn, self.sink, self.options = spark, conn, sink, options
        self.keys_known = keys_known  # {(schema, table): the tracked key's ranges over the window}
        self.changefeed_id, self.force_replicate, self.event = changefeed_id, force_replicate, event
        self.marker = marker  # this changefeed's row in the foreign-key marker table
        self.safe, self.replay_until = safe, replay_until
        self.foreign_keys = ForeignKeys(conn)
        # the spans of the key texts pull wrote, by table (stages.pull_keys.by_table); None: it wrote none
        self.key_spans = key_spans
        self.tidb = tidb  # a TiDB downstream: sequences take their state by SETVAL (sink.sequence_state)
        self.sessions = Sessions(sink)  # the writers' sessions, kept between the small segments written here
        # per table, whether the downstream fires triggers on it: asked once an apply, at its
        # first segment with rows of the table (no DDL a changefeed replicates makes one; a
        # trigger the downstream's own users make meanwhile counts from the next apply)
        self.fired: dict[str, bool] = {}

    def close(self) -> None:
        self.sessions.close()

    def open_sessions(self) -> None:
        """The writers' sessions opened now, beside what apply does before its first write (its
        first rows made ready, the catalogue asked): they were opened by the writers' first
        statements, after both (15-25 ms of the bench's apply on cores apart)."""
        self.sessions.open_ahead(max(1, self.options.worker_count))

    def writer_input_ahead(self, seg, part, rows: pa.Table) -> WriterInput | None:
        """What _write_keyed makes of the rows of a part of a segment (the segment whole, or a
        slice of it: stages.contracts.Slice) written from this process when every table of the
        segment is keyed by pull's texts, made while an earlier part is written
        (stages.read_ahead: a thread of its own; Arrow's work, beside the writers' waits on the
        downstream).  None where the write would not take it: transactions kept whole, no key
        texts."""
        if self.options.transaction_atomicity == "table" or self.key_spans is None \
                or not set(KEY_TEXTS) <= set(rows.column_names):
            return None
        tables = [tuple(t) for t in seg.tables]
        names = [f"{s}.{t}" for s, t in tables]
        try:
            tangles = _tangles(self.key_spans, tables, (part.lo, part.hi))
            shares = _writer_shares(rows, {n: None for n in names}, set(names), None,
                                    (SPREAD_BY, None, tangles), max(1, self.options.worker_count))
        except Exception:  # noqa: BLE001 - the write makes its own, and reports what fails in it
            return None
        return WriterInput(frozenset(names), tangles, part.lo, shares)

    def ddl_ran(self, ddl: Ddl) -> None:
        """A DDL ran downstream: the foreign keys are read again if it may have changed them."""
        self.foreign_keys.ddl_ran(ddl.type, ddl.replacement or ddl.statements or [ddl.query], ddl.tables)

    def write_segment(self, rows_df, tables: list[tuple[str, str]], lo: int, hi: int, count: int,
                      held: PartRows | Callable[[], PartRows | None] | None = None, one_task: bool = False) -> Written:
        """Write the changes to `tables` committed in (lo, hi] (at most `count` of them) of
        `rows_df`, the window's row events: from this process where `held` holds the segment's
        rows (a small segment), else in Spark tasks: one where `one_task` (a segment within the
        process's bounds: stages.engine.Engine.part_fits), a task per writer after a shuffle.
        `held` may be what gives them (stages.read_ahead: rows still being made ready), asked
        once the downstream's catalogue has answered what the write needs of it."""
        # the segment's rows as a Spark frame, built only when a path reads them: its expression
        # costs a few py4j calls, most of the time of a small segment written from `held`
        rows = cache(lambda: _segment_frame(rows_df, lo, hi))
        try:
            return self._write(rows, tables, (lo, hi, count), held, one_task)
        except Exception as e:  # noqa: BLE001 - a row statement the downstream refused, placed in the segment
            err = classify(e, "apply", self.changefeed_id, rows=(lo, hi))
            if err is e:
                raise
            raise err from e

    def _write(self, rows: Callable, tables, span: tuple[int, int, int],
               held: PartRows | Callable[[], PartRows | None] | None, one_task: bool) -> Written:
        """`rows()`: the segment's rows as a Spark frame; `span`: (lo, hi, count)."""
        lo, hi, count = span
        written = Written()
        # the catalogue's questions first: they go while the first segment's rows are made ready
        # (stages.read_ahead), which held the first statement up by as long (20-75 ms on the bench)
        plan = self._plan(tables, hi, written)
        held = held() if callable(held) else held
        if held is not None and held.rows.num_rows and pc.min(held.rows["commit_ts"]).as_py() <= lo:
            # the checkpoint inside the segment (an earlier attempt wrote part of it); otherwise
            # every row is above it, and a filter would only copy the images
            held = PartRows(held.rows.filter(pc.greater(held.rows["commit_ts"], lo)))
        written.in_process, one_task = held is not None, one_task and held is None
        if plan.keys:
            self._write_keyed(rows, plan, len(tables), (held, one_task), written, (lo, hi))
        for s, t in plan.unkeyed:  # force-replicate: whole rows matched, in commit order
            changes = _in_commit_order(self.spark, rows, held, count, [f"{s}.{t}"], ("op", "before", "after"))
            with statement_timeline.timed():
                written.rows += apply_ordered(self.conn, s, t, changes, plan.generated.get(f"{s}.{t}", frozenset()),
                                              self.options.cache_prep_stmts)
        if plan.bound:
            with statement_timeline.timed():
                written.rows += self._write_bound(rows, held, plan, hi, count)
        return written

    def _plan(self, tables: list[tuple[str, str]], hi: int, written: Written) -> _Plan:
        plan = _Plan()
        for t in tables:
            name = f"{t[0]}.{t[1]}"
            plan.names[name] = t
            k, known, colls = _key(self.keys_known, self.conn, t, hi)
            if k:
                plan.keys[name], plan.collations[name] = k, colls
            elif not table_exists(self.conn, *t):
                raise CdcflowError(
                    f"table {name} does not exist downstream", code=TABLE_NOT_EXISTS,
                    hint="the downstream must hold every replicated table as of the start-ts: load a snapshot, "
                         "or exclude the table with a filter rule")
            elif known or self.force_replicate:
                # filter judged the rows of a table the tracker knows, and kept these (force-replicate)
                plan.unkeyed.append(t)
            else:
                # The tracker does not know the table, so its key comes from the downstream's catalogue,
                # which filter cannot see (and which the DDLs run before this segment may change).
                self.event("rows skipped", table=name,
                           why="the tracked schema does not know the table, the downstream's has no valid index "
                               "(primary key or NOT NULL unique key), and force-replicate is false")
                written.skipped_tables.append(name)
        # the columns the downstream computes and its others, as it has them now: the DDLs before
        # this segment ran
        plan.generated, plan.stored = table_columns(self.conn, tables)
        # tables bound by a foreign key that changes rows: in commit order, apart (sink.foreign_keys)
        plan.group = self.foreign_keys.group(tables)
        # MariaDB's system-versioned tables and sequences: in commit order too (downstream_tables.own_kinds)
        own = own_kinds(self.conn, tables)
        if own:
            plan.group = CascadeGroup(plan.group.tables | set(own), plan.group.parents,
                                      frozenset(t for t, kind in own.items() if kind == SYSTEM_VERSIONED),
                                      frozenset(t for t, kind in own.items() if kind == SEQUENCE and self.tidb))
        plan.bound = {t: plan.keys.get(t) for t in plan.group.tables
                      if t in plan.keys or tuple(t.split(".", 1)) in plan.unkeyed}
        if plan.bound:
            plan.keys = {t: k for t, k in plan.keys.items() if t not in plan.bound}
            plan.unkeyed = [t for t in plan.unkeyed if f"{t[0]}.{t[1]}" not in plan.bound]
        if plan.keys and self.options.transaction_atomicity != "table":
            # asked here with the rest, before the segment's rows: at apply's first segment the
            # rows are still being made ready then (asked after them, the first statement waited
            # 5-7 ms more for these two answers)
            plan.indexed = key_indexed(self.conn, plan.keys)
            plan.in_place = self._in_place(plan.indexed, plan) if self.safe else None
        return plan

    def _write_keyed(self, rows: Callable, plan: _Plan, tables: int, place: tuple[PartRows | None, bool],
                     written: Written, span: tuple[int, int]) -> None:
        """`place`: (the rows held here, or None; whether Spark writes them in one task)."""
        held, one_task = place
        keys, generated, sink, batch = plan.keys, plan.generated, self.sink, self.options.max_txn_row
        prepared = self.options.cache_prep_stmts
        if self.options.transaction_atomicity == "table":
            # a table's transactions stay whole and in commit order: one partition per table;
            # rows are REPLACEd (each transaction is atomic downstream, so a replay converges);
            # each transaction compacts in the partition body (partitions.apply_partition_txns)
            by, order = ("schema", "table"), ("schema", "table", "commit_ts", "part", "key", "seq", "sub")
            passes = [lambda it, kept=None: apply_partition_txns(it, sink, batch, keys, generated, kept, prepared)]
        else:
            # compacted per key, then in compaction.DELETES_FIRST order (order None)
            by, order = SPREAD_BY, None
            indexed, in_place = plan.indexed, plan.in_place
            passes = [lambda it, kept=None, images=None, ph=ph: apply_partition(it, sink, batch, keys, ph, generated,
                                                                                indexed, kept, prepared, in_place,
                                                                                images)
                      for ph in ([None] if self.safe else ["existing", "new"])]
        folder, workers = KeyFolder(plan.collations, sink), max(1, self.options.worker_count)
        pull_keyed = {t for t in keys if keyed_by_pull(self.key_spans, plan.names[t], *span, keys[t],
                                                   plan.collations[t])}
        if held is not None and not set(KEY_TEXTS) <= set(held.rows.column_names):
            pull_keyed = set()
        # the keys pull found sharing another unique key's value, to one part of their table
        # (sink.conflict_keys); a table's transactions are one partition already
        tangles = _tangles(self.key_spans, [plan.names[t] for t in pull_keyed], span) if "part" in by else {}
        if held is not None:
            ahead = held.ahead
            if ahead is not None and ahead.tables == set(keys) == pull_keyed and ahead.tangles == tangles \
                    and ahead.lo == span[0]:
                parts = ahead.parts  # what the write would make of these rows, made (or being made) already
            else:
                if ahead is not None:
                    for share in ahead.parts:
                        if isinstance(share, Future):
                            share.cancel()  # not made yet: not wanted
                parts = _writer_input_in_process(held.rows, keys, pull_keyed, folder, (by, order, tangles),
                                                 workers)
            counts = _write_parts(parts, passes, self.sessions)
        elif one_task:
            counts = _write_in_one_task(_only(self.spark, rows(), list(keys), tables), keys, pull_keyed, folder,
                                        (by, order, tangles), workers, (passes, self.sink))
        else:
            counts = _write_in_spark(self.spark, rows(), keys, pull_keyed, tables, folder, (by, order, tangles),
                                     passes, workers)
        written.keyed_by_pull += len(pull_keyed)
        written.keyed_here += len(keys) - len(pull_keyed)
        written.rows += sum(r["rows"] for r in counts)
        written.statements += sum(r["statements"] for r in counts)
        written.workers = len(counts) // len(passes)
        written.rows_held = max([0, *(r["held"] for r in counts)])
        written.upsert_fallbacks += sum(r["fallbacks"] for r in counts)

    def _in_place(self, indexed: frozenset[str], plan: _Plan) -> dict[str, frozenset[str]]:
        """In safe mode, the tables whose rows may be written with UPSERT instead of REPLACE, each
        with the downstream's columns a row must set for it (row_writer.StreamingWriter): an
        index finds the key's row, and no trigger fires on the table.  An UPSERT that sets every
        such column ends as the REPLACE would, and rewrites a row the downstream holds where the
        REPLACE deletes and inserts it (on a table with a second unique key: half the
        downstream's CPU for such a row, docs/performance.md)."""
        candidates = [t for t in indexed if t in plan.stored]
        unasked = [plan.names[t] for t in candidates if t not in self.fired]
        if unasked:
            fired = triggered(self.conn, unasked)
            self.fired.update((f"{s}.{t}", f"{s}.{t}" in fired) for s, t in unasked)
        return {name: plan.stored[name] for name in candidates if not self.fired[name]}

    def _write_bound(self, rows: Callable, held: PartRows | None, plan: _Plan, hi: int, count: int) -> int:
        """The segment's changes to the tables its foreign keys bind: in commit order across them, in
        one downstream transaction, after what the marker says is there already (a marker at or below
        a backfill's replay_until is the earlier pass's: those rows are written again)."""
        done = applied_up_to(self.conn, self.marker)
        if done >= hi and done > self.replay_until:
            return 0
        changes = _in_commit_order(self.spark, rows, held, count, sorted(plan.bound),
                                   ("schema", "table", "op", "before", "after", "fk_checks_off"),
                                   after=done if done > self.replay_until else None)
        return write_group(self.conn, changes, plan.bound, plan.generated, plan.group, self.safe, self.marker, hi,
                           self.options.cache_prep_stmts)


def _key(keys: dict, conn, table: tuple[str, str], ts: int) -> tuple[list[str] | None, bool, dict]:
    """(the valid key, whether the tracked schema knows the table, the collations of the key's
    string columns): the key as the tracked schema has it for rows up to `ts` (the segment's
    barrier: no DDL changes a replicated table's key inside a segment); table_key resolves it."""
    found = lookup_key(keys[table], ts) if table in keys else None
    return table_key(found, lambda t: catalogue_key(conn, *t), table)


def _segment_frame(rows_df, lo: int, hi: int):
    """The rows of `rows_df` committed in (lo, hi], as a Spark frame."""
    from pyspark.sql import functions as F  # lazy: pyspark is not loaded on the Spark-free paths (a segment held here)

    return rows_df.where((F.col("commit_ts") > lo) & (F.col("commit_ts") <= hi))


def _in_commit_order(spark, rows: Callable, held: PartRows | None, count: int, names: list[str], columns: tuple,
                     after: int | None = None) -> Iterator[dict]:
    """The segment's changes (at most `count`) to the tables `names` ("schema.table") committed
    above `after` (None: all of them), `columns` of each, in commit order: sorted in Arrow from the
    rows held here (a small segment), else from Spark's range partitions of about ORDERED_ROWS
    changes each (`rows()`, the segment's frame; toLocalIterator brings one partition at a time)."""
    from pyspark.sql import functions as F  # lazy: pyspark is not loaded on the Spark-free paths

    if held is not None:
        local = held.rows
        mask = pc.is_in(pc.binary_join_element_wise(local["schema"], local["table"], "."), pa.array(names, pa.string()))
        if after is not None:
            mask = pc.and_(mask, pc.greater(local["commit_ts"], after))
        ordered = local.filter(mask).sort_by([("commit_ts", "ascending"), ("seq", "ascending")])
        return (row for batch in ordered.select(list(columns)).to_batches() for row in batch.to_pylist())
    frame = _only(spark, rows(), names, 0)  # 0: always narrowed to `names`, never the whole segment
    if after is not None:
        frame = frame.where(F.col("commit_ts") > after)
    parts = max(1, -(-count // ORDERED_ROWS))
    ordered = frame.repartitionByRange(parts, "commit_ts", "seq").sortWithinPartitions("commit_ts", "seq")
    return (r.asDict() for r in ordered.select(*columns).toLocalIterator())


def _write_in_spark(spark, rows_df, keys: dict, pull_keyed: set[str], tables: int, folder: KeyFolder, layout: tuple,
                    passes, workers: int) -> list[dict]:
    """A segment's keyed rows written by `workers` Spark partitions: the counts of each pass's.
    The same steps as _writer_input_in_process's, in Spark tasks: the tables of `pull_keyed`
    keyed by the texts pull wrote (compaction.keyed_batches), the others by keyed_changes;
    Spark's shuffle by `by` puts every change of a part in one partition, which
    compaction.compacted_partition compacts (or, with `order`, sorts: each transaction compacts
    in its partition body).  `layout`: the
    columns the rows are partitioned by and sorted by, and the keys pull found tangled, per
    table (sink.conflict_keys)."""
    from pyspark import StorageLevel  # lazy: pyspark is not loaded on the Spark-free paths

    by, order, tangles = layout
    keyed = spark_schema(KEYED_ARROW)
    parts = []
    if pull_keyed:
        parts.append(_only(spark, rows_df, pull_keyed, tables).select(*ROW_COLUMNS, *KEY_TEXTS)
                     .mapInArrow(lambda it: keyed_batches(it, tangles), keyed))
    if len(pull_keyed) < len(keys):
        rest = [t for t in keys if t not in pull_keyed]
        parts.append(_only(spark, rows_df, rest, tables).select(*ROW_COLUMNS)
                     .mapInArrow(lambda it: keyed_changes(it, keys, folder), keyed))
    changes = parts[0] if len(parts) == 1 else parts[0].unionByName(parts[1])
    spread = changes.repartition(workers, *by)
    ordered = spread.mapInArrow(compacted_partition, keyed) if order is None else spread.sortWithinPartitions(*order)
    if len(passes) > 1:
        # on local disk, not in the JVM heap: a segment may hold a huge transaction
        ordered = ordered.persist(StorageLevel.DISK_ONLY)
    counts = [r.asDict() for body in passes for r in ordered.mapInArrow(body, COUNTS_SCHEMA).collect()]
    if len(passes) > 1:
        ordered.unpersist()
    return counts


def _only(spark, rows_df, names, tables: int):
    """The rows of the tables `names` ("schema.table") of the segment's `tables` (a count)."""
    from pyspark.sql import functions as F  # lazy: pyspark is not loaded on the Spark-free paths

    if len(names) == tables:
        return rows_df
    wanted = spark.createDataFrame([n.split(".", 1) for n in names], "schema string, table string")
    return rows_df.join(F.broadcast(wanted), ["schema", "table"], "left_semi")


def _tangles(spans: dict | None, tables: list[tuple[str, str]], span: tuple[int, int]) -> dict:
    """The keys pull found sharing another unique key's value (sink.conflict_keys), per table of
    `tables` that has any: each goes to one part of its table (compaction.keyed_arrow)."""
    found = {t: tangled_by_pull(spans, t, *span) for t in tables}
    return {t: k for t, k in found.items() if k is None or k}


def _writer_input_in_process(local: pa.Table, keys: dict, pull_keyed: set[str], folder: KeyFolder | None,
                             layout: tuple, workers: int) -> list[pa.Table]:
    """A small segment's keyed rows (already in this process) made ready to be written from here,
    without a Spark job: each writer's share (_writer_shares) made, one after the other."""
    return [make() for make in _writer_shares(local, keys, pull_keyed, folder, layout, workers)]


def _writer_shares(local: pa.Table, keys: dict, pull_keyed: set[str], folder: KeyFolder | None,
                   layout: tuple, workers: int) -> list[Callable[[], pa.Table]]:
    """A small segment's rows, keyed by pull's texts for the tables of `pull_keyed`
    (compaction.keyed_sources), by keyed_changes for the others, and spread over at most `workers`
    writer threads by the columns Spark partitions them by: what makes each thread's share,
    compacted and sorted as a Spark partition is, one for each thread that has rows.  A share is
    made on its own, so that its writer can start before the others' are made: with the part
    made whole, the downstream waited for all of it (60-80 ms of the bench's bulk window, at
    apply's start, when no part is made ahead).  Where every table is keyed by pull's texts and
    none has tangled keys (the usual part), one compiled pass keys and spreads the changes
    (compaction.spread_compacted); these Arrow steps are its reference."""
    by, order, tangles = layout
    rest = [t for t in keys if t not in pull_keyed]
    if order is None and not tangles and not rest and by[-1] == "part":
        spread = spread_compacted(local, workers, pull_keyed, SHARED)
        if spread is not None:
            images = images_of(local)
            return [partial(lambda make: Share(make(), images), make) for _w, make in spread]
    names = pc.binary_join_element_wise(local["schema"], local["table"], ".")
    # keyed without their images (compaction.KEYED_SOURCES): a share takes those of its final
    # rows alone, once (carried through the keying, every image was copied twice more, and the
    # memory each copy took fresh was most of the time before a part's first share was ready)
    tables, images = [], []
    if pull_keyed:
        mine = _rows_of(local, names, pull_keyed)
        tables.append(keyed_sources(mine, tangles))
        images += images_of(mine).chunks
    if rest:
        mine = _rows_of(local, names, set(rest)).select(list(ROW_COLUMNS))
        keyed = pa.Table.from_batches(list(keyed_changes(iter(mine.to_batches()), keys, folder)), schema=KEYED_ARROW)
        keyed, theirs = as_sources(keyed, sum(len(c) for c in images))
        tables.append(keyed)
        images += theirs.chunks
    changes, images = pa.concat_tables(tables), pa.chunked_array(images, pa.string())
    if not changes.num_rows:
        return []
    # each distinct value of `by` to a thread, by the order in which its last column's values first
    # appear: rows alike in every process spread alike (a launcher's results compare), in Arrow,
    # not a Python call per row (0.4 s of the driver's time on a 300,000-row bulk segment)
    codes = pc.dictionary_encode(changes[by[-1]], null_encoding="encode").combine_chunks().indices
    spread = pc.remainder(codes.cast(pa.int64()), workers)

    def share(w: int) -> pa.Table | Share:
        # its rows in the order the whole part's were: compacted (DELETES_FIRST), or by `order`
        rows = changes.filter(pc.equal(spread, w)).combine_chunks()
        if order is None:
            return Share(finals_of(rows, compacted_order(rows), columns=SHARED), images)
        return with_images(rows.sort_by([(c, "ascending") for c in order]), images)

    return [partial(share, w) for w in pc.unique(spread).sort().to_pylist()]


def _rows_of(local: pa.Table, names, tables: set[str]) -> pa.Table:
    """The rows of `local` of `tables` (names: each row's "schema.table"); all of them, not a copy,
    where every row is of one of them (the usual segment)."""
    mask = pc.is_in(names, pa.array(sorted(tables), pa.string()))
    return local if pc.all(mask).as_py() else local.filter(mask)


# the rows a writer thread takes from its part at a time: the partition body makes Python values of
# a batch's images at once, holding the interpreter, so a part given whole (12,000 rows a writer on
# the bench) held each writer's first statement up until all of them were made, and the four
# writers' first statements went out one after the other, 2-3 ms apart, at every segment's start
WRITER_BATCH = 2048


def _write_parts(parts: list, passes, sessions: Sessions) -> list[dict]:
    """`parts` (the threads' shares: tables, the Futures of their making, or what makes them)
    written by a thread each, with the same partition bodies as Spark's tasks, on the
    downstream sessions kept in `sessions`: the counts of each pass's."""
    return [r for b in _written_parts(parts, passes, sessions) for r in b.to_pylist()]


# a writer's share's columns (Share.rows): what its writer reads (partitions.apply_partition).  Taken
# whole, the keys and parts no writer reads were a third of the time to take a share's finals
SHARED = TABLE_RUN + SOURCED


@dataclass(frozen=True)
class Share:
    """A writer's compacted rows whose images stay where the part holds them: `rows` (the columns of
    KEYED_SOURCES its writer reads, SHARED, each row with the kind it ends with) number theirs in
    `images` (compaction.images_of).  The
    writer makes each row's text straight from them (partitions.apply_partition): a share of
    images taken into arrays of their own was a copy of the part's every final image into memory
    taken fresh, which the writer then copied again into its strings."""

    rows: pa.Table
    images: pa.ChunkedArray

    def whole(self) -> pa.Table:
        """The share with its images taken, as a Spark task's writer reads its rows."""
        return with_images(self.rows, self.images)


def _taken(share: pa.Table | Share | Future) -> pa.Table | Share:
    """A writer's share, waited for where another thread is making it (stages.read_ahead)."""
    return share.result() if isinstance(share, Future) else share


def _written_by(body, share: pa.Table | Share, sessions: Sessions) -> list[pa.RecordBatch]:
    """A partition body's counts for one writer's share (its images where the share holds them)."""
    if isinstance(share, Share):
        return list(body(iter(share.rows.to_batches(WRITER_BATCH)), sessions, share.images))
    return list(body(iter(share.to_batches(WRITER_BATCH)), sessions))


def _written_parts(parts: list, passes, sessions: Sessions) -> list[pa.RecordBatch]:
    """_write_parts's counts as the partition bodies return them (COUNTS_SCHEMA batches)."""
    counts = []
    if not parts:
        return counts
    # a share nothing made yet (the rows made ahead, not by stages.read_ahead) is made once, here
    parts = [p() if callable(p) else p for p in parts]
    with ThreadPoolExecutor(len(parts)) as pool:
        for body in passes:  # a pass ends in every part before the next begins, as a Spark job does
            # a session per part, opened at once before the threads take them: as many as the
            # parts however the threads are scheduled (a part with none of the pass's kinds ends
            # at once, and a thread that started late took its session instead of opening one:
            # one fewer session, which a busy machine made a test's count of them miss)
            sessions.open_ahead(len(parts))
            for out in pool.map(lambda part, body=body: _written_by(body, _taken(part), sessions), parts):
                counts += out
    return counts


def _write_in_one_task(rows_df, keys: dict, pull_keyed: set[str], folder: KeyFolder, layout: tuple, workers: int,
                       writes: tuple) -> list[dict]:
    """A segment's keyed rows (`rows_df`, of the tables of `keys` only) written by one Spark task
    as this process writes a segment it holds: the same two steps (_writer_input_in_process,
    _write_parts), its `workers` writer threads in the task.  One job and no shuffle for a segment
    within the process's bounds (the task holds it, as this process would): a shuffle and two
    jobs cost about twice the segment's writing on a small segment (docs/performance.md).
    `writes`: (the passes, the sink's connection parameters)."""
    columns = (*ROW_COLUMNS, *KEY_TEXTS) if pull_keyed else ROW_COLUMNS

    def task(batches):
        yield from _segment_in_task(list(batches), keys, pull_keyed, folder, layout, workers, writes)

    return [r.asDict() for r in rows_df.select(*columns).coalesce(1).mapInArrow(task, COUNTS_SCHEMA).collect()]


def _segment_in_task(batches: list[pa.RecordBatch], keys: dict, pull_keyed: set[str], folder: KeyFolder,
                     layout: tuple, workers: int, writes: tuple) -> list[pa.RecordBatch]:
    """The body of _write_in_one_task's task: the segment's rows keyed, compacted, spread and
    written on sessions of its own, closed at its end."""
    if not batches:
        return []
    passes, sink = writes
    parts = _writer_input_in_process(pa.Table.from_batches(batches), keys, pull_keyed, folder, layout, workers)
    sessions = Sessions(sink)
    try:
        return _written_parts(parts, passes, sessions)
    finally:
        sessions.close()
