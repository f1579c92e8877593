"""sink.conflict_keys: the values of a table's other unique keys fold wider than any collation;
the keys that share one with another key in the window are found (within one pull, across a
parallel pull's ranges, with memory bounded); and apply only picks the part from the key column
(TANGLED for those keys), in Arrow and in Spark SQL alike."""

from __future__ import annotations

import pyarrow as pa

from cdcflow.core.row_codec import encode_image
from cdcflow.core.arrow_rows import spark_schema
from cdcflow.sink.compaction import KEYED_ARROW, TANGLED, keyed_arrow, keyed_batches
from cdcflow.sink.conflict_keys import ConflictPairs, ConflictValues


def _row(**v):
    return encode_image({"id": 1, "email": None, "a": None, "b": None, **v})


def test_values_fold_case_accents_and_trailing_spaces_and_skip_nulls():
    values = ConflictValues({"ux_email": ["email"], "ux_pair": ["a", "b"]})
    pairs = lambda before, after: values.pairs([(before, after, "[1]", "[1]")])  # noqa: E731
    assert pairs(None, _row()) == set()  # every unique value NULL: no conflict key
    one = pairs(None, _row(email="Élan@x"))
    assert one == pairs(_row(email="elan@X  "), None) and len(one) == 1
    assert pairs(None, _row(email="elan@y")) != one
    both = pairs(_row(email="Élan@x"), _row(email="Élan@x", a=1, b="z"))
    assert len(both) == 2 and one < both
    assert pairs(None, _row(a=1, b=None)) == set()  # a key with a NULL column holds nothing
    # the same values in another unique key are another conflict key
    other = ConflictValues({"ux_a": ["a"], "ux_b": ["b"]})
    assert len(other.pairs([(None, _row(a="v", b="v"), None, "[1]")])) == 2


def _pairs(changes) -> ConflictPairs:
    """changes: (table, key, value) each, as ConflictValues gives them."""
    pairs = ConflictPairs()
    for table, key, value in changes:
        pairs.add(("s", table), {(value, key)})
    return pairs


# k1 and k2 share "e1" (a swap of unique values), k3 holds "e1" in another table only, k4 holds
# "e2" alone (twice, as two changes of its own key)
CHANGES = [("t", "k1", "e1"), ("t", "k1", "x9"), ("t", "k2", "e1"), ("u", "k3", "e1"), ("t", "k4", "e2"),
           ("t", "k4", "e2")]


def test_the_keys_sharing_a_value_are_tangled_and_the_others_not():
    assert _pairs(CHANGES).tangled() == {("s", "t"): ["k1", "k2"]}
    assert _pairs([c for c in CHANGES if c[1] != "k2"]).tangled() == {}


def test_a_value_two_ranges_share_tangles_their_keys():
    """A parallel pull: each range's pairs (ConflictPairs.table) merged in the driver."""
    first, second = _pairs(CHANGES[:2]), _pairs(CHANGES[2:])
    assert first.tangled() == {} and second.tangled() == {}
    window = ConflictPairs()
    for part in (first, second):
        window.merge(part.table())
    assert window.tangled() == {("s", "t"): ["k1", "k2"]}


def test_past_its_budget_the_biggest_table_is_all_tangled():
    pairs = ConflictPairs(budget=1_000)  # a pair here: about 20 bytes
    pairs.add(("s", "small"), {("v", "[1]")})
    for i in range(100):
        pairs.add(("s", "big"), {(f"value {i}", f"[{i}]")})
    assert pairs.tangled() == {("s", "big"): None}
    pairs.add(("s", "big"), {("more", "[0]")})  # no more taken
    assert ("s", "big") not in pairs.held and pairs.wanted(("s", "small")) and not pairs.wanted(("s", "big"))


def _pulled_rows() -> pa.Table:
    """Row events with pull's key texts: an update of k1 in t, a key change k2 -> k5 in t, an
    insert of k3 in u."""
    return pa.table({"schema": ["s", "s", "s"], "table": ["t", "t", "u"], "commit_ts": [10, 11, 12],
                     "seq": [0, 0, 0], "op": ["update", "update", "insert"], "before": ["{}", "{}", None],
                     "after": ["{}", "{}", "{}"], "before_key": ["k1", "k2", None], "after_key": ["k1", "k5", "k3"]})


def _parts(table: pa.Table) -> list[tuple]:
    return sorted(zip(*(table[c].to_pylist() for c in ("table", "key", "part"))))


def test_apply_picks_the_part_from_the_key_column(spark):
    rows = _pulled_rows()
    assert _parts(keyed_arrow(rows)) == [("t", "k1", "k1"), ("t", "k2", "k2"), ("t", "k5", "k5"),
                                         ("u", "k3", "k3")]
    listed = {("s", "t"): frozenset({"k1", "k5"})}
    assert _parts(keyed_arrow(rows, listed)) == [("t", "k1", TANGLED), ("t", "k2", "k2"), ("t", "k5", TANGLED),
                                                 ("u", "k3", "k3")]
    whole = {("s", "u"): None, ("s", "t"): frozenset({"k2"})}
    assert _parts(keyed_arrow(rows, whole)) == [("t", "k1", "k1"), ("t", "k2", TANGLED), ("t", "k5", "k5"),
                                                ("u", "k3", TANGLED)]
    frame = spark.createDataFrame(rows.to_pandas())
    for tangled in (None, listed, whole):
        keyed = frame.mapInArrow(lambda it, tangled=tangled: keyed_batches(it, tangled), spark_schema(KEYED_ARROW))
        got = sorted((r["table"], r["key"], r["part"]) for r in keyed.collect())
        assert got == _parts(keyed_arrow(rows, tangled))


def test_spans_of_an_older_pull_tangle_nothing():
    """A window pulled before pull looked for conflict keys: its spans have no list, and apply
    spreads every key (as it did then); the spans' lists are the window's, over a segment."""
    import msgspec

    from cdcflow.sink.table_keys import by_table, tangled_by_pull
    from cdcflow.stages.contracts import KeySpan

    old = msgspec.json.decode(b'[{"schema": "s", "table": "t", "first_ts": 5, "last_ts": 9, "key": ["id"]}]',
                              type=list[KeySpan])
    assert tangled_by_pull(by_table(old), ("s", "t"), 0, 10) == frozenset()
    new = [KeySpan(schema="s", table="t", first_ts=5, last_ts=9, key=["id"], tangled=["[1]", "[2]"]),
           KeySpan(schema="s", table="u", first_ts=5, last_ts=9, key=["id"], all_tangled=True)]
    assert tangled_by_pull(by_table(new), ("s", "t"), 6, 7) == {"[1]", "[2]"}
    assert tangled_by_pull(by_table(new), ("s", "t"), 9, 20) == frozenset()  # no change of t in (9, 20]
    assert tangled_by_pull(by_table(new), ("s", "u"), 0, 10) is None
    assert tangled_by_pull(None, ("s", "t"), 0, 10) == frozenset()
