"""The tables a running changefeed takes in with their rows (`changefeed add-tables`, a filter
`update --config` widened) or copies again (`resync-tables`), in the metadata store: each
table's request, its join point, its chunks and which are done, so a killed copy goes on at its
next chunk, and its progress for `query`, the page and the API (snapshot/table_join.py says how
a table joins).

Status of one table: `requested` (its events are not replicated yet), `copying` (joined at
`position`; its events from there are, in safe mode; chunks are copied a few per cycle),
`replaying` (every chunk copied; safe mode until the checkpoint is past `copied_to`), `done`.

Its deferred secondary indexes (the clauses it was created without, snapshot/deferred_indexes.py):
`pending` until the copy is done, then `building`, `built`, or `failed` (the error kept, the
next cycle builds again); none deferred: no index status."""

from __future__ import annotations

import json
import time

from cdcflow.store import snapshots
from cdcflow.store.engine import engine, transaction
from cdcflow.store.tables import table_copies as copies
from cdcflow.store.tables import table_copy_chunks as chunks

REQUESTED, COPYING, REPLAYING, DONE = "requested", "copying", "replaying", "done"
ADD, RESYNC = "add", "resync"
MODES = {ADD: "add-tables", RESYNC: "resync-tables"}  # the command and the trigger mode of each kind
ACTIVE = (REQUESTED, COPYING, REPLAYING)
# the deferred indexes' phases; building and built are deferred_indexes' own (store.snapshots')
PENDING, BUILDING, BUILT, FAILED = "pending", snapshots.BUILDING, snapshots.BUILT, "failed"
UNBUILT = (PENDING, BUILDING, FAILED)


def request(changefeed_id: str, tables: list[str], kind: str, conn=None) -> None:
    """Record `tables` ("schema.table") to be copied; a table's earlier copy record goes."""
    now = time.time()
    with transaction(conn) as c:
        for table in tables:
            for t in (chunks, copies):
                c.delete(t, "changefeed_id = ? AND table_name = ?", changefeed_id, table)
            c.insert(copies, dict(changefeed_id=changefeed_id, table_name=table, kind=kind, status=REQUESTED,
                                  requested_at=now))


def all_of(changefeed_id: str) -> list[dict]:
    """Every table copy of the changefeed, in request order, with its position decoded."""
    with engine().connect() as c:
        rows = c.select(copies, "changefeed_id = ?", changefeed_id, order="requested_at, table_name").mappings()
    return [{**r, "position": json.loads(r["position"]) if r["position"] else None,
             "copied_to": json.loads(r["copied_to"]) if r["copied_to"] else None,
             "index_clauses": json.loads(r["index_clauses"]) if r["index_clauses"] else []} for r in rows]


def active(changefeed_id: str) -> list[dict]:
    return [c for c in all_of(changefeed_id) if c["status"] in ACTIVE]


def joined(changefeed_id: str, table: str, position: dict, tasks: list[dict], deferred: list[str] | None = None,
           conn=None) -> None:
    """`table` joins at `position` with its chunk tasks (each {"chunk": {"index"…}, …}) to copy,
    created downstream without the index clauses `deferred`."""
    with transaction(conn) as c:
        c.delete(chunks, "changefeed_id = ? AND table_name = ?", changefeed_id, table)
        c.update(copies, dict(status=COPYING, position=json.dumps(position), started_at=time.time(),
                              index_clauses=json.dumps(deferred) if deferred else None,
                              index_status=PENDING if deferred else None, index_error=None),
                 "changefeed_id = ? AND table_name = ?", changefeed_id, table)
        c.insert(chunks, *snapshots.chunk_rows(changefeed_id, tasks, table))


def pending_chunks(changefeed_id: str) -> list[dict]:
    """The chunk tasks not copied yet, of every table copying, table by table."""
    return snapshots.pending(changefeed_id, chunks)


def chunk_done(changefeed_id: str, table: str, index: int, rows: int, seconds: float) -> None:
    snapshots.chunk_done(changefeed_id, table, index, rows, seconds, chunks)


def copied(changefeed_id: str, table: str, copied_to: dict) -> None:
    """Every chunk of `table` is copied; `copied_to`: the upstream's head read after the last one."""
    with engine().begin() as c:
        c.update(copies, dict(status=REPLAYING, copied_to=json.dumps(copied_to), finished_at=time.time()),
                 "changefeed_id = ? AND table_name = ?", changefeed_id, table)


def done(changefeed_id: str, table: str) -> None:
    with engine().begin() as c:
        c.update(copies, dict(status=DONE, done_at=time.time()), "changefeed_id = ? AND table_name = ?",
                 changefeed_id, table)


def indexes_due(changefeed_id: str) -> list[dict]:
    """The tables whose copy is done and whose deferred indexes are not built: {table, clauses,
    status}, as store.snapshots.deferred gives a snapshot's."""
    return [{"table": c["table_name"], "clauses": c["index_clauses"], "status": c["index_status"]}
            for c in all_of(changefeed_id) if c["status"] == DONE and c["index_status"] in UNBUILT]


