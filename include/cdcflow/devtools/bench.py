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
measures `create --snapshot` and `verify` against dump tools and CHECKSUM TABLE.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from cdcflow.devtools.checkout import LOCAL, PROJECT

DEFAULT_DIR = LOCAL / "bench"
DEFAULT_ROWS = 300_000
DEFAULT_SCALE = (10_000, 100_000, 1_000_000)
CONFIG = """\
# The benchmark's changefeed: everything in the bench schema, default sink settings.
[filter]
rules = ['bench.*']
"""


def say(text: str) -> None:
    print(f"[bench] {text}", flush=True)


@dataclass
class CycleResult:
    """One `cdcflow changefeed run` measured from outside."""

    changefeed: str
    row_changes: int
    wall_seconds: float
    peak_rss_bytes: int
    stats: dict = field(default_factory=dict)

    def stage_seconds(self, stage: str) -> float:
        return float(self.stats.get(f"{stage}_seconds") or 0.0)

    @property
    def apply_rows_per_second(self) -> float | None:
        secs = self.stage_seconds("apply")
        return self.row_changes / secs if secs and self.row_changes else None


class PeakRss:
    """Samples the resident memory of a process and all its descendants (the Spark JVM, its
    Python workers) and keeps the largest sum seen."""

    def __init__(self, pid: int, interval: float = 0.1):
        import psutil

        self._root = psutil.Process(pid)
        self._interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _sample(self) -> int:
        import psutil

        total = 0
        try:
            procs = [self._root] + self._root.children(recursive=True)
        except psutil.Error:
            return 0
        for p in procs:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._sample())
            self._stop.wait(self._interval)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def run_measured(args: list[str], log_path: Path, ok: tuple[int, ...] = (0,)) -> tuple[float, int, str]:
    """`cdcflow <args>` as a child process: (wall seconds, peak memory of it and its children,
    its stdout); its stderr goes to `log_path`."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT / "include"), env.get("PYTHONPATH")) if p)
    out_path = log_path.with_suffix(".out")
    with open(log_path, "wb") as log, open(out_path, "wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "cdcflow.cli", *args], stdout=out, stderr=log, env=env)
        sampler = PeakRss(proc.pid)
        rc = proc.wait()
        wall = time.perf_counter() - t0
        peak = sampler.stop()
    if rc not in ok:
        tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-15:])
        raise RuntimeError(f"cdcflow {' '.join(args[:2])} failed (exit {rc}); see {log_path}:\n{tail}")
    return wall, peak, out_path.read_text(errors="replace")


def run_cycle_measured(cid: str, row_changes: int, log_dir: Path) -> CycleResult:
    """One `cdcflow changefeed run -c cid` as a child process: wall time, peak memory, run stats."""
    from cdcflow.store import metastore

    wall, peak, _ = run_measured(["changefeed", "run", "-c", cid], log_dir / f"cycle-{cid}.log")
    runs = metastore.recent_runs(cid, limit=1)
    return CycleResult(cid, row_changes, wall, peak, runs[0].stats if runs else {})


# --- servers ---------------------------------------------------------------------------------

@dataclass
class Servers:
    up: object
    cdcflow: object
    binlog: object
    replica: object

    def all(self):
        return (self.up, self.cdcflow, self.binlog, self.replica)


def start_servers(base: Path) -> Servers:
    from cdcflow.devtools.mariadb import MariaDB

    servers = Servers(
        up=MariaDB(base, name="upstream", binlog=True, server_id=1),
        cdcflow=MariaDB(base, name="down-cdcflow", server_id=2),
        binlog=MariaDB(base, name="down-binlog", server_id=3),
        replica=MariaDB(base, name="down-replica", server_id=4),
    )
    for s in servers.all():
        s.start()
    return servers


def stop_servers(servers: Servers) -> None:
    for s in servers.all():
        s.stop()


# --- the steps -------------------------------------------------------------------------------

def create_changefeed(cid: str, up, down, home: Path, config: str = "") -> dict:
    """A changefeed of the bench schema (CONFIG, then `config`), anew."""
    from cdcflow import cli
    from cdcflow.core.home import spec_exists
    from cdcflow.store import metastore

    cfg = home / f"{cid}.toml"
    cfg.write_text(CONFIG + config)
    if spec_exists(cid):
        cli.main(["changefeed", "remove", "-c", cid])
    with open(os.devnull, "w") as quiet:
        old, sys.stdout = sys.stdout, quiet
        try:
            rc = cli.main(["changefeed", "create", "-c", cid, "--source-uri", up.uri, "--sink-uri", down.uri,
                           "--config", str(cfg)])
        finally:
            sys.stdout = old
    if rc != 0:
        raise RuntimeError(f"cdcflow changefeed create -c {cid} failed")
    return metastore.get_feed(cid).checkpoint_pos


def verify(up, down, label: str, schema: str | None = None) -> list[str]:
    """Differences between the upstream's and a downstream's bench schema (or `schema`); [] when equal."""
    from cdcflow.devtools.bench_workload import SCHEMA
    from cdcflow.devtools.compare import compare

    with up.connect() as u, down.connect() as d:
        diffs = [str(x) for x in compare(u, d, schemas=[schema or SCHEMA])]
    say(f"{label}: " + ("consistent with the upstream" if not diffs else "DIFFERS: " + "; ".join(diffs[:5])))
    return diffs


def run_workload(up, rows: int, shape: str):
    from cdcflow.devtools import bench_workload

    plan = bench_workload.plan(rows, shape=shape)
    t0 = time.perf_counter()
    done = bench_workload.run(up, plan)
    return plan, done, time.perf_counter() - t0


def _rate(rows: int, secs: float | None) -> float | None:
    return rows / secs if secs else None


def _fmt_rate(r: float | None) -> str:
    return f"{r:,.0f}" if r else "-"


def _fmt_bytes(n: int | None) -> str:
    return f"{n / 2**30:.2f} GiB" if n else "-"


# --- the run ---------------------------------------------------------------------------------

def main_comparison(servers: Servers, rows: int, shape: str, home: Path, log_dir: Path) -> dict:
    from cdcflow.devtools import bench_peers, bench_workload

    up = servers.up
    bench_peers.reset_replica(servers.replica)
    for s in servers.all():
        bench_workload.create_snapshot(s)
    start_file, start_pos = up.binlog_head()
    pos = create_changefeed("bench", up, servers.cdcflow, home)
    if (pos["file"], pos["pos"]) != (start_file, start_pos):
        raise RuntimeError(f"the changefeed starts at {pos}, not at the snapshot position {start_file}:{start_pos}")

    say(f"workload: about {rows:,} row changes on the upstream (shape {shape})")
    plan, done, gen_secs = run_workload(up, rows, shape)
    stop_file, stop_pos = up.binlog_head()
    rng = bench_peers.BinlogRange(start_file, start_pos, stop_file, stop_pos)
    say(f"workload done in {gen_secs:.1f}s: {done:,} row changes in {plan.transactions - plan.ddls:,} "
        f"transactions and {plan.ddls} DDLs; binlog {start_file}:{start_pos} .. {stop_file}:{stop_pos}")

    say("cdcflow: one `cdcflow changefeed run` (whole cycle, Spark local[*])")
    cyc = run_cycle_measured("bench", done, log_dir)
    cdc_diffs = verify(up, servers.cdcflow, "cdcflow's downstream")

    say("mariadb-binlog --read-from-remote-server | mariadb")
    binlog_secs = bench_peers.binlog_replay(up, servers.binlog, rng)
    binlog_diffs = verify(up, servers.binlog, "mariadb-binlog's downstream")

    say("native replica: CHANGE MASTER TO the start position; START SLAVE; wait until caught up")
    replica_secs = bench_peers.replica_catch_up(up, servers.replica, rng)
    replica_diffs = verify(up, servers.replica, "the replica")

    return {
        "rows": done, "shape": shape, "transactions": plan.transactions - plan.ddls, "ddls": plan.ddls,
        "by_kind": {k: v for k, v in plan.by_kind().items() if v}, "workload_seconds": gen_secs,
        "binlog_range": asdict(rng), "cdcflow": asdict(cyc),
        "mariadb_binlog_seconds": binlog_secs, "native_replica_seconds": replica_secs,
        "consistent": {"cdcflow": not cdc_diffs, "mariadb_binlog": not binlog_diffs,
                       "native_replica": not replica_diffs},
    }


def scale_changefeed_id(rows: int) -> str:
    return f"bench-{rows}"


def scaling(servers: Servers, sizes: list[int], shape: str, home: Path, log_dir: Path) -> list[dict]:
    """One fresh changefeed per size on cdcflow's downstream, then an idle cycle."""
    from cdcflow.devtools import bench_workload

    out, cid = [], None
    for n in sizes:
        for s in (servers.up, servers.cdcflow):
            bench_workload.create_snapshot(s)
        cid = scale_changefeed_id(n)
        create_changefeed(cid, servers.up, servers.cdcflow, home)
        _plan, done, _ = run_workload(servers.up, n, shape)
        say(f"scaling: {done:,} row changes, one cycle")
        cyc = run_cycle_measured(cid, done, log_dir)
        ok = not verify(servers.up, servers.cdcflow, f"cdcflow's downstream after {done:,}")
        out.append({"rows": done, "wall_seconds": cyc.wall_seconds, "peak_rss_bytes": cyc.peak_rss_bytes,
                    "stats": cyc.stats, "consistent": ok})
    if cid is not None:
        say("scaling: an idle cycle (nothing to apply)")
        cyc = run_cycle_measured(cid, 0, log_dir)
        out.append({"rows": 0, "wall_seconds": cyc.wall_seconds, "peak_rss_bytes": cyc.peak_rss_bytes,
                    "stats": cyc.stats, "consistent": True})
    return out


