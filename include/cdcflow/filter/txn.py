"""`ignore-txn-start-ts` and its binlog counterparts: drop whole upstream transactions.

TiCDC names a transaction by its start ts.  A binlog transaction has none (the events'
`start_ts` is NULL), so cdcflow also accepts `ignore-txn-commit-ts` (the commit ts a
cycle assigns, as the logs and `changefeed query` show it) and `ignore-txn-gtid` (the
transaction's GTID: MariaDB's 'domain-server-seq' or MySQL's 'uuid:n').  A dropped
transaction loses its row changes and its DDL alike, as in TiCDC.
"""

from __future__ import annotations


def skip_transactions(events, cfg):
    """`events` without the transactions the config names (a Spark DataFrame of events)."""
    from pyspark.sql import functions as F  # lazy: the stages load without Spark (pull, an idle cycle)

    drop = None
    for col, values in (("start_ts", cfg.ignore_txn_start_ts), ("commit_ts", cfg.ignore_txn_commit_ts),
                        ("gtid", cfg.ignore_txn_gtid)):
        if values:
            hit = F.col(col).isNotNull() & F.col(col).isin(list(values))
            drop = hit if drop is None else drop | hit
    return events if drop is None else events.where(~drop)
