"""The benchmark's own parts on a tiny workload: the generator, the two MariaDB peers and the
memory sampler, so `make bench` does not rot between runs.  No timing is asserted."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cdcflow_devtools import bench, bench_common, bench_peers, bench_snapshot, bench_table_sync, bench_workload
from cdcflow_devtools.pt_table_sync import fix_rows
from cdcflow_devtools.compare import compare

DATA = Path(__file__).parent / "data"


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
    assert a.parts == [*bench.DEFAULT_PARTS, "snapshot"] and a.snapshot == [1000]
    assert bench.parse_args(["--snapshot", "2000000,1e7"]).snapshot == [2_000_000, 10_000_000]
    a = bench.parse_args(["--parts", "snapshot"])
    assert a.parts == ["snapshot"] and a.snapshot == list(bench_snapshot.DEFAULT_SIZES)
    with pytest.raises(SystemExit):
        bench.parse_args(["--parts", "snap"])


@pytest.mark.parametrize("part", ["pairs", "overlap"])
def test_the_paired_parts_are_opt_in_and_need_a_pair(part):
    import importlib

    default = importlib.import_module(f"cdcflow_devtools.bench_{part}").DEFAULT_PAIRS
    assert part not in bench.parse_args([]).parts
    a = bench.parse_args([f"--{part}", "3"])
    assert a.parts == [*bench.DEFAULT_PARTS, part] and getattr(a, part) == 3
    a = bench.parse_args(["--parts", f"replication,{part}"])
    assert a.parts == ["replication", part] and getattr(a, part) == default
    for wrong in ("0", "-1"):
        with pytest.raises(SystemExit):
            bench.parse_args(["--parts", f"replication,{part}", f"--{part}", wrong])


def test_the_pairs_ratio_is_the_median_of_each_pairs_own_ratio(capsys):
    from cdcflow_devtools import bench_pairs

    # the machine slowed down between pairs: each pair's ratio holds, the ratio of the medians does not
    pairs = [{"cycle_seconds": c, "replica_seconds": r, "around_stages_seconds": a, "cycle_stolen": st,
              "replica_stolen": 0.0} for c, r, a, st in ((2.0, 1.0, 0.4, 0.0), (4.0, 2.2, 0.7, 0.05), (6.0, 2.7, 0.5, 0.01))]
    got = bench_pairs.summary(pairs)
    # the pair whose cycle lost 5% of the machine to the hypervisor is not among the quiet ones
    assert got["quiet_pairs"] == 2
    assert got["quiet_ratio_vs_native_replica"] == pytest.approx({"median": 0.475, "min": 0.45, "max": 0.5})
    assert got["cycle_seconds"] == {"median": 4.0, "min": 2.0, "max": 6.0}
    assert got["around_stages_seconds"] == {"median": 0.5, "min": 0.4, "max": 0.7}
    assert got["replica_seconds"]["median"] == 2.2
    assert got["ratio_vs_native_replica"] == pytest.approx({"median": 0.5, "min": 0.45, "max": 0.55})
    bench_pairs.report({"pairs": [{**p, "consistent": True} for p in pairs], **got, "consistent": True})
    out = capsys.readouterr().out
    assert "5.0%" in out and "its start-up, prepare and finish: median 0.50 s (from 0.40 s to 0.70 s)" in out
    assert "over the 2 pairs that stole less than 2%: ratio_vs_native_replica median 0.47" in out
    assert "paired_ratio_vs_native_replica=0.50 quiet_paired_ratio_vs_native_replica=0.47" in out


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


BENCH_KEYS = {f"{bench_snapshot.SCHEMA}.{t}": ("id", "shard") if t == "events" else ("id",)
              for t in bench_workload.TABLES}


def test_fix_rows_reads_pt_table_sync_and_verify_statements_as_the_same_rows():
    # captured from one run of the part (40,000 rows, 1,000 injected differences), the same 24 rows
    # kept in both: pt-table-sync's INSERT / UPDATE / DELETE, cdcflow's REPLACE / DELETE
    pt = fix_rows((DATA / "pt_table_sync_print.sql").read_text(), BENCH_KEYS)
    fix = fix_rows((DATA / "verify_fix.sql").read_text(), BENCH_KEYS)
    assert len(pt) == 24 and pt == fix
    assert {("snapbench.events", ("10001", "1")), ("snapbench.accounts", ("130",))} <= pt
    # the first statement of each kind names the row of its key columns, not of other values
    assert fix_rows(
        "UPDATE `snapbench`.`events` SET `kind`='7', `payload`='WHERE `id`=\\'1\\';' WHERE `id`='20' AND "
        "`shard`='4' LIMIT 1 /*percona-toolkit src_db:snapbench*/;\n"
        "REPLACE INTO `snapbench`.`items` (`id`, `code`) VALUES (5, 'a;b');", BENCH_KEYS) == {
        ("snapbench.events", ("20", "4")), ("snapbench.items", ("5",))}


def test_pt_table_sync_and_injected_differences_name_the_same_rows(snapshot_schema):
    up, down = snapshot_schema
    schema = bench_snapshot.SCHEMA
    bench_workload.fill(up, schema, 4_000)
    bench_snapshot.dump_pipe(up, down)
    tables = list(bench_workload.TABLES)
    keys = bench_table_sync.primary_keys(up, schema)
    assert keys == BENCH_KEYS
    _, text = bench_table_sync.timed_print(up, down, schema, tables)
    assert fix_rows(text, keys) == set()
    expected = bench_table_sync.inject(down, schema, 1_000, 40, seed=7)
    changed = [r for r in down.query(f"SELECT balance, name FROM {schema}.accounts WHERE name LIKE 'changed %'")]
    assert changed and len({r[1] for r in changed}) == len(changed)  # each updated row changed its own way
    assert len(expected) == 40 and {t for t, _ in expected} == {f"{schema}.{t}" for t in tables}
    with up.connect() as u, down.connect() as d:
        assert len(compare(u, d, schemas=[schema])) > 0
    _, text = bench_table_sync.timed_print(up, down, schema, tables)
    assert fix_rows(text, keys) == expected
    assert {s.split()[0] for s in text.splitlines()} == {"INSERT", "UPDATE", "DELETE"}


def test_myloader_is_run_once_more_after_a_deadlock_and_says_so(snapshot_schema, tmp_path, monkeypatch):
    up, down = snapshot_schema
    bench_workload.fill(up, bench_snapshot.SCHEMA, 2_000)
    real, calls = bench_snapshot._timed, []

    def deadlocking(args, what, **kw):
        calls.append(what)
        if what == "myloader":  # the first attempt: a partial copy, then the error myloader gives
            down.execute(f"CREATE DATABASE IF NOT EXISTS {bench_snapshot.SCHEMA}")
            raise RuntimeError("myloader failed (exit 1): Deadlock found when trying to get lock")
        return real(args, what, **kw)

    monkeypatch.setattr(bench_snapshot, "_timed", deadlocking)
    res = bench_snapshot.mydumper_myloader(up, down, 2, tmp_path)
    assert calls == ["mydumper", "myloader", "myloader (second attempt)"]
    assert "Deadlock" in res["load_retried"]["error"] and res["seconds"] == res["dump_seconds"] + res["load_seconds"]
    with up.connect() as u, down.connect() as d:
        assert compare(u, d, schemas=[bench_snapshot.SCHEMA]) == []


def test_pt_table_sync_misses_two_rows_of_one_chunk_changed_alike(snapshot_schema):
    # why a run of the part can find pt-table-sync short of the injected rows: it sums a chunk as
    # BIT_XOR(CRC32(row text)), and CRC32 is affine, so two rows of one chunk whose texts change by
    # the same bits (same lengths; balance 0.37 -> 1.37 and 0.74 -> 1.74, the same name change)
    # leave the chunk's sum as it was.  A third such row shows up.
    up, down = snapshot_schema
    schema = bench_snapshot.SCHEMA
    bench_workload.fill(up, schema, 4_000)
    bench_snapshot.dump_pipe(up, down)
    change = f"UPDATE {schema}.accounts SET balance = balance + 1, name = CONCAT('changed ', id) WHERE id IN "
    down.execute(change + "(1, 2)")
    keys = bench_table_sync.primary_keys(up, schema)
    tables = list(bench_workload.TABLES)
    assert fix_rows(bench_table_sync.timed_print(up, down, schema, tables)[1], keys) == set()
    with up.connect() as u, down.connect() as d:
        assert compare(u, d, schemas=[schema])  # the rows do differ
    # the bench's explanation of such a miss: pt-table-sync summing with MD5 over the missed rows names them
    missed = {(f"{schema}.accounts", (str(i),)) for i in (1, 2)}
    assert bench_table_sync.md5_named(up, down, missed | {(f"{schema}.accounts", ("5",))}, keys) == missed
    down.execute(change + "(3)")
    assert fix_rows(bench_table_sync.timed_print(up, down, schema, tables)[1], keys) == {
        (f"{schema}.accounts", (str(i),)) for i in (1, 2, 3)}


def _cycle(run_id: str, started: float, ended: float, pos: int, ts_s: float, pulled: int, **seconds):
    from cdcflow.store.metastore import RunState

    return RunState("lag", run_id, "done", int(ts_s * 1000) << 18, {"file": "binlog.000001", "pos": pos}, 0, False,
                    stats={"pull": {"pulled": pulled, "ranges": 1}, **{f"{k}_seconds": v for k, v in seconds.items()}},
                    started_at=started, ended_at=ended)


def test_the_lag_tail_breaks_out_each_dag_run_and_its_slowest():
    from cdcflow_devtools import lag_tail

    at = lambda t: f"2026-11-26 10:00:{t:06.3f}"  # noqa: E731 - Airflow's UTC text
    t0 = lag_tail._utc(at(0))
    runs = [("r1", at(0), at(4)), ("r2", at(4.5), at(13)), ("r3", at(13.2), at(16))]
    task = lambda run, t, q, s, e: (run, t, "success", at(q), at(s), at(e))  # noqa: E731
    tis = [task("r1", "prepare", 0.05, 0.1, 0.3), task("r1", "pull", 0.4, 0.5, 3.5),
           ("r1", "filter", "skipped", None, None, None), task("r1", "finish", 3.6, 3.7, 4),
           task("r2", "prepare", 4.6, 4.7, 5), task("r2", "pull", 5.1, 5.2, 6), task("r2", "filter", 6.5, 7, 9),
           task("r2", "finish", 12, 12.5, 13),
           task("r3", "prepare", 13.3, 13.4, 13.6), task("r3", "pull", 13.7, 13.8, 14),
           task("r3", "finish", 14.2, 14.3, 16)]
    cycles = [_cycle("c1", t0 + 0.2, t0 + 3.9, 1000, 100, 500, pull=1.0, apply=1.5),
              _cycle("c2", t0 + 4.9, t0 + 12.8, 41000, 104, 9000), _cycle("c3", t0 + 13.5, t0 + 15, 900000, 113, 0),
              _cycle("c4", t0 + 17, t0 + 18, 900100, 116, 0)]
    samples = [(t0 + 3, t0 - 2), (t0 + 10, t0 + 1), (t0 + 15, t0 + 12)]
    rows = lag_tail.dag_rows(runs, tis, cycles, [t0, t0 + 14], samples)
    assert [r["run"] for r in rows] == ["r1", "r2", "r3"]
    assert [r["path"] for r in rows] == ["fast", "staged", "empty"]
    assert [r["seconds"] for r in rows] == [4.0, 8.5, 2.8]
    assert rows[0]["gap_before"] is None and rows[1]["gap_before"] == 0.5
    assert rows[0]["window"] == {"events": 500, "ranges": 1, "bytes": 40000, "upstream_seconds": 4.0}
    assert rows[0]["stages"] == {"pull": 1.0, "apply": 1.5}
    assert rows[1]["tasks"]["filter"] == {"wait": 1.0, "queued": 0.5, "ran": 2.0}  # from pull's end
    assert "filter" not in rows[0]["tasks"]  # skipped: it ran nowhere
    assert [r["lag_max"] for r in rows] == [5.0, 9.0, 3.0]  # each sample to the run that would clear it
    tail = lag_tail.summary(rows)
    assert tail["runs"] == 3 and tail["seconds"]["max"] == 8.5
    assert [r["run"] for r in tail["above_p90"]] == ["r2"] and tail["worst_lag"][0]["run"] == "r2"
    assert tail["paths"]["staged"] == {"runs": 1, "seconds_p50": 8.5}
    assert sum(c for _, _, c in tail["histogram"]) == 3
    lines = lag_tail.report_lines("DAG runs", tail)
    assert any("8.50 s staged, 9000 events" in line and "filter 1.0+2.0" in line for line in lines), lines
    # the CLI's cycles: the gap before one is its process's start
    cli = lag_tail.cli_rows(cycles, [t0, t0 + 14], samples)
    assert [r["path"] for r in cli] == ["cycle", "cycle", "empty"] and cli[1]["gap_before"] == 1.0


def test_settle_waits_for_the_dirty_pages_and_puts_the_setting_back(snapshot_schema):
    up, down = snapshot_schema
    pct = "SELECT @@GLOBAL.innodb_max_dirty_pages_pct, @@GLOBAL.innodb_io_capacity, @@GLOBAL.innodb_io_capacity_max"
    before = up.query(pct)
    s = bench_snapshot.SCHEMA
    up.execute(f"CREATE DATABASE {s}", f"CREATE TABLE {s}.d (id INT PRIMARY KEY, v TEXT)",
               f"INSERT INTO {s}.d SELECT seq, REPEAT('x', 500) FROM {s}.seq_1_to_20000")
    bench_snapshot.settle(up, down)
    (_, dirty), = up.query("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'")
    assert int(dirty) < 64 and up.query(pct) == before


def test_a_timed_run_starts_with_the_page_cache_written_back(tmp_path):
    """The writes before a timed run are on the disk when it starts (bench_common.written_back),
    not written back by the kernel during it, where the run's own fsyncs would wait behind them."""
    (tmp_path / "written").write_bytes(os.urandom(64 * 2 ** 20))  # not synced: in the page cache
    dirty_before = bench_common.page_cache_dirty()
    found, took = bench_common.written_back()
    assert dirty_before >= 32 * 2 ** 20 and found >= 32 * 2 ** 20, (dirty_before, found)
    assert bench_common.page_cache_dirty() < 32 * 2 ** 20 and took >= 0


