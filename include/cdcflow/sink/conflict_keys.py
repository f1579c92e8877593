"""Conflict keys: which row changes of a segment must be written on one connection.

Apply spreads a segment's final changes over its writers by key (sink.partitions).  Two changes
of different keys can still touch the same row downstream when they share the value of another
unique key: a REPLACE of one removes the row the other holds, and on two connections they lock
each other (a deadlock the writer then waits out).  TiCDC's sink avoids that with its conflict
detector: each change's conflict keys are the values of every unique key in its images, and
changes that share one never run on two workers at once.

Here pull writes each change's conflict keys beside its key texts (`text`: for each other unique
key of the table, its number and its values as hex of their JSON, before and after; a column
NULL in an image gives none), and apply gives every change that shares one with another key's change one partition of
its table (`untangled_frame` in Spark SQL, `untangled_arrow` for a segment in hand): their
writes then run in order on one connection, the deletes first (compaction.final_changes), and
the rest of the segment stays spread by key.  The values are folded wider than any collation
(case, accents, trailing spaces): a fold too wide only puts more changes together."""

from __future__ import annotations

import unicodedata
from collections import defaultdict

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from cdcflow.sink.compaction import columns_decoder

CONFLICTS = "conflicts"  # the event column pull writes them in (core.event.Event)
SEPARATOR = ","
TANGLED = ""  # the part (what the writers are spread by) of a change that shares a conflict key

_encode = msgspec.json.Encoder().encode


def _fold(value: str) -> str:
    if value.isascii():
        return value.lower().rstrip(" ")
    plain = "".join(ch for ch in unicodedata.normalize("NFKD", value) if not unicodedata.combining(ch))
    return plain.casefold().rstrip(" ")


class ConflictTexts:
    """A table's conflict-key texts: `unique`, its unique keys besides the one changes are keyed
    by (ddl.table_def.TableInfo.other_unique_keys)."""

    def __init__(self, unique: dict[str, list[str]]):
        columns = sorted({c for cols in unique.values() for c in cols})
        self.decode = columns_decoder(tuple(columns))  # each image read once for every key
        at = {c: i for i, c in enumerate(columns)}
        # a key's number stands for its name in the texts (each table's are its own)
        self.keys = [(f"{n}:", [at[c] for c in cols]) for n, (_name, cols) in enumerate(sorted(unique.items()))]

    def text(self, before: str | None, after: str | None) -> str | None:
        """The conflict keys of a change with these images, None when it has none."""
        found = set()
        for image in (before, after):
            if image is None:
                continue
            row = self.decode(image)
            for name, at in self.keys:
                values = [row[i] for i in at]
                if None in values:
                    continue  # a unique key does not hold NULLs against each other
                found.add(name + _encode([_fold(v) if isinstance(v, str) else v for v in values]).hex())
        return SEPARATOR.join(sorted(found)) or None


def tangled_keys(rows) -> set[tuple[str, str, str]]:
    """(schema, table, key) of the changes whose conflict keys another key's change shares;
    `rows`: (schema, table, key, conflict text) of each change."""
    holders: dict[tuple, set[str]] = defaultdict(set)
    for schema, table, key, text in rows:
        if text:
            for ck in text.split(SEPARATOR):
                holders[(schema, table, ck)].add(key)
    return {(schema, table, key) for (schema, table, _), keys in holders.items() if len(keys) > 1 for key in keys}


def untangled_arrow(changes: pa.Table) -> pa.Table:
    """Keyed changes with their `conflicts` column: the part of each tangled one set to TANGLED,
    the column dropped."""
    cols = [changes[c].to_pylist() for c in ("schema", "table", "key", "conflicts")]
    tangled = tangled_keys(zip(*cols))
    out = changes.drop_columns(["conflicts"])
    if not tangled:
        return out
    mask = pa.array([(s, t, k) in tangled for s, t, k in zip(*cols[:3])], pa.bool_())
    part = pc.if_else(mask, pa.scalar(TANGLED), out["part"])
    return out.set_column(out.schema.get_field_index("part"), "part", part)


def untangled_frame(changes):
    """untangled_arrow in Spark SQL."""
    from pyspark.sql import functions as F  # lazy: pyspark is not loaded on the Spark-free paths

    held = (changes.where(F.col("conflicts").isNotNull())
            .select("schema", "table", "key", F.explode(F.split("conflicts", SEPARATOR)).alias("ck")))
    shared = (held.groupBy("schema", "table", "ck").agg(F.countDistinct("key").alias("keys"))
              .where(F.col("keys") > 1).select("schema", "table", "ck"))
    tangled = (held.join(shared, ["schema", "table", "ck"], "left_semi").select("schema", "table", "key")
               .distinct().withColumn("tangled", F.lit(True)))
    return (changes.join(tangled, ["schema", "table", "key"], "left")
            .withColumn("part", F.when(F.col("tangled"), F.lit(TANGLED)).otherwise(F.col("part")))
            .drop("tangled", "conflicts"))
