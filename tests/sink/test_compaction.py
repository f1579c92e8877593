import datetime as dt
import decimal
import json
import random

import pytest

import pyarrow as pa

from cdcflow.core.arrow_rows import spark_schema
from cdcflow.core.row_codec import decode_image, encode_image
from cdcflow.sink.collation_key import KeyFolder, comparison
from cdcflow.sink.compaction import (
    KEYED_ARROW,
    Keyer,
    _deletes_lead,
    compacted_arrow,
    compacted_partition,
    final_changes,
    key_of,
    keyed_batches,
    keyed_changes,
    keyed_arrow,
)

EVENT_COLS = pa.schema([("schema", pa.string()), ("table", pa.string()), ("commit_ts", pa.int64()),
                        ("seq", pa.int64()), ("op", pa.string()), ("before", pa.string()), ("after", pa.string())])
KEYS = {"db.t": ["id"], "db.m": ["a", "b"], "db.s": ["name"]}


def batch(changes: list[tuple]) -> pa.RecordBatch:
    """changes: (table, commit_ts, seq, op, before row, after row), rows as dicts."""
    cols = {f: [] for f in EVENT_COLS.names}
    for table, ts, seq, op, before, after in changes:
        for f, v in zip(EVENT_COLS.names, ("db", table, ts, seq, op, encode_image(before), encode_image(after))):
            cols[f].append(v)
    return pa.RecordBatch.from_pydict(cols, schema=EVENT_COLS)


class FakeWeights(KeyFolder):
    """Weighs as a case- and accent-insensitive collation would, counting the queries."""

    def __init__(self, collations):
        super().__init__(collations)
        self.asked = []

    def _weigh(self, coll, strings):
        import unicodedata

        self.asked.append((coll, strings))
        for s in strings:
            plain = "".join(ch for ch in unicodedata.normalize("NFD", s) if not unicodedata.combining(ch))
            self._weights[(coll, s)] = plain.lower().encode().hex()


CI = {"db.s": {"name": "utf8mb4_general_ci"}}


def keyed(changes: list[tuple], split: int | None = None, folder=None) -> list[dict]:
    batches = [batch(changes)] if split is None else [batch(changes[:split]), batch(changes[split:])]
    out = list(keyed_changes(iter(batches), KEYS, folder))
    assert len(out) == len(batches)  # one batch out per batch in
    rows = []
    for b in out:
        assert b.schema == KEYED_ARROW
        d = b.to_pydict()
        rows += [dict(zip(d, vals)) for vals in zip(*d.values())]
    return rows


def compact(changes: list[tuple], folder=None) -> list[tuple]:
    """keyed_changes, then the sort the apply stage asks Spark for, then final_changes;
    returns (table, kind, decoded image) in output order."""
    rows = sorted(keyed(changes, folder=folder), key=lambda r: (r["schema"], r["table"], r["part"], r["key"], r["commit_ts"],
                                                 r["seq"], r["sub"]))
    tuples = [(r["schema"], r["table"], r["part"], r["key"], r["kind"], r["image"]) for r in rows]
    return [(t[1], t[4], decode_image(t[5])) for t in final_changes(iter(tuples))]


def test_insert_and_delete():
    rows = keyed([("t", 10, 0, "insert", None, {"id": 1, "v": "a"}),
                  ("t", 11, 0, "delete", {"id": 2, "v": "b"}, None)])
    assert [(r["key"], r["kind"], r["sub"], r["commit_ts"], r["seq"]) for r in rows] == [
        ("[1]", "I", 1, 10, 0), ("[2]", "D", 1, 11, 0)]
    assert decode_image(rows[0]["image"]) == {"id": 1, "v": "a"}
    assert decode_image(rows[1]["image"]) == {"id": 2, "v": "b"}
    assert all((r["schema"], r["table"]) == ("db", "t") for r in rows)


def test_update_without_key_change_is_one_upsert():
    rows = keyed([("t", 10, 3, "update", {"id": 1, "v": "a"}, {"id": 1, "v": "b"})])
    assert [(r["key"], r["kind"], r["sub"]) for r in rows] == [("[1]", "U", 1)]
    assert decode_image(rows[0]["image"]) == {"id": 1, "v": "b"}


def test_update_with_key_change_is_delete_then_insert():
    rows = keyed([("t", 10, 3, "update", {"id": 1, "v": "a"}, {"id": 9, "v": "a"})])
    assert [(r["key"], r["kind"], r["sub"], r["seq"]) for r in rows] == [("[1]", "D", 0, 3), ("[9]", "I", 1, 3)]
    assert decode_image(rows[0]["image"]) == {"id": 1, "v": "a"}
    assert decode_image(rows[1]["image"]) == {"id": 9, "v": "a"}


def test_multi_column_keys_in_key_list_order():
    rows = keyed([("m", 10, 0, "insert", None, {"b": "x", "c": 0, "a": 7}),
                  ("m", 11, 0, "update", {"b": "x", "c": 0, "a": 7}, {"b": "x", "c": 1, "a": 7}),
                  ("m", 12, 0, "update", {"b": "x", "c": 1, "a": 7}, {"b": "y", "c": 1, "a": 7})])
    assert [(r["key"], r["kind"], r["sub"]) for r in rows] == [
        ('[7,"x"]', "I", 1), ('[7,"x"]', "U", 1), ('[7,"x"]', "D", 0), ('[7,"y"]', "I", 1)]