def test_a_timed_run_starts_with_every_contenders_program_in_the_page_cache():
    """The files read in before a timed run (bench_program_files) are those the contenders load:
    cdcflow's modules, the packages a cycle imports with their libraries, and the peers'
    programs; pandas, which the command holds back, is not among them.  Each is read whole."""
    import shutil

    from cdcflow_devtools import bench_program_files
    from cdcflow_devtools.checkout import PROJECT

    files = bench_program_files.program_files()
    names = {f.name for f in files}
    assert (PROJECT / "include" / "cdcflow" / "sink" / "row_writer.py").resolve() in files
    assert any(n.startswith("libarrow.so") for n in names) and any(n.startswith("compiled_reader.") for n in names)
    assert Path(shutil.which("mariadb-binlog")).resolve() in files and Path(shutil.which("mariadbd")).resolve() in files
    assert not any("site-packages/pandas/" in str(f) for f in files)
    read, took = bench_program_files.read_in()
    assert read == sum(f.stat().st_size for f in files) and took >= 0


def test_the_lag_report_gives_a_dag_runs_times_only_where_a_run_finished(capsys):
    """A run that follows the binlog may outlast the measured window: the report then says so
    once (lag_tail) and prints no run times of None."""
    from cdcflow_devtools import bench_lag

    def entry(runs):
        where = {"runs": runs, "run_seconds_p50": 61.0 if runs else None,
                 "between_runs_p50": 0.4 if runs else None, "tasks": {}}
        return {"dag-continuous-follow60": {"p50": 0.15, "p99": 0.5, "max": 1.25, "cycles_per_minute": 562.7,
                                            "where": where, "tail": {}}}

    bench_lag.report({"seconds": 90, "rates": {1000: entry(0)}})
    assert "None" not in capsys.readouterr().out
    bench_lag.report({"seconds": 90, "rates": {1000: entry(2)}})
    assert "a DAG run 61.0 s (median), 0.4 s to the next" in capsys.readouterr().out


