"""chunk_copies._schedule: which chunk runs a free worker takes (no servers: the copy is a function
here and the store's calls are recorded)."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import pytest

from cdcflow.snapshot import chunk_copies


@pytest.fixture
def store(monkeypatch):
    done = []
    monkeypatch.setattr(chunk_copies, "snapshots", SimpleNamespace(
        chunk_done=lambda cid, table, index, rows, secs: done.append((table, index)),
        progress=lambda cid: {"chunks_done": len(done), "chunks_total": -1, "rows_copied": len(done),
                                "rows_per_second": None}))
    return done


def _tasks(*tables_chunks: tuple[str, int], after: dict | None = None) -> list[dict]:
    return [{"table": t, "chunk": {"index": i}, "after": (after or {}).get(t, [])}
            for t, n in tables_chunks for i in range(n)]


def _run(todo: list[dict], workers: int, deadline: float | None = None) -> tuple[list[tuple], list[list[str]]]:
    """(the runs in the order they started, the tables in flight as each started)."""
    started, in_flight, lock = [], [], threading.Lock()
    flying: list[str] = []

    def copy(run: list[dict]) -> list[dict]:
        table = run[0]["table"]
        with lock:
            started.append((table, run[0]["chunk"]["index"]))
            in_flight.append(sorted(flying + [table]))
            flying.append(table)
        time.sleep(0.02)
        with lock:
            flying.remove(table)
        return [{"table": t["table"], "index": t["chunk"]["index"], "rows": 1, "seconds": 0.0} for t in run]

    ended = []
    chunk_copies._schedule(chunk_copies.SnapshotLedger("feed"), todo, copy, 1, workers, lambda p: None, ended.append,
                     deadline)
    return started, in_flight, ended


def test_free_workers_take_chunks_of_the_tables_with_fewest_in_flight(store):
    started, in_flight, ended = _run(_tasks(("s.a", 4), ("s.b", 2), ("s.c", 2)), workers=3)
    assert {t for t, _ in started[:3]} == {"s.a", "s.b", "s.c"}  # one chunk of each table first, not a's three
    assert all(len(set(f)) == len(f) for f in in_flight[:6]), in_flight  # no table twice while others wait
    assert sorted(store) == sorted((t["table"], t["chunk"]["index"]) for t in _tasks(("s.a", 4), ("s.b", 2),
                                                                                     ("s.c", 2)))
    assert sorted(ended) == ["s.a", "s.b", "s.c"]  # each table's last chunk reported once


def test_one_worker_copies_in_the_plans_order_and_parents_first(store):
    todo = _tasks(("s.child", 2), ("s.a", 2), ("s.parent", 2), after={"s.child": ["s.parent"]})
    started, _, ended = _run(todo, workers=1)
    assert started == [("s.a", 0), ("s.a", 1), ("s.parent", 0), ("s.parent", 1), ("s.child", 0), ("s.child", 1)]
    assert ended == ["s.a", "s.parent", "s.child"]


def test_no_chunk_starts_after_the_deadline_and_those_in_flight_end(store):
    todo = _tasks(("s.a", 6), ("s.b", 6))
    started, _, _ = _run(todo, workers=2, deadline=time.monotonic() + 0.05)  # a chunk takes 0.02 s here
    assert 2 <= len(started) < 12, started
    assert sorted(store) == sorted(started)  # each chunk that started was recorded done
    nothing, _, _ = _run(todo, workers=2, deadline=time.monotonic() - 1)
    assert nothing == []
