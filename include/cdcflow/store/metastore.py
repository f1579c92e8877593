"""The metadata store's operations on each changefeed's runtime state, its runs and its lease.

Plain SQL that the embedded SQLite file and a shared MySQL/TiDB both run (store/sql.py,
store/engine.py); the tables are declared in store/tables.py.
"""

from __future__ import annotations

import json
import os
import socket
import time
from dataclasses import dataclass, field

from cdcflow.core.errors import CHANGEFEED_NOT_EXISTS, CdcflowError
from cdcflow.store.engine import engine, reading, transaction
from cdcflow.store.sql import like_suffix
from cdcflow.store.tables import changefeeds, delete_owned, runs


@dataclass
class FeedState:
    id: str
    state: str
    checkpoint_ts: int
    checkpoint_pos: dict
    resolved_ts: int
    error: dict | None
    error_since: float | None
    state_since: float
    last_progress_at: float
    ddl_in_flight_ts: int | None
    lease_owner: str | None
    lease_until: float | None
    skip_ddl: list
    created_at: float
    updated_at: float
    retry_count: int = 0
    next_retry_at: float | None = None
    replay_until: int = 0


@dataclass
class RunState:
    changefeed_id: str
    run_id: str
    status: str
    start_ts: int
    start_pos: dict
    target_ts: int
    dry_run: bool
    stats: dict = field(default_factory=dict)
    error: str | None = None
    started_at: float = 0.0
    ended_at: float | None = None


def _feed(d: dict) -> FeedState:
    d["checkpoint_pos"] = json.loads(d["checkpoint_pos"] or "{}")
    d["error"] = json.loads(d["error"]) if d["error"] else None
    d["skip_ddl"] = json.loads(d["skip_ddl"] or "[]")
    return FeedState(**d)


def create_feed(changefeed_id: str, checkpoint_ts: int, checkpoint_pos: dict, conn=None) -> None:
    now = time.time()
    with transaction(conn) as c:
        delete_owned(c, changefeed_id)  # a re-created changefeed inherits nothing of an old one
        c.insert(changefeeds, dict(
            id=changefeed_id, state="normal", checkpoint_ts=checkpoint_ts, checkpoint_pos=json.dumps(checkpoint_pos),
            resolved_ts=checkpoint_ts, skip_ddl="[]", state_since=now, last_progress_at=now, created_at=now,
            updated_at=now))


def get_feed(changefeed_id: str, conn=None) -> FeedState:
    with reading(conn) as c:
        rows = c.select(changefeeds, "id = ?", changefeed_id).mappings()
    if not rows:
        raise CdcflowError(
            f"changefeed {changefeed_id} has no state in the metadata store",
            code=CHANGEFEED_NOT_EXISTS,
            hint="create it with `cdcflow changefeed create`",
        )
    return _feed(rows[0])


def list_feeds() -> list[FeedState]:
    with engine().connect() as c:
        return [_feed(r) for r in c.select(changefeeds, "1 = 1", order="id").mappings()]


def update_feed(changefeed_id: str, conn=None, **values) -> None:
    if "checkpoint_pos" in values:
        values["checkpoint_pos"] = json.dumps(values["checkpoint_pos"])
    if "skip_ddl" in values:
        values["skip_ddl"] = json.dumps(sorted(set(values["skip_ddl"])))
    if "error" in values and values["error"] is not None:
        values["error"] = json.dumps(values["error"])
    values["updated_at"] = time.time()
    with transaction(conn) as c:
        c.update(changefeeds, values, "id = ?", changefeed_id)


def advance_checkpoint(changefeed_id: str, ts: int, pos: dict, conn=None) -> None:
    """Move the checkpoint forward (never back: a replay may re-reach older barriers)."""
    now = time.time()
    with transaction(conn) as c:
        c.update(changefeeds, dict(checkpoint_ts=ts, checkpoint_pos=json.dumps(pos), last_progress_at=now,
                                   updated_at=now, ddl_in_flight_ts=None),
                 "id = ? AND checkpoint_ts < ?", changefeed_id, ts)