def test_keys_of_typed_values_are_canonical():
    img = json.loads(encode_image({"id": decimal.Decimal("1.50"), "at": dt.datetime(2026, 1, 1), "bin": b"\x00"}))
    assert key_of(img, ["id"]) == '[{"d":"1.50"}]'
    assert key_of(img, ["bin", "at"]) == '[{"b":"AA=="},{"dt":"2026-01-01 00:00:00.000000"}]'
    again = json.loads(encode_image({"id": decimal.Decimal("1.50"), "at": dt.datetime(2026, 1, 1), "bin": b"\x00"}))
    assert key_of(again, ["bin", "at"]) == key_of(img, ["bin", "at"])


def test_batches_are_processed_one_by_one():
    changes = [("t", 10 + i, 0, "insert", None, {"id": i}) for i in range(5)]
    assert [r["key"] for r in keyed(changes, split=2)] == [f"[{i}]" for i in range(5)]


def test_comparison_by_collation_name():
    assert comparison(None) == comparison("binary") == (False, False)
    assert comparison("utf8mb4_bin") == (True, False)  # PAD SPACE: trailing spaces only
    assert comparison("utf8mb4_nopad_bin") == comparison("utf8mb4_0900_as_cs") == (False, False)
    assert comparison("utf8mb4_general_ci") == comparison("latin1_swedish_ci") == (True, True)
    assert comparison("utf8mb4_uca1400_ai_ci") == (True, True)
    assert comparison("utf8mb4_0900_ai_ci") == comparison("utf8mb4_uca1400_nopad_ai_ci") == (False, True)


def test_keys_fold_by_collation_with_one_query_per_batch():
    folder = FakeWeights(CI | {"db.m": {"b": "utf8mb4_bin"}})
    rows = keyed([("s", 10, 0, "update", {"name": "é", "v": 1}, {"name": "E ", "v": 1}),
                  ("s", 11, 0, "insert", None, {"name": "x", "v": 1}),
                  ("m", 12, 0, "update", {"a": 1, "b": "x "}, {"a": 1, "b": "x"}),
                  ("m", 13, 0, "update", {"a": 1, "b": "x"}, {"a": 1, "b": "X"}),
                  ("t", 14, 0, "insert", None, {"id": "A"})], folder=folder)
    assert [(r["table"], r["kind"], r["sub"]) for r in rows] == [
        ("s", "U", 1), ("s", "I", 1), ("m", "U", 1), ("m", "D", 0), ("m", "I", 1), ("t", "I", 1)]
    assert rows[0]["key"] == '[{"w":"65"}]' and all(r["part"] == r["key"] for r in rows)
    assert folder.asked == [("utf8mb4_general_ci", ["E", "x", "é"])]
    assert rows[-1]["key"] == '["A"]'  # no collation known: the text itself


LAST_WINS = [
    ("t", 10, 0, "insert", None, {"id": 1, "v": "a"}),
    ("t", 10, 1, "update", {"id": 1, "v": "a"}, {"id": 1, "v": "b"}),
    ("t", 11, 0, "update", {"id": 1, "v": "b"}, {"id": 1, "v": "c"}),
    ("t", 11, 1, "insert", None, {"id": 2, "v": "x"}),
    ("t", 12, 0, "delete", {"id": 2, "v": "x"}, None),
    ("t", 12, 1, "delete", {"id": 3, "v": "old"}, None),
    ("t", 13, 0, "insert", None, {"id": 3, "v": "new"}),
]


def test_last_change_per_key_wins():
    out = compact(LAST_WINS)
    # id 1 was created by these changes (I); id 3 existed before them (U)
    assert out == [("t", "I", {"id": 1, "v": "c"}), ("t", "D", {"id": 2, "v": "x"}),
                   ("t", "U", {"id": 3, "v": "new"})]


def test_seed_002_key_swap_converges():
    # one transaction: UPDATE t SET id=3 WHERE id=1; SET id=1 WHERE id=2; SET id=2 WHERE id=3
    out = compact([
        ("t", 20, 0, "update", {"id": 1, "v": "a"}, {"id": 3, "v": "a"}),
        ("t", 20, 1, "update", {"id": 2, "v": "b"}, {"id": 1, "v": "b"}),
        ("t", 20, 2, "update", {"id": 3, "v": "a"}, {"id": 2, "v": "a"}),
    ])
    assert sorted(out, key=lambda r: r[2]["id"]) == [
        ("t", "U", {"id": 1, "v": "b"}), ("t", "U", {"id": 2, "v": "a"}), ("t", "D", {"id": 3, "v": "a"})]


