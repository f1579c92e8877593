"""`make bench`: cdcflow against `mariadb-binlog | mariadb` and a native replica, same workload.

One upstream with a ROW binlog and three downstreams (cdcflow's, the binlog replay's, the
replica's) run under .local/bench/.  All four get the same schema snapshot, the start
position is taken, the workload runs on the upstream, and then each of the three catches
up the same binlog range in turn (one at a time, so none competes with another for the
CPU).  Each downstream is checked against the upstream table by table.

cdcflow runs as `cdcflow changefeed run` in a child process, so its wall time includes
Python's and Spark's start-up and its peak memory includes the Spark JVM and Python
workers.  A second table gives the cycle time for other sizes and for an idle cycle; a
third (bench_launchers) runs the same windows as a CLI cycle, as a DAG run on Spark Connect
and as a DAG run with spark-submit per stage.  The snapshot part (bench_snapshot, opt-in)
measures `create --snapshot` and `verify` against dump tools and CHECKSUM TABLE; the lag
part (bench_lag, opt-in) the end-to-end lag of a DAG on @binlog and on @continuous against a CLI loop,
under a steady rate and (LAG_SYSBENCH=1) under sysbench oltp_read_write.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import sys
import time
import traceback
from dataclasses import asdict
from pathlib import Path

from cdcflow.source.binlog_events import DEFAULT_READER, READER_ENV
from cdcflow_devtools.bench_common import (
    DEFAULT_DIR, DEFAULT_ROWS, DEFAULT_SCALE, STAGES, Servers, around_stages, create_changefeed, fmt_bytes, fmt_rate,
    rate, reset_settled, run_cycle_measured, run_workload, say, settled, stage_seconds, start_servers, stop_servers,
    verify,
)

def main_comparison(servers: Servers, rows: int, shape: str, home: Path, log_dir: Path, pairs: int = 0,
                    overlap: int = 0, apart: int = 1) -> dict:
    from cdcflow_devtools import bench_apart, bench_overlap, bench_pairs, bench_peers, bench_workload

    up = servers.up
    bench_peers.reset_replica(servers.replica)
    for s in servers.all():
        bench_workload.create_snapshot(s)
    start_file, start_pos = up.binlog_head()
    pos = create_changefeed("bench", up, servers.cdcflow, home)
    if (pos["file"], pos["pos"]) != (start_file, start_pos):
        raise RuntimeError(f"the changefeed starts at {pos}, not at the snapshot position {start_file}:{start_pos}")
    # the same window once more later, on a warm Spark Connect server (connect_cycle), once for
    # the floor's statements (capture_floor), once a round with the downstream on cores of its own
    # (bench_apart), once a pair for the pairs part (bench_pairs) and twice a pair for the overlap part
    for again in ("bench-connect", FLOOR_FEED, *map(bench_apart.feed_id, range(apart)),
                  *map(bench_pairs.feed_id, range(pairs)),
                  *map(bench_overlap.feed_id, range(2 * overlap))):
        if create_changefeed(again, up, servers.cdcflow, home) != pos:
            raise RuntimeError(f"{again} does not start where bench does")

    say(f"workload: about {rows:,} row changes on the upstream (shape {shape})")
    plan, done, gen_secs = run_workload(up, rows, shape)
    stop_file, stop_pos = up.binlog_head()
    rng = bench_peers.BinlogRange(start_file, start_pos, stop_file, stop_pos)
    say(f"workload done in {gen_secs:.1f}s: {done:,} row changes in {plan.transactions - plan.ddls:,} "
        f"transactions and {plan.ddls} DDLs; binlog {start_file}:{start_pos} .. {stop_file}:{stop_pos}")

    say("cdcflow: one `cdcflow changefeed run` (whole cycle, Spark local[*])")
    settled(servers)
    servers_cpu = {"roots": [], "fixed": {servers.cdcflow.pid: "downstream", up.pid: "upstream"}}
    cyc = run_cycle_measured("bench", done, log_dir, cpu=servers_cpu)
    cdc_diffs = verify(up, servers.cdcflow, "cdcflow's downstream")

    say("mariadb-binlog --read-from-remote-server | mariadb")
    settled(servers)
    binlog_secs = bench_peers.binlog_replay(up, servers.binlog, rng)
    binlog_diffs = verify(up, servers.binlog, "mariadb-binlog's downstream")

    say("native replica: CHANGE MASTER TO the start position; START SLAVE; wait until caught up")
    settled(servers)
    replica_secs = bench_peers.replica_catch_up(up, servers.replica, rng)
    replica_diffs = verify(up, servers.replica, "the replica")

    connect, connect_diffs, floor, phases = connect_cycle(servers, done, log_dir, servers_cpu)
    cores_apart = bench_apart.apart_table(servers, done, log_dir, phases, servers_cpu, apart)
    return {
        "rows": done, "shape": shape, "transactions": plan.transactions - plan.ddls, "ddls": plan.ddls,
        "by_kind": {k: v for k, v in plan.by_kind().items() if v}, "workload_seconds": gen_secs,
        "binlog_range": asdict(rng), "cdcflow": asdict(cyc),
        "cdcflow_connect": asdict(connect), "floor": floor, "cores_apart": cores_apart,
        "mariadb_binlog_seconds": binlog_secs, "native_replica_seconds": replica_secs,
        "consistent": {"cdcflow": not cdc_diffs, "cdcflow_connect": not connect_diffs,
                       "mariadb_binlog": not binlog_diffs, "native_replica": not replica_diffs},
    }


FLOOR_FEED = "bench-floor"  # the changefeed whose cycle is captured for the floor (capture_floor)


def connect_cycle(servers: Servers, rows: int, log_dir: Path, cpu: dict):
    """The same window once more, by the changefeed created beside the first (bench-connect),
    into cdcflow's downstream reset to the start's schema, its cycle on a Spark Connect server
    started and warmed up before (as the DAG's stages run on a long-running server): no JVM
    or Python workers to start in the cycle.  Then the floor (capture_floor).  Returns its
    CycleResult, the downstream's differences, the floor's figures and its phases."""
    from cdcflow_devtools import spark_connect
    from cdcflow_devtools.mariadb import free_port

    say("cdcflow again on a warm Spark Connect server: the same window, its downstream reset to the start")
    reset_settled(servers)
    server = spark_connect.start(log_dir / "spark-connect", port=free_port())
    try:
        cyc = run_cycle_measured("bench-connect", rows, log_dir, server.url,
                                 cpu={**cpu, "roots": [server.process.pid]})
    finally:
        server.stop()
    diffs = verify(servers.up, servers.cdcflow, "cdcflow's downstream (warm Spark Connect)")
    floor, phases = capture_floor(servers, rows, log_dir)
    return cyc, diffs, floor, phases


def capture_floor(servers: Servers, rows: int, log_dir: Path) -> tuple[dict, list]:
    """The floor (bench_floor): a CLI cycle of the same window by FLOOR_FEED, untimed, with the
    downstream's general log capturing its statements, which are then sent again prebuilt into
    the downstream reset to the start.  The timed cycles run without the log: writing every
    statement into it slowed their apply (the bulk warm cycle's: 2.8-3.4 s with it, 1.9-2.6 s
    without).  Returns the floor's figures and its phases."""
    from cdcflow_devtools import bench_floor, bench_workload

    say("the floor: the window's CLI cycle once more with the downstream's general log on (untimed)")
    bench_workload.create_snapshot(servers.cdcflow)
    bench_floor.start_capture(servers.cdcflow)
    try:
        run_cycle_measured(FLOOR_FEED, rows, log_dir)
    finally:
        phases = bench_floor.captured(servers.cdcflow)
    captured_diffs = verify(servers.up, servers.cdcflow, "cdcflow's downstream (the captured cycle)")
    say(f"the floor: the cycle's {sum(p.statements() for p in phases):,} statements sent again prebuilt, "
        f"in {len(phases)} phases, into the downstream reset to the start")
    reset_settled(servers)
    floor, floor_cpu = bench_floor.replay(servers.cdcflow, phases)
    floor_diffs = verify(servers.up, servers.cdcflow, "cdcflow's downstream (the floor's replay)")
    return {"seconds": floor, "phases": len(phases), "statements": sum(p.statements() for p in phases),
            "consistent": not floor_diffs and not captured_diffs, "downstream_core_seconds": floor_cpu}, phases


def apply_bound(cyc: dict, floor: dict) -> str | None:
    """Where the downstream shares this machine's cores with cdcflow, the least apply could take
    however well its work overlapped the downstream's: both processes' core-seconds in the CLI
    cycle's apply over the cores, beside the floor's own use of them."""
    from cdcflow_devtools import bench_census

    spent = bench_census.stage_core_seconds(cyc.get("census"), "apply")
    if not spent or not floor.get("seconds"):
        return None
    cores, own, down = os.cpu_count() or 1, spent.get("cdcflow", 0.0), spent.get("downstream", 0.0)
    least = (own + down) / cores
    return (f"on this machine's {cores} cores: the floor's replay kept the downstream busy for "
            f"{floor['downstream_core_seconds']:.1f} core-seconds in {floor['seconds']:.1f}s; the CLI cycle's apply spent "
            f"{own:.1f} in cdcflow and {down:.1f} in the downstream, so it could take no less than {least:.1f}s "
            f"({least / floor['seconds']:.2f}x the floor) however well the two overlapped")


def scale_changefeed_id(rows: int) -> str:
    return f"bench-{rows}"


def scaling(servers: Servers, sizes: list[int], shape: str, home: Path, log_dir: Path) -> list[dict]:
    """One fresh changefeed per size on cdcflow's downstream, then an idle cycle."""
    from cdcflow_devtools import bench_workload

    out, changefeed_id = [], None
    for n in sizes:
        for s in (servers.up, servers.cdcflow):
            bench_workload.create_snapshot(s)
        changefeed_id = scale_changefeed_id(n)
        create_changefeed(changefeed_id, servers.up, servers.cdcflow, home)
        _plan, done, _ = run_workload(servers.up, n, shape)
        say(f"scaling: {done:,} row changes, one cycle")
        cyc = run_cycle_measured(changefeed_id, done, log_dir)
        ok = not verify(servers.up, servers.cdcflow, f"cdcflow's downstream after {done:,}")
        out.append({"rows": done, "wall_seconds": cyc.wall_seconds, "peak_rss_bytes": cyc.peak_rss_bytes,
                    "stats": cyc.stats, "consistent": ok})
    if changefeed_id is not None:
        say("scaling: an idle cycle (nothing to apply)")
        cyc = run_cycle_measured(changefeed_id, 0, log_dir)
        out.append({"rows": 0, "wall_seconds": cyc.wall_seconds, "peak_rss_bytes": cyc.peak_rss_bytes,
                    "stats": cyc.stats, "consistent": True})
    return out


def stage_line(stats: dict, wall: float) -> str:
    return ", ".join(f"{s} {stage_seconds(stats, s):.1f}s" for s in STAGES) \
        + f"; start-up, prepare, finish {around_stages(stats, wall):.1f}s"


def report(main: dict, scale: list[dict], machine: str) -> tuple[float, float]:
    from cdcflow_devtools import bench_apart, bench_census, bench_targets
    rows = main["rows"]
    cyc = main["cdcflow"]
    whole = rate(rows, cyc["wall_seconds"])
    apply_secs = stage_seconds(cyc["stats"], "apply")
    binlog = rate(rows, main["mariadb_binlog_seconds"])
    replica = rate(rows, main["native_replica_seconds"])
    ok = main["consistent"]
    yes = {True: "yes", False: "NO"}
    print()
    print(f"machine: {machine}")
    shape = ("inserts 100 rows per transaction, updates and deletes one row per transaction"
             if main["shape"] == "oltp" else "100 rows per transaction")
    print(f"workload ({main['shape']}): {rows:,} row changes "
          f"({', '.join(f'{k} {v:,}' for k, v in main['by_kind'].items())}) in {main['transactions']:,} "
          f"transactions ({shape}), {main['ddls']} DDLs between them, on 4 tables")
    print()
    print(f"{'':32}{'row changes/s':>15}{'wall s':>10}{'peak memory':>14}{'consistent':>12}")
    print(f"{'cdcflow (whole cycle)':32}{fmt_rate(whole):>15}{cyc['wall_seconds']:>10.1f}"
          f"{fmt_bytes(cyc['peak_rss_bytes']):>14}{yes[ok['cdcflow']]:>12}")
    print(f"{'cdcflow apply stage alone':32}{fmt_rate(rate(rows, apply_secs)):>15}{apply_secs:>10.1f}"
          f"{'':>14}{'':>12}")
    con = main["cdcflow_connect"]
    print(f"{'cdcflow, warm Spark Connect':32}{fmt_rate(rate(rows, con['wall_seconds'])):>15}"
          f"{con['wall_seconds']:>10.1f}{fmt_bytes(con['peak_rss_bytes']):>14}{yes[ok['cdcflow_connect']]:>12}")
    print(f"{'mariadb-binlog | mariadb':32}{fmt_rate(binlog):>15}{main['mariadb_binlog_seconds']:>10.1f}"
          f"{'':>14}{yes[ok['mariadb_binlog']]:>12}")
    print(f"{'native replica':32}{fmt_rate(replica):>15}{main['native_replica_seconds']:>10.1f}"
          f"{'':>14}{yes[ok['native_replica']]:>12}")
    print(f"cdcflow's cycle: {stage_line(cyc['stats'], cyc['wall_seconds'])}")
    pulled, pull_secs = cyc["stats"].get("pull", {}).get("pulled", 0), stage_seconds(cyc["stats"], "pull")
    kernel = bench_census.stage_kernel(cyc.get("census"), "pull")
    print(f"pull: {pulled:,} events in {pull_secs:.1f}s, {fmt_rate(rate(pulled, pull_secs))} events/s "
          f"({os.environ.get(READER_ENV, DEFAULT_READER)} reader"
          + (f"; {kernel['system']:.2f} s in the kernel, {int(kernel['faults']):,} page faults" if kernel else "") + ")")
    print()
    for title, c in (("where the time goes, the CLI's cycle (core-seconds by process):", cyc),
                     ("where the time goes, on warm Spark Connect (core-seconds by process):", main["cdcflow_connect"])):
        if c.get("census"):
            print("\n".join(bench_census.table(title, bench_census.Census.of(c["census"]))))
            print()
    print(f"on warm Spark Connect (peak memory: the CLI's processes, not the server's): "
          f"{stage_line(con['stats'], con['wall_seconds'])}")
    ap = cyc["stats"].get("apply", {})
    print(f"cdcflow's apply: {ap.get('rows_in', 0):,} row changes -> {ap.get('rows_written', 0):,} final rows in "
          f"{ap.get('statements', 0):,} statements, {ap.get('ddl_applied', 0)} DDLs")
    floor = main["floor"]
    con_apply = stage_seconds(con["stats"], "apply")
    print(f"the downstream's floor: a captured cycle's {floor['statements']:,} statements sent again prebuilt in "
          f"{floor['phases']} phases took {floor['seconds']:.1f}s (consistent: {yes[floor['consistent']]}); "
          f"apply / floor = {con_apply / floor['seconds'] if floor['seconds'] else 0.0:.2f} on warm Spark Connect, "
          f"{apply_secs / floor['seconds'] if floor['seconds'] else 0.0:.2f} in the CLI's cycle")
    bound = apply_bound(cyc, floor)
    if bound:
        print(bound)
    bench_apart.report(main.get("cores_apart"))
    if scale:
        print()
        print("cycle time by window size (one fresh changefeed per size; peak memory of cdcflow's processes):")
        print(f"{'row changes':>14}{'cycle s':>10}{'row changes/s':>15}{'peak memory':>14}{'consistent':>12}")
        entries = sorted(scale + [{"rows": rows, "wall_seconds": cyc["wall_seconds"],
                                   "peak_rss_bytes": cyc["peak_rss_bytes"], "consistent": ok["cdcflow"]}],
                         key=lambda e: e["rows"])
        for e in entries:
            label = f"{e['rows']:,}" if e["rows"] else "0 (idle)"
            print(f"{label:>14}{e['wall_seconds']:>10.1f}{fmt_rate(rate(e['rows'], e['wall_seconds'])):>15}"
                  f"{fmt_bytes(e['peak_rss_bytes']):>14}{yes[e['consistent']]:>12}")
    figures = bench_targets.replication_figures(main)
    print(f"warm Spark Connect: ratio_vs_mariadb_binlog={figures.get('warm_ratio_vs_mariadb_binlog', 0.0):.2f}")
    return figures.get("ratio_vs_mariadb_binlog", 0.0), figures.get("ratio_vs_native_replica", 0.0)


def machine_text() -> str:
    import platform

    import psutil

    mem = psutil.virtual_memory().total / 2**30
    load = os.getloadavg()
    return (f"{os.cpu_count()} cores, {mem:.0f} GiB, {platform.platform(terse=True)}; "
            f"load average before the run {load[0]:.2f}")


PARTS = ("replication", "scaling", "pull", "pairs", "overlap", "launchers", "snapshot", "feeds", "large_txn", "lag",
         "tables", "join", "catchup")
# the parts past the default when PARTS= asks (or SNAPSHOT= / LAG_RATES= / TABLES= / PAIRS= / OVERLAP=); the pull,
# pairs and overlap parts need the replication part's window
DEFAULT_PARTS = ("replication", "scaling", "pull", "launchers")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from cdcflow_devtools import (
        bench_apart, bench_catchup, bench_join, bench_lag, bench_overlap, bench_pairs, bench_snapshot, bench_tables,
    )

    p = argparse.ArgumentParser(prog="python -m cdcflow_devtools.bench", description=__doc__.split("\n")[0])
    p.add_argument("--parts", default=os.environ.get("BENCH_PARTS"),
                   help=f"comma-separated, of {', '.join(PARTS)} (default {','.join(DEFAULT_PARTS)}, "
                        "plus snapshot when --snapshot is given; env BENCH_PARTS)")
    p.add_argument("--rows", type=int, default=int(os.environ.get("BENCH_ROWS") or DEFAULT_ROWS),
                   help=f"row changes of the compared workload (default {DEFAULT_ROWS:,}; env BENCH_ROWS)")
    p.add_argument("--scale", default=os.environ.get("BENCH_SCALE") or ",".join(map(str, DEFAULT_SCALE)),
                   help="window sizes of the scaling table, comma-separated, or 'none' "
                        "(default 10000,100000,1000000; env BENCH_SCALE)")
    p.add_argument("--launchers", default=os.environ.get("BENCH_LAUNCHERS") or "10000,100000",
                   help="window sizes run through the CLI, a DAG on Spark Connect and a DAG with spark-submit "
                        "(plus an idle window); 'none' skips the table")
    p.add_argument("--pull", type=int, default=int(os.environ.get("BENCH_PULL") or os.cpu_count() or 2),
                   help="ranges of the pull part (pull alone on parts of the compared window, sequential "
                        "vs in ranges on Spark; default: the machine's cores; env BENCH_PULL)")
    p.add_argument("--pairs", type=int, default=None,
                   help="pairs of the pairs part: cdcflow's CLI cycle and the native replica over the compared "
                        f"window again, one right after the other (default {bench_pairs.DEFAULT_PAIRS}); giving it "
                        "adds the part")
    p.add_argument("--overlap", type=int, default=None,
                   help="pairs of the overlap part: the CLI cycle alone and beside a second read of the window by "
                        "pull's path started as apply starts, what overlapping pull with apply could save at most "
                        f"(default {bench_overlap.DEFAULT_PAIRS}); giving it adds the part")
    p.add_argument("--apart", type=int, default=bench_apart.DEFAULT_ROUNDS,
                   help="rounds of the replication part's cores-apart line: the floor and a CLI cycle with the "
                        "downstream on cores of its own, alternating which goes first "
                        f"(default {bench_apart.DEFAULT_ROUNDS})")
    p.add_argument("--shape", default=os.environ.get("BENCH_SHAPE") or "oltp", choices=("oltp", "bulk"),
                   help="oltp: updates and deletes one row per transaction; bulk: 100 rows per transaction "
                        "(default oltp; env BENCH_SHAPE)")
    p.add_argument("--snapshot", default=None,
                   help="rows of the snapshot part's tables, comma-separated, one run of the part per size "
                        f"(default {','.join(map(str, bench_snapshot.DEFAULT_SIZES))}); giving it adds the part")
    p.add_argument("--snapshot-threads", type=int, default=bench_snapshot.DEFAULT_THREADS,
                   help="cdcflow's snapshot workers and mydumper's / myloader's threads "
                        f"(default {bench_snapshot.DEFAULT_THREADS})")
    p.add_argument("--large-txn", default=os.environ.get("BENCH_LARGE_TXN") or "1000000,5000000",
                   help="rows of the single transaction of the large_txn part, one cycle per size "
                        "(default 1000000,5000000; env BENCH_LARGE_TXN)")
    p.add_argument("--lag-rates", default=None, help="row changes per second of the lag part, comma-separated "
                   f"(default {','.join(map(str, bench_lag.DEFAULT_RATES))}); giving it adds the part")
    p.add_argument("--lag-seconds", type=float, default=bench_lag.DEFAULT_SECONDS,
                   help="seconds measured per rate and launcher in the lag part "
                        f"(default {bench_lag.DEFAULT_SECONDS})")
    bench_lag.add_launcher_options(p, "--lag-")
    p.add_argument("--tables", default=None,
                   help="table counts of the tables part, comma-separated (default 100,1000,10000); giving it "
                        "adds the part")
    p.add_argument("--join", type=int, default=None,
                   help=f"rows of the table the join part adds to a running changefeed (default "
                        f"{bench_join.DEFAULT_ROWS:,}); giving it adds the part")
    p.add_argument("--catchup", default=",".join(map(str, bench_catchup.DEFAULT_SIZES)),
                   help="window sizes of the catchup part, comma-separated, each caught up on engine auto and "
                        "forced to Spark (default 300000,2500000)")
    p.add_argument("--catchup-shapes", default="oltp,bulk", help="the catchup part's shapes (default oltp,bulk)")
    p.add_argument("--catchup-engines", default=",".join(bench_catchup.ENGINES),
                   help=f"the catchup part's engines (default {','.join(bench_catchup.ENGINES)})")
    p.add_argument("--catchup-binlog-bytes", type=int, default=0,
                   help="the upstream's max_binlog_size while the catchup part writes its workloads: a binlog "
                        "file rotated every that many bytes, so that a catch-up crosses several (default 0: the "
                        "server's own, 1 GiB)")
    p.add_argument("--catchup-cluster", default=str(bench_catchup.DEFAULT_CLUSTER),
                   help="the catchup size also caught up on standalone clusters of one and two workers, or 'none' "
                        f"(default {bench_catchup.DEFAULT_CLUSTER})")
    p.add_argument("--dir", default=str(DEFAULT_DIR), help="where the servers and CDCFLOW_HOME live")
    a = p.parse_args(argv)
    for name in ("pairs", "overlap"):
        if getattr(a, name) is not None and getattr(a, name) < 1:
            p.error(f"--{name} {getattr(a, name)}: give at least one pair")
    if a.apart < 1:
        p.error(f"--apart {a.apart}: give at least one round")
    parts = [x.strip() for x in a.parts.split(",") if x.strip()] if a.parts else \
        list(DEFAULT_PARTS) + (["snapshot"] if a.snapshot else []) + (["lag"] if a.lag_rates else []) \
        + (["tables"] if a.tables else []) + (["join"] if a.join else []) + (["pairs"] if a.pairs else []) \
        + (["overlap"] if a.overlap else [])
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        p.error(f"unknown part(s) {', '.join(unknown)}: choose among {', '.join(PARTS)}")
    a.parts = parts
    a.snapshot = _sizes(a.snapshot or ",".join(map(str, bench_snapshot.DEFAULT_SIZES)))
    a.lag_rates = _sizes(a.lag_rates or ",".join(map(str, bench_lag.DEFAULT_RATES)))
    a.tables = a.tables or ",".join(map(str, bench_tables.DEFAULT_SIZES))
    a.join = a.join or bench_join.DEFAULT_ROWS
    a.pairs = a.pairs or bench_pairs.DEFAULT_PAIRS
    a.overlap = a.overlap or bench_overlap.DEFAULT_PAIRS
    a.catchup = _sizes(a.catchup)
    a.catchup_shapes = [s.strip() for s in a.catchup_shapes.split(",") if s.strip()]
    a.catchup_engines = tuple(s.strip() for s in a.catchup_engines.split(",") if s.strip())
    a.catchup_cluster = None if a.catchup_cluster == "none" else int(a.catchup_cluster)
    return a


def _ends(rng: dict) -> tuple[tuple[str, int], tuple[str, int]]:
    return (rng["start_file"], rng["start_pos"]), (rng["stop_file"], rng["stop_pos"])


def _sizes(text: str) -> list[int]:
    return [] if text.strip().lower() in ("", "none", "0") else [int(float(x)) for x in text.split(",")]


def _part(name: str, errors: list[str], run, *args):
    """One part of the run; an error is kept so the other parts' figures are still printed."""
    try:
        return run(*args)
    except Exception as e:  # noqa: BLE001 - see above
        errors.append(f"{name}: {type(e).__name__}: {e}")
        say(f"{name} failed: {type(e).__name__}: {e}")
        traceback.print_exc()  # where it failed, for whoever mends the bench
        return None


def main(argv: list[str] | None = None) -> int:
    from cdcflow_devtools import (
        bench_catchup, bench_feeds, bench_join, bench_lag, bench_large_txn, bench_launchers, bench_overlap,
        bench_pairs, bench_pull, bench_snapshot, bench_tables, bench_targets,
    )

    a = parse_args(argv)
    sizes = _sizes(a.scale) if "scaling" in a.parts else []
    launcher_sizes = _sizes(a.launchers) if "launchers" in a.parts else []
    base = Path(a.dir).resolve()
    home = base / "cdcflow-home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    os.environ["CDCFLOW_HOME"] = str(home)
    # the default, the compiled reader (the pull part reads the window with the Python one too);
    # CDCFLOW_BINLOG_READER=python measures the reference instead
    os.environ.setdefault(READER_ENV, DEFAULT_READER)
    say(f"binlog reader: {os.environ[READER_ENV]}")
    machine = machine_text()
    say(f"{machine}")
    say(f"parts: {', '.join(a.parts)}")
    if "replication" in a.parts:
        say(f"compared workload: {a.rows:,} row changes, shape {a.shape}; scaling sizes: "
            f"{', '.join(f'{n:,}' for n in sizes) + ' and an idle cycle' if sizes else 'none'}")
    say(f"starting an upstream and three downstreams under {base}")
    t0 = time.perf_counter()
    servers = start_servers(base)
    servers.up.execute("RESET MASTER")  # a fresh binlog each run
    errors: list[str] = []
    try:
        main_res = _part("replication", errors, main_comparison, servers, a.rows, a.shape, home, base,
                         a.pairs if "pairs" in a.parts else 0, a.overlap if "overlap" in a.parts else 0, a.apart) \
            if "replication" in a.parts else None
        pull = _part("pull", errors, bench_pull.pull_table, servers.up.uri, *_ends(main_res["binlog_range"]), base,
                     a.pull) if main_res and "pull" in a.parts else None
        pairs = _part("pairs", errors, bench_pairs.pairs_table, servers, main_res, a.pairs, base) \
            if main_res and "pairs" in a.parts else None
        overlap = _part("overlap", errors, bench_overlap.overlap_table, servers, main_res, a.overlap, base) \
            if main_res and "overlap" in a.parts else None
        scale = (_part("scaling", errors, scaling, servers, sizes, a.shape, home, base) or []) if sizes else []
        launchers = (_part("launchers", errors, bench_launchers.launcher_table, servers, launcher_sizes, a.shape,
                           home, base) or []) if launcher_sizes else []
        snap = [r for n in (a.snapshot if "snapshot" in a.parts else [])
                if (r := _part(f"snapshot {n:,}", errors, bench_snapshot.snapshot_table, servers, n,
                               a.snapshot_threads, base))]
        feeds = _part("feeds", errors, bench_feeds.feeds_table, servers.up, servers.cdcflow, base / "feeds") \
            if "feeds" in a.parts else None
        large = _part("large_txn", errors, bench_large_txn.large_txn_table, _sizes(a.large_txn), base) \
            if "large_txn" in a.parts else None
        lag = _part("lag", errors, functools.partial(
            bench_lag.lag_table, schedules=bench_lag.schedules_of(a.lag_schedules), cli=a.lag_cli,
            sysbench=a.lag_sysbench, sysbench_threads=a.lag_sysbench_threads), a.lag_rates, a.lag_seconds, base) \
            if "lag" in a.parts else None
        tables = _part("tables", errors, bench_tables.tables_table, servers, _sizes(a.tables), home, base) \
            if "tables" in a.parts else None
        join = _part("join", errors, bench_join.join_table, servers, a.join, home, base) if "join" in a.parts else None
        catchup = _part("catchup", errors, bench_catchup.catchup_table, servers, a.catchup, a.catchup_shapes,
                        a.catchup_cluster, home, base, a.catchup_engines, a.catchup_binlog_bytes) \
            if "catchup" in a.parts else None
    finally:
        stop_servers(servers)
    x, y = report(main_res, scale, machine) if main_res else (0.0, 0.0)
    bench_pull.report(pull)
    bench_pairs.report(pairs)
    bench_overlap.report(overlap)
    bench_launchers.report(launchers)
    bench_snapshot.report(snap)
    bench_feeds.report(feeds)
    bench_large_txn.report(large)
    bench_lag.report(lag)
    bench_tables.report(tables)
    bench_join.report(join)
    bench_catchup.report(catchup)
    results = {"machine": machine, "parts": a.parts, "main": main_res, "scaling": scale, "pull": pull, "pairs": pairs,
               "overlap": overlap,
               "launchers": launchers, "snapshot": snap, "feeds": feeds, "large_txn": large, "lag": lag,
               "tables": tables, "join": join, "catchup": catchup,
               "ratio_vs_mariadb_binlog": x, "ratio_vs_native_replica": y,
               "targets": bench_targets.as_record(main_res),
               "total_seconds": time.perf_counter() - t0}
    if snap:
        results.update(bench_snapshot.ratios(snap))
    (base / "results.json").write_text(json.dumps(results, indent=1, default=str))
    print(f"(bench took {results['total_seconds'] / 60:.1f} min; figures in {base / 'results.json'})")
    consistent = ((main_res is None or all(main_res["consistent"].values())) and all(e["consistent"] for e in scale)
                  and all(r["consistent"] for e in launchers for r in e["runs"].values())
                  and all(e["identical"] for e in (pull or {}).get("rows", [])) and (pairs or {}).get("consistent", True)
                  and (overlap or {}).get("consistent", True)
                  and bench_snapshot.consistent(snap) and (feeds or {}).get("consistent", True)
                  and all(e["consistent"] for e in large or []) and bench_tables.consistent(tables)
                  and (join or {}).get("consistent", True) and bench_catchup.consistent(catchup))
    if not consistent:
        print("RESULT: a downstream DIFFERS from the upstream, or verify and pt-table-sync disagree (see above)")
    for e in errors:
        print(f"RESULT: a part is incomplete: {e}")
    if main_res:
        print(f"ratio_vs_mariadb_binlog={x:.2f} ratio_vs_native_replica={y:.2f}")
        bench_targets.report(main_res)
    if snap:
        print(" ".join(f"{k}={v:.2f}" for k, v in bench_snapshot.ratios(snap).items()))
    return 0 if consistent and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
