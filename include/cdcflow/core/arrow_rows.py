"""Rows kept as tuples and turned into an Arrow batch at once.

Appending each value to a list per column costs a Python call per value; a tuple per row
and one transposition (zip, in C) when the batch is full is several times cheaper: the
event writer (store.events) and the keying pass (sink.compaction) both build their batches so.
"""

from __future__ import annotations

import functools

import pyarrow as pa


def rows_batch(rows: list[tuple], schema: pa.Schema) -> pa.RecordBatch:
    """`rows`, tuples in the schema's field order, as one batch of that schema."""
    columns = list(zip(*rows)) or [()] * len(schema)
    return pa.RecordBatch.from_arrays([pa.array(c, f.type) for c, f in zip(columns, schema)], schema=schema)


def int64_array(values) -> pa.Array:
    """A numpy array of integers (not a masked one) as an Arrow int64 array, over the same memory
    where it is already contiguous int64.  pa.array() first asks whether a numpy array is a masked
    one, which loads numpy.ma (0.02 s, in every process whose stages count rows) for a question
    whose answer is known here."""
    values = values.astype("int64", order="C", copy=False)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


@functools.cache
def spark_schema(schema: pa.Schema):
    """`schema` as Spark's StructType (a mapInArrow or applyInArrow return type).  Each schema a
    row step's batches have is declared once, in Arrow, and the Spark side derived from it, so the
    two places a step runs (stages.engine) cannot disagree on a column."""
    from pyspark.sql.pandas.types import from_arrow_schema  # lazy: pyspark is not loaded on the Spark-free paths

    return from_arrow_schema(schema)