def stage_line(stats: dict, wall: float) -> str:
    stages = ("pull", "filter", "barrier", "apply")
    secs = {s: float(stats.get(f"{s}_seconds") or 0) for s in stages}
    rest = wall - sum(secs.values())
    return ", ".join(f"{s} {secs[s]:.1f}s" for s in stages) + f"; start-up, prepare, finish {rest:.1f}s"


def report(main: dict, scale: list[dict], machine: str) -> tuple[float, float]:
    rows = main["rows"]
    cyc = main["cdcflow"]
    whole = _rate(rows, cyc["wall_seconds"])
    apply_secs = float(cyc["stats"].get("apply_seconds") or 0)
    binlog = _rate(rows, main["mariadb_binlog_seconds"])
    replica = _rate(rows, main["native_replica_seconds"])
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
    print(f"{'cdcflow (whole cycle)':32}{_fmt_rate(whole):>15}{cyc['wall_seconds']:>10.1f}"
          f"{_fmt_bytes(cyc['peak_rss_bytes']):>14}{yes[ok['cdcflow']]:>12}")
    print(f"{'cdcflow apply stage alone':32}{_fmt_rate(_rate(rows, apply_secs)):>15}{apply_secs:>10.1f}"
          f"{'':>14}{'':>12}")
    print(f"{'mariadb-binlog | mariadb':32}{_fmt_rate(binlog):>15}{main['mariadb_binlog_seconds']:>10.1f}"
          f"{'':>14}{yes[ok['mariadb_binlog']]:>12}")
    print(f"{'native replica':32}{_fmt_rate(replica):>15}{main['native_replica_seconds']:>10.1f}"
          f"{'':>14}{yes[ok['native_replica']]:>12}")
    print(f"cdcflow's cycle: {stage_line(cyc['stats'], cyc['wall_seconds'])}")
    ap = cyc["stats"].get("apply", {})
    print(f"cdcflow's apply: {ap.get('rows_in', 0):,} row changes -> {ap.get('rows_written', 0):,} final rows in "
          f"{ap.get('statements', 0):,} statements, {ap.get('ddl_applied', 0)} DDLs")
    if scale:
        print()
        print("cycle time by window size (one fresh changefeed per size; peak memory of cdcflow's processes):")
        print(f"{'row changes':>14}{'cycle s':>10}{'row changes/s':>15}{'peak memory':>14}{'consistent':>12}")
        entries = sorted(scale + [{"rows": rows, "wall_seconds": cyc["wall_seconds"],
                                   "peak_rss_bytes": cyc["peak_rss_bytes"], "consistent": ok["cdcflow"]}],
                         key=lambda e: e["rows"])
        for e in entries:
            label = f"{e['rows']:,}" if e["rows"] else "0 (idle)"
            print(f"{label:>14}{e['wall_seconds']:>10.1f}{_fmt_rate(_rate(e['rows'], e['wall_seconds'])):>15}"
                  f"{_fmt_bytes(e['peak_rss_bytes']):>14}{yes[e['consistent']]:>12}")
    x = whole / binlog if whole and binlog else 0.0
    y = whole / replica if whole and replica else 0.0
    return x, y


