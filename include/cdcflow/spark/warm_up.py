"""A warm-up for a Spark that has not run a stage yet (a new Spark Connect server), and the
start of a session's Python workers while pull still reads (python_workers).

The first stage a server runs pays for the JVM classes it has not loaded, the code it has
not generated and its Python workers' start: filter took 8.1 s for 10k row changes on a
new server, 2.8 s for 100k on the next run.  One small job through the paths the stages
take (Parquet written and read, a shuffle, a window, an Arrow function importing cdcflow
in the Python worker) moves the JVM's part of that cost to the server's start, so the first
DAG run does not pay it.  The Python workers are a session's own (a Connect server forks a
worker daemon per client session): python_workers starts those of the cycle's session, which
a changefeed's cycles share (spark.session.connect_session).
"""

from __future__ import annotations

import time

from cdcflow.spark.session import is_remote


def _touch_cdcflow(batches):
    # lazy: the import is the work: what the stages' Arrow functions import, in the server's Python worker
    import pyarrow.compute  # noqa: F401
    import pymysql  # noqa: F401
    import cdcflow.core.row_codec  # noqa: F401
    from cdcflow.core import heap  # lazy: as the imports above

    heap.settle()
    yield from batches


def python_workers(spark) -> float:
    """Start the session's Python workers, one task per core, each importing what the stages'
    Arrow functions import; the workers are kept for the stages (spark.python.worker.reuse).
    A session's first Arrow job took 1.9-2.1 s where the next took 0.1-0.5 s: run in the
    thread that opens the session, while pull reads on, it is not paid by pull's ranges.
    Returns the seconds it took."""
    t0 = time.monotonic()
    n = _tasks_at_once(spark)
    spark.range(0, n, 1, n).mapInArrow(_touch_cdcflow, "id long").collect()
    return time.monotonic() - t0


def _tasks_at_once(spark) -> int:
    """The session's parallelism: a task per core (a Spark Connect session has no SparkContext;
    its server's spark.default.parallelism says the same)."""
    if not is_remote(spark):
        return spark.sparkContext.defaultParallelism
    return int(spark.conf.get("spark.default.parallelism", "2") or 2)


def warm_up(spark, folder: str) -> float:
    """Run the warm-up job on `spark`, its Parquet under `folder` (a path the server can
    write); returns the seconds it took."""
    from pyspark.sql import Window  # lazy: the stages load without Spark (pull, an idle cycle)
    from pyspark.sql import functions as F

    t0 = time.monotonic()
    spark.range(5000).selectExpr("id", "id % 7 AS k", "CAST(id AS STRING) AS v") \
        .write.mode("overwrite").parquet(folder)
    rows = spark.read.parquet(folder)
    ranked = rows.withColumn("n", F.row_number().over(Window.partitionBy("k").orderBy(F.col("id").desc())))
    ranked.where("n = 1").groupBy("k").agg(F.count("*"), F.max("v")).collect()
    rows.repartition(2, "k").sortWithinPartitions("k", "id").mapInArrow(_touch_cdcflow, rows.schema).count()
    return time.monotonic() - t0
