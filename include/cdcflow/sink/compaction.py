"""Compaction of a segment's row changes to one final image per key, in Arrow batches.

Spark only moves and sorts rows: `keyed_changes` (mapInArrow) gives each change its
key, as the downstream's index compares it (collation_key); after a hash partition and a sort by key and commit order, the sink's partition
writers (partitions.apply_partition, also a mapInArrow) run `final_changes`, which keeps
the last change of each key.  Parsing the JSON images in Python is much cheaper than
asking Spark SQL to extract key fields from them per row; msgspec decodes the key's columns
alone (_key_decoder), to the values msgspec.json.decode gives them.
"""

from __future__ import annotations

from typing import Any, Iterator

import msgspec
import pyarrow as pa
from msgspec.structs import astuple

from cdcflow.core.arrow_rows import rows_batch
from cdcflow.sink.collation_key import KeyFolder

KEYED_SCHEMA = "schema string, table string, key string, part string, commit_ts long, seq long, sub int, " \
               "kind string, image string"
_KEYED_ARROW = pa.schema([("schema", pa.string()), ("table", pa.string()), ("key", pa.string()),
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
    key's row), D."""
    folder = folder or KeyFolder({})
    decoders: dict[str, object] = {}  # per table, its key's decoder
    try:
        yield from (_keyed_batch(batch, keys, folder, decoders) for batch in batches)
    finally:
        folder.close()


def _key_decoder(cols: tuple[str, ...]):
    """A decoder of a row image's key columns alone, as a tuple of their plain JSON values (the
    values msgspec.json.decode gives): the other columns are skipped, not built, which made the
    keying pass several times cheaper on rows of a few columns."""
    fields = [(f"k{i}", Any) for i in range(len(cols))]
    struct = msgspec.defstruct("Key", fields, rename={f"k{i}": c for i, c in enumerate(cols)}, gc=False)
    decode = msgspec.json.Decoder(struct).decode
    return lambda text: astuple(decode(text))


def _keyed_batch(batch: pa.RecordBatch, keys: dict[str, list[str]], folder: KeyFolder,
                 decoders: dict[str, object]) -> pa.RecordBatch:
    out: list[tuple] = []  # one tuple per keyed change (core.arrow_rows)

    def add(schema, table, key, ts, seq, sub, kind, image):
        out.append((schema, table, key, key, ts, seq, sub, kind, image))  # part: the key

    cols = batch.to_pydict()
    rows = list(zip(cols["schema"], cols["table"], cols["commit_ts"], cols["seq"], cols["op"],
                    cols["before"], cols["after"]))
    names = [f"{r[0]}.{r[1]}" for r in rows]
    for name in set(names) - decoders.keys():
        decoders[name] = _key_decoder(tuple(keys[name]))
    values = [(decoders[name](before) if op != "insert" else None, decoders[name](after) if op != "delete" else None)
              for name, (_, _, _, _, op, before, after) in zip(names, rows)]
    folder.prepare([(name, dict(zip(keys[name], vals))) for name, pair in zip(names, values) if folder.folds(name)
                    for vals in pair if vals is not None])

    def key(table: str, vals: tuple) -> str:
        if folder.folds(table):
            vals = [folder.value(table, c, v) for c, v in zip(keys[table], vals)]
        return _key_text(vals)  # a tuple and a list: the same JSON array

    for name, (schema, table, ts, seq, op, before, after), (bv, av) in zip(names, rows, values):
        if op == "insert":
            add(schema, table, key(name, av), ts, seq, 1, "I", after)
        elif op == "delete":
            add(schema, table, key(name, bv), ts, seq, 1, "D", before)
        else:
            kb, ka = key(name, bv), key(name, av)
            if kb != ka:
                add(schema, table, kb, ts, seq, 0, "D", before)
            add(schema, table, ka, ts, seq, 1, "I" if kb != ka else "U", after)
    return rows_batch(out, _KEYED_ARROW)


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