def test_the_apply_bound_adds_both_processes_core_seconds_over_the_cores(monkeypatch):
    """Where the downstream shares the machine, apply can take no less than cdcflow's and the
    downstream's core-seconds over the cores; without a census or a floor nothing is claimed."""
    monkeypatch.setattr(bench.os, "cpu_count", lambda: 2)
    cyc = {"census": {"stages": [{"stage": "pull", "seconds": 3.0, "core_seconds": {"cdcflow": 3.0}},
                                 {"stage": "apply", "seconds": 2.2,
                                  "core_seconds": {"cdcflow": 1.6, "downstream": 2.0, "JVM": 0.0}}]}}
    floor = {"seconds": 1.2, "downstream_core_seconds": 2.0}
    line = bench.apply_bound(cyc, floor)
    assert "2 cores" in line and "2.0 core-seconds in 1.2s" in line
    assert "1.6 in cdcflow and 2.0 in the downstream" in line
    assert "no less than 1.8s (1.50x the floor)" in line
    assert bench.apply_bound({}, floor) is None
    assert bench.apply_bound(cyc, {"seconds": 0.0, "downstream_core_seconds": 0.0}) is None


def test_the_catchup_table_compares_each_place_with_the_shape_s_smallest_auto_window(capsys):
    from cdcflow_devtools import bench_catchup

    def row(rows, place, wall, jvm):
        stats = {"pull_seconds": 1.0, "apply_seconds": 2.0, "filter": {"ran_in": "spark" if jvm else "process"},
                 "barrier": {"ran_in": "process"}, "apply": {"segments_in_process": 1, "segments_in_spark": 2}}
        census = {"stages": [{"stage": "pull", "seconds": 1.0,
                              "core_seconds": {"cdcflow": 3.0, "JVM": jvm, "Python workers": 0.0}}]}
        return {"shape": "oltp", "rows": rows, "place": place, "wall_seconds": wall, "peak_rss_bytes": 2**30,
                "stats": stats, "census": census, "consistent": True}

    rows = [row(300_000, "auto", 10.0, 0.0), row(2_500_000, "auto", 100.0, 1.0), row(2_500_000, "spark", 50.0, 9.0)]
    bench_catchup.report(rows)
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "oltp" in line]
    assert "1.00x" in lines[0] and "0.83x" in lines[1] and "1.67x" in lines[2]  # 30,000/s the base
    assert "75%" in lines[2]  # 9 of 12 core-seconds in the JVM
    assert "filter spark, barrier process, apply 1 here / 2 in Spark" in out
    assert bench_catchup.consistent(rows) and not bench_catchup.consistent([{**rows[0], "consistent": False}])


