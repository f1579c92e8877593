"""`ignore-txn-start-ts` and its binlog counterparts: drop whole upstream transactions.

TiCDC names a transaction by its start ts.  A binlog transaction has none (the events'
`start_ts` is NULL), so cdcflow also accepts `ignore-txn-commit-ts` (the commit ts a
cycle assigns, as the logs and `changefeed query` show it) and `ignore-txn-gtid` (the
transaction's GTID: MariaDB's 'domain-server-seq' or MySQL's 'uuid:n').  A dropped
transaction loses its row changes and its DDL alike, as in TiCDC.
"""

from __future__ import annotations


def ignored_transactions(cfg) -> list[tuple[str, tuple]]:
    """(event column, values) for each ignore-txn-* the config sets: an event whose column holds
    one of the values belongs to a transaction to drop (stages.rows applies them, in Spark and
    in Arrow)."""
    return [(col, tuple(values)) for col, values in (("start_ts", cfg.ignore_txn_start_ts),
                                                    ("commit_ts", cfg.ignore_txn_commit_ts),
                                                    ("gtid", cfg.ignore_txn_gtid)) if values]
