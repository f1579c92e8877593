"""The last verification of each changefeed, for `query` and the Changefeeds page."""

from __future__ import annotations

import json
import time

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
        c.delete(results, "changefeed_id = ?", changefeed_id)
        c.insert(results, dict(changefeed_id=changefeed_id, status=result["status"], finished_at=time.time(),
                               result=json.dumps(kept, default=str)))


def last(changefeed_id: str) -> dict | None:
    with engine().connect() as c:
        text = c.select(results, "changefeed_id = ?", changefeed_id, columns="result").scalar()
    return json.loads(text) if text is not None else None
