"""The window's events as the Spark stages read them.

filter drops transactions, tables and rows; where its row rules drop no row event it writes no
copy of them (a copy is a full rewrite of the window), and barrier and apply read the row events
as pull wrote them, without the same transactions filter read them without.

What a window drops is one table (`dropped`), applied to a Spark DataFrame (`window_events`)
and to pyarrow's scan of the same files in this process (`kept_rows_arrow`), so the two reads
cannot disagree on a rule.
"""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from cdcflow.core.arrow_rows import spark_schema
from cdcflow.filter.row_rules import RowRules
from cdcflow.filter.txn import ignored_transactions
from cdcflow.stages import contracts
from cdcflow.stages.cycle import Cycle
from cdcflow.store.events import EVENT_SPARK_SCHEMA, FIELDS

if TYPE_CHECKING:  # the scanners' type only: the module loads pandas (store.events.RunFolder.scanner)
    import pyarrow.dataset as pads

COPY = "filtered"  # the folder of filter's copy, when it made one
# The stages' scans in their process read a batch while the step works on the one before it, no
# further: pyarrow's defaults (16 batches ahead in each of 4 files) held up to 64 batches of
# images at once, most of barrier's 1.5 GiB on a window of 4.5M changes, whatever the engine's bounds.
READAHEAD = {"batch_readahead": 1, "fragment_readahead": 1}


def read_in_process(cycle: Cycle, window: contracts.Window) -> bool:
    """Whether the stages read the window in their own process with pyarrow (filter's DDLs and
    samples, barrier's counts), a batch at a time, rather than in Spark jobs, whose tasks a
    cluster spreads: the cycle's engine decides (stages.engine).  On the bench's oltp window
    (300,000 changes) each such job took seconds, nearly all of it planning and code generation
    (docs/performance.md)."""
    return cycle.engine.window_in_process(window.pulled.events)


@dataclass(frozen=True)
class Dropped:
    """Events a window drops: those whose `column` holds one of `values`; with `seqs` (first,
    after), only those among them whose seq is in [first, after)."""

    column: str
    values: tuple
    seqs: tuple[int, int] | None = None


def dropped(window: contracts.Window, cfg) -> list[Dropped]:
    """The aborted transactions (ROLLBACK in the binlog: a transaction that also changed a
    non-transactional table, whose rows the binlog holds apart), the rows a ROLLBACK TO
    SAVEPOINT undid, and the transactions the config says to skip (ignore-txn-*)."""
    out = [Dropped(col, values) for col, values in ignored_transactions(cfg)]
    if window.pulled.aborted_ts:
        out.append(Dropped("commit_ts", tuple(window.pulled.aborted_ts)))
    out += [Dropped("commit_ts", (ts,), (first, after)) for ts, first, after in window.pulled.rolled_back]
    return out


def _spark_hit(d: Dropped):
    from pyspark.sql import functions as F  # lazy: the stages load without Spark (pull, an idle cycle)

    hit = F.col(d.column).isNotNull() & F.col(d.column).isin(list(d.values))
    return hit if d.seqs is None else hit & F.col("seq").between(d.seqs[0], d.seqs[1] - 1)


def _arrow_hit(d: Dropped) -> pc.Expression:
    hit = pc.field(d.column).isin(d.values)  # Arrow's is_in matches a null to no value, as isNotNull above
    return hit if d.seqs is None else hit & (pc.field("seq") >= d.seqs[0]) & (pc.field("seq") < d.seqs[1])


def window_events(spark, cycle: Cycle, window: contracts.Window):
    """Pull's events without those the window drops (`dropped`)."""
    raw = spark.read.schema(EVENT_SPARK_SCHEMA).parquet(cycle.folder.path("raw"))
    hits = [_spark_hit(d) for d in dropped(window, cycle.config)]
    return raw.where(~functools.reduce(operator.or_, hits)) if hits else raw


def row_events(events):
    from pyspark.sql import functions as F  # lazy: the stages load without Spark (pull, an idle cycle)

    return events.where(F.col("op") != "ddl")


