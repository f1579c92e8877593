"""What any cycle forced to Spark pays on a Spark Connect server before its steps do any work:
the floor the catch-up part prints beside its `spark-connect` line.

- a job: the smallest job through the session's Python workers (four one-row partitions
  through an Arrow function that passes them on), the workers already started;
- a pass: the window's row events (as many as the catch-up's, in the event schema, with images
  of `image_bytes`) read from Parquet by the JVM, handed to the Python workers as Arrow and
  passed on unchanged, counted: what a step over the whole window costs before its function
  does anything;
- a JVM pass: the same rows counted without the Python workers.

Each is the median of a few runs on the same warm server, after the cycle.  A cycle forced to Spark
makes at least one pass (filter's), one more with the images (barrier's counts), and a job per
segment (apply's writers): docs/performance.md sets these against the `auto` cycle.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

RUNS = 3


def _passed(batches):
    yield from batches


def _median(action) -> float:
    took = []
    for _ in range(RUNS):
        t0 = time.monotonic()
        action()
        took.append(time.monotonic() - t0)
    return round(statistics.median(took), 3)


def write_window(folder: Path, rows: int, image_bytes: int) -> str:
    """`rows` update events of four tables in 1,000-row transactions, each image `image_bytes`
    long, as one Parquet file in the event schema; returns its path."""
    # lazy: the bench's parts load without pyarrow and the store until they run
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from cdcflow.store.events import EVENT_SCHEMA

    folder.mkdir(parents=True, exist_ok=True)
    ids = np.arange(rows)
    image = pa.array([bytes([65 + i % 26]) * image_bytes for i in range(rows)], pa.binary()).cast(pa.string())
    given = {"commit_ts": pa.array(ids // 1000 + 1, pa.int64()), "seq": pa.array(ids % 1000, pa.int64()),
             "schema": pa.array(["floor"] * rows), "table": pa.array([f"t{i % 4}" for i in range(rows)]),
             "op": pa.array(["update"] * rows), "before": image, "after": image}
    table = pa.table({f.name: given.get(f.name, pa.nulls(rows, f.type)) for f in EVENT_SCHEMA}, schema=EVENT_SCHEMA)
    path = folder / "window.parquet"
    pq.write_table(table, path, row_group_size=65_536)
    return str(path)


def measure(url: str, folder: Path, rows: int, image_bytes: int = 100) -> dict:
    """The floor on the Spark Connect server at `url` (module docstring), over `rows` events."""
    from cdcflow.spark.session import connect_session, release  # lazy: as above
    from cdcflow.store.events import EVENT_SPARK_SCHEMA

    path = write_window(folder, rows, image_bytes)
    spark = connect_session(url)
    try:
        tiny = spark.range(0, 4, 1, 4)
        tiny.mapInArrow(_passed, "id long").collect()  # the session's Python workers started
        window = spark.read.schema(EVENT_SPARK_SCHEMA).parquet(path)
        return {"rows": rows, "image_bytes": image_bytes,
                "job_seconds": _median(lambda: tiny.mapInArrow(_passed, "id long").collect()),
                "pass_seconds": _median(lambda: window.mapInArrow(_passed, window.schema).count()),
                "jvm_pass_seconds": _median(window.count)}
    finally:
        release(spark)


def line(floor: dict | None) -> str:
    """The floor in one line of the catch-up table ('' without one)."""
    if not floor:
        return ""
    return (f"Spark's floor on this server: a job through its Python workers {floor['job_seconds']:.2f} s, a pass "
            f"of {floor['rows']:,} events through them {floor['pass_seconds']:.2f} s (the JVM alone "
            f"{floor['jvm_pass_seconds']:.2f} s)")