def test_the_lag_part_takes_its_launchers_and_the_sysbench_load():
    from cdcflow_devtools import bench_lag

    a = bench.parse_args(["--lag-rates", "1000"])
    assert a.parts == [*bench.DEFAULT_PARTS, "lag"] and a.lag_cli is True and a.lag_sysbench is False
    assert bench_lag.launchers_of(bench_lag.schedules_of(a.lag_schedules), a.lag_cli) == \
        ["dag-binlog", "dag-continuous", "dag-continuous-follow60", "cli", "cli-follow"]
    # a DAG launcher's name says its schedule and follow-seconds, and gives its changefeed's config back
    assert bench_lag.dag_config("dag-continuous-follow60") == \
        ("@continuous", '[cdcflow]\nschedule = "@continuous"\nfollow-seconds = 60\n')
    assert bench_lag.dag_config("dag-binlog") == ("@binlog", '[cdcflow]\nschedule = "@binlog"\n')
    a = bench.parse_args(["--parts", "lag", "--lag-schedules", "@binlog", "--no-lag-cli", "--lag-sysbench"])
    assert bench_lag.launchers_of(bench_lag.schedules_of(a.lag_schedules), a.lag_cli) == ["dag-binlog"]
    assert a.lag_sysbench is True and a.lag_sysbench_threads == 4
    assert bench_lag.launchers_of(bench_lag.schedules_of("none"), True) == ["cli", "cli-follow"]