def test_respellings_under_a_ci_collation_are_updates_of_one_row():
    # the last image's spelling wins; a delete and a re-insert in another spelling is an update
    out = compact([("s", 10, 0, "update", {"name": "é", "v": 1}, {"name": "e", "v": 2}),
                   ("s", 11, 0, "update", {"name": "abc", "v": 1}, {"name": "ABC  ", "v": 1}),
                   ("s", 12, 0, "delete", {"name": "x", "v": 1}, None),
                   ("s", 13, 0, "insert", None, {"name": "X", "v": 2})], FakeWeights(CI))
    assert sorted(out, key=lambda r: r[2]["v"]) == [
        ("s", "U", {"name": "ABC  ", "v": 1}), ("s", "U", {"name": "e", "v": 2}), ("s", "U", {"name": "X", "v": 2})]
    # without the collation the spellings are different rows
    assert len(compact([("s", 10, 0, "update", {"name": "é", "v": 1}, {"name": "e", "v": 2})])) == 2


def test_deletes_before_upserts_only_within_one_part():
    rows = [  # sorted by (schema, table, part, key, commit order), as the apply stage sorts them
        ("db", "s", '["a"]', '["A"]', "U", "A1"),
        ("db", "s", '["a"]', '["a"]', "U", "a1"),
        ("db", "s", '["a"]', '["a"]', "D", "a2"),
        ("db", "s", '["b"]', '["b"]', "U", "b1"),
        ("db", "s", '["c"]', '["C"]', "U", "C1"),
        ("db", "s", '["c"]', '["c"]', "D", "c1"),
        ("db", "t", '["c"]', '["c"]', "U", "tc1"),
        ("db", "t", '["d"]', '["d"]', "D", "td1"),
    ]
    out = [r[5] for r in final_changes(iter(rows))]
    assert out == ["a2", "A1", "b1", "c1", "C1", "tc1", "td1"]


def test_final_changes_edge_cases():
    assert list(final_changes(iter([]))) == []
    one = ("db", "t", "[1]", "[1]", "D", "x")
    assert list(final_changes(iter([one]))) == [one]
    # the same key in two tables is two keys
    rows = [("db", "a", "[1]", "[1]", "U", "a"), ("db", "b", "[1]", "[1]", "D", "b")]
    assert list(final_changes(iter(rows))) == rows


def test_many_keys_stream_in_order():
    changes = [("t", 100 + i, 0, "insert", None, {"id": i, "v": i}) for i in range(200)]
    changes += [("t", 400 + i, 0, "delete", {"id": i, "v": i}, None) for i in range(0, 200, 2)]
    out = compact(changes)
    assert len(out) == 200
    kinds = {r[2]["id"]: r[1] for r in out}
    assert all(kinds[i] == ("D" if i % 2 == 0 else "I") for i in range(200))


def test_split_orders_deletes_before_inserts_in_one_transaction():
    # TiCDC's split of key-changing UPDATEs: the swap's four events are two DELETEs and two INSERTs; per key, the
    # DELETE (sub 0) sorts before the INSERT (sub 1) of the same change
    rows = keyed([("t", 20, 0, "update", {"id": 1, "v": "a"}, {"id": 2, "v": "a"}),
                  ("t", 20, 1, "update", {"id": 2, "v": "b"}, {"id": 1, "v": "b"})])  # as the binlog has it
    assert [(r["key"], r["kind"], r["seq"], r["sub"]) for r in rows] == [
        ("[1]", "D", 0, 0), ("[2]", "I", 0, 1), ("[2]", "D", 1, 0), ("[1]", "I", 1, 1)]


def test_first_change_decides_new_or_existing():
    out = compact([
        ("t", 10, 0, "insert", None, {"id": 1, "v": "a"}),        # new, then updated: still new
        ("t", 11, 0, "update", {"id": 1, "v": "a"}, {"id": 1, "v": "b"}),
        ("t", 10, 1, "update", {"id": 2, "v": "a"}, {"id": 2, "v": "b"}),  # existed
        ("t", 10, 2, "delete", {"id": 3, "v": "a"}, None),         # existed, deleted, re-inserted
        ("t", 11, 1, "insert", None, {"id": 3, "v": "c"}),
        ("t", 10, 3, "insert", None, {"id": 4, "v": "a"}),         # new, then deleted
        ("t", 11, 2, "delete", {"id": 4, "v": "a"}, None),
    ])
    assert [(r[1], r[2]["id"]) for r in out] == [("I", 1), ("U", 2), ("U", 3), ("D", 4)]


# Every shape of change at once: new, existing, deleted and re-inserted keys, a key swap in one
# transaction, multi-column keys, respellings under a folding collation, updates that keep the key
MIXED = [
    *LAST_WINS,
    ("t", 20, 0, "update", {"id": 5, "v": "a"}, {"id": 7, "v": "a"}),
    ("t", 20, 1, "update", {"id": 6, "v": "b"}, {"id": 5, "v": "b"}),
    ("t", 20, 2, "update", {"id": 7, "v": "a"}, {"id": 6, "v": "a"}),
    ("t", 21, 0, "update", {"id": 8, "v": "a"}, {"id": 9, "v": "a"}),
    ("m", 10, 2, "insert", None, {"b": "x", "c": 0, "a": 7}),
    ("m", 11, 2, "update", {"b": "x", "c": 0, "a": 7}, {"b": "x", "c": 1, "a": 7}),
    ("m", 12, 2, "update", {"b": "x", "c": 1, "a": 7}, {"b": "y", "c": 1, "a": 7}),
    ("s", 10, 3, "update", {"name": "é", "v": 1}, {"name": "e", "v": 2}),
    ("s", 11, 3, "update", {"name": "abc", "v": 1}, {"name": "ABC  ", "v": 1}),
    ("s", 12, 3, "delete", {"name": "x", "v": 1}, None),
    ("s", 13, 3, "insert", None, {"name": "X", "v": 2}),
    ("s", 14, 3, "insert", None, {"name": "q", "v": 1}),
    ("s", 15, 3, "update", {"name": "q", "v": 1}, {"name": "r", "v": 1}),
    ("s", 15, 4, "delete", {"name": "R ", "v": 1}, None),
]


