"""Compaction of a segment's row changes to one final image per key.

Each change gets its key as the downstream's index compares it (collation_key): from the texts
pull wrote (keyed_arrow), or computed here (keyed_changes; msgspec decodes the key's columns
alone, columns_decoder).  An UPDATE that changes the key is split, DELETE first.  The last
change of each key is then kept (compacted_arrow), in DELETES_FIRST order for the writers.
Each step is one function over Arrow data, run on a small segment's rows in the stage's
process and inside Spark tasks on a large one (keyed_batches, compacted_partition: mapInArrow
after Spark's shuffle by part), so the two places cannot differ.  `final_changes`, the same in
Python over sorted rows, compacts each upstream transaction (transaction-atomicity = table)
and is the reference the tests hold compacted_arrow to.
"""

from __future__ import annotations

from functools import cache, partial
from typing import Any, Iterator

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from msgspec.structs import astuple

from cdcflow.core import heap
from cdcflow.core.arrow_rows import int64_array, rows_batch
from cdcflow.core.build_extensions import loaded
from cdcflow.sink.collation_key import KeyFolder

KEYED_ARROW = pa.schema([("schema", pa.string()), ("table", pa.string()), ("key", pa.string()),
                          ("part", pa.string()), ("commit_ts", pa.int64()), ("seq", pa.int64()),
                          ("sub", pa.int32()), ("kind", pa.string()), ("image", pa.string())])


def key_of(image: dict, cols: list[str]) -> str:
    return _key_text([image[c] for c in cols])


_encode_json = msgspec.json.Encoder().encode


def _key_text(vals) -> str:
    return _encode_json(vals).decode()  # compact JSON, UTF-8 as is


def keyed_changes(batches: Iterator[pa.RecordBatch], keys: dict[str, list[str]],
                  folder: KeyFolder | None = None) -> Iterator[pa.RecordBatch]:
    """Each change with its key (as `folder` compares key values; `part`, what the
    partitioner hashes, is the key too); an UPDATE that changes the key becomes a DELETE of
    the old key (sub 0) and an INSERT of the new one (sub 1): TiCDC's split of key-changing UPDATEs, DELETE
    first.  An UPDATE to a spelling the collation takes as equal keeps its key: an update
    of the same row.  Kinds: I (the key's row is new: an INSERT), U (an UPDATE of the
    key's row), D.  (keyed_arrow is the same over the key texts pull wrote.)"""
    heap.settle()
    keyer = Keyer(keys, folder or KeyFolder({}))
    try:
        yield from (_keyed_batch(batch, keyer) for batch in batches)
    finally:
        keyer.folder.close()


def columns_decoder(cols: tuple[str, ...]):
    """A decoder of a row image's key columns alone, as a tuple of their plain JSON values (the
    values msgspec.json.decode gives): the other columns are skipped, not built, which made the
    keying pass several times cheaper on rows of a few columns."""
    fields = [(f"k{i}", Any) for i in range(len(cols))]
    struct = msgspec.defstruct("Key", fields, rename={f"k{i}": c for i, c in enumerate(cols)}, gc=False)
    decode = msgspec.json.Decoder(struct).decode
    return lambda text: astuple(decode(text))