SYSBENCH_REPORT = """\
SQL statistics:
    queries performed:
        read:                            87220
        write:                           24920
        other:                           12460
        total:                           124600
    transactions:                        6230   (103.78 per sec.)
    queries:                             124600 (2075.63 per sec.)
    ignored errors:                      0      (0.00 per sec.)
    reconnects:                          0      (0.00 per sec.)
"""


def test_the_sysbench_load_reads_its_rates_from_the_report():
    from cdcflow_devtools import lag_sysbench

    assert lag_sysbench.figures(SYSBENCH_REPORT) == {
        "transactions": 6230, "transactions_per_second": 103.78, "queries": 124600,
        "queries_per_second": 2075.63, "ignored_errors": 0, "ignored_errors_per_second": 0.0}
    assert lag_sysbench.args(type("Up", (), {"port": 3307})(), "bench", 4, "run")[:2] == ["sysbench", "oltp_read_write"]


def test_the_overlap_ceiling_is_pull_less_applys_slowdown_in_each_pair():
    from cdcflow_devtools import bench_overlap

    def pair(pull, apply, apply_beside, wall=4.0):
        return {"alone": {"wall": wall, "pull": pull, "apply": apply},
                "beside": {"apply": apply_beside, "pull_beside": pull * 1.5}}

    # a pull beside apply that slows it by more than pull's own time hides nothing: the ceiling goes negative
    got = bench_overlap.summary([pair(0.6, 2.0, 2.4), pair(0.5, 3.0, 3.1, wall=5.0), pair(0.6, 2.2, 3.0)])
    assert got["slowdown"] == pytest.approx({"median": 0.4, "min": 0.1, "max": 0.8})
    assert got["hidden"] == pytest.approx({"median": 0.2, "min": -0.2, "max": 0.4})
    assert got["hidden_of_cycle"]["median"] == pytest.approx(0.05)
    assert got["pull_beside"]["median"] == pytest.approx(0.9)