def stamped(changes: list[tuple], folder) -> pa.Table:
    """`changes` as pull writes them, with their key texts (Keyer, as stages.pull_keys keys them)."""
    b = batch(changes)
    cols = b.to_pydict()
    texts = Keyer(dict(KEYS), folder).texts([f"db.{t}" for t in cols["table"]], cols["op"], cols["before"],
                                            cols["after"])
    return pa.Table.from_batches([b]).append_column("before_key", pa.array([k for k, _ in texts], pa.string())) \
        .append_column("after_key", pa.array([k for _, k in texts], pa.string()))


def stamped_frame(spark, tmp_path, changes: list[tuple], folder):
    import pyarrow.parquet as pq

    pq.write_table(stamped(changes, folder), tmp_path / "stamped.parquet")
    return spark.read.parquet(str(tmp_path / "stamped.parquet"))


def test_keying_and_compaction_in_spark_tasks_are_the_python_reference(spark, tmp_path):
    """keyed_batches (keyed_arrow over pull's texts, in Spark tasks) gives keyed_changes' rows;
    compacted_partition after Spark's shuffle by part gives final_changes' last change per key
    and its kind: the same Arrow functions as a small segment's in the driver."""
    rows = stamped_frame(spark, tmp_path, MIXED, FakeWeights(CI))
    keyed_schema = spark_schema(KEYED_ARROW)
    keyed_rows = rows.mapInArrow(lambda it: keyed_batches(it, None), keyed_schema)
    got = [r.asDict() for r in keyed_rows.collect()]
    order = lambda r: (r["table"], r["commit_ts"], r["seq"], r["sub"])  # noqa: E731
    assert sorted(got, key=order) == sorted(keyed(MIXED, folder=FakeWeights(CI)), key=order)
    # and in Arrow, for a small segment's rows in hand
    assert sorted(keyed_arrow(stamped(MIXED, FakeWeights(CI))).to_pylist(), key=order) == sorted(got, key=order)

    python = compact(MIXED, FakeWeights(CI))
    spread = keyed_rows.repartition(3, "schema", "table", "part").mapInArrow(compacted_partition, keyed_schema)
    sql = [(r["table"], r["kind"], decode_image(r["image"])) for r in spread.collect()]
    assert sorted(sql, key=repr) == sorted(python, key=repr) and len(python) == 15


def _final_changes_of(rows: pa.Table) -> list[tuple]:
    """final_changes over keyed rows in the apply stage's sort: (table, key, kind, image) out."""
    ordered = rows.sort_by([(c, "ascending") for c in ("schema", "table", "part", "key", "commit_ts", "seq", "sub")])
    tuples = [(r["schema"], r["table"], r["part"], r["key"], r["kind"], r["image"]) for r in ordered.to_pylist()]
    return [(t[1], t[3], t[4], t[5]) for t in final_changes(iter(tuples))]


def test_compaction_in_arrow_and_in_one_spark_partition_are_final_changes_order(spark, tmp_path):
    """compacted_arrow (a segment in the driver's hands), and compacted_partition over one Spark
    partition, give final_changes' changes in final_changes' order: the partition bodies write
    them as they come."""
    python = compact(MIXED, FakeWeights(CI))
    arrow = compacted_arrow(keyed_arrow(stamped(MIXED, FakeWeights(CI))))
    assert [(r["table"], r["kind"], decode_image(r["image"])) for r in arrow.to_pylist()] == python
    rows = stamped_frame(spark, tmp_path, MIXED, FakeWeights(CI)).coalesce(1)
    keyed_schema = spark_schema(KEYED_ARROW)
    one = rows.mapInArrow(lambda it: keyed_batches(it, None), keyed_schema).coalesce(1) \
        .mapInArrow(compacted_partition, keyed_schema)
    assert [(r["table"], r["kind"], decode_image(r["image"])) for r in one.collect()] == python


# schemas and tables whose names sort apart only past a shared start, or by a character below
# or above '.', and accented and CJK ones: compacted_order ranks (schema, table) as one number
NAMES = [("db", "a"), ("db", "b"), ("db", "a.b"), ("db.a", "b"), ("d", "b.a"), ("db", "ab"), ("é", "t"), ("日本", "表"),
         ("db", "A"), ("db-", "a")]


