"""Where a changefeed's shadow-table history lives (ddl/shadow_log.py): one row per mark in the
metadata store, so a cut-over in a later cycle than its ALTER, or a cycle run again, finds it."""

from __future__ import annotations

import sqlalchemy as sa

from cdcflow.ddl.shadow_log import Mark, ShadowLog
from cdcflow.store.engine import engine
from cdcflow.store.tables import shadow_ddls as marks


def load(changefeed_id: str) -> ShadowLog:
    t = marks.c
    log = ShadowLog()
    with engine().connect() as c:
        for s, tb, ts, kind, statement, mode in c.execute(
                sa.select(t.schema_name, t.table_name, t.commit_ts, t.kind, t.statement, t.sql_mode)
                .where(t.changefeed_id == changefeed_id).order_by(t.commit_ts)):
            log.marks.setdefault((s, tb), []).append(Mark(ts, kind, statement, mode))
    return log


def save(changefeed_id: str, log: ShadowLog, above_ts: int) -> None:
    """The marks above `above_ts` (a window's start) as `log` has them now: those a window read
    before and does not derive again go."""
    t = marks.c
    with engine().begin() as c:
        c.execute(sa.delete(marks).where(t.changefeed_id == changefeed_id, t.commit_ts > above_ts))
        rows = [{"changefeed_id": changefeed_id, "schema_name": s, "table_name": tb, "commit_ts": m.commit_ts,
                 "kind": m.kind, "statement": m.statement, "sql_mode": m.sql_mode} for s, tb, m in log.after(above_ts)]
        if rows:
            c.execute(sa.insert(marks), rows)


def forget(changefeed_id: str, gone) -> None:
    t = marks.c
    with engine().begin() as c:
        for s, tb, ts in gone:
            c.execute(sa.delete(marks).where(t.changefeed_id == changefeed_id, t.schema_name == s,
                                             t.table_name == tb, t.commit_ts == ts))