def test_the_pull_beside_is_let_go_when_the_cycles_log_says_apply_starts(tmp_path):
    import io
    import time

    from cdcflow_devtools import bench_overlap

    class Proc:
        stdin = io.StringIO()

    beside = object.__new__(bench_overlap._PullBeside)
    beside.proc, beside.started_at = Proc(), None
    log = tmp_path / "cycle.log"
    log.write_text("2026-12-01 10:00:00,000 cdcflow window · changefeed f · {}\n")
    watcher = beside.watch(1, log)
    with open(log, "a") as f:
        for event in ("pulled", "filtered"):
            f.write(f"2026-12-01 10:00:00,100 cdcflow {event} · changefeed f · {{}}\n")
            f.flush()
    time.sleep(0.1)
    assert Proc.stdin.getvalue() == "" and beside.started_at is None
    with open(log, "a") as f:
        f.write("2026-12-01 10:00:00,200 cdcflow barriers · changefeed f · {}\n")
    deadline = time.time() + 5
    while beside.started_at is None and time.time() < deadline:
        time.sleep(0.01)
    watcher.stop()
    assert Proc.stdin.getvalue() == bench_overlap.GO + "\n" and beside.started_at is not None


def test_paired_runs_alternate_which_side_goes_first():
    from cdcflow_devtools import bench_pairs

    ran = []
    got = bench_pairs.alternating(3, "pair", {"a": lambda i: ran.append(("a", i)) or i * 10,
                                              "b": lambda i: ran.append(("b", i)) or -i})
    assert ran == [("a", 0), ("b", 0), ("b", 1), ("a", 1), ("a", 2), ("b", 2)]
    assert got == [{"a": 0, "b": 0}, {"b": -1, "a": 10}, {"a": 20, "b": -2}]