def machine_text() -> str:
    import platform

    import psutil

    mem = psutil.virtual_memory().total / 2**30
    load = os.getloadavg()
    return (f"{os.cpu_count()} cores, {mem:.0f} GiB, {platform.platform(terse=True)}; "
            f"load average before the run {load[0]:.2f}")


PARTS = ("replication", "scaling", "pull", "launchers", "snapshot")
# the snapshot part when SNAPSHOT= or PARTS= asks; the pull table needs the replication part's window
DEFAULT_PARTS = ("replication", "scaling", "pull", "launchers")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    from cdcflow.devtools import bench_snapshot

    p = argparse.ArgumentParser(prog="python -m cdcflow.devtools.bench", description=__doc__.split("\n")[0])
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
    p.add_argument("--shape", default=os.environ.get("BENCH_SHAPE") or "oltp", choices=("oltp", "bulk"),
                   help="oltp: updates and deletes one row per transaction; bulk: 100 rows per transaction "
                        "(default oltp; env BENCH_SHAPE)")
    p.add_argument("--snapshot", type=int, default=None,
                   help=f"rows of the snapshot part's tables (default {bench_snapshot.DEFAULT_ROWS:,}); "
                        "giving it adds the part")
    p.add_argument("--snapshot-threads", type=int, default=bench_snapshot.DEFAULT_THREADS,
                   help="cdcflow's snapshot workers and mydumper's / myloader's threads "
                        f"(default {bench_snapshot.DEFAULT_THREADS})")
    p.add_argument("--dir", default=str(DEFAULT_DIR), help="where the servers and CDCFLOW_HOME live")
    a = p.parse_args(argv)
    parts = [x.strip() for x in a.parts.split(",") if x.strip()] if a.parts else \
        list(DEFAULT_PARTS) + (["snapshot"] if a.snapshot else [])
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        p.error(f"unknown part(s) {', '.join(unknown)}: choose among {', '.join(PARTS)}")
    a.parts = parts
    a.snapshot = a.snapshot or bench_snapshot.DEFAULT_ROWS
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
        return None


