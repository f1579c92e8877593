"""Compaction of a segment's row changes to one final image per key, in Arrow batches.

Spark only moves and sorts rows: `keyed_changes` (mapInArrow) gives each change its
key; after a hash partition and a sort by key and commit order, the sink's partition
writers (mysql_sink.apply_partition, also a mapInArrow) run `final_changes`, which keeps
the last change of each key.  Parsing the JSON images once in Python
is much cheaper than asking Spark SQL to extract key fields from them per row; msgspec
decodes them a few times faster than the json module, to the same Python values.
"""

from __future__ import annotations

import json
from typing import Iterator

import msgspec
import pyarrow as pa

KEYED_SCHEMA = "schema string, table string, key string, part string, commit_ts long, seq long, sub int, " \
               "kind string, image string"
_KEYED_ARROW = pa.schema([("schema", pa.string()), ("table", pa.string()), ("key", pa.string()),
                          ("part", pa.string()), ("commit_ts", pa.int64()), ("seq", pa.int64()),
                          ("sub", pa.int32()), ("kind", pa.string()), ("image", pa.string())])


_decode = msgspec.json.decode


def key_of(image: dict, cols: list[str]) -> str:
    return _key_text([image[c] for c in cols])


def _key_text(vals: list) -> str:
    return json.dumps(vals, separators=(",", ":"), ensure_ascii=False)


def partition_text(key: str) -> str:
    """What the partitioner hashes: a key that only changes case or trailing spaces under a
    case-insensitive (PAD SPACE) collation must land in the partition of its old spelling."""
    return _partition_of(json.loads(key), key)


def _partition_of(vals: list, key: str) -> str:
    # per key value: the key text is a JSON list, so its own end is never a space
    if not any(isinstance(v, str) for v in vals):
        return key  # nothing to fold: the key text itself
    return _key_text([v.lower().rstrip() if isinstance(v, str) else v for v in vals])


def _key_and_partition(image_text: str, cols: list[str]) -> tuple[str, str]:
    image = _decode(image_text)
    vals = [image[c] for c in cols]
    key = _key_text(vals)
    return key, _partition_of(vals, key)


def keyed_changes(batches: Iterator[pa.RecordBatch], keys: dict[str, list[str]]) -> Iterator[pa.RecordBatch]:
    """Each change with its key; an UPDATE that changes the key becomes a DELETE of the old
    key (sub 0) and an INSERT of the new one (sub 1): seed 002's split, DELETE first.
    Kinds: I (the key's row is new: an INSERT), U (an UPDATE of the key's row), D."""
    for batch in batches:
        out = {f: [] for f in _KEYED_ARROW.names}

        def add(schema, table, key_part, ts, seq, sub, kind, image):
            out["schema"].append(schema)
            out["table"].append(table)
            out["key"].append(key_part[0])
            out["part"].append(key_part[1])
            out["commit_ts"].append(ts)
            out["seq"].append(seq)
            out["sub"].append(sub)
            out["kind"].append(kind)
            out["image"].append(image)

        cols = batch.to_pydict()
        for schema, table, ts, seq, op, before, after in zip(cols["schema"], cols["table"], cols["commit_ts"],
                                                             cols["seq"], cols["op"], cols["before"], cols["after"]):
            kc = keys[f"{schema}.{table}"]
            if op == "insert":
                add(schema, table, _key_and_partition(after, kc), ts, seq, 1, "I", after)
            elif op == "delete":
                add(schema, table, _key_and_partition(before, kc), ts, seq, 1, "D", before)
            else:
                kb, ka = _key_and_partition(before, kc), _key_and_partition(after, kc)
                if kb[0] != ka[0]:
                    add(schema, table, kb, ts, seq, 0, "D", before)
                add(schema, table, ka, ts, seq, 1, "I" if kb[0] != ka[0] else "U", after)
        yield pa.RecordBatch.from_pydict(out, schema=_KEYED_ARROW)


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