def test_the_census_counts_a_busy_process_outside_the_cycle_as_the_rest_of_the_machine():
    """A process the census does not follow still takes the cores the cycle runs on: it is the
    `rest` column, the followed process its own kind, and the sampler's own time neither."""
    from cdcflow_devtools import bench_census

    spin = "import time\nt = time.process_time()\nwhile time.process_time() - t < 1.0: pass"
    cycle = subprocess.Popen([sys.executable, "-c", spin])
    outside = subprocess.Popen([sys.executable, "-c", spin])
    sampler = bench_census.CpuSampler([cycle.pid], {}, interval=0.05)
    cycle.wait()
    outside.wait()
    sampler.stop()
    last = sampler.samples[-1][1]
    assert 0.9 <= last["cdcflow"] <= 1.3, last
    # the outside process's second (less what it spent before the sampler's start), and
    # whatever else ran on the machine meanwhile
    assert last["rest"] >= 0.6, last
    assert last["stolen"] >= 0.0
    lines = bench_census.table("t", bench_census.Census([("apply", 1.0, {**dict.fromkeys(bench_census.KINDS, 0.0),
                                                                          "cdcflow": 1.0, "rest": 5.0})]))
    # the core-s column: the cycle's and the servers' only; a census without waits shows none
    assert lines[2].split()[-3:] == ["1.0", "-", "-"], lines


def test_the_census_tells_a_cycle_waiting_for_a_core_from_one_waiting_for_nothing():
    """A stage that took long with little CPU is explained by its waits: a cycle's process on
    cores kept busy by others piles up run-queue time (`queued`); the machine's disk stalls
    are read from the kernel as they grow, and a stage's waits reach the table and back."""
    from cdcflow_devtools import bench_census

    cores = os.cpu_count() or 1
    spin = "import time\nt = time.process_time()\nwhile time.process_time() - t < 1.0: pass"
    cycle = subprocess.Popen([sys.executable, "-c", spin])
    # one spinner more than the machine has cores besides the cycle's: someone always waits
    others = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(cores)]
    sampler = bench_census.CpuSampler([cycle.pid], {}, interval=0.05)
    cycle.wait()
    for o in others:
        o.wait()
    sampler.stop()
    last = sampler.samples[-1][1]
    assert last["queued"] > 0.05, last  # a second of CPU among cores + 1 spinners: a share of it queued
    assert last["disk"] >= 0.0
    before = bench_census.disk_stalled()
    assert bench_census.disk_stalled() >= before  # a counter, never going back
    idle = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.5)"])
    quiet = bench_census.CpuSampler([idle.pid], {}, interval=0.05)
    idle.wait()
    quiet.stop()
    assert quiet.samples[-1][1]["queued"] < 0.05, quiet.samples[-1]  # asleep, not waiting for a core

    c = bench_census.Census([("pull", 1.7, {**dict.fromkeys(bench_census.KINDS, 0.0), "cdcflow": 0.4})],
                            {"pull": 1}, {"pull": {"queued": 0.25, "disk": 1.1}})
    assert bench_census.Census.of(c.as_dict()) == c
    assert bench_census.table("t", c)[2].split()[-3:] == ["0.4", "0.25", "1.10"]


