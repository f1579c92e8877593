"""Conflict keys: which row changes of a window must be written on one connection.

Apply spreads a segment's final changes over its writers by key (sink.partitions).  Two changes
of different keys can still touch the same row downstream when they share the value of another
unique key: a REPLACE of one removes the row the other holds, and on two connections they lock
each other (a deadlock the writer then waits out).  TiCDC's sink avoids that with its conflict
detector: each change's conflict keys are the values of every unique key in its images, and
changes that share one never run on two workers at once.

Pull finds them, since it sees every change of the window in one pass (stages.pull_keys): per
table, each change gives (value, key) pairs (`ConflictValues`: for each unique key besides the
one changes are keyed by, its columns' names and values, folded wider than any collation,
before and after, a column NULL in an image giving none; the key is the change's key text in
that image), held in Arrow (`ConflictPairs`).  At the window's end `tangled` gives, per table,
the keys that share a value with another key: the table's KeySpans list them
(stages.contracts).  Apply then only picks the part (what the writers are spread by) from the
key column: compaction.TANGLED for a listed key, the key itself otherwise
(compaction.keyed_arrow: an expression, no join, no Spark job of its own), so the
tangled changes of a table run in order on one connection, the deletes first
(compaction.DELETES_FIRST), and the rest of the segment stays spread by key.

Marks go by key, not by change: a key's changes must share one part, or its last change would
be taken twice.  Pull cannot mark the changes themselves, since a key's earlier changes are
written before a later change shows that another key uses one of their values.  A window (and
so every segment of it) is judged whole: a pair of keys that share a value anywhere in it share
a part in every segment.  A fold too wide, or a value shared in another segment, only puts more
changes together.

Memory: the pairs of one window are held as Arrow string arrays (tens of bytes a
pair), de-duplicated per batch and compacted as they grow, to PAIRS_BYTES in all; past that,
the table holding the most goes `all tangled` (every change of it in the window on one
connection: a table with that many unique values changing in one window), its pairs dropped
and no more taken.  So does a table with more than TANGLED_LISTED tangled keys (the list
travels in the spans and in apply's plans)."""

from __future__ import annotations

import unicodedata
from operator import attrgetter
from typing import Any

import msgspec

import pyarrow as pa
import pyarrow.compute as pc

PAIRS_BYTES = 256 << 20  # the (value, key) pairs one pull holds, in all
TANGLED_LISTED = 10_000  # the most tangled keys listed for a table: beyond, all of it is tangled
PAIRS_SCHEMA = pa.schema([("schema", pa.string()), ("table", pa.string()), ("value", pa.string()),
                          ("key", pa.string())])

_US = "\x1f"  # between a value's parts


def _fold(value: str) -> str:
    """`value` as no collation tells it apart from a wider set: case, accents and trailing spaces gone."""
    if value.isascii():
        return value.lower().rstrip(" ")
    plain = "".join(ch for ch in unicodedata.normalize("NFKD", value) if not unicodedata.combining(ch))
    return plain.casefold().rstrip(" ")


class ConflictValues:
    """A table's conflict-key values: `unique`, its unique keys besides the one changes are keyed
    by (ddl.table_def.TableInfo.other_unique_keys).  A value's text is its key's columns' names
    (not the key's own name, which a rename changes) and its values, folded, between unit
    separators: texts that two values share by chance only put more changes together."""

    def __init__(self, unique: dict[str, list[str]]):
        columns = sorted({c for cols in unique.values() for c in cols})
        # a batch's images decoded in one call, the key's columns alone (as compaction.columns_decoder
        # reads one): the per-image calls cost more than the decoding
        struct = msgspec.defstruct("Unique", [(f"k{i}", Any) for i in range(len(columns))],
                                   rename={f"k{i}": c for i, c in enumerate(columns)}, gc=False)
        self.decode = msgspec.json.Decoder(list[struct]).decode
        at = {c: f"k{i}" for i, c in enumerate(columns)}
        # each unique key's text before its values, and its columns (the compiled reader's too)
        self.unique = [(",".join(sorted(c.lower() for c in cols)) + _US, list(cols)) for cols in unique.values()]
        self.keys = [(prefix, attrgetter(*[at[c] for c in cols]), len(cols)) for prefix, cols in self.unique]

    def pairs(self, changes) -> set[tuple[str, str]]:
        """(value's text, key text) of each conflict key of `changes`, (before, after, before_key,
        after_key) each."""
        images, keyed = [], []
        for before, after, kb, ka in changes:
            if before is not None and kb is not None:
                images.append(before)
                keyed.append(kb)
            if after is not None and ka is not None:
                images.append(after)
                keyed.append(ka)
        found: set[tuple[str, str]] = set()
        add, rows = found.add, self.decode("[" + ",".join(images) + "]") if images else []
        for prefix, get, width in self.keys:
            for row, key in zip(rows, keyed):
                v = get(row)
                if width == 1:  # most unique keys: one column
                    if v is not None:  # a unique key does not hold NULLs against each other
                        add((prefix + (_fold(v) if isinstance(v, str) else str(v)), key))
                elif None not in v:
                    add((prefix + _US.join(_fold(x) if isinstance(x, str) else str(x) for x in v), key))
        return found