class Keyer:
    """The key texts of row images: per table ("schema.table"), its key's values as `folder`
    compares them, as compact JSON.  What apply compacts and partitions by, whether pull wrote
    it beside the images (stages.pull_keys) or apply computes it here (keyed_changes)."""

    def __init__(self, keys: dict[str, list[str]], folder: KeyFolder):
        self.keys, self.folder = keys, folder
        self.decoders: dict[str, object] = {}  # per table, its key's decoder

    def set(self, table: str, key: list[str], collations: dict[str, str | None]) -> None:
        """`table`'s key is now `key`, its string columns compared by `collations`."""
        self.keys[table] = key
        self.decoders.pop(table, None)
        self.folder.set(table, collations)

    def texts(self, names: list[str], ops: list[str], befores: list, afters: list) -> list[tuple]:
        """(before's key text, after's) of each change (None where it has no such image)."""
        keys, folder, decoders = self.keys, self.folder, self.decoders
        tables = set(names)
        for name in tables - decoders.keys():
            decoders[name] = columns_decoder(tuple(keys[name]))
        if len(tables) == 1 and not folder.folds(names[0]):  # one table's, nothing folded: pull's common case
            decode, encode = decoders[names[0]], _encode_json
            return [(encode(decode(before)).decode() if op != "insert" else None,
                     encode(decode(after)).decode() if op != "delete" else None)
                    for op, before, after in zip(ops, befores, afters)]
        values = [(decoders[name](before) if op != "insert" else None,
                   decoders[name](after) if op != "delete" else None)
                  for name, op, before, after in zip(names, ops, befores, afters)]
        folder.prepare([(name, dict(zip(keys[name], vals))) for name, pair in zip(names, values)
                        if folder.folds(name) for vals in pair if vals is not None])

        def key(table: str, vals: tuple | None) -> str | None:
            if vals is None:
                return None
            if folder.folds(table):
                vals = [folder.value(table, c, v) for c, v in zip(keys[table], vals)]
            return _key_text(vals)  # a tuple and a list: the same JSON array

        return [(key(name, bv), key(name, av)) for name, (bv, av) in zip(names, values)]


def _keyed_batch(batch: pa.RecordBatch, keyer: Keyer) -> pa.RecordBatch:
    out: list[tuple] = []  # one tuple per keyed change (core.arrow_rows)

    def add(schema, table, key, ts, seq, sub, kind, image):
        out.append((schema, table, key, key, ts, seq, sub, kind, image))  # part: the key

    cols = batch.to_pydict()
    names = [f"{s}.{t}" for s, t in zip(cols["schema"], cols["table"])]
    texts = keyer.texts(names, cols["op"], cols["before"], cols["after"])
    for (schema, table, ts, seq, op, before, after), (kb, ka) in zip(
            zip(cols["schema"], cols["table"], cols["commit_ts"], cols["seq"], cols["op"], cols["before"],
                cols["after"]), texts):
        if op == "insert":
            add(schema, table, ka, ts, seq, 1, "I", after)
        elif op == "delete":
            add(schema, table, kb, ts, seq, 1, "D", before)
        else:
            if kb != ka:
                add(schema, table, kb, ts, seq, 0, "D", before)
            add(schema, table, ka, ts, seq, 1, "I" if kb != ka else "U", after)
    return rows_batch(out, KEYED_ARROW)


TANGLED = ""  # the part of the keys pull found sharing another unique key's value (no key text is empty)


def final_changes(rows: Iterator[tuple]) -> Iterator[tuple]:
    """Rows (schema, table, part, key, kind, image, ...) sorted by (schema, table, part, key,
    commit order) in; the last change of each key out, and within one `part` (spellings of
    a key that a case-insensitive collation treats as equal) the DELETEs before the
    upserts.  An upsert's kind says whether the key's row existed before these changes:
    I when its first change created it, U when it was there already."""
    group: list[tuple] = []  # the last change of each key seen so far in the current part
    prev = first = None  # the current key's latest change, and the kind of its first one
    for r in rows:
        if prev is not None and (r[0], r[1], r[3]) != (prev[0], prev[1], prev[3]):
            yield from _close_part(group, prev)
            group.append(_final(prev, first))
            prev = None
        if prev is None:
            first = r[4]
        prev = r
    if prev is not None:
        yield from _close_part(group, prev)
        group.append(_final(prev, first))
    yield from _deletes_first(group)


def _final(last: tuple, first_kind: str) -> tuple:
    kind = "D" if last[4] == "D" else "I" if first_kind == "I" else "U"
    return last if kind == last[4] else last[:4] + (kind,) + last[5:]


def _close_part(group: list[tuple], nxt: tuple) -> Iterator[tuple]:
    """Flush the group when `nxt` starts another part."""
    if group and (nxt[0], nxt[1], nxt[2]) != (group[0][0], group[0][1], group[0][2]):
        yield from _deletes_first(group)
        group.clear()


def _deletes_first(group: list[tuple]) -> Iterator[tuple]:
    if len(group) == 1:
        yield group[0]
        return
    yield from (r for r in group if r[4] == "D")
    yield from (r for r in group if r[4] != "D")