def mark_ddl_in_flight(changefeed_id: str, ts: int | None, checkpoint: tuple[int, dict] | None = None) -> None:
    """Mark the DDL at commit ts `ts` as sent downstream (None: not sent), after moving the
    checkpoint to `checkpoint` (ts, position) where given, in one commit: in a run of DDLs the
    checkpoint past one DDL goes with the next one's mark, one metadata-store commit per DDL."""
    with transaction() as c:
        if checkpoint is not None:
            advance_checkpoint(changefeed_id, *checkpoint, conn=c)
        update_feed(changefeed_id, conn=c, ddl_in_flight_ts=ts)


def raise_resolved(changefeed_id: str, ts: int) -> None:
    """The resolved ts: how far the upstream's changes have been read (never back)."""
    with engine().begin() as c:
        c.update(changefeeds, dict(resolved_ts=ts, updated_at=time.time()), "id = ? AND resolved_ts < ?",
                 changefeed_id, ts)


# --- lease: two cycles of one changefeed never overlap -----------------------------------

def lease_owner_for(run_id: str) -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{run_id}"


def _owner_dead(owner: str | None) -> bool:
    """A lease held by a process of this host that no longer exists can be taken over."""
    if not owner:
        return True
    parts = owner.split(":", 2)
    if len(parts) != 3 or parts[0] != socket.gethostname() or not parts[1].isdigit():
        return False
    try:
        os.kill(int(parts[1]), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


LEASE_SECONDS = 3600.0  # how long a taken lease lasts without a renewal


def acquire_lease(changefeed_id: str, owner: str, run_key: str, ttl: float = LEASE_SECONDS, conn=None) -> bool:
    """Take or renew the lease.  `run_key` identifies the cycle across the processes of one
    DAG run (each Airflow task is a process of its own), so any of them may renew it."""
    now = time.time()
    with transaction(conn) as c:
        row = c.select(changefeeds, "id = ?", changefeed_id, columns="lease_owner, lease_until").first()
        if row is None:
            return False
        held_by, until = row
        mine = held_by is not None and held_by.endswith(":" + run_key)
        free = held_by is None or (until or 0) < now or _owner_dead(held_by)
        if not (mine or free):
            return False
        held = ("lease_owner IS NULL", ()) if held_by is None else ("lease_owner = ?", (held_by,))
        return c.update(changefeeds, dict(lease_owner=owner, lease_until=now + ttl), f"id = ? AND {held[0]}",
                        changefeed_id, *held[1]) == 1


def holds_fresh_lease(changefeed_id: str, owner: str, within: float, ttl: float = LEASE_SECONDS) -> bool:
    """Whether `owner` (a process's own: lease_owner_for) holds the lease and took or renewed it
    less than `within` seconds ago (with `ttl`, as acquire_lease does): a read, where renewing it
    again would be a commit of the store for nothing.  Another process of the same run (a DAG
    run's next task) is another owner, and takes the lease itself: a lease left naming a process
    that ended may be taken over (_owner_dead)."""
    with engine().connect() as c:
        row = c.select(changefeeds, "id = ?", changefeed_id, columns="lease_owner, lease_until").first()
    return row is not None and row[0] == owner and (row[1] or 0) >= time.time() + ttl - within


def lease_holder(changefeed_id: str) -> str | None:
    return get_feed(changefeed_id).lease_owner


def release_lease(changefeed_id: str, run_key: str, conn=None) -> None:
    with transaction(conn) as c:
        c.update(changefeeds, dict(lease_owner=None, lease_until=None), "id = ? AND lease_owner LIKE ? ESCAPE '/'",
                 changefeed_id, like_suffix(":" + run_key))


# --- runs ---------------------------------------------------------------------------------

# Keys of a run's stats besides each stage's result and `<stage>_seconds`:
RUN_BACKFILL = "backfill"  # where the changefeed was before its backfill (prepare; finish may undo it)
RUN_TABLE_COPY = "table_copy"  # the copy a run of mode add-tables / resync-tables began: {kind, tables} (dag_tasks)
RUN_END = "end"  # the checkpoint and resolved ts a finished run left (finish; the page's lag plot)

def _run(d: dict) -> RunState:
    d["dry_run"] = bool(d["dry_run"])
    d["start_pos"] = json.loads(d["start_pos"] or "{}")
    d["stats"] = json.loads(d["stats"] or "{}")
    return RunState(**d)


def start_run(changefeed_id: str, run_id: str, start_ts: int, start_pos: dict, target_ts: int,
              dry_run: bool, stats: dict | None = None, conn=None) -> RunState:
    """A run's record, open (status running), with its first `stats` if given."""
    with transaction(conn) as c:
        c.delete(runs, "changefeed_id = ? AND run_id = ?", changefeed_id, run_id)
        c.insert(runs, dict(changefeed_id=changefeed_id, run_id=run_id, status="running", start_ts=start_ts,
                            start_pos=json.dumps(start_pos), target_ts=target_ts, dry_run=dry_run,
                            stats=json.dumps(stats or {}), started_at=time.time()))
        return get_run(changefeed_id, run_id, conn=c)


SUPERSEDED = "superseded"  # a run another cycle replaced while it was open (see supersede_open_runs)


def supersede_open_runs(changefeed_id: str, run_id: str, conn=None) -> list[str]:
    """Mark every other open run of the changefeed replaced by `run_id`, which has just taken
    the lease: a DAG run left open between its tasks (its DAG paused, its worker gone) can no
    longer be the changefeed's cycle, and its later stages must stop instead of reading a
    folder this cycle's finish will delete.  Returns the runs it marked."""
    now = time.time()
    with transaction(conn) as c:
        rows = c.select(runs, "changefeed_id = ? AND status = 'running' AND run_id <> ?", changefeed_id, run_id,
                        columns="run_id, stats").all()
        for other, stats in rows:
            merged = {**json.loads(stats or "{}"), "superseded_by": run_id}
            c.update(runs, dict(status=SUPERSEDED, ended_at=now, stats=json.dumps(merged)),
                     "changefeed_id = ? AND run_id = ? AND status = 'running'", changefeed_id, other)
    return [other for other, _ in rows]


def get_run(changefeed_id: str, run_id: str, conn=None) -> RunState:
    with reading(conn) as c:
        rows = c.select(runs, "changefeed_id = ? AND run_id = ?", changefeed_id, run_id).mappings()
    if not rows:
        raise CdcflowError(
            f"changefeed {changefeed_id} has no cycle {run_id!r}",
            hint="each cycle starts with the prepare stage; run `cdcflow changefeed run` or trigger the DAG",
        )
    return _run(rows[0])


def update_run(changefeed_id: str, run_id: str, *, stats: dict | None = None, conn=None, **values) -> None:
    with transaction(conn) as c:
        if stats:
            old = c.select(runs, "changefeed_id = ? AND run_id = ?", changefeed_id, run_id, columns="stats").scalar()
            merged = json.loads(old or "{}")
            merged.update(stats)
            values["stats"] = json.dumps(merged)
        c.update(runs, values, "changefeed_id = ? AND run_id = ?", changefeed_id, run_id)


# The ended runs kept per changefeed, newest first; finish drops older ones.  A changefeed that
# follows its binlog (`run --follow`) ends several cycles a second, about 2 KB of record each:
# unbounded, a day of it is a gigabyte of store.  The page plots and lists far fewer.
RUNS_KEPT = 5_000


def prune_runs(changefeed_id: str, keep: int = RUNS_KEPT, conn=None) -> int:
    """Drops the changefeed's ended runs older than its `keep` newest runs; returns how many."""
    with transaction(conn) as c:
        oldest_kept = c.select(runs, "changefeed_id = ?", changefeed_id, columns="started_at",
                               order="started_at DESC", limit=1, offset=keep - 1).scalar()
        if oldest_kept is None:
            return 0
        return c.delete(runs, "changefeed_id = ? AND status <> 'running' AND started_at < ?", changefeed_id,
                        oldest_kept)


def recent_runs(changefeed_id: str, limit: int = 20) -> list[RunState]:
    with engine().connect() as c:
        rows = c.select(runs, "changefeed_id = ?", changefeed_id, order="started_at DESC", limit=limit)
        return [_run(r) for r in rows.mappings()]
