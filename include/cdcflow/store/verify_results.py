"""The last verification of each changefeed, for `query` and the Changefeeds page."""

from __future__ import annotations

import json
import time

import sqlalchemy as sa

from cdcflow.store.engine import engine
from cdcflow.store.tables import verify_results as results

KEPT_DIFFERENCES = 100  # a result with more keeps the first ones and says how many there were


def save(changefeed_id: str, result: dict) -> None:
    kept = dict(result)
    for name in ("differences", "not_yet_applied"):
        rows = result.get(name) or []
        if len(rows) > KEPT_DIFFERENCES:
            kept[name] = rows[:KEPT_DIFFERENCES]
            kept[f"{name}_total"] = len(rows)
    with engine().begin() as c:
        c.execute(sa.delete(results).where(results.c.changefeed_id == changefeed_id))
        c.execute(sa.insert(results).values(changefeed_id=changefeed_id, status=result["status"],
                                            finished_at=time.time(),
                                            result=json.dumps(kept, default=str)))


def last(changefeed_id: str) -> dict | None:
    with engine().connect() as c:
        row = c.execute(sa.select(results.c.result).where(results.c.changefeed_id == changefeed_id)).first()
    return json.loads(row[0]) if row else None