def keyed_arrow(rows: pa.Table, tangled: dict | None = None) -> pa.Table:
    """keyed_changes over the key texts pull wrote beside the images (before_key, after_key:
    stages.pull_keys), with no key decoded: each change with its key, a key-changing UPDATE as
    a DELETE of the old key (sub 0) and an INSERT of the new.  `tangled`: per (schema, table),
    the keys whose changes go to one part of it, TANGLED (None: all of its keys), as pull found
    them (sink.conflict_keys)."""
    return with_images(keyed_sources(rows, tangled), images_of(rows))


# keyed_arrow's rows with, in place of the image, its row in images_of (the changes' images):
# what a segment in this process's hands is compacted as, the images of its final rows alone
# taken, once (finals_of).  Carried through the keying and the spread, each image was copied
# twice more into memory taken fresh: 7,000 page faults in the making of the bench's bulk
# window's first part (which the writers wait for) against 2,300, and 27-35 ms against about 20
KEYED_SOURCES = pa.schema([*KEYED_ARROW][:-1] + [pa.field("source", pa.int64())])


def images_of(rows: pa.Table) -> pa.ChunkedArray:
    """The images keyed_sources' `source` numbers: the rows' before images, then their after images."""
    return pa.chunked_array(rows["before"].chunks + rows["after"].chunks, pa.string())


def keyed_sources(rows: pa.Table, tangled: dict | None = None) -> pa.Table:
    """keyed_arrow without the images (KEYED_SOURCES)."""
    op, kb, ka, n = rows["op"], rows["before_key"], rows["after_key"], rows.num_rows
    split = pc.and_(pc.equal(op, "update"), pc.invert(pc.fill_null(pc.equal(kb, ka), False)))
    gone = pc.or_(pc.equal(op, "delete"), split)
    now = pc.not_equal(op, "delete")

    def part(mask, key: str, sub, kind, first: int) -> pa.Table:
        # only the columns this half reads
        taken = rows.select(["schema", "table", "commit_ts", "seq", "op", key]).filter(mask)
        m, mask_kept = taken.num_rows, pc.filter(split, mask)
        return pa.table({"schema": taken["schema"], "table": taken["table"], "key": taken[key],
                         "part": _tangled_part(taken, taken[key], tangled),
                         "commit_ts": taken["commit_ts"], "seq": taken["seq"],
                         "sub": sub(mask_kept) if callable(sub) else pa.repeat(pa.scalar(sub, pa.int32()), m),
                         "kind": kind(taken, mask_kept),
                         "source": pc.add(pc.indices_nonzero(mask).cast(pa.int64()), first)},
                        schema=KEYED_SOURCES)

    deletes = part(gone, "before_key", lambda s: pc.if_else(s, 0, 1).cast(pa.int32()),
                   lambda t, s: pa.repeat(pa.scalar("D"), t.num_rows), 0)
    upserts = part(now, "after_key", 1,
                   lambda t, s: pc.if_else(pc.or_(pc.equal(t["op"], "insert"), s), "I", "U"), n)
    return pa.concat_tables([deletes, upserts])