@pytest.fixture(params=["compiled", "arrow"])
def finals_pass(request, monkeypatch):
    """compacted_order's end in each implementation: the compiled pass (make setup builds it: its
    absence fails here) and its Arrow reference."""
    from cdcflow.sink import compaction

    if request.param == "compiled":
        from cdcflow.sink import compiled_compaction

        monkeypatch.setattr(compaction, "compiled", lambda: compiled_compaction)
    else:
        monkeypatch.setattr(compaction, "compiled", lambda: None)
    return request.param


@pytest.mark.parametrize("parts", ["shared", "per-key", "the-key"], ids=["parts-shared", "a-part-per-key", "part-is-key"])
@pytest.mark.parametrize("seed", range(6))
def test_compaction_in_arrow_is_final_changes_on_random_streams(seed, parts, finals_pass):
    """Random streams over a few keys of several tables, several parts holding more than one key
    (respellings under a folding collation, a tangled part), or a part per key (the usual
    segment, whose finals need no second sort: compaction._deletes_lead), the part being the key
    itself as keyed_arrow makes it (a null key among them): compacted_arrow gives final_changes'
    output, in order."""
    rnd = random.Random(seed)
    tables = rnd.sample(NAMES, rnd.randrange(1, len(NAMES) + 1))
    out = []
    for i in range(rnd.randrange(1, 400)):
        k = rnd.randrange(12)
        key = None if parts == "the-key" and k == 11 else f"[{k}]"
        # shared: keys 0-2 share a part; pairs of the rest fold together
        part = {"shared": "tangled" if k < 3 else f"p{k // 2}", "per-key": f"p{k}", "the-key": key}[parts]
        schema, table = rnd.choice(tables)
        out.append({"schema": schema, "table": table, "key": key, "part": part,
                    "commit_ts": rnd.randrange(50), "seq": i, "sub": rnd.randrange(2),
                    "kind": rnd.choice("IUD"), "image": f"img{i}"})
    rows = pa.Table.from_pylist(out, schema=pa.schema(
        [("schema", pa.string()), ("table", pa.string()), ("key", pa.string()), ("part", pa.string()),
         ("commit_ts", pa.int64()), ("seq", pa.int64()), ("sub", pa.int32()), ("kind", pa.string()),
         ("image", pa.string())]))
    got = [(r["table"], r["key"], r["kind"], r["image"]) for r in compacted_arrow(rows).to_pylist()]
    assert got == _final_changes_of(rows)
    assert compacted_arrow(rows.slice(0, 0)).num_rows == 0


def _random_sorted(rnd: random.Random, n: int, keyed: bool):
    """Random columns of n rows as compacted_order hands them to its end: (order, tables, part,
    key or None, kind), sorted by (tables, part, key, position), sliced out of longer arrays, with
    null parts and keys among them."""
    lead = rnd.randrange(3)
    tables = [rnd.randrange(3) for _ in range(n + lead)]
    part = [None if rnd.random() < 0.1 else rnd.choice(["a", "b", "é", "日", "", "ab"]) for _ in range(n + lead)]
    key = [None if rnd.random() < 0.1 else rnd.choice(["1", "2", "x"]) for _ in range(n + lead)]
    kind = [rnd.choice("IUD") for _ in range(n + lead)]
    cols = [pa.array(c, t).slice(lead) for c, t in
            ((tables, pa.int64()), (part, pa.string()), (key, pa.string()), (kind, pa.string()))]
    by = pa.table({"tables": cols[0], "part": cols[1], **({"key": cols[2]} if keyed else {}),
                   "position": pa.array(range(n), pa.int64())})
    order = pa.compute.sort_indices(by, sort_keys=[(c, "ascending") for c in by.column_names])
    return order, cols[0], cols[1], cols[2] if keyed else None, cols[3]


@pytest.mark.parametrize("keyed", [False, True], ids=["by-part", "by-part-and-key"])
@pytest.mark.parametrize("seed", range(40))
def test_the_compiled_end_of_compaction_gives_the_arrow_steps_finals(seed, keyed):
    """compiled_compaction.finals against the Arrow steps it stands for (compaction._finals_in_arrow)
    on random sorted columns, sliced, with nulls and texts of every width: the same rows and kinds,
    or None exactly where those finals need the second sort."""
    from cdcflow.sink import compaction, compiled_compaction

    rnd = random.Random(seed)
    order, tables, part, key, kind = _random_sorted(rnd, rnd.randrange(0, 300), keyed)
    changes = pa.table({"schema": pa.array(["db"] * len(kind)), "table": tables.cast(pa.string()), "part": part,
                        "key": key if key is not None else pa.nulls(len(kind), pa.string()), "kind": kind})
    by = pa.table({"tables": tables, "part": part, **({"key": key} if keyed else {})})
    want = compaction._finals_in_arrow(changes, by, order)
    got = compiled_compaction.finals(order, tables, part, key, kind)
    if got is None:
        assert not compaction._deletes_lead(_unsorted_finals(changes, by, order))
    else:
        assert got[0].to_pylist() == want["row"].to_pylist() and got[1].to_pylist() == want["kind"].to_pylist()


