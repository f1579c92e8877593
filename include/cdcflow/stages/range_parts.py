"""What one range of pull's parallel path does where it runs (a Spark task, or a child process
of pull's: core.child_calls): read its part of the window into the event store, then copy it
with its commit ts.  Apart from stages.pull_ranges so that a child imports only this, the
binlog reader and the event store."""

from __future__ import annotations

import dataclasses
import json
import time

import msgspec

from cdcflow.source.binlog import Position
from cdcflow.source.binlog_ranges import RangeReader, RangeResult, gtid_in_range
from cdcflow.store.events import RunFolder

RANGES_FOLDER = "raw-ranges"  # each range's events before their commit ts is known


def read_range(url: str, batch_rows: int, part: int, source, server_id: int, start: dict, end: dict,
               keys: dict | None = None, exact_end: bool = False) -> str:
    """One range read into its part of RANGES_FOLDER (rows go out in bounded batches, however
    large the transaction); what the driver needs of it, as JSON.  `keys`: stages.pull_keys'
    KeyStamper's spec (its events' commit_ts, transaction numbers, offset to follow the
    tracker), to write key texts, whose spans come back as "key_spans" (and the tables whose
    conflict keys it gave up holding as "all_tangled", the others' pairs in pairs_file).
    `exact_end`: `end` is where an event starts (BinlogReader's exact_head)."""
    t0 = time.perf_counter()
    writer = RunFolder.at(url).writer(RANGES_FOLDER, batch_rows, part=part)
    reader = RangeReader(source, server_id, Position.from_dict(start), Position.from_dict(end), exact_end)
    stamper = None
    if keys:
        from cdcflow.stages.pull_keys import KeyStamper  # lazy: a range read without keys imports only the reader

        stamper = KeyStamper.of(keys)
    try:
        reader.read(writer.add if stamper is None else stamper.wrap(writer.add, writer), writer.columns, stamper)
    finally:
        spans = stamper.close() if stamper is not None else []
    writer.close()
    tangled = []
    if stamper is not None:  # its conflict-key pairs: the driver finds the tangles over every range's
        RunFolder.at(url).write_table(pairs_file(part), stamper.pairs.table())
        tangled = sorted(stamper.pairs.all_tangled)
    result = dataclasses.asdict(RangeResult.of(reader, writer, time.perf_counter() - t0))
    return json.dumps({**result, "key_spans": [msgspec.to_builtins(s) for s in spans], "all_tangled": tangled})


def pairs_file(part: int) -> str:
    """Where range `part` leaves its conflict-key pairs (sink.conflict_keys.ConflictPairs.table)."""
    return f"{RANGES_FOLDER}/conflict-pairs-{part:05d}.parquet"


def stamp_range(url: str, part: int, stamps: list[int], start_gtid) -> str:
    """One range's events copied to the raw folder with their commit ts and GTID positions."""
    RunFolder.at(url).restamp(RANGES_FOLDER, "raw", part, stamps, lambda read: gtid_in_range(start_gtid, read))
    return ""