def spread_compacted(rows: pa.Table, workers: int, tables: set[str], columns: tuple[str, ...]) -> list | None:
    """keyed_sources's rows spread over `workers` writers as row_sink._writer_shares spreads them
    (a distinct part to each writer in turn, in order of first appearance), each writer's share
    compacted as compacted_order compacts it: of each writer with changes, (the writer, what
    makes its final rows), in writer order, each share made apart when asked, of the `columns`
    of KEYED_SOURCES given, each taken for the final rows alone.  One compiled pass keys and
    spreads the changes (compiled_compaction.spread_halves); a share is sorted by its tables'
    ranks over the whole part's.  Each part is its key: for rows with no tangled keys
    (keyed_arrow).  The Arrow steps filtered every column twice, to key the changes and to spread
    them, dictionary-encoded the parts, ranked each share's tables and took every column of its
    finals: 0.28 us a change on the bench's bulk window.  None where the module is not built, a
    change has no op or no table, or a row is of a table not in `tables` ("schema.table"): the
    caller takes the Arrow steps."""
    module = compiled()
    if module is None or not rows.num_rows or rows["op"].null_count:
        return None
    ranked = module.ranked_tables(rows["schema"].combine_chunks(), rows["table"].combine_chunks())
    if ranked is None or not {f"{s}.{t}" for s, t in ranked[1]} <= tables:
        return None
    op, before, after = (rows[c].combine_chunks() for c in ("op", "before_key", "after_key"))
    keys = pa.concat_arrays([before, after])  # numbered as images_of numbers the images

    def share(images: pa.Array, at: pa.Array, sub: pa.Array, kind: pa.Array) -> pa.Table:
        key = keys.take(images)
        by = pa.table({"tables": ranked[0].take(at), "part": key, "commit_ts": rows["commit_ts"].take(at),
                       "seq": rows["seq"].take(at), "sub": sub})
        order = _sorted(by)
        got = module.finals(order, by["tables"].combine_chunks(), key, None, kind)
        if got is None:  # never where each part is one key; the Arrow steps then, from the whole rows
            whole = pa.table({"schema": rows["schema"].take(at), "table": rows["table"].take(at), "key": key,
                              "part": key, "commit_ts": by["commit_ts"], "seq": by["seq"], "sub": sub,
                              "kind": kind, "source": images}, schema=KEYED_SOURCES)
            return finals_of(whole, compacted_order(whole), columns=columns)
        final = got[0]
        row = at.take(final)
        taken = {"schema": lambda: rows["schema"].take(row), "table": lambda: rows["table"].take(row),
                 "key": lambda: key.take(final), "part": lambda: key.take(final),
                 "commit_ts": lambda: rows["commit_ts"].take(row), "seq": lambda: rows["seq"].take(row),
                 "sub": lambda: sub.take(final), "kind": lambda: got[1], "source": lambda: images.take(final)}
        return pa.table({c: taken[c]() for c in columns}, schema=pa.schema([KEYED_SOURCES.field(c) for c in columns]))

    return [(w, partial(share, *made)) for w, *made in module.spread_halves(op, before, after, workers)]


def as_sources(keyed: pa.Table, first: int) -> tuple[pa.Table, pa.ChunkedArray]:
    """KEYED_ARROW rows as KEYED_SOURCES, their images numbered from `first` on, and the images."""
    numbers = int64_array(np.arange(first, first + keyed.num_rows, dtype=np.int64))
    return keyed.set_column(keyed.num_columns - 1, "source", numbers), keyed["image"]


def with_images(keyed: pa.Table, images: pa.ChunkedArray, kinds=None) -> pa.Table:
    """KEYED_SOURCES rows (or some of their columns) as KEYED_ARROW's: each with its image in place
    of its number (and its kind from `kinds`, if given)."""
    if kinds is not None:
        keyed = keyed.set_column(keyed.schema.get_field_index("kind"), "kind", kinds)
    return keyed.set_column(keyed.schema.get_field_index("source"), "image", images.take(keyed["source"]))


def _tangled_part(rows: pa.Table, key, tangled: dict | None):
    """The part of each change: TANGLED for a key of `tangled` (keyed_arrow), the key otherwise."""
    if not tangled:
        return key
    mask = None
    for (schema, table), keys in tangled.items():
        one = pc.and_(pc.equal(rows["schema"], schema), pc.equal(rows["table"], table))
        if keys is not None:
            one = pc.and_(one, pc.is_in(key, pa.array(sorted(keys), pa.string())))
        mask = one if mask is None else pc.or_(mask, one)
    return pc.if_else(mask, pa.scalar(TANGLED), key)


# The order of a compacted partition's rows for the writers (partitions.apply_partition): in
# each part its DELETEs first, so that a key that only changed case (or trailing spaces) under
# a case-insensitive collation, which shares its old spelling's part, has the old image gone
# before the new one is written; and the swaps of a tangled part (sink.conflict_keys) find their
# values free.
DELETES_FIRST = ("schema", "table", "part", "upsert", "key")  # upsert: the kind is not D