def _unsorted_finals(changes: pa.Table, by: pa.Table, order) -> pa.Table:
    """The Arrow steps' finals before their second sort (what _deletes_lead looks at)."""
    from cdcflow.sink.compaction import run_starts

    t = changes.take(order)
    last = pa.concat_arrays([run_starts(by.take(order), by.column_names), pa.array([True])])
    first = pa.concat_arrays([pa.array([True]), run_starts(by.take(order), by.column_names)])
    finals = t.filter(last)
    kind = pa.compute.if_else(pa.compute.equal(finals["kind"], "D"), "D",
                              pa.compute.if_else(pa.compute.equal(t["kind"].filter(first), "I"), "I", "U"))
    return pa.table({"schema": finals["schema"], "table": finals["table"], "part": finals["part"],
                     "upsert": pa.compute.not_equal(kind, "D"), "key": finals["key"]})


@pytest.mark.parametrize("seed", range(30))
def test_the_compiled_sort_columns_are_the_arrow_steps(seed):
    """compaction._sort_columns with the compiled module (the tables ranked, the parts compared with
    the keys) against its Arrow steps: names that sort apart only past a shared start or by a
    character below '.', accented and CJK ones, in runs and interleaved, sliced; parts that are
    their keys (nulls among both) or not; a null name and more tables than the compiled ranking
    takes go the Arrow way."""
    from cdcflow.sink import compaction, compiled_compaction

    rnd = random.Random(seed)
    n, lead = rnd.randrange(0, 200), rnd.randrange(3)
    names = [rnd.choice(NAMES) for _ in range(n + lead)]
    if seed % 5 == 4:  # past the compiled ranking's bound
        names = [("db", f"t{rnd.randrange(compiled_compaction.MOST_TABLES_RANKED + 10)}") for _ in range(n + lead)]
    keys = [None if rnd.random() < 0.1 else str(rnd.randrange(9)) for _ in range(n + lead)]
    parts = keys if seed % 3 else [k if rnd.random() < 0.9 else "other" for k in keys]
    changes = pa.table({"schema": [s for s, _ in names], "table": [t for _, t in names], "key": keys,
                        "part": parts, "commit_ts": [rnd.randrange(5) for _ in names],
                        "seq": list(range(n + lead)), "sub": pa.array([0] * (n + lead), pa.int32())}).slice(lead)
    if seed % 7 == 6 and n:
        schemas = changes["schema"].to_pylist()
        schemas[0] = None
        changes = changes.set_column(0, "schema", pa.array(schemas, pa.string()))
    want = compaction._sort_columns_in_arrow(changes)
    assert compaction._sort_columns(changes).equals(want)


def test_the_compiled_end_of_compaction_refuses_what_it_cannot_read():
    """Columns of other types or lengths, a row number past the rows, a change without a kind."""
    from cdcflow.sink import compiled_compaction

    order, tables = pa.array([1, 0], pa.uint64()), pa.array([0, 0], pa.int64())
    part, kind = pa.array(["a", "b"]), pa.array(["I", "D"])
    assert [c.to_pylist() for c in compiled_compaction.finals(order, tables, part, None, kind)] == [[1, 0], ["D", "I"]]
    with pytest.raises(TypeError):
        compiled_compaction.finals(order, tables, pa.array([1, 2]), None, kind)
    with pytest.raises(TypeError):
        compiled_compaction.finals(order.cast(pa.int64()), tables, part, None, kind)
    with pytest.raises(ValueError):
        compiled_compaction.finals(order, pa.array([0], pa.int64()), part, None, kind)
    with pytest.raises(IndexError):
        compiled_compaction.finals(pa.array([2, 0], pa.uint64()), tables, part, None, kind)
    with pytest.raises(ValueError, match="empty kind"):
        compiled_compaction.finals(order, tables, part, None, pa.array(["I", ""]))
    with pytest.raises(ValueError, match="without its kind"):
        compiled_compaction.finals(order, tables, part, None, pa.array(["I", None]))


def test_finals_skip_the_second_sort_only_where_deletes_already_lead():
    """compaction._deletes_lead: finals in key order with a key per part need no DELETES_FIRST sort;
    a part of two keys whose upsert's key sorts before its delete's does."""
    def finals(rows):
        return pa.Table.from_pylist([dict(zip(("schema", "table", "part", "upsert", "key"), r)) for r in rows])

    assert _deletes_lead(finals([("db", "t", "a", True, "a"), ("db", "t", "b", False, "b")]))
    assert _deletes_lead(finals([("db", "t", "p", False, "a"), ("db", "t", "p", True, "b")]))
    assert _deletes_lead(finals([("db", "t", "p", True, "a"), ("db", "u", "p", False, "b")]))
    assert not _deletes_lead(finals([("db", "t", "p", True, "a"), ("db", "t", "p", False, "b")]))
    assert _deletes_lead(finals([]))


WRITTEN = ("schema", "table", "kind", "image", "commit_ts")  # what a writer reads of a final change


