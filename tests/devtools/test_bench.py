"""The benchmark's own parts on a tiny workload: the generator, the two MariaDB peers and the
memory sampler, so `make bench` does not rot between runs.  No timing is asserted."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from cdcflow_devtools import bench, bench_common, bench_peers, bench_snapshot, bench_workload
from cdcflow_devtools.compare import compare


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
    sampler = bench_common.PeakRss(proc.pid, interval=0.05)
    proc.wait()
    assert sampler.stop() > 80_000_000


def test_the_snapshot_part_is_opt_in_and_parts_are_checked():
    assert bench.parse_args([]).parts == list(bench.DEFAULT_PARTS)
    a = bench.parse_args(["--snapshot", "1000"])
    assert a.parts == [*bench.DEFAULT_PARTS, "snapshot"] and a.snapshot == 1000
    a = bench.parse_args(["--parts", "snapshot"])
    assert a.parts == ["snapshot"] and a.snapshot == bench_snapshot.DEFAULT_ROWS
    with pytest.raises(SystemExit):
        bench.parse_args(["--parts", "snap"])


@pytest.fixture
def snapshot_schema(mariadb_pair):
    up, down = mariadb_pair
    yield up, down
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {bench_snapshot.SCHEMA}")


def test_the_snapshot_peers_copy_the_tables_and_checksum_table_sees_a_difference(snapshot_schema, tmp_path):
    up, down = snapshot_schema
    schema = bench_snapshot.SCHEMA
    assert bench_workload.fill(up, schema, 2_000) == 2_000
    for copy in (lambda: bench_snapshot.dump_pipe(up, down),
                 lambda: bench_snapshot.mydumper_myloader(up, down, 2, tmp_path)):
        down.execute(f"DROP DATABASE IF EXISTS {schema}")
        copy()
        with up.connect() as u, down.connect() as d:
            assert compare(u, d, schemas=[schema]) == []
    assert bench_snapshot.checksum_tables(up, down, list(bench_workload.TABLES))["equal"] is True
    down.execute(f"UPDATE {schema}.items SET qty = qty + 1 WHERE id = 7")
    assert bench_snapshot.checksum_tables(up, down, list(bench_workload.TABLES))["equal"] is False