def compacted_arrow(changes: pa.Table) -> pa.Table:
    """compacted (per key) in Arrow, for a segment's rows in hand: of each (schema, table,
    part, key), its last change in commit order, of the kind final_changes gives it, in
    DELETES_FIRST order."""
    if not changes.num_rows:
        return changes
    return finals_of(changes, compacted_order(changes))


def compacted_order(changes: pa.Table) -> pa.Table:
    """compacted_arrow without the images: of each key, the row number in `changes` of its last
    change and the kind it ends with (columns row, kind), in DELETES_FIRST order.  Both sorts
    run over the narrow columns and the row numbers, so that the images are taken once, by
    whoever takes these rows (a sort of the whole rows moved every image twice: half of the
    compaction's time on the bench's oltp window).  After the first sort, the compiled pass
    (sink/compiled_compaction.pyx) where it is built, else its reference, _finals_in_arrow."""
    by = _sort_columns(changes)
    order = _sorted(by)
    module = compiled()
    if module is not None and "tables" in by.column_names:
        got = module.finals(order, by["tables"].combine_chunks(), changes["part"].combine_chunks(),
                            changes["key"].combine_chunks() if "key" in by.column_names else None,
                            changes["kind"].combine_chunks())
        if got is not None:
            return pa.table({"row": got[0], "kind": got[1]})
    return _finals_in_arrow(changes, by, order)


def _sorted(by: pa.Table) -> pa.Array:
    """The order of rows by every column of `by`, ascending."""
    return pc.sort_indices(by, sort_keys=[(c, "ascending") for c in by.column_names])


@cache
def compiled():
    """The compiled end of compacted_order; None: not built, or CDCFLOW_COMPACTION=python asks
    for the reference."""
    return loaded("cdcflow.sink.compiled_compaction", "CDCFLOW_COMPACTION", "apply compacts with the Arrow reference")


def _finals_in_arrow(changes: pa.Table, by: pa.Table, order: pa.Array) -> pa.Table:
    """compacted_order's finals of the rows `order` sorts, in Arrow (compiled_compaction.finals's
    reference): each run's last row and its kind, sorted again into DELETES_FIRST order where a
    part of several keys has them otherwise."""
    t = changes.select(["schema", "table", "part", "key", "kind"]).take(order)
    starts = run_starts(by.take(order), [c for c in by.column_names if c not in ("commit_ts", "seq", "sub")])
    last = pa.concat_arrays([starts, pa.array([True])])
    first = pa.concat_arrays([pa.array([True]), starts])
    finals = t.filter(last)
    first_kind = t["kind"].filter(first)  # one per key, in the same order as finals
    kind = pc.if_else(pc.equal(finals["kind"], "D"), "D", pc.if_else(pc.equal(first_kind, "I"), "I", "U"))
    finals = pa.table({"schema": finals["schema"], "table": finals["table"], "part": finals["part"],
                       "upsert": pc.not_equal(kind, "D"), "key": finals["key"], "kind": kind,
                       "row": order.filter(last)})
    if not _deletes_lead(finals):
        finals = finals.take(pc.sort_indices(finals, sort_keys=[(c, "ascending") for c in DELETES_FIRST]))
    return finals.select(["row", "kind"])


def _sort_columns(changes: pa.Table) -> pa.Table:
    """What orders `changes` as (schema, table, part, key, commit_ts, seq, sub) do, for less: the
    schema and table as one number, their rank among the changes' tables, and the key only where
    some part holds another key.  A sort's every comparison went through the schema's and the
    table's texts first, equal in most: 10.7 ms of a 60,000-change part of the bench's, 5.3 ms
    so (compacted_order's sort, on apply's first part, which the writers wait for).
    Where a schema or table is null (no change of a row has one), the columns themselves.  The
    compiled module ranks the tables and compares the parts with the keys in one pass each
    (compiled_compaction: table_ranks, parts_are_keys) where it is built."""
    module = compiled()
    rank = None if module is None else \
        module.table_ranks(changes["schema"].combine_chunks(), changes["table"].combine_chunks())
    if rank is None:
        return _sort_columns_in_arrow(changes)
    keys = ["part"] if module.parts_are_keys(changes["part"].combine_chunks(),
                                             changes["key"].combine_chunks()) else ["part", "key"]
    return pa.table({"tables": rank, **{c: changes[c] for c in (*keys, "commit_ts", "seq", "sub")}})