@dataclass(frozen=True)
class Wanted:
    """Which of the window's events a read wants: its DDL events or its row events, with
    `stamps` only those of these commit ts.  One declaration, read as an Arrow filter here and a
    Spark predicate there (which Parquet's statistics serve in both)."""

    ddl: bool
    stamps: tuple[int, ...] | None = None

    def arrow(self) -> pc.Expression:
        where = pc.field("op") == "ddl" if self.ddl else pc.field("op") != "ddl"
        return where if self.stamps is None else where & pc.field("commit_ts").isin(list(self.stamps))

    def spark(self):
        from pyspark.sql import functions as F  # lazy: the stages load without Spark (pull, an idle cycle)

        where = F.col("op") == "ddl" if self.ddl else F.col("op") != "ddl"
        return where if self.stamps is None else where & F.col("commit_ts").isin(list(self.stamps))


ROW_EVENTS = Wanted(ddl=False)  # every row event of the window


def copy_kept(spark, cycle: Cycle, window: contracts.Window, rules: RowRules) -> bool:
    """Record the rows filter kept: the window's row events through filter's row rules
    (`rules.apply`, one function over a batch), written as filter's copy; no copy where the rules
    drop nothing (barrier and apply then read pull's events).  Over pyarrow's scan in this process,
    a batch at a time, where the cycle's engine reads the window here (no Spark job, and in the
    CLI's cycle no JVM: spark.lazy), else inside Spark tasks (mapInArrow) whose partitions Spark
    writes.  Returns whether a copy was kept: here, none where the rules dropped no row after all."""
    cycle.folder.remove_folder(COPY)  # an earlier attempt's, maybe Spark's in several files
    copied = not rules.drops_nothing()
    if copied and read_in_process(cycle, window):
        scan = window_events_arrow(cycle, window, ROW_EVENTS.arrow(), FIELDS)
        rows_in_out = [0, 0]

        def kept(batch):
            out = rules.apply(batch)
            rows_in_out[0] += batch.num_rows
            rows_in_out[1] += out.num_rows
            return out

        # kept in memory too, as pull's window is, for barrier and apply in this process
        cycle.folder.write_batches(COPY, (kept(b) for b in scan.to_batches()), keep=cycle.engine.window_kept())
        if rows_in_out[0] == rows_in_out[1] and not rules.periods:
            # the rules dropped no row (a value expression no row matched): pull's events serve as they are
            cycle.folder.remove_folder(COPY)
            copied = False
    elif copied:
        dml = row_events(window_events(spark, cycle, window))
        dml.mapInArrow(rules.apply_all, dml.schema).write.mode("overwrite").parquet(cycle.folder.path(COPY))
    contracts.ROWS.write(cycle.folder, contracts.KeptRows(copied=copied))
    return copied


def has_rows(cycle: Cycle, window: contracts.Window, schema: str, table: str, lo: int, hi: int | None) -> bool:
    """Whether the window holds a row event of schema.table committed in (lo, hi] (hi None: no
    end): pull's Parquet read with pyarrow by the driver, which reaches the event store in every
    place (a rare question: a value expression a table version cannot evaluate)."""
    where = ROW_EVENTS.arrow() & (pc.field("schema") == schema) & (pc.field("table") == table) \
        & (pc.field("commit_ts") > lo)
    if hi is not None:
        where &= pc.field("commit_ts") <= hi
    return window_events_arrow(cycle, window, where, ("seq",)).head(1).num_rows > 0


def window_map(spark, cycle: Cycle, window: contracts.Window, wanted: Wanted, columns, step,
               schema: pa.Schema) -> pa.Table:
    """`step` (one function from a batch of the `wanted` events of the window, `columns` of them,
    to a batch of `schema`) over the whole window, its outputs together in this process: over
    pyarrow's scan here where the cycle's engine reads the window here, else inside Spark tasks
    (mapInArrow) whose outputs come back as Arrow.  What a stage reads of a window is written once,
    as its step and what it makes of the steps' outputs."""
    if read_in_process(cycle, window):
        scan = window_events_arrow(cycle, window, wanted.arrow(), columns)
        return pa.Table.from_batches([step(b) for b in scan.to_batches()], schema=schema)
    frame = window_events(spark, cycle, window).where(wanted.spark()).select(*columns)
    return frame.mapInArrow(lambda batches: (step(b) for b in batches), spark_schema(schema)).toArrow().cast(schema)


