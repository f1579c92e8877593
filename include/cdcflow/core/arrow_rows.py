"""Rows kept as tuples and turned into an Arrow batch at once.

Appending each value to a list per column costs a Python call per value; a tuple per row
and one transposition (zip, in C) when the batch is full is several times cheaper: the
event writer (store.events) and the keying pass (sink.compaction) both build their batches so.
"""

from __future__ import annotations

import pyarrow as pa


def rows_batch(rows: list[tuple], schema: pa.Schema) -> pa.RecordBatch:
    """`rows`, tuples in the schema's field order, as one batch of that schema."""
    columns = list(zip(*rows)) or [()] * len(schema)
    return pa.RecordBatch.from_arrays([pa.array(c, f.type) for c, f in zip(columns, schema)], schema=schema)