def _sort_columns_in_arrow(changes: pa.Table) -> pa.Table:
    """_sort_columns in Arrow's steps: the reference of the compiled module's table_ranks and
    parts_are_keys, and the way where a name is null or a share holds many tables."""
    names = pc.binary_join_element_wise(changes["schema"], changes["table"], "\x00")
    part, key = changes["part"], changes["key"]
    alone = pc.or_(pc.fill_null(pc.equal(part, key), False), pc.and_(pc.is_null(part), pc.is_null(key)))
    keys = ["part"] if pc.all(alone).as_py() else ["part", "key"]
    if names.null_count:
        return changes.select(["schema", "table", *keys, "commit_ts", "seq", "sub"])
    # NUL sorts before any character of a name (MySQL's identifiers cannot hold it), so the
    # joined names sort as (schema, table) do
    coded = pc.dictionary_encode(names).combine_chunks()
    rank = pc.take(pc.inverse_permutation(pc.sort_indices(coded.dictionary).cast(pa.int64())), coded.indices)
    return pa.table({"tables": rank, **{c: changes[c] for c in (*keys, "commit_ts", "seq", "sub")}})


def _deletes_lead(finals: pa.Table) -> bool:
    """Whether finals in (schema, table, part, key) order are in DELETES_FIRST order already: they
    differ only where a part holds several keys (a tangled part, spellings a collation folds
    together) and an upsert's key sorts before a delete's.  The usual segment, a key per part,
    then needs no second sort over the key texts (0.1 CPU-seconds of a bulk cycle's apply)."""
    n = finals.num_rows
    if n < 2:
        return True
    upsert = finals["upsert"].combine_chunks()
    same_part = pc.invert(run_starts(finals, ("schema", "table", "part")))
    upsert_then_delete = pc.and_(same_part, pc.and_(upsert.slice(0, n - 1), pc.invert(upsert.slice(1))))
    return not pc.any(upsert_then_delete).as_py()


def run_starts(t: pa.Table, columns) -> pa.BooleanArray:
    """Of rows sorted by `columns` (at least), whether row i + 1 begins another run of their
    values (a null equal to a null): one fewer than `t`'s rows."""
    n, starts = t.num_rows, None
    for c in columns:
        col = t[c].combine_chunks()
        a, b = col.slice(0, n - 1), col.slice(1)
        same = pc.or_(pc.fill_null(pc.equal(a, b), False), pc.and_(pc.is_null(a), pc.is_null(b)))
        starts = pc.invert(same) if starts is None else pc.or_(starts, pc.invert(same))
    return starts


def finals_of(changes: pa.Table, finals: pa.Table, images: pa.ChunkedArray | None = None,
              columns: tuple[str, ...] | None = None) -> pa.Table:
    """The rows of `changes` that `finals` (compacted_order, or some of its rows) names, each
    with the kind it ends with; `images`: what the `source` of `changes` (KEYED_SOURCES) numbers;
    `columns`: of `changes`, those alone (kind among them)."""
    out = (changes if columns is None else changes.select(list(columns))).take(finals["row"])
    if images is not None:
        return with_images(out, images, finals["kind"])
    return out.set_column(out.schema.get_field_index("kind"), "kind", finals["kind"])


def keyed_batches(batches: Iterator[pa.RecordBatch], tangled: dict | None) -> Iterator[pa.RecordBatch]:
    """keyed_arrow a batch at a time: the keying step inside Spark tasks (mapInArrow)."""
    heap.settle()
    for batch in batches:
        if batch.num_rows:
            yield from keyed_arrow(pa.Table.from_batches([batch]), tangled).to_batches()


def compacted_partition(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """compacted_arrow of one Spark partition's keyed changes (mapInArrow after the shuffle by
    part, so every change of a key is in it): the same step as a small segment's in the driver.
    The partition is held while it is compacted, as the writers hold what they write."""
    heap.settle()
    changes = pa.Table.from_batches(list(batches), schema=KEYED_ARROW)
    if changes.num_rows:
        yield from compacted_arrow(changes).to_batches()