@pytest.mark.parametrize("tangled", [False, True], ids=["a-part-per-key", "a-tangled-table"])
@pytest.mark.parametrize("workers", [1, 2, 3, 16])
def test_writer_shares_made_alone_are_whole_parts_compacted_as_the_segment_is(workers, tangled):
    """row_sink._writer_shares (a segment written from the stage's process): each writer's share,
    made on its own, holds every final change of its parts and none of another's, in the order
    the segment's compaction whole gives them; together the shares are that compaction's rows,
    as their writers read them (table, kind, image, commit ts), a change with a null key text
    among them; one share per thread with rows."""
    from cdcflow.sink import row_sink
    from cdcflow.sink.compaction import TANGLED

    rows = stamped(MIXED + [("t", 30, 0, "delete", {"id": 40, "v": "z"}, None)], FakeWeights(CI))
    before_key = rows["before_key"].to_pylist()
    before_key[-1] = None  # a key pull could not give a text
    rows = rows.set_column(rows.schema.get_field_index("before_key"), "before_key", pa.array(before_key, pa.string()))
    tangles = {("db", "t"): None} if tangled else {}
    names = {f"db.{t}": None for t in ("t", "m", "s")}
    whole = compacted_arrow(keyed_arrow(rows, tangles))
    made = [make() for make in row_sink._writer_shares(rows, names, set(names), None,
                                                       (row_sink.SPREAD_BY, None, tangles), workers)]
    # the images stay in the part's arrays, each row numbering its own; a share holds the columns
    # its writer reads
    assert all(isinstance(s, row_sink.Share) and s.rows.column_names == list(row_sink.SHARED) for s in made)
    whole_rows = whole.to_pylist()
    writes = [tuple(r[c] for c in WRITTEN) for r in whole_rows]
    part_of = {w: (r["schema"], r["table"], r["part"]) for w, r in zip(writes, whole_rows)}
    key_of = {w: r["key"] for w, r in zip(writes, whole_rows)}
    assert len(part_of) == len(writes)  # each final change told apart by what its writer reads
    shares = [[tuple(r[c] for c in WRITTEN) for r in s.whole().to_pylist()] for s in made]
    parts = [{part_of[w] for w in share} for share in shares]
    assert len(shares) == min(workers, len(set(part_of.values())))
    assert all(shares)
    for share, mine in zip(shares, parts):
        assert all(not mine & other for other in parts if other is not mine)
        assert share == [w for w in writes if part_of[w] in mine]
    assert sorted(map(repr, (w for share in shares for w in share))) == sorted(map(repr, writes))
    assert any(key_of[w] is None for share in shares for w in share)
    if tangled:
        assert sum(1 for mine in parts if ("db", "t", TANGLED) in mine) == 1