def value_part(text: str) -> str:
    """One column's part of a value's text, from the value's JSON text in an image, as
    ConflictValues.pairs writes it (the compiled reader's way for the values it does not fold itself)."""
    v = msgspec.json.decode(text)
    return _fold(v) if isinstance(v, str) else str(v)


class ConflictPairs:
    """One pull's (value, key) pairs, per (schema, table), within `budget` bytes; `all_tangled`:
    the tables that went past it (module docstring)."""

    def __init__(self, budget: int = PAIRS_BYTES):
        self.budget = budget
        self.held: dict[tuple[str, str], list[pa.Table]] = {}
        self.all_tangled: set[tuple[str, str]] = set()
        self._bytes: dict[tuple[str, str], int] = {}
        self._compact_at: dict[tuple[str, str], int] = {}

    def wanted(self, table: tuple[str, str]) -> bool:
        return table not in self.all_tangled

    def add(self, table: tuple[str, str], pairs: set[tuple[str, str]]) -> None:
        if not pairs or table in self.all_tangled:
            return
        values, keys = zip(*pairs)
        self.add_arrays(table, pa.array(values, pa.string()), pa.array(keys, pa.string()))

    def add_arrays(self, table: tuple[str, str], values: pa.Array, keys: pa.Array) -> None:
        """add's pairs as two string arrays (the compiled reader's, not yet each once)."""
        if not len(values) or table in self.all_tangled:
            return
        chunk = pa.table([values, keys], names=["value", "key"])
        self.held.setdefault(table, []).append(chunk)
        self._bytes[table] = self._bytes.get(table, 0) + chunk.nbytes
        if self._bytes[table] >= 2 * self._compact_at.get(table, 1 << 20):
            self._compact(table)
        while sum(self._bytes.values()) > self.budget:
            self.tangle_all(max(self._bytes, key=self._bytes.get))

    def tangle_all(self, table: tuple[str, str]) -> None:
        """Every change of `table` tangled: its pairs dropped, no more taken."""
        self.all_tangled.add(table)
        self.held.pop(table, None)
        self._bytes.pop(table, None)

    def _compact(self, table: tuple[str, str]) -> None:
        """The table's pairs, each once (an OLTP window changes the same rows again and again)."""
        merged = _distinct(pa.concat_tables(self.held[table]))
        self.held[table] = [merged]
        self._bytes[table] = self._compact_at[table] = merged.nbytes

    def table(self) -> pa.Table:
        """Every pair held, with its schema and table (PAIRS_SCHEMA): what a range of a parallel
        pull hands to the driver (stages.pull_ranges)."""
        parts = []
        for (schema, name), chunks in self.held.items():
            t = _distinct(pa.concat_tables(chunks))
            parts.append(pa.table([pa.repeat(pa.scalar(schema, pa.string()), t.num_rows),
                                   pa.repeat(pa.scalar(name, pa.string()), t.num_rows), t["value"], t["key"]],
                                  schema=PAIRS_SCHEMA))
        return pa.concat_tables(parts) if parts else PAIRS_SCHEMA.empty_table()

    def merge(self, pairs: pa.Table) -> None:
        """Another pull's pairs (a range's `table()`) added to these."""
        if not pairs.num_rows:
            return
        names = pc.binary_join_element_wise(pairs["schema"], pairs["table"], "\0")
        for name in pc.unique(names).to_pylist():
            schema, table = name.split("\0", 1)
            mine = pairs.filter(pc.equal(names, name))
            chunk = pa.table([mine["value"], mine["key"]], names=["value", "key"])
            if (schema, table) not in self.all_tangled:
                self.held.setdefault((schema, table), []).append(chunk)
                self._bytes[(schema, table)] = self._bytes.get((schema, table), 0) + chunk.nbytes

    def tangled(self) -> dict[tuple[str, str], list[str] | None]:
        """Per table with any: its keys that share a conflict-key value with another key (None:
        every change of the table is tangled)."""
        out: dict[tuple[str, str], list[str] | None] = dict.fromkeys(self.all_tangled)
        for table, chunks in self.held.items():
            pairs = _distinct(pa.concat_tables(chunks))
            per_value = pairs.group_by("value").aggregate([("key", "count")])
            shared = per_value.filter(pc.greater(per_value["key_count"], 1))["value"]
            if not len(shared):
                continue
            keys = pc.unique(pairs.filter(pc.is_in(pairs["value"], shared))["key"]).to_pylist()
            out[table] = sorted(keys) if len(keys) <= TANGLED_LISTED else None
        return out


def _distinct(pairs: pa.Table) -> pa.Table:
    return pairs.group_by(["value", "key"]).aggregate([])
