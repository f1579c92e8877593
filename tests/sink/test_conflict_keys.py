"""sink.conflict_keys: changes that share the value of a unique key other than the one they are
keyed by get one partition of their table (in Arrow and in Spark SQL alike), the rest keep
their key's; and the conflict texts fold values wider than any collation."""

from __future__ import annotations

import pyarrow as pa

from cdcflow.core.row_codec import encode_image
from cdcflow.sink.compaction import KEYED_ARROW
from cdcflow.sink.conflict_keys import TANGLED, ConflictTexts, tangled_keys, untangled_arrow, untangled_frame


def test_texts_fold_case_accents_and_trailing_spaces_and_skip_nulls():
    texts = ConflictTexts({"ux_email": ["email"], "ux_pair": ["a", "b"]})
    row = lambda **v: encode_image({"id": 1, "email": None, "a": None, "b": None, **v})  # noqa: E731
    assert texts.text(None, row()) is None  # every unique value NULL: no conflict key
    one = texts.text(None, row(email="Élan@x"))
    assert one == texts.text(row(email="elan@X  "), None) and "," not in one
    assert texts.text(None, row(email="elan@y")) != one
    both = texts.text(row(email="Élan@x"), row(email="Élan@x", a=1, b="z"))
    assert both.split(",")[0] != both.split(",")[1] and one in both.split(",")
    assert texts.text(None, row(a=1, b=None)) is None  # a key with a NULL column holds nothing


def _changes(rows):
    cols = list(zip(*rows))
    return pa.table({"schema": ["s"] * len(rows), "table": list(cols[0]), "key": list(cols[1]),
                     "part": list(cols[1]), "commit_ts": [10] * len(rows), "seq": list(range(len(rows))),
                     "sub": [1] * len(rows), "kind": ["U"] * len(rows), "image": ["{}"] * len(rows),
                     "conflicts": list(cols[2])}, schema=KEYED_ARROW.append(pa.field("conflicts", pa.string())))


# (table, key, conflict keys): k1 and k2 share "e1" (a swap of unique values), k3 shares
# "e1" only in another table, k4 holds "e2" alone (twice, as two changes of its own key)
ROWS = [("t", "k1", "e1,x9"), ("t", "k2", "e1"), ("u", "k3", "e1"), ("t", "k4", "e2"), ("t", "k4", "e2"),
        ("t", "k5", None)]


def test_changes_sharing_a_conflict_key_get_one_partition_of_their_table():
    assert tangled_keys((s, t, k, c) for t, k, c in ROWS for s in ["s"]) == {("s", "t", "k1"), ("s", "t", "k2")}
    out = untangled_arrow(_changes(ROWS))
    assert out.schema == KEYED_ARROW
    assert out["part"].to_pylist() == [TANGLED, TANGLED, "k3", "k4", "k4", "k5"]


def test_spark_sql_tangles_the_same_changes(spark):
    frame = spark.createDataFrame(_changes(ROWS).to_pandas())
    got = sorted((r["table"], r["key"], r["seq"], r["part"]) for r in untangled_frame(frame).collect())
    want = sorted(zip(*(untangled_arrow(_changes(ROWS))[c].to_pylist() for c in ("table", "key", "seq", "part"))))
    assert got == want
    assert "conflicts" not in untangled_frame(frame).columns