def _random_part(rnd: random.Random, n: int, keys: int) -> pa.Table:
    """A part's rows as pull keeps them, at random: inserts, updates (some changing their key, some
    with a key pull gave no text for) and deletes of `keys` keys of texts of every width over
    several tables, sliced out of a longer table."""
    lead = rnd.randrange(3)
    pool = [rnd.choice(["[{}]", "[{},\"é\"]", "[\"日本{}\"]", "[{},\"a\"]"]).format(k) for k in range(keys)]
    tables = rnd.sample(NAMES, rnd.randrange(1, len(NAMES) + 1))
    rows = []
    for i in range(n + lead):
        schema, table = rnd.choice(tables)
        op = rnd.choice(["insert", "update", "update", "delete"])
        before = None if op == "insert" else rnd.choice(pool)
        after = None if op == "delete" else before if op == "update" and rnd.random() < 0.6 else rnd.choice(pool)
        if op == "update" and rnd.random() < 0.05:
            before, after = (None, after) if rnd.random() < 0.5 else (before, None)
        rows.append({"schema": schema, "table": table, "commit_ts": rnd.randrange(n // 4 + 1), "seq": i, "op": op,
                     "before": None if op == "insert" else f"b{i}", "after": None if op == "delete" else f"a{i}",
                     "before_key": before, "after_key": after})
    return pa.Table.from_pylist(rows, schema=pa.schema(
        [("schema", pa.string()), ("table", pa.string()), ("commit_ts", pa.int64()), ("seq", pa.int64()),
         ("op", pa.string()), ("before", pa.string()), ("after", pa.string()), ("before_key", pa.string()),
         ("after_key", pa.string())])).slice(lead)


@pytest.mark.parametrize("workers", [1, 2, 3, 4, 16])
@pytest.mark.parametrize("seed", range(8))
def test_the_compiled_spread_makes_the_arrow_steps_shares(seed, workers, monkeypatch):
    """row_sink._writer_shares through compaction.spread_compacted (one compiled pass keys the
    changes and spreads them, each share sorted by the part's ranks) against the Arrow steps
    (keyed_sources, the parts dictionary-encoded, a filter per writer, compacted_order): the same
    writers, each with the same final rows in the same order, images numbered alike, every column
    of KEYED_SOURCES as the writers' alone; a few keys or thousands, nearly every change of its
    own key (the compiled set of texts grows past its first size), a null key, parts sliced."""
    from cdcflow.sink import compaction, row_sink

    rnd = random.Random(seed)
    rows = _random_part(rnd, rnd.randrange(1, 3000), [3, 40, 2500, 100_000][seed % 4])
    names = {f"{s}.{t}": None for s, t in zip(rows["schema"].to_pylist(), rows["table"].to_pylist())}
    keyed = compaction.keyed_sources(rows)
    spread = pa.compute.remainder(pa.compute.dictionary_encode(keyed["part"], null_encoding="encode")
                                  .combine_chunks().indices.cast(pa.int64()), workers)
    steps = {}
    for w in pa.compute.unique(spread).to_pylist():
        mine = keyed.filter(pa.compute.equal(spread, w)).combine_chunks()
        steps[w] = compaction.finals_of(mine, compaction.compacted_order(mine))
    whole = compaction.spread_compacted(rows, workers, set(names), tuple(compaction.KEYED_SOURCES.names))
    assert [w for w, _ in whole] == sorted(steps)
    for w, make in whole:
        assert make().equals(steps[w])

    layout = (row_sink.SPREAD_BY, None, {})
    fast = [make() for make in row_sink._writer_shares(rows, names, set(names), None, layout, workers)]
    monkeypatch.setattr(row_sink, "spread_compacted", lambda *a: None)
    arrow = [make() for make in row_sink._writer_shares(rows, names, set(names), None, layout, workers)]
    assert len(fast) == len(arrow) == min(workers, len(pa.compute.unique(keyed["part"])))
    for got, want in zip(fast, arrow):
        assert got.rows.equals(want.rows) and got.rows.column_names == list(row_sink.SHARED)
        assert got.images.equals(want.images)


def test_the_compiled_spread_leaves_to_the_arrow_steps_what_it_does_not_take(monkeypatch):
    """spread_compacted gives None (the caller takes the Arrow steps) for a row of a table it was not
    given, a change without an op, a null name, more tables than the compiled ranking takes, or
    without the module; spread_halves refuses columns of other types or lengths and no writer."""
    from cdcflow.sink import compaction, compiled_compaction

    rows, SHARE = _random_part(random.Random(1), 50, 10), ("kind", "source")
    tables = {f"{s}.{t}" for s, t in zip(rows["schema"].to_pylist(), rows["table"].to_pylist())}
    assert compaction.spread_compacted(rows, 2, tables, SHARE) is not None
    assert compaction.spread_compacted(rows, 2, set(sorted(tables)[1:]), SHARE) is None
    ops = rows["op"].to_pylist()
    assert compaction.spread_compacted(rows.set_column(4, "op", pa.array([None] + ops[1:], pa.string())), 2, tables,
                                       SHARE) is None
    schemas = rows["schema"].to_pylist()
    assert compaction.spread_compacted(rows.set_column(0, "schema", pa.array([None] + schemas[1:], pa.string())),
                                       2, tables, SHARE) is None
    many = [f"t{i % (compiled_compaction.MOST_TABLES_RANKED + 1)}" for i in range(rows.num_rows)]
    assert compaction.spread_compacted(rows.set_column(1, "table", pa.array(many)), 2, {f"db.{t}" for t in many},
                                       SHARE) is None
    monkeypatch.setattr(compaction, "compiled", lambda: None)
    assert compaction.spread_compacted(rows, 2, tables, SHARE) is None

    op, key = pa.array(["insert", "delete"]), pa.array(["[1]", None])
    assert [w for w, *_ in compiled_compaction.spread_halves(op, key[::-1], key, 2)] == [0]
    with pytest.raises(TypeError):
        compiled_compaction.spread_halves(op, pa.array([1, 2]), key, 2)
    with pytest.raises(ValueError):
        compiled_compaction.spread_halves(op, key, key[:1], 2)
    with pytest.raises(ValueError):
        compiled_compaction.spread_halves(op, key, key, 0)
    with pytest.raises(ValueError, match="without its op"):
        compiled_compaction.spread_halves(pa.array(["insert", None]), key, key, 2)


def test_a_spread_share_whose_compiled_finals_need_the_second_sort_takes_the_arrow_steps(monkeypatch):
    """Where the compiled end of compaction gives no finals (a part of several keys needs the
    DELETES_FIRST sort: never where each part is its key), spread_compacted's share is made from
    the whole rows by the Arrow steps, the same rows as the compiled finals give."""
    from types import SimpleNamespace

    from cdcflow.sink import compaction, compiled_compaction

    rows = _random_part(random.Random(3), 400, 30)
    tables = {f"{s}.{t}" for s, t in zip(rows["schema"].to_pylist(), rows["table"].to_pylist())}
    columns = tuple(compaction.KEYED_SOURCES.names)
    want = [(w, make()) for w, make in compaction.spread_compacted(rows, 3, tables, columns)]
    refusing = SimpleNamespace(**{n: getattr(compiled_compaction, n) for n in dir(compiled_compaction)
                                  if not n.startswith("_")})
    refusing.finals = lambda *a: None
    monkeypatch.setattr(compaction, "compiled", lambda: refusing)
    got = [(w, make()) for w, make in compaction.spread_compacted(rows, 3, tables, columns)]
    assert [w for w, _ in got] == [w for w, _ in want]
    assert all(g.equals(t) for (_, g), (_, t) in zip(got, want))
