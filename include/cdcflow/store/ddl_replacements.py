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

from cdcflow.store.engine import engine
from cdcflow.store.tables import ddl_replacements as replacements


def store(changefeed_id: str, commit_ts: int, statements: list[str]) -> None:
    with engine().begin() as c:
        c.delete(replacements, "changefeed_id = ? AND commit_ts = ?", changefeed_id, commit_ts)
        c.insert(replacements, dict(changefeed_id=changefeed_id, commit_ts=commit_ts,
                                    statements=json.dumps(statements)))


def load(changefeed_id: str, above_ts: int = 0) -> dict[int, list[str]]:
    with engine().connect() as c:
        rows = c.select(replacements, "changefeed_id = ? AND commit_ts > ?", changefeed_id, above_ts,
                        columns="commit_ts, statements")
        return {ts: json.loads(s) for ts, s in rows}

