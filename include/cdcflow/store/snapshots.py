"""A changefeed's initial copy in the metadata store: its consistent point and which of its
chunks are done, so a killed copy continues where it stopped, the secondary indexes its tables
were created without and each table's index-build phase (deferred, building, built), so a
killed build goes on with the tables not built, and its progress for `query` and the
Changefeeds page.

Status: `copying` until every chunk is done (the changefeed's cycles wait), then `indexing`
while deferred indexes are not built (the cycles run: their replay is what makes the build
possible), then `done`."""

from __future__ import annotations

import json
import time

from cdcflow.store.engine import engine, transaction
from cdcflow.store.sql import Table
from cdcflow.store.tables import snapshot_chunks as chunks
from cdcflow.store.tables import snapshot_indexes as indexes
from cdcflow.store.tables import snapshots

COPYING, INDEXING, DONE = "copying", "indexing", "done"
DEFERRED, BUILDING, BUILT = "deferred", "building", "built"
# a chunk table's counts: its chunks, those done, the rows they copied
CHUNK_COUNTS = "COUNT(*), SUM(CASE WHEN done THEN 1 ELSE 0 END), SUM(`rows`)"


def begin(changefeed_id: str, position: dict, tasks: list[dict], conn=None,
          deferred: dict[str, list[str]] | None = None) -> None:
    """Record a copy from `position` with all its chunk tasks (each {"table", "chunk": {"index"…}, …}) not done
    and the index clauses each table ("schema.table") was created without (`deferred`); anything of an
    earlier copy of the changefeed goes.  `conn`: inside the caller's transaction."""
    with transaction(conn) as c:
        for t in (chunks, indexes, snapshots):
            c.delete(t, "changefeed_id = ?", changefeed_id)
        c.insert(snapshots, dict(changefeed_id=changefeed_id, status=COPYING, position=json.dumps(position),
                                 started_at=time.time()))
        c.insert(chunks, *chunk_rows(changefeed_id, tasks))
        c.insert(indexes, *({"changefeed_id": changefeed_id, "table_name": table, "clauses": json.dumps(clauses),
                             "status": DEFERRED} for table, clauses in sorted((deferred or {}).items())))


def chunk_rows(changefeed_id: str, tasks: list[dict], table: str | None = None) -> list[dict]:
    """The rows of a copy's chunk tasks (each {"table", "chunk": {"index"…}, …}; `table`: all
    of one table's), none done."""
    return [{"changefeed_id": changefeed_id, "table_name": table or t["table"], "chunk_index": t["chunk"]["index"],
             "task": json.dumps(t), "done": False, "rows": 0, "seconds": 0.0} for t in tasks]


def get(changefeed_id: str) -> dict | None:
    with engine().connect() as c:
        rows = c.select(snapshots, "changefeed_id = ?", changefeed_id).mappings()
    if not rows:
        return None
    return {**rows[0], "position": json.loads(rows[0]["position"])}


def unfinished(changefeed_id: str) -> bool:
    """A copy began and did not finish: the changefeed's cycles wait for it."""
    head = get(changefeed_id)
    return head is not None and head["status"] == COPYING


def indexing(changefeed_id: str) -> dict | None:
    """The copy's last read (`copied_to`, a binlog position) when the copy is done and deferred indexes
    are still to be built; else None."""
    head = get(changefeed_id)
    if head is None or head["status"] != INDEXING or not head["copied_to"]:
        return None
    return json.loads(head["copied_to"])


def pending(changefeed_id: str, chunks: Table = chunks) -> list[dict]:
    """The chunk tasks not done yet, table by table (`chunks`: a table of snapshot_chunks' columns)."""
    with engine().connect() as c:
        rows = c.select(chunks, "changefeed_id = ? AND done = ?", changefeed_id, False, columns="task",
                        order="table_name, chunk_index").all()
    return [json.loads(r[0]) for r in rows]


def chunk_done(changefeed_id: str, table: str, index: int, rows: int, seconds: float,
               chunks: Table = chunks) -> None:
    with engine().begin() as c:
        c.update(chunks, dict(done=True, rows=rows, seconds=seconds),
                 "changefeed_id = ? AND table_name = ? AND chunk_index = ?", changefeed_id, table, index)


