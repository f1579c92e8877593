"""The window's events as the Spark stages read them.

filter drops transactions, tables and rows; where it drops no row event it writes no copy of
them (a copy is a full rewrite of the window), and barrier and apply read the row events as
pull wrote them, without the same transactions filter read them without.
"""

from __future__ import annotations

import functools
import operator

from cdcflow.filter.txn import skip_transactions
from cdcflow.stages import contracts
from cdcflow.stages.cycle import Cycle
from cdcflow.store.events import EVENT_SPARK_SCHEMA

COPY = "filtered"  # the folder of filter's copy, when it made one


def window_events(spark, cycle: Cycle, window: contracts.Window):
    """Pull's events without the aborted transactions (ROLLBACK in the binlog: a transaction that
    also changed a non-transactional table, whose rows the binlog holds apart), the rows a
    ROLLBACK TO SAVEPOINT undid, and those the config says to skip (ignore-txn-*)."""
    from pyspark.sql import functions as F  # lazy: the stages load without Spark (pull, an idle cycle)

    raw = spark.read.schema(EVENT_SPARK_SCHEMA).parquet(cycle.folder.path("raw"))
    if window.pulled.aborted_ts:
        raw = raw.where(~F.col("commit_ts").isin(window.pulled.aborted_ts))
    undone = [(F.col("commit_ts") == ts) & F.col("seq").between(first, after - 1)
              for ts, first, after in window.pulled.rolled_back]  # rows a ROLLBACK TO SAVEPOINT undid
    if undone:
        raw = raw.where(~functools.reduce(operator.or_, undone))
    return skip_transactions(raw, cycle.config)


def row_events(events):
    from pyspark.sql import functions as F  # lazy: the stages load without Spark (pull, an idle cycle)

    return events.where(F.col("op") != "ddl")


def keep(cycle: Cycle, kept, window_rows) -> bool:
    """Record the rows filter kept: `kept` written as its copy, unless it is `window_rows` itself
    (nothing dropped).  Returns whether a copy was written."""
    copied = kept is not window_rows
    if copied:
        kept.write.mode("overwrite").parquet(cycle.folder.path(COPY))
    else:
        cycle.folder.remove_folder(COPY)  # an earlier attempt's copy, stale now
    contracts.ROWS.write(cycle.folder, contracts.KeptRows(copied=copied))
    return copied


def kept_rows(spark, cycle: Cycle):
    """The row events filter kept (barrier, apply)."""
    # a run whose filter predates this record always wrote its copy
    if not cycle.folder.exists(contracts.ROWS.name) or contracts.ROWS.read(cycle.folder).copied:
        # by the event schema, as pull's events: a copy written before a column existed reads it as null
        return spark.read.schema(EVENT_SPARK_SCHEMA).parquet(cycle.folder.path(COPY))
    return row_events(window_events(spark, cycle, contracts.WINDOW.read(cycle.folder)))