def index_phase(changefeed_id: str, table: str, status: str, error: str | None = None) -> None:
    """The deferred indexes of `table` `building` (begun: a retry checks which exist), `built` or
    `failed` (`error`: why)."""
    with engine().begin() as c:
        c.update(copies, dict(index_status=status, index_error=error), "changefeed_id = ? AND table_name = ?",
                 changefeed_id, table)


def set_clauses(changefeed_id: str, table: str, clauses: list[str]) -> None:
    """The clauses `table` waits for, as a replicated DDL left them (sink/pending_indexes.py)."""
    with engine().begin() as c:
        c.update(copies, dict(index_clauses=json.dumps(clauses) if clauses else None),
                 f"changefeed_id = ? AND table_name = ? AND index_status IN ({', '.join('?' * len(UNBUILT))})",
                 changefeed_id, table, *UNBUILT)


def held(changefeed_id: str) -> dict[str, list[str]]:
    """table -> the clauses it waits for, of each copy active or whose indexes are not built:
    what a replicated DDL of the table edits, or a rename moves (sink/pending_indexes.py)."""
    return {c["table_name"]: c["index_clauses"] if c["index_status"] in UNBUILT else []
            for c in all_of(changefeed_id) if c["status"] in ACTIVE or c["index_status"] in UNBUILT}


def rename_table(changefeed_id: str, old: str, new: str) -> None:
    """The copy of `old` (its chunks, its indexes) is `new`'s: the table was renamed.  A record of
    `new` is of a table gone from that name; chunk tasks name the table they read and those
    they wait for (copy_order)."""
    schema, name = new.split(".", 1)
    with engine().begin() as c:
        for t in (chunks, copies):
            c.delete(t, "changefeed_id = ? AND table_name = ?", changefeed_id, new)
        c.update(copies, dict(table_name=new), "changefeed_id = ? AND table_name = ?", changefeed_id, old)
        for table, index, text in c.select(chunks, "changefeed_id = ?", changefeed_id,
                                           columns="table_name, chunk_index, task").all():
            task = json.loads(text)
            moved = {**task, "after": [new if t == old else t for t in task.get("after", [])]}
            if table == old:
                moved.update(table=new, schema=schema, name=name)
            if moved != task:
                c.update(chunks, dict(table_name=new if table == old else table, task=json.dumps(moved)),
                         "changefeed_id = ? AND table_name = ? AND chunk_index = ?", changefeed_id, table, index)


def busy(changefeed_id: str) -> bool:
    """A copy is active or has indexes to build: the cycle's table-copy step has work."""
    return bool(active(changefeed_id) or indexes_due(changefeed_id))


def progress(changefeed_id: str) -> list[dict]:
    """Per table: {table, kind, status, chunks_done, chunks_total, rows_copied, requested, started,
    finished (the last chunk), done, indexes (the deferred ones' phase, None: none deferred),
    indexes_deferred (their clauses), index_error}: what `query`, the page and the API show."""
    with engine().connect() as c:
        counts = {r[0]: r[1:] for r in c.execute(
            f"SELECT table_name, {snapshots.CHUNK_COUNTS} FROM {chunks.name} WHERE changefeed_id = ? "
            "GROUP BY table_name", changefeed_id)}
    out = []
    for copy in all_of(changefeed_id):
        total, done_, rows = counts.get(copy["table_name"], (0, 0, 0))
        out.append({"table": copy["table_name"], "kind": copy["kind"], "status": copy["status"],
                    "chunks_done": int(done_ or 0), "chunks_total": int(total), "rows_copied": int(rows or 0),
                    "position": copy["position"], "requested": _when(copy["requested_at"]),
                    "started": _when(copy["started_at"]), "finished": _when(copy["finished_at"]),
                    "done": _when(copy["done_at"]), "indexes": copy["index_status"],
                    "indexes_deferred": copy["index_clauses"], "index_error": copy["index_error"]})
    return out


def _when(t: float | None) -> str | None:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t)) if t else None


def in_safe_mode(changefeed_id: str) -> bool:
    """Whether a table's copy asks the cycle's rows to be written in safe mode: it joined, and the
    checkpoint is not past its copy's last read yet."""
    return any(c["status"] in (COPYING, REPLAYING) for c in active(changefeed_id))


def joins(changefeed_id: str) -> dict[tuple[str, str], tuple[str, int] | None]:
    """(schema, table) -> the join point of each active copy, a binlog (file, offset); None:
    requested, not joined yet (none of its events replicate)."""
    return {tuple(c["table_name"].split(".", 1)): (c["position"]["file"], int(c["position"]["pos"]))
            if c["position"] else None for c in active(changefeed_id)}
