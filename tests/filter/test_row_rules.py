"""Filter's row rules (filter.row_rules): each rule over a batch of row events, and the whole set
run in this process and inside Spark tasks (mapInArrow) keeping and rewriting the same rows."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from cdcflow.core.arrow_rows import spark_schema
from cdcflow.config.parsing import parse_config
from cdcflow.core.event import Event
from cdcflow.core.row_codec import encode_image
from cdcflow.filter import value_expr
from cdcflow.filter.row_rules import RowRules
from cdcflow.filter.system_versioning import period_spans
from cdcflow.store.events import EVENT_SCHEMA, FIELDS

OPEN = dt.datetime(2038, 1, 19, 3, 14, 7, 999999)  # a current row's period end (filter.system_versioning)


def _event(ts, seq, table, op, before=None, after=None, start=("b.000001", 100), schema="s") -> Event:
    return Event(commit_ts=ts, seq=seq, schema=schema, table=table, op=op,
                 before=None if before is None else encode_image(before),
                 after=None if after is None else encode_image(after),
                 start_file=start[0], start_pos=start[1], pk='["id"]')


EVENTS = [
    _event(10, 0, "t", "insert", after={"id": 1, "v": "keep"}),
    _event(10, 1, "t", "insert", after={"id": 2, "v": "drop me"}),  # a value expression ignores it
    _event(20, 0, "t", "delete", before={"id": 1, "v": "keep"}),  # ignore-event: delete on s.t
    _event(20, 1, "gone", "insert", after={"id": 1}),  # a table the filter leaves out
    _event(30, 0, "j", "insert", after={"id": 1}, start=("b.000001", 50)),  # before j's join point
    _event(40, 0, "j", "insert", after={"id": 2}, start=("b.000002", 4)),  # after it
    _event(50, 0, "nokey", "insert", after={"id": 1}),  # no valid index in (45, 60]
    _event(70, 0, "nokey", "insert", after={"id": 2}),  # a key again from 60
    # a versioned table: an UPDATE (the current row's update and the history row), a DELETE
    _event(80, 0, "v", "update", before={"id": 1, "x": 1, "row_end": OPEN},
           after={"id": 1, "x": 2, "row_end": OPEN}),
    _event(80, 1, "v", "insert", after={"id": 1, "x": 1, "row_end": dt.datetime(2024, 1, 1)}),
    _event(90, 0, "v", "update", before={"id": 1, "x": 2, "row_end": OPEN},
           after={"id": 1, "x": 2, "row_end": dt.datetime(2024, 1, 2)}),
]
CONFIG = parse_config("[[filter.event-filters]]\nmatcher = ['s.t']\nignore-event = ['delete']\n"
                      "ignore-insert-value-expr = \"v = 'drop me'\"\n")


def _batch(events=EVENTS) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist([{f: getattr(e, f) for f in FIELDS} for e in events], schema=EVENT_SCHEMA)


def _rules() -> RowRules:
    cols = [value_expr.column_of("id", "int", "int(11)"), value_expr.column_of("v", "varchar", "varchar(20)")]
    values = value_expr.value_tests(CONFIG, {("s", "t"): [(0, cols)]}, "cf", dt.datetime(2030, 1, 1),
                                    lambda *span: True)
    return RowRules(tables=frozenset({("s", "t"), ("s", "j"), ("s", "nokey"), ("s", "v")}),
                    joins={("s", "j"): ("b.000002", 0)},
                    periods=period_spans({("s", "v"): [[0, ("row_start", "row_end")]]}),
                    ignored_ops=(("s", "t", "delete"),), values=tuple(values),
                    ineligible={("s", "nokey"): [[45, 60]]})


def _kept(batch: pa.RecordBatch) -> list[tuple]:
    return [(r["commit_ts"], r["seq"], r["table"], r["op"], r["after"] or r["before"]) for r in batch.to_pylist()]


EXPECTED = [
    (10, 0, "t", "insert", encode_image({"id": 1, "v": "keep"})),
    (40, 0, "j", "insert", encode_image({"id": 2})),
    (70, 0, "nokey", "insert", encode_image({"id": 2})),
    (80, 0, "v", "update", encode_image({"id": 1, "x": 2})),  # without its period columns
    (90, 0, "v", "delete", encode_image({"id": 1, "x": 2})),  # the period's end is the DELETE it was
]


def test_each_rule_keeps_and_rewrites_its_rows_in_one_pass():
    rules = _rules()
    assert not rules.drops_nothing() and RowRules().drops_nothing()
    assert _kept(rules.apply(_batch())) == EXPECTED
    assert RowRules().apply(_batch()).equals(_batch())
    assert rules.apply(_batch([])).num_rows == 0


@pytest.mark.parametrize("rule, gone", [
    ({"tables": frozenset({("s", "t")})}, {"gone", "j", "nokey", "v"}),
    ({"joins": {("s", "j"): None}}, {"j"}),  # not joined yet: none of its rows
    ({"ignored_ops": (("s", "v", "update"), ("s", "nokey", "insert"))}, {"nokey", "v:update"}),
    ({"ineligible": {("s", "nokey"): [[0, None]]}}, {"nokey"}),
])
def test_one_rule_alone_drops_only_its_rows(rule, gone):
    kept = RowRules(**rule).apply(_batch())
    tables = {r["table"] for r in kept.to_pylist()} | {f"{r['table']}:{r['op']}" for r in kept.to_pylist()}
    every = {e.table for e in EVENTS} | {f"{e.table}:{e.op}" for e in EVENTS}
    assert gone <= every - tables and not ({t for t in gone if ":" not in t} & tables)


def test_the_rules_in_spark_tasks_keep_what_they_keep_here(spark):
    """The same RowRules object, shipped to Spark's Python workers: the same rows, every field."""
    rules = _rules()
    frame = spark.createDataFrame(pa.Table.from_batches([_batch()]).to_pandas(), schema=spark_schema(EVENT_SCHEMA))
    in_spark = pa.Table.from_pylist([r.asDict() for r in frame.repartition(3).mapInArrow(
        rules.apply_all, frame.schema).collect()], schema=EVENT_SCHEMA)
    here = pa.Table.from_batches([rules.apply(_batch())])
    key = [("commit_ts", "ascending"), ("seq", "ascending")]
    assert in_spark.sort_by(key).equals(here.sort_by(key))
    assert _kept(here.to_batches()[0]) == EXPECTED
