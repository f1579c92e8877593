"""A changefeed's initial copy in the metadata store: its consistent point and which of its
chunks are done, so a killed copy continues where it stopped, and its progress for
`query` and the Changefeeds page."""

from __future__ import annotations

import json
import time

import sqlalchemy as sa

from cdcflow.store.engine import engine, transaction
from cdcflow.store.tables import snapshot_chunks as chunks
from cdcflow.store.tables import snapshots

COPYING, DONE = "copying", "done"


def begin(changefeed_id: str, position: dict, tasks: list[dict], conn=None) -> None:
    """Record a copy from `position` with all its chunk tasks (each {"table", "chunk": {"index"…}, …}) not done;
    anything of an earlier copy of the changefeed goes.  `conn`: inside the caller's transaction."""
    with transaction(conn) as c:
        c.execute(sa.delete(chunks).where(chunks.c.changefeed_id == changefeed_id))
        c.execute(sa.delete(snapshots).where(snapshots.c.changefeed_id == changefeed_id))
        c.execute(sa.insert(snapshots).values(changefeed_id=changefeed_id, status=COPYING,
                                              position=json.dumps(position),
                                              started_at=time.time()))
        if tasks:
            c.execute(sa.insert(chunks), [{"changefeed_id": changefeed_id, "table_name": t["table"],
                                           "chunk_index": t["chunk"]["index"], "task": json.dumps(t),
                                           "done": False, "rows": 0, "seconds": 0.0} for t in tasks])


def get(changefeed_id: str) -> dict | None:
    with engine().connect() as c:
        row = c.execute(sa.select(snapshots).where(snapshots.c.changefeed_id == changefeed_id)).mappings().first()
    if row is None:
        return None
    return {**dict(row), "position": json.loads(row["position"])}


def unfinished(changefeed_id: str) -> bool:
    """A copy began and did not finish: the changefeed's cycles wait for it."""
    head = get(changefeed_id)
    return head is not None and head["status"] != DONE


def pending(changefeed_id: str) -> list[dict]:
    """The chunk tasks not done yet."""
    with engine().connect() as c:
        rows = c.execute(sa.select(chunks.c.task).where(chunks.c.changefeed_id == changefeed_id,
                                                        chunks.c.done.is_(False))
                         .order_by(chunks.c.table_name, chunks.c.chunk_index)).all()
    return [json.loads(r[0]) for r in rows]


def chunk_done(changefeed_id: str, table: str, index: int, rows: int, seconds: float) -> None:
    with engine().begin() as c:
        c.execute(sa.update(chunks).where(chunks.c.changefeed_id == changefeed_id, chunks.c.table_name == table,
                                          chunks.c.chunk_index == index)
                  .values(done=True, rows=rows, seconds=seconds))


def finish(changefeed_id: str) -> None:
    with engine().begin() as c:
        c.execute(sa.update(snapshots).where(snapshots.c.changefeed_id == changefeed_id)
                  .values(status=DONE, finished_at=time.time()))


def progress(changefeed_id: str) -> dict | None:
    """{status, chunks_done, chunks_total, rows_copied, rows_per_second, started, finished}; None: no copy."""
    head = get(changefeed_id)
    if head is None:
        return None
    with engine().connect() as c:
        total, done, rows = c.execute(
            sa.select(sa.func.count(), sa.func.sum(sa.case((chunks.c.done.is_(True), 1), else_=0)),
                      sa.func.sum(chunks.c.rows)).where(chunks.c.changefeed_id == changefeed_id)).one()
    elapsed = (head["finished_at"] or time.time()) - head["started_at"]
    rows = int(rows or 0)
    return {"status": head["status"], "chunks_done": int(done or 0), "chunks_total": int(total),
            "rows_copied": rows, "rows_per_second": round(rows / elapsed, 1) if elapsed > 0 else None,
            "position": head["position"],
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(head["started_at"])),
            "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(head["finished_at"]))
            if head["finished_at"] else None}