def main(argv: list[str] | None = None) -> int:
    from cdcflow.devtools import bench_launchers, bench_pull, bench_snapshot

    a = parse_args(argv)
    sizes = _sizes(a.scale) if "scaling" in a.parts else []
    launcher_sizes = _sizes(a.launchers) if "launchers" in a.parts else []
    base = Path(a.dir).resolve()
    home = base / "cdcflow-home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    os.environ["CDCFLOW_HOME"] = str(home)
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
        main_res = _part("replication", errors, main_comparison, servers, a.rows, a.shape, home, base) \
            if "replication" in a.parts else None
        pull = _part("pull", errors, bench_pull.pull_table, servers.up.uri, *_ends(main_res["binlog_range"]), base,
                     a.pull) if main_res and "pull" in a.parts else None
        scale = (_part("scaling", errors, scaling, servers, sizes, a.shape, home, base) or []) if sizes else []
        launchers = (_part("launchers", errors, bench_launchers.launcher_table, servers, launcher_sizes, a.shape,
                           home, base) or []) if launcher_sizes else []
        snap = _part("snapshot", errors, bench_snapshot.snapshot_table, servers, a.snapshot, a.snapshot_threads,
                     base) if "snapshot" in a.parts else None
    finally:
        stop_servers(servers)
    x, y = report(main_res, scale, machine) if main_res else (0.0, 0.0)
    bench_pull.report(pull)
    bench_launchers.report(launchers)
    bench_snapshot.report(snap)
    results = {"machine": machine, "parts": a.parts, "main": main_res, "scaling": scale, "pull": pull,
               "launchers": launchers, "snapshot": snap, "ratio_vs_mariadb_binlog": x, "ratio_vs_native_replica": y,
               "total_seconds": time.perf_counter() - t0}
    if snap:
        results.update(bench_snapshot.ratios(snap))
    (base / "results.json").write_text(json.dumps(results, indent=1, default=str))
    print(f"(bench took {results['total_seconds'] / 60:.1f} min; figures in {base / 'results.json'})")
    consistent = ((main_res is None or all(main_res["consistent"].values())) and all(e["consistent"] for e in scale)
                  and all(r["consistent"] for e in launchers for r in e["runs"].values())
                  and all(e["identical"] for e in (pull or {}).get("rows", []))
                  and bench_snapshot.consistent(snap))
    if not consistent:
        print("RESULT: a downstream DIFFERS from the upstream (see above)")
    for e in errors:
        print(f"RESULT: a part is incomplete: {e}")
    if main_res:
        print(f"ratio_vs_mariadb_binlog={x:.2f} ratio_vs_native_replica={y:.2f}")
    if snap:
        print(" ".join(f"{k}={v:.2f}" for k, v in bench_snapshot.ratios(snap).items()))
    return 0 if consistent and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
