"""What the parts of `make bench` share (bench.py runs them): the servers, the changefeed,
the measured child processes, the workload and the check of each downstream."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from cdcflow_devtools.checkout import LOCAL, child_env

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


STAGES = ("pull", "filter", "barrier", "apply")  # a cycle's stages; the rest of its time is start-up, prepare, finish


def stage_seconds(stats: dict, stage: str) -> float:
    """A stage's seconds in a run's stats (0 where the run has none: it ended before the stage)."""
    return float(stats.get(f"{stage}_seconds") or 0.0)


def around_stages(stats: dict, wall: float) -> float:
    """A cycle's seconds outside its stages (`stats`: its run's): start-up, prepare and finish."""
    return wall - sum(stage_seconds(stats, s) for s in STAGES)


@dataclass
class CycleResult:
    """One `cdcflow changefeed run` measured from outside."""

    changefeed: str
    row_changes: int
    wall_seconds: float
    peak_rss_bytes: int
    stats: dict = field(default_factory=dict)
    census: dict = field(default_factory=dict)  # where its time went (bench_census), when measured

    def stage_seconds(self, stage: str) -> float:
        return stage_seconds(self.stats, stage)

    @property
    def around_stages_seconds(self) -> float:
        """Start-up, prepare and finish: the wall time outside the four stages."""
        return around_stages(self.stats, self.wall_seconds)

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


def run_measured(args: list[str], log_path: Path, ok: tuple[int, ...] = (0,), watch=None) -> tuple[float, int, str]:
    """`cdcflow <args>` as a child process: (wall seconds, peak memory of it and its children,
    its stdout); its stderr goes to `log_path`.  `watch(pid)`: a sampler started on the child,
    stopped when it exits (bench_census.CpuSampler)."""
    env = child_env()
    out_path = log_path.with_suffix(".out")
    with open(log_path, "wb") as log, open(out_path, "wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "cdcflow.cli", *args], stdout=out, stderr=log, env=env)
        sampler = PeakRss(proc.pid)
        watcher = watch(proc.pid) if watch else None
        rc = proc.wait()
        wall = time.perf_counter() - t0
        peak = sampler.stop()
        if watcher is not None:
            watcher.stop()
    if rc not in ok:
        tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-15:])
        raise RuntimeError(f"cdcflow {' '.join(args[:2])} failed (exit {rc}); see {log_path}:\n{tail}")
    return wall, peak, out_path.read_text(errors="replace")


class _Watchers:
    def __init__(self, watchers: list):
        self.watchers = watchers

    def stop(self) -> None:
        for w in self.watchers:
            w.stop()


def run_cycle_measured(changefeed_id: str, row_changes: int, log_dir: Path, remote: str | None = None,
                       cpu: dict | None = None, watch=None) -> CycleResult:
    """One `cdcflow changefeed run -c changefeed_id` as a child process (on the Spark Connect
    server `remote` if given): wall time, peak memory, run stats; with `cpu` ({"roots": pids
    whose trees count beside the child's, "fixed": {pid: kind}}), where its time went
    (bench_census); `watch(pid, log_path)`: a watcher of the child and its log, stopped when
    it exits (bench_overlap)."""
    from cdcflow.store import metastore
    from cdcflow_devtools import bench_census

    log_path = log_dir / f"cycle-{changefeed_id}.log"
    sampler = None

    def watching(pid: int):
        nonlocal sampler
        watchers = [watch(pid, log_path)] if watch else []
        if cpu:
            sampler = bench_census.CpuSampler([pid, *cpu["roots"]], cpu["fixed"])
            watchers.append(sampler)
        return _Watchers(watchers)

    started = time.time()
    wall, peak, _ = run_measured(["changefeed", "run", "-c", changefeed_id, *(["--spark-remote", remote] if remote else [])],
                                 log_path, watch=watching if cpu or watch else None)
    runs = metastore.recent_runs(changefeed_id, limit=1)
    result = CycleResult(changefeed_id, row_changes, wall, peak, runs[0].stats if runs else {})
    if sampler is not None:
        result.census = bench_census.census(sampler, started, started + wall, log_path).as_dict()
    return result


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
    from cdcflow_devtools.mariadb import MariaDB

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


def settled(servers: Servers) -> None:
    """Every server's InnoDB done with the background work of the writes before (MariaDB.settle),
    then the machine's page cache written back (written_back) and the contenders' program files
    read into it (bench_program_files), before a timed run: the page cleaner and the purge
    threads of the workload's upstream or of an earlier run's downstream run in mariadbd, on the
    cores the run is timed on, and each timed run, cdcflow's or a peer's, starts as the others do."""
    from cdcflow_devtools import bench_program_files

    found = [s.settle() for s in servers.all()]
    dirty, took = written_back()
    loaded, read_took = bench_program_files.read_in()
    say(f"  servers settled in {sum(w for _d, _h, w in found):.1f}s "
        f"({sum(d for d, _h, _w in found):,} dirty pages, history lists {max(h for _d, h, _w in found):,} at most; "
        f"{dirty / 2 ** 20:,.0f} MiB of the page cache written back in {took:.1f}s; "
        f"the programs' {loaded / 2 ** 20:,.0f} MiB of files read in {read_took:.1f}s)")


def page_cache_dirty() -> int:
    """The bytes of the machine's page cache not yet on the disk: dirty or being written back."""
    with open("/proc/meminfo") as f:
        fields = dict(line.split(":", 1) for line in f)
    return sum(int(fields[k].split()[0]) * 1024 for k in ("Dirty", "Writeback"))


def written_back() -> tuple[int, float]:
    """The machine's dirty page cache written to the disk (sync(2)), as found, and the seconds it
    took.  The writes before a timed run (the workload's binlog and tables, a downstream reset
    to the start) otherwise go to the disk during it: the kernel writes them back within 30
    seconds, and an fsync of the run's (a metadata-store commit, a server's binlog) waits behind
    them.  The census's disk column caught it: a bulk CLI cycle run after the workload took 3.0
    s, its start-up and prepare 0.7 s with 0.3 core-seconds, pull 0.8 s with 0.4, and the disk
    stalled 0.31 s and 0.28 s of them (docs/performance.md, 2026-12-03)."""
    t0, dirty = time.monotonic(), page_cache_dirty()
    os.sync()
    return dirty, time.monotonic() - t0


def reset_settled(servers: Servers, down=None) -> None:
    """A downstream (cdcflow's, unless `down`) reset to the start's schema for a timed run, every
    server settled."""
    from cdcflow_devtools import bench_workload

    bench_workload.create_snapshot(servers.cdcflow if down is None else down)
    settled(servers)


# --- the steps -------------------------------------------------------------------------------

def create_changefeed(changefeed_id: str, up, down, home: Path, config: str = "", base: str = CONFIG,
                      start_ts: int | None = None) -> dict:
    """A changefeed of the bench schema (`base`, then `config`), anew (from `start_ts`, else the
    upstream's head)."""
    from cdcflow import cli
    from cdcflow.config.spec_store import spec_exists
    from cdcflow.store import metastore

    cfg = home / f"{changefeed_id}.toml"
    cfg.write_text(base + config)
    if spec_exists(changefeed_id):
        cli.main(["changefeed", "remove", "-c", changefeed_id])
    with open(os.devnull, "w") as quiet:
        old, sys.stdout = sys.stdout, quiet
        try:
            rc = cli.main(["changefeed", "create", "-c", changefeed_id, "--source-uri", up.uri, "--sink-uri", down.uri,
                           "--config", str(cfg), *(["--start-ts", str(start_ts)] if start_ts else [])])
        finally:
            sys.stdout = old
    if rc != 0:
        raise RuntimeError(f"cdcflow changefeed create -c {changefeed_id} failed")
    return metastore.get_feed(changefeed_id).checkpoint_pos


def verify(up, down, label: str, schema: str | None = None) -> list[str]:
    """Differences between the upstream's and a downstream's bench schema (or `schema`); [] when equal."""
    from cdcflow_devtools.bench_workload import SCHEMA
    from cdcflow_devtools.compare import compare

    with up.connect() as u, down.connect() as d:
        diffs = [str(x) for x in compare(u, d, schemas=[schema or SCHEMA])]
    say(f"{label}: " + ("consistent with the upstream" if not diffs else "DIFFERS: " + "; ".join(diffs[:5])))
    return diffs


def run_workload(up, rows: int, shape: str):
    from cdcflow_devtools import bench_workload

    plan = bench_workload.plan(rows, shape=shape)
    t0 = time.perf_counter()
    done = bench_workload.run(up, plan)
    return plan, done, time.perf_counter() - t0


def rate(rows: int, secs: float | None) -> float | None:
    return rows / secs if secs else None


def fmt_rate(r: float | None) -> str:
    return f"{r:,.0f}" if r else "-"


def fmt_bytes(n: int | None) -> str:
    return f"{n / 2**30:.2f} GiB" if n else "-"


# --- the run ---------------------------------------------------------------------------------