def as_batch(table: pa.Table, schema: pa.Schema) -> pa.RecordBatch:
    """`table`'s columns of `schema` as one batch (a step's output)."""
    return pa.RecordBatch.from_arrays([table[c].combine_chunks() for c in schema.names], schema=schema)


def _copied(cycle: Cycle) -> bool:
    # a run whose filter predates this record always wrote its copy
    return not cycle.folder.exists(contracts.ROWS.name) or contracts.ROWS.read(cycle.folder).copied


def kept_rows_have_image_bytes(cycle: Cycle) -> bool:
    """Whether the files kept_rows_arrow reads (filter's copy, or pull's events) hold the images'
    sizes (store.events.IMAGE_BYTES): not a copy Spark wrote, nor a window an earlier release pulled."""
    return cycle.folder.has_image_bytes(COPY if _copied(cycle) else "raw")


def kept_rows(spark, cycle: Cycle):
    """The row events filter kept (barrier, apply)."""
    if _copied(cycle):
        # by the event schema, as pull's events: a copy written before a column existed reads it as null
        return spark.read.schema(EVENT_SPARK_SCHEMA).parquet(cycle.folder.path(COPY))
    return row_events(window_events(spark, cycle, contracts.WINDOW.read(cycle.folder)))


def window_events_arrow(cycle: Cycle, window: contracts.Window, where: pc.Expression, columns) -> pads.Scanner:
    """window_events' events that match `where`, `columns` of them, as a pyarrow scanner in this
    process: the filter runs as pull's files are scanned, a batch at a time."""
    return _scan(cycle, "raw", _undropped(cycle, window, where), columns)


def _scan(cycle: Cycle, folder: str, where: pc.Expression, columns) -> pads.Scanner:
    """A scanner of `folder`'s events that match `where`, `columns` of them, a batch ahead."""
    return cycle.folder.scanner(folder, where, columns, **READAHEAD)


def _undropped(cycle: Cycle, window: contracts.Window, where: pc.Expression) -> pc.Expression:
    """`where`, and of a table the window drops (`dropped`), no event."""
    for d in dropped(window, cycle.config):
        where &= ~_arrow_hit(d)
    return where


def kept_rows_arrow(cycle: Cycle, spans: list[tuple[int, int]] | None, columns) -> pads.Scanner:
    """kept_rows' rows with commit ts in one of `spans` ((lo, hi] each; None: the whole window),
    `columns` of them, as a pyarrow scanner in this process: the rows the driver writes itself
    and a small window's counts need no Spark job.  Over the JVM the fetch was a scan, a plan and
    Arrow's trip back, most of apply's JVM time (docs/performance.md).  Only the rows asked for
    are held."""
    return _scan(cycle, *_kept_rows_where(cycle, spans), columns)


def kept_rows_table(cycle: Cycle, spans: list[tuple[int, int]], columns) -> pa.Table:
    """kept_rows_arrow's rows as one table: where the stage's process kept the window, a kept
    batch's rows of `spans` are a slice of it, not a copy (store.events.RunFolder.kept_table)."""
    folder, where = _kept_rows_where(cycle, spans)
    if cycle.folder.kept(folder):
        return cycle.folder.kept_table(folder, where, columns, commit_ts=spans)
    return _scan(cycle, folder, where, columns).to_table()


def _kept_rows_where(cycle: Cycle, spans: list[tuple[int, int]] | None) -> tuple[str, pc.Expression]:
    """The folder kept_rows' rows are read from, and what keeps them."""
    where = pc.scalar(True) if spans is None else functools.reduce(
        operator.or_, [(pc.field("commit_ts") > lo) & (pc.field("commit_ts") <= hi) for lo, hi in spans])
    if _copied(cycle):
        return COPY, where
    return "raw", _undropped(cycle, contracts.WINDOW.read(cycle.folder), where & (pc.field("op") != "ddl"))