def copied(changefeed_id: str, copied_to: dict) -> None:
    """Every chunk is done; `copied_to`: the upstream's binlog head read after the last chunk's read.
    Done at once when no table has deferred indexes left to build."""
    with engine().begin() as c:
        c.update(snapshots, dict(status=INDEXING, copied_to=json.dumps(copied_to), finished_at=time.time()),
                 "changefeed_id = ?", changefeed_id)
    _done_if_built(changefeed_id)


def finish(changefeed_id: str) -> None:
    """The copy done with nothing left to build."""
    with engine().begin() as c:
        c.update(snapshots, dict(status=DONE, finished_at=time.time()), "changefeed_id = ?", changefeed_id)


def deferred(changefeed_id: str) -> list[dict]:
    """The tables whose deferred indexes are not built yet: {table, clauses, status}."""
    with engine().connect() as c:
        rows = c.select(indexes, "changefeed_id = ? AND status <> ?", changefeed_id, BUILT,
                        columns="table_name, clauses, status", order="table_name").all()
    return [{"table": t, "clauses": json.loads(cl), "status": st} for t, cl, st in rows]


def index_phase(changefeed_id: str, table: str, status: str) -> None:
    """A table's index build `building` (begun: a resume checks which indexes exist) or `built`; the
    snapshot is done with the last table built."""
    with engine().begin() as c:
        c.update(indexes, dict(status=status, built_at=time.time() if status == BUILT else None),
                 "changefeed_id = ? AND table_name = ?", changefeed_id, table)
    if status == BUILT:
        _done_if_built(changefeed_id)


def set_clauses(changefeed_id: str, table: str, clauses: list[str]) -> None:
    """The clauses `table` waits for, as a replicated DDL left them (sink/pending_indexes.py)."""
    with engine().begin() as c:
        c.update(indexes, dict(clauses=json.dumps(clauses)), "changefeed_id = ? AND table_name = ? AND status <> ?",
                 changefeed_id, table, BUILT)


def rename_table(changefeed_id: str, old: str, new: str) -> None:
    """The indexes `old` waits for are `new`'s: the table was renamed (a record of `new` is of a
    table gone from that name)."""
    with engine().begin() as c:
        if c.select(indexes, "changefeed_id = ? AND table_name = ? AND status <> ?", changefeed_id, old, BUILT,
                    columns="table_name").first() is None:
            return
        c.delete(indexes, "changefeed_id = ? AND table_name = ?", changefeed_id, new)
        c.update(indexes, dict(table_name=new), "changefeed_id = ? AND table_name = ?", changefeed_id, old)


def _done_if_built(changefeed_id: str) -> None:
    with engine().begin() as c:
        left = c.select(indexes, "changefeed_id = ? AND status <> ?", changefeed_id, BUILT,
                        columns="COUNT(*)").scalar()
        if not left:
            c.update(snapshots, dict(status=DONE), "changefeed_id = ? AND status = ?", changefeed_id, INDEXING)


def progress(changefeed_id: str) -> dict | None:
    """{status, chunks_done, chunks_total, rows_copied, rows_per_second, indexes_deferred, indexes_built,
    started, finished}; None: no copy.  `finished`: the copy's last chunk (the index build comes after)."""
    head = get(changefeed_id)
    if head is None:
        return None
    with engine().connect() as c:
        total, done, rows = c.select(chunks, "changefeed_id = ?", changefeed_id, columns=CHUNK_COUNTS).one()
        tables, built = c.select(indexes, "changefeed_id = ?", changefeed_id,
                                 columns=f"COUNT(*), SUM(CASE WHEN status = '{BUILT}' THEN 1 ELSE 0 END)").one()
    elapsed = (head["finished_at"] or time.time()) - head["started_at"]
    rows = int(rows or 0)
    return {"status": head["status"], "chunks_done": int(done or 0), "chunks_total": int(total),
            "rows_copied": rows, "rows_per_second": round(rows / elapsed, 1) if elapsed > 0 else None,
            "position": head["position"],
            "tables_with_deferred_indexes": int(tables), "tables_indexed": int(built or 0),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(head["started_at"])),
            "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(head["finished_at"]))
            if head["finished_at"] else None}
