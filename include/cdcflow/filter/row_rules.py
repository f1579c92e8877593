"""Filter's row rules as one function over a batch of row events.

Whatever a rule needs to know (the tables kept, the tables joining with a copy, the versioned
tables' periods, the kinds ignore-event drops, the value expressions of each table version, the
tables without a valid index) is decided once on the driver, from the config and the tracked
schema; `RowRules.apply` then keeps and rewrites the rows of one Arrow batch.  The filter stage
runs it over pyarrow's scan of the window in its own process, or inside Spark tasks
(`mapInArrow`) for a window the cycle's engine sends there (stages.engine): the same rules in
both places, in this order:

1. the table filter: rows of the tables kept (`tables`; None: every table of the window);
2. tables joining the changefeed: their rows in transactions before the join point are in the
   table's copy (filter.table_joins.before_join);
3. system-versioned tables: each row as a replica writes it (filter.system_versioning);
4. ignore-event: the (schema, table, kind) triples dropped (filter.event_filter);
5. value expressions: the rows an expression ignores (filter.value_expr);
6. no valid index (force-replicate off): the rows of a table in a span where it has none
   (filter.ddl_gate.ineligible_ranges).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from cdcflow.core import heap
from cdcflow.filter import value_expr
from cdcflow.filter.system_versioning import replica_write
from cdcflow.filter.table_joins import Joins

_NO_END = (1 << 63) - 1


@dataclass
class RowRules:
    tables: frozenset[tuple[str, str]] | None = None
    joins: Joins = field(default_factory=dict)
    # (schema, table, lo, hi, period start column, period end column): rows committed in (lo, hi]
    periods: tuple[tuple[str, str, int, int, str, str], ...] = ()
    ignored_ops: tuple[tuple[str, str, str], ...] = ()
    values: tuple[value_expr.ValueTest, ...] = ()
    ineligible: dict[tuple[str, str], list] = field(default_factory=dict)  # [[lo, hi or None], ...]

    def __post_init__(self):
        self._compiled = None  # the value expressions compiled, once per process that applies them

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_compiled"] = None  # compiled closures stay in the process that made them
        return state

    def drops_nothing(self) -> bool:
        """Whether apply would return every batch as it is."""
        return (self.tables is None and not self.joins and not self.periods and not self.ignored_ops
                and not self.values and not self.ineligible)

    def apply(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """The rows of `batch` (row events in the event schema) the rules keep, rewritten where a
        versioned table's are."""
        if not batch.num_rows:
            return batch
        if self.tables is not None:
            batch = batch.filter(_in_tables(batch, self.tables))
        if self.joins and batch.num_rows:
            batch = batch.filter(pc.invert(_before_join(batch, self.joins)))
        if self.periods and batch.num_rows:
            batch = _replica_rows(batch, self.periods)
        if self.ignored_ops and batch.num_rows:
            names = pc.binary_join_element_wise(batch["schema"], batch["table"], batch["op"], "\x00")
            drops = pa.array(["\x00".join(t) for t in self.ignored_ops], pa.string())
            batch = batch.filter(pc.invert(pc.is_in(names, drops)))
        if self.values and batch.num_rows:
            if self._compiled is None:
                self._compiled = [(t, t.compiled()) for t in self.values]
            batch = batch.filter(pa.array(~value_expr.ignored_mask(batch, self._compiled)))
        if self.ineligible and batch.num_rows:
            spans = [(s, t, lo, _NO_END if hi is None else hi) for (s, t), rs in self.ineligible.items()
                     for lo, hi in rs]
            batch = batch.filter(pc.invert(_in_spans(batch, spans)))
        return batch

    def apply_all(self, batches):
        """apply over an iterator of batches (a mapInArrow body)."""
        heap.settle()
        for batch in batches:
            yield self.apply(batch)


def _in_tables(batch: pa.RecordBatch, tables) -> pa.Array:
    names = pc.binary_join_element_wise(batch["schema"], batch["table"], "\x00")  # no identifier holds NUL
    return pc.fill_null(pc.is_in(names, pa.array(sorted(f"{s}\x00{t}" for s, t in tables), pa.string())), False)


def _of_table(batch: pa.RecordBatch, schema: str, table: str) -> pa.Array:
    return pc.and_(pc.equal(batch["schema"], schema), pc.equal(batch["table"], table))


def _in_spans(batch: pa.RecordBatch, spans) -> pa.Array:
    """Rows of (schema, table) committed in (lo, hi] for any of `spans`."""
    hit = pa.repeat(False, batch.num_rows)
    for s, t, lo, hi in spans:
        one = pc.and_(_of_table(batch, s, t), pc.and_(pc.greater(batch["commit_ts"], lo),
                                                      pc.less_equal(batch["commit_ts"], hi)))
        hit = pc.or_(hit, pc.fill_null(one, False))
    return hit


def _before_join(batch: pa.RecordBatch, joins: Joins) -> pa.Array:
    """table_joins.before_join of each row: a row of a joining table in a transaction that starts
    before its join point (or of a table not joined yet, or with no start position)."""
    hit = pa.repeat(False, batch.num_rows)
    for (schema, table), point in joins.items():
        this = _of_table(batch, schema, table)
        if point is not None:
            file, pos = point
            earlier = pc.or_(pc.less(batch["start_file"], file),
                             pc.and_(pc.equal(batch["start_file"], file), pc.less(batch["start_pos"], pos)))
            this = pc.and_(this, pc.fill_null(earlier, True))  # no start position: before it
        hit = pc.or_(hit, pc.fill_null(this, False))
    return hit


def _replica_rows(batch: pa.RecordBatch, periods) -> pa.RecordBatch:
    """The rows of versioned tables (in a span of `periods`) as a replica writes them
    (system_versioning.replica_write), the others as they are, in their order."""
    period_of = np.full(batch.num_rows, -1)
    for i, (s, t, lo, hi, _start, _end) in enumerate(periods):
        one = _in_spans(batch, [(s, t, lo, hi)]).to_numpy(zero_copy_only=False)
        period_of[one & (period_of < 0)] = i
    rows = np.flatnonzero(period_of >= 0)
    if not len(rows):
        return batch
    ops, befores, afters, pks = (batch[c].to_pylist() for c in ("op", "before", "after", "pk"))
    keep = np.ones(batch.num_rows, dtype=bool)
    for r in rows:
        _s, _t, _lo, _hi, start, end = periods[period_of[r]]
        write = replica_write(ops[r], befores[r], afters[r], pks[r], (start, end))
        if write is None:
            keep[r] = False
        else:
            ops[r], befores[r], afters[r], pks[r] = write
    columns = dict(zip(batch.schema.names, batch.columns))
    for name, values in (("op", ops), ("before", befores), ("after", afters), ("pk", pks)):
        columns[name] = pa.array(values, batch.schema.field(name).type)
    return pa.RecordBatch.from_arrays(list(columns.values()), schema=batch.schema).filter(pa.array(keep))
