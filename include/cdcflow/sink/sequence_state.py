"""A MariaDB sequence's state downstream.

MariaDB writes a sequence's one row (next_not_cached_value, …, increment, …) to the binlog each
time it takes a new block of values, and on SETVAL.  A MariaDB downstream takes that row as a
replica does: an INSERT replaces it.  TiDB's sequences are no tables: it refuses table
statements on them, and moves one with SETVAL(seq, n), after which NEXTVAL gives n + increment;
a SETVAL that would move it back is ignored.  So a TiDB downstream gets
SETVAL(seq, next_not_cached_value - increment): its next NEXTVAL gives the first value the
upstream has not reserved, none the upstream handed out (its cached block included), and a
replayed row never moves it back.  TiDB's SETVAL takes no round: after a CYCLE sequence wraps
upstream, the TiDB downstream keeps its higher value until an ALTER SEQUENCE … RESTART
(docs/concepts/ddl.md, Sequences).
"""

from __future__ import annotations


def setval_statement(target: str, row: dict) -> str:
    """The SETVAL that gives a TiDB sequence `target` the state of the upstream's row `row`."""
    return f"SELECT SETVAL({target}, {int(row['next_not_cached_value']) - int(row['increment'])})"
