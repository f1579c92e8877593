"""Where a changefeed's shadow-table history lives (ddl/shadow_log.py): one row per mark in the
metadata store, so a cut-over in a later cycle than its ALTER, or a cycle run again, finds it."""

from __future__ import annotations

from cdcflow.ddl.shadow_log import Mark, ShadowLog
from cdcflow.store.engine import engine, transaction
from cdcflow.store.tables import shadow_ddls as marks


def load(changefeed_id: str) -> ShadowLog:
    log = ShadowLog()
    with engine().connect() as c:
        for s, tb, ts, kind, statement, mode in c.select(
                marks, "changefeed_id = ?", changefeed_id,
                columns="schema_name, table_name, commit_ts, kind, statement, sql_mode", order="commit_ts"):
            log.marks.setdefault((s, tb), []).append(Mark(ts, kind, statement, mode))
    return log


def save(changefeed_id: str, log: ShadowLog, above_ts: int, conn=None) -> None:
    """The marks above `above_ts` (a window's start) as `log` has them now: those a window read
    before and does not derive again go."""
    with transaction(conn) as c:
        c.delete(marks, "changefeed_id = ? AND commit_ts > ?", changefeed_id, above_ts)
        c.insert(marks, *({"changefeed_id": changefeed_id, "schema_name": s, "table_name": tb, "commit_ts": m.commit_ts,
                           "kind": m.kind, "statement": m.statement, "sql_mode": m.sql_mode}
                          for s, tb, m in log.after(above_ts)))


def forget(changefeed_id: str, gone, conn=None) -> None:
    with transaction(conn) as c:
        for s, tb, ts in gone:
            c.delete(marks, "changefeed_id = ? AND schema_name = ? AND table_name = ? AND commit_ts = ?",
                     changefeed_id, s, tb, ts)
