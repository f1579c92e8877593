"""The benchmark's own parts on a tiny workload: the generator, the two MariaDB peers and the
memory sampler, so `make bench` does not rot between runs.  No timing is asserted."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from cdcflow.devtools import bench, bench_peers, bench_workload
from cdcflow.devtools.compare import compare


def test_plan_counts_whole_transactions_and_places_every_ddl():
    p = bench_workload.plan(4_050)
    dml = [s for s in p.statements if s.kind != "ddl"]
    assert p.row_changes == 4_100  # rounded up to whole 100-row transactions
    assert all(s.rows == bench_workload.TXN_ROWS for s in dml)
    assert p.ddls == len(bench_workload.DDLS)
    assert {"insert", "update", "unique-update", "delete"} <= set(p.by_kind())
    assert {re.search(r"bench\.(\w+)", s.sql).group(1) for s in dml} == set(bench_workload.TABLES)


def test_shapes_differ_only_in_transactions_per_row():
    oltp, bulk = bench_workload.plan(4_000, shape="oltp"), bench_workload.plan(4_000, shape="bulk")
    assert oltp.row_changes == bulk.row_changes and oltp.by_kind() == bulk.by_kind()
    inserts = sum(1 for s in oltp.statements if s.kind == "insert")
    point = sum(s.rows for s in oltp.statements if s.kind not in ("insert", "ddl"))
    assert oltp.transactions == inserts + point + oltp.ddls  # one row per update/delete transaction
    assert bulk.transactions == len(bulk.statements)
    with pytest.raises(ValueError, match="shape"):
        bench_workload.plan(100, shape="huge")


def test_plan_is_deterministic_and_sized():
    assert bench_workload.plan(5_000).statements == bench_workload.plan(5_000).statements
    assert bench_workload.plan(5_000, seed=1).statements != bench_workload.plan(5_000, seed=2).statements
    assert bench_workload.plan(100_000).row_changes == 100_000
    assert bench_workload.plan(1).row_changes == 100


@pytest.fixture
def bench_schema(mariadb_pair):
    up, down = mariadb_pair
    yield up, down
    bench_peers.reset_replica(down)
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {bench_workload.SCHEMA}")


def _snapshot_and_workload(up, down, rows: int):
    for s in (up, down):
        bench_workload.create_snapshot(s)
    start = up.binlog_head()
    plan = bench_workload.plan(rows)
    assert bench_workload.run(up, plan) == plan.row_changes
    stop = up.binlog_head()
    return bench_peers.BinlogRange(*start, *stop)


def _diffs(up, down):
    with up.connect() as u, down.connect() as d:
        return compare(u, d, schemas=[bench_workload.SCHEMA])


def test_binlog_replay_reproduces_the_workload(bench_schema):
    up, down = bench_schema
    rng = _snapshot_and_workload(up, down, 2_000)
    assert _diffs(up, down)  # the downstream only has the snapshot: the check must see that
    bench_peers.binlog_replay(up, down, rng)
    assert _diffs(up, down) == []
    cols = [r[0] for r in up.query("SHOW COLUMNS FROM bench.accounts")]
    assert "tier" in cols  # the last DDL of the workload ran upstream and was replayed


def test_native_replica_catches_up_to_the_stop_position(bench_schema):
    up, down = bench_schema
    rng = _snapshot_and_workload(up, down, 1_000)
    bench_peers.replica_catch_up(up, down, rng)
    assert _diffs(up, down) == []


def test_the_bench_changefeed_ids_are_valid():
    from cdcflow.core.uri import validate_changefeed_id

    for n in (0, 10_000, 1_000_000):
        assert validate_changefeed_id(bench.scale_changefeed_id(n)) == bench.scale_changefeed_id(n)


def test_peak_rss_counts_child_processes():
    code = ("import subprocess, sys, time; "
            "subprocess.run([sys.executable, '-c', 'b = bytearray(80_000_000); import time; time.sleep(1.5)'])")
    proc = subprocess.Popen([sys.executable, "-c", code])
    sampler = bench.PeakRss(proc.pid, interval=0.05)
    proc.wait()
    assert sampler.stop() > 80_000_000
