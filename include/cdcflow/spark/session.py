"""One place that builds the Spark session every stage uses."""

from __future__ import annotations

import os
import sys


def get_session(app_name: str = "cdcflow", master: str | None = None, shuffle_partitions: int = 4):
    """A SparkSession for the stages: `local[*]` unless a master is given.

    Under spark-submit the master is already set by the launcher and wins.
    Executors must run the same interpreter as the driver, so cdcflow and its
    pinned libraries are importable in the Python workers.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    if master or not os.environ.get("SPARK_SUBMIT_ARGS_SET_BY_LAUNCHER"):
        builder = builder.master(master or os.environ.get("CDCFLOW_SPARK_MASTER", "local[*]"))
    builder = (
        builder.config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.default.parallelism", str(shuffle_partitions))
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", os.environ.get("CDCFLOW_DRIVER_MEMORY", "2g"))
        .config("spark.python.worker.reuse", "true")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
    )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("CDCFLOW_SPARK_LOG_LEVEL", "WARN"))
    return spark
