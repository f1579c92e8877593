"""Operator replacements of one DDL (`cdcflow changefeed replace-ddl`, like DM's `binlog
replace`): the statements stored for a commit ts run downstream instead of the DDL there.

The tracked schema still evolves by the upstream's original statement, because it
describes the upstream's tables, whose row images follow: a replacement changes only what
the downstream runs.  Where cdcflow cannot read the original (the usual reason to replace
it), the replacement is what the tracker learns from, so the table does not drift.
Kept in the metadata store (store/tables.py).
"""

from __future__ import annotations

import json

import sqlalchemy as sa

from cdcflow.store.engine import engine
from cdcflow.store.tables import ddl_replacements as replacements


def store(changefeed_id: str, commit_ts: int, statements: list[str]) -> None:
    t = replacements.c
    with engine().begin() as c:
        c.execute(sa.delete(replacements).where(t.changefeed_id == changefeed_id, t.commit_ts == commit_ts))
        c.execute(sa.insert(replacements).values(changefeed_id=changefeed_id, commit_ts=commit_ts,
                                                 statements=json.dumps(statements)))


def load(changefeed_id: str, above_ts: int = 0) -> dict[int, list[str]]:
    t = replacements.c
    with engine().connect() as c:
        rows = c.execute(sa.select(t.commit_ts, t.statements).where(t.changefeed_id == changefeed_id,
                                                                    t.commit_ts > above_ts))
        return {ts: json.loads(s) for ts, s in rows}

