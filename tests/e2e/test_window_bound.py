"""max-window-bytes: a window larger than the bound is read over several cycles, each ending
at a commit boundary, the checkpoint moving forward and standing exactly after the last
transaction applied; a transaction larger than the bound goes through whole."""

from __future__ import annotations

import pytest
from e2e_helpers import assert_consistent, create_changefeed, fresh_schema

from cdcflow.launch.in_process import run_cycle
from cdcflow.store import metastore

pytestmark = pytest.mark.e2e

BOUND = 2500  # bytes of binlog per cycle


def _transaction_ends(up, start: tuple[str, int]) -> list[tuple[str, int]]:
    """The binlog boundary after each row transaction (its Xid event) from `start` on."""
    files = [r[0] for r in up.query("SHOW BINARY LOGS") if r[0] >= start[0]]
    ends = []
    for f in files:
        at = start[1] if f == start[0] else 4
        ends += [(f, int(r[4])) for r in up.query(f"SHOW BINLOG EVENTS IN '{f}' FROM {at}") if r[2] == "Xid"]
    return ends


def test_a_window_beyond_the_bound_is_finished_over_several_cycles(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    fresh_schema(up, down, "wbound", "CREATE TABLE w (id INT PRIMARY KEY, tx INT NOT NULL, pad VARCHAR(200))")
    create_changefeed(capsys, up, down, "e2e-wbound",
                      f"[filter]\nrules = ['wbound.*']\n[cdcflow]\nmax-window-bytes = {BOUND}\n")
    start = up.binlog_head()
    statements, rows_of = [], {}
    for tx in range(1, 31):
        if tx == 12:  # one transaction several times the bound: it still goes through whole
            values = ", ".join(f"({1000 + i}, {tx}, REPEAT('b', 150))" for i in range(60))
            rows_of[tx] = 60
        else:
            values = f"({tx}, {tx}, REPEAT('s', 100))"
            rows_of[tx] = 1
        statements.append(f"INSERT INTO w (id, tx, pad) VALUES {values}")
        if tx == 20:  # a barrier inside the bounded windows
            statements.append("ALTER TABLE w ADD COLUMN extra INT DEFAULT 5")
    up.execute(*statements, database="wbound")
    ends = _transaction_ends(up, start)
    assert len(ends) == 30
    big = ends[11][1] - ends[10][1]
    assert big > 3 * BOUND  # the large transaction alone passes the bound

    checkpoints, cycles = [], 0
    while metastore.get_feed("e2e-wbound").checkpoint_pos["pos"] < ends[-1][1] or not checkpoints:
        cycles += 1
        assert cycles <= 40, f"no end after {cycles} cycles: {checkpoints}"
        result = run_cycle("e2e-wbound", spark=spark)
        feed = metastore.get_feed("e2e-wbound")
        pos = (feed.checkpoint_pos["file"], feed.checkpoint_pos["pos"])
        applied = {r[0] for r in down.query("SELECT DISTINCT tx FROM wbound.w")}
        # the checkpoint stands exactly after the last transaction applied: every transaction
        # ending at or before it is downstream, none after it, and none only in part
        assert pos == start or pos in ends, (pos, ends)
        assert applied == {tx for tx, end in enumerate(ends, 1) if end <= pos}
        assert down.query("SELECT COUNT(*) FROM wbound.w")[0][0] == sum(rows_of[tx] for tx in applied)
        if checkpoints:
            assert feed.checkpoint_ts > checkpoints[-1][0], "each cycle moves the checkpoint forward"
        checkpoints.append((feed.checkpoint_ts, pos))
        assert result["pull"]["pulled"] > 0
    assert cycles >= 4, checkpoints  # the window was split
    # the windows end at the first commit after the bound, the one holding the big transaction
    # past it by that transaction (all in one file here: the test's writes are a few KB)
    spans = [b[1][1] - a[1][1] for a, b in zip([(0, start), *checkpoints], checkpoints)]
    assert max(spans) >= big and sorted(spans)[-2] < BOUND + 1000, spans
    assert_consistent(up, down, ["wbound"])
    assert [c[0] for c in down.query("SHOW COLUMNS FROM wbound.w")][-1] == "extra"