def test_the_census_tells_what_of_a_cycles_cpu_went_to_first_touches_of_memory():
    """A cycle's process that touches fresh memory spends kernel time on its page faults: the
    sampler counts the cdcflow processes' system seconds and faults apart (KERNEL), each stage's
    reach the table's last line and a results file and back, and a census without them prints
    no such line."""
    from cdcflow_devtools import bench_census

    touch = ("import time\nt = time.time()\nwhile time.time() - t < 0.4: pass\n"
             "b = bytearray(200 * 1024 * 1024)\nfor i in range(0, len(b), 4096): b[i] = 1\ntime.sleep(0.3)")
    cycle = subprocess.Popen([sys.executable, "-c", touch])
    sampler = bench_census.CpuSampler([cycle.pid], {}, interval=0.05)
    cycle.wait()
    sampler.stop()
    first, last = sampler.samples[0][1], sampler.samples[-1][1]
    assert last["faults"] - first["faults"] >= 200 * 1024 * 1024 // 4096 // 2, (first, last)  # at most 2 MiB pages
    assert last["system"] > first["system"], (first, last)
    assert bench_census.page_faults(cycle.pid) is None  # gone: its last sample's count stands

    cores = {**dict.fromkeys(bench_census.KINDS, 0.0), "cdcflow": 1.2}
    waits = {"queued": 0.0, "disk": 0.0}
    c = bench_census.Census([("pull", 1.3, cores), ("apply", 1.5, cores)], {"pull": 1, "apply": 2}, {"pull": waits, "apply": waits},
                            {"pull": {"system": 0.61, "faults": 28854}, "apply": {"system": 0.01, "faults": 90}})
    assert bench_census.Census.of(c.as_dict()) == c
    assert bench_census.table("t", c)[-1] == "  of cdcflow's, in the kernel: pull 0.61 s (28,854 page faults)"
    assert bench_census.stage_kernel(c.as_dict(), "pull") == {"system": 0.61, "faults": 28854}
    older = bench_census.Census([("pull", 1.3, cores)])
    assert bench_census.table("t", older)[-1].startswith("whole cycle")
    assert bench_census.stage_kernel(older.as_dict(), "pull") is None


def test_the_sampler_finds_a_cycles_grandchildren_as_the_full_scan_does():
    """process_tree.sampled (the census's cheap listing, from the kernel's children files) finds
    the processes descendants (a scan of every process) finds, and a spawned grandchild's CPU
    counts for its kind; a process gone is an empty tree."""
    from cdcflow_devtools import bench_census, process_tree

    spin = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.6: pass"
    parent = subprocess.Popen([sys.executable, "-c", "import subprocess, sys, threading\n"
                               "kids = [subprocess.Popen([sys.executable, '-c', sys.argv[1]]) for _ in range(2)]\n"
                               "threading.Thread(target=lambda: [k.wait() for k in kids]).start()\n"
                               "[k.wait() for k in kids]", spin])
    deadline = time.time() + 10
    while len(process_tree.sampled(parent.pid)) < 3 and time.time() < deadline:
        time.sleep(0.02)
    sampler = bench_census.CpuSampler([parent.pid], {}, interval=0.05)
    assert sorted(process_tree.sampled(parent.pid)) == sorted([parent.pid, *process_tree.descendants(parent.pid)])
    assert len(process_tree.sampled(parent.pid)) == 3
    parent.wait()
    sampler.stop()
    assert sampler.samples[-1][1]["cdcflow"] >= 0.6, sampler.samples[-1]  # the grandchildren's spinning
    assert process_tree.sampled(parent.pid) == []
