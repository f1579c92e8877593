"""`make bench PARTS=catchup [CATCHUP=300000,2500000] [CATCHUP_SHAPES=oltp,bulk] [CLUSTER=2500000|none]`:
catch-ups of large windows in both places the row steps run (stages.engine).

Per shape and size, one workload is written upstream and caught up (cycles until one pulls
nothing: a window over `max-window-bytes` takes several) by changefeeds from the same start: one
with `engine = "auto"` (the stage's process within the local bounds, Spark tasks beyond) into
cdcflow's downstream, one with `engine = "local"` (the stage's process whatever the size) into the
replica peer's server and one with `engine = "spark"` (every row step in Spark tasks, on the
embedded session) into the binlog peer's server; then `spark-connect`, forced to Spark on a warm
Spark Connect server (as the DAG's tasks run: no JVM to start in the cycle), into the replica peer's
server reset to the snapshot, by a changefeed made from the same start, and after it what any
cycle forced to Spark pays on that server (bench_spark_floor).  At the CLUSTER size the same window is caught
up again forced to Spark on a standalone cluster of one, then of two one-core workers (the event
store a file:// URI all of them reach), each into the replica peer's server reset to the
snapshot, by a changefeed made from the same start.

Each line: changes/s, the stages' seconds, where each stage ran, the peak memory of the cycles'
processes (the CLI's tree: the driver, an embedded JVM and its Python workers; a cluster's
executors are the workers' and not in it), the core-seconds by kind (bench_census), the share of
them Spark spent (JVM and Python workers, the executors included on the cluster), and the
changes/s against the same shape's smallest window on `auto` in the same run.
"""

from __future__ import annotations

import shutil
import time
from contextlib import contextmanager
from pathlib import Path

from cdcflow_devtools.bench_common import STAGES, stage_seconds

DEFAULT_SIZES = (300_000, 2_500_000)
DEFAULT_CLUSTER = 2_500_000
# the first three each into a downstream of its own (cdcflow's, the replica's, the binlog peer's);
# spark-connect after them, into the replica's reset
ENGINES = ("auto", "local", "spark", "spark-connect")
_OWN_DOWNSTREAM = ("auto", "local", "spark")


def catchup_table(servers, sizes: list[int], shapes: list[str], cluster_size: int | None, home: Path,
                  log_dir: Path, engines: tuple[str, ...] = ENGINES, binlog_bytes: int = 0) -> list[dict]:
    """`binlog_bytes`: the upstream's max_binlog_size while the workloads are written (0: as it is)."""
    from cdcflow_devtools import bench_peers

    bench_peers.reset_replica(servers.replica)  # a plain downstream here, not a replica
    out = []
    for shape in shapes:
        for n in sizes:
            out += _catchup(servers, n, shape, n == cluster_size, home, log_dir, engines, binlog_bytes)
    return out


@contextmanager
def _rotated_every(up, size: int):
    """The upstream's binlog rotated every `size` bytes in the block (max_binlog_size; 0: as it
    is), as on a server whose catch-up crosses several files; its own value back after."""
    if not size:
        yield
        return
    before = up.query("SELECT @@GLOBAL.max_binlog_size")[0][0]
    up.execute(f"SET GLOBAL max_binlog_size = {size}")
    try:
        yield
    finally:
        up.execute(f"SET GLOBAL max_binlog_size = {before}")


def _catchup(servers, n: int, shape: str, on_cluster: bool, home: Path, log_dir: Path,
             engines: tuple[str, ...], binlog_bytes: int = 0) -> list[dict]:
    """One workload of `n` changes caught up by each place: each of `engines` (auto, local, spark)
    on a changefeed made before it, into a downstream of its own; on a cluster of one and of two
    workers (`on_cluster`), each on a changefeed made from the same start once its cluster is up,
    into the replica's server reset to the snapshot."""
    from cdcflow.store import metastore
    from cdcflow_devtools import bench_workload
    from cdcflow_devtools.bench_common import create_changefeed, run_workload, say

    downstreams = {"auto": servers.cdcflow, "spark": servers.binlog, "local": servers.replica}
    places = {engine: downstreams[engine] for engine in engines if engine in _OWN_DOWNSTREAM}
    for s in (servers.up, *places.values()):
        bench_workload.create_snapshot(s)
    ids = {place: f"catchup-{shape}-{n}-{place}" for place in places}
    for place, down in places.items():
        create_changefeed(ids[place], servers.up, down, home, f"[cdcflow]\nengine = \"{place}\"\n")
    start_ts = metastore.get_feed(next(iter(ids.values()))).checkpoint_ts
    say(f"catch-up ({shape}): writing {n:,} row changes upstream")
    files = len(servers.up.query("SHOW BINARY LOGS"))
    with _rotated_every(servers.up, binlog_bytes):
        _plan, done, _ = run_workload(servers.up, n, shape)
    say(f"catch-up ({shape}): the changes in {len(servers.up.query('SHOW BINARY LOGS')) - files + 1} binlog files")
    out = [_cycle(servers.up, down, ids[place], place, shape, done, log_dir, []) for place, down in places.items()]
    if "spark-connect" in engines:
        out.append(_on_connect(servers, shape, done, start_ts, home, log_dir))
    for workers in ((1, 2) if on_cluster else ()):
        out.append(_on_cluster(servers, workers, shape, done, start_ts, home, log_dir))
    return out


def _on_connect(servers, shape: str, done: int, start_ts: int, home: Path, log_dir: Path) -> dict:
    """The catch-up forced to Spark on a warm Spark Connect server (started and warmed up first)."""
    from cdcflow_devtools import bench_spark_floor, bench_workload, spark_connect, spark_events
    from cdcflow_devtools.bench_common import create_changefeed
    from cdcflow_devtools.mariadb import free_port

    place, cid = "spark-connect", f"catchup-{shape}-{done}-spark-connect"
    events = log_dir / f"{cid}-spark" / "events"
    shutil.rmtree(events, ignore_errors=True)  # an earlier run's applications
    server = spark_connect.start(log_dir / f"{cid}-spark", port=free_port(), conf=spark_events.log_conf(events))
    try:
        bench_workload.create_snapshot(servers.replica)
        create_changefeed(cid, servers.up, servers.replica, home, "[cdcflow]\nengine = \"spark\"\n",
                          start_ts=start_ts)
        since_ms = int(time.time() * 1000)  # the warm-up's jobs are the server's, not the cycle's
        out = _cycle(servers.up, servers.replica, cid, place, shape, done, log_dir, [server.process.pid],
                     remote=server.url)
        jobs_until_ms = int(time.time() * 1000)  # the floor's jobs below are not the cycle's
        out["spark_floor"] = bench_spark_floor.measure(server.url, log_dir / f"{cid}-floor", done)
    finally:
        server.stop()
    out["spark_jobs"] = spark_events.summary([j for j in spark_events.jobs(events, since_ms)
                                              if j.submitted_ms < jobs_until_ms])
    return out


def _on_cluster(servers, workers: int, shape: str, done: int, start_ts: int, home: Path, log_dir: Path) -> dict:
    from cdcflow_devtools import bench_workload, spark_standalone
    from cdcflow_devtools.bench_common import create_changefeed

    place, cid = f"cluster-{workers}", f"catchup-{shape}-{done}-cluster-{workers}"
    cluster = spark_standalone.start(log_dir / f"{cid}-spark", workers=workers)
    try:
        bench_workload.create_snapshot(servers.replica)
        create_changefeed(cid, servers.up, servers.replica, home,
                          f"[cdcflow]\nengine = \"spark\"\nspark-master = \"{cluster.master_url}\"\n"
                          f"event-store = \"file://{log_dir / f'{cid}-events'}\"\n", start_ts=start_ts)
        return _cycle(servers.up, servers.replica, cid, place, shape, done, log_dir,
                      [p.pid for p in cluster.processes])
    finally:
        cluster.stop()


# a catch-up runs cycles until one pulls nothing: a window over max-window-bytes takes more than one
MAX_CYCLES = 20
_SUMMED = ("pull", "filter", "barrier", "apply")


def _cycle(up, down, cid: str, place: str, shape: str, done: int, log_dir: Path, roots: list[int],
           remote: str | None = None) -> dict:
    """The catch-up of `done` changes: cycles until one pulls nothing (a window larger than
    `max-window-bytes` is read by several), their wall seconds, stage seconds and core-seconds
    summed, their peak memory the largest, where each stage ran as the first cycle says."""
    from cdcflow_devtools.bench_common import run_cycle_measured, say, verify

    servers_cpu = {"roots": roots, "fixed": {down.pid: "downstream", up.pid: "upstream"}}
    runs = []
    while len(runs) < MAX_CYCLES:
        say(f"catch-up ({shape}): {done:,} row changes, cycle {len(runs) + 1}, {place}")
        cyc = run_cycle_measured(cid, done, log_dir, remote, cpu=servers_cpu)
        if runs and not (cyc.stats.get("pull") or {}).get("pulled"):
            break  # caught up: this idle cycle is not part of the catch-up's time
        runs.append(cyc)
    ok = not verify(up, down, f"the {place} catch-up's downstream after {done:,}")
    stats = dict(runs[0].stats)
    stats.update({f"{st}_seconds": sum(r.stage_seconds(st) for r in runs) for st in _SUMMED})
    census = {"stages": [stage for r in runs for stage in (r.census or {}).get("stages", [])]}
    return {"shape": shape, "rows": done, "place": place, "cycles": len(runs),
            "wall_seconds": sum(r.wall_seconds for r in runs), "peak_rss_bytes": max(r.peak_rss_bytes for r in runs),
            "stats": stats, "census": census, "consistent": ok}


def _core_seconds(census: dict | None) -> dict[str, float]:
    total: dict[str, float] = {}
    for stage in (census or {}).get("stages", []):
        for kind, secs in stage["core_seconds"].items():
            total[kind] = total.get(kind, 0.0) + secs
    return total


def _stage_peaks(census: dict | None) -> dict[str, int]:
    """Per stage, the most memory the cycles' processes held in it (over every cycle)."""
    peaks: dict[str, int] = {}
    for stage in (census or {}).get("stages", []):
        peaks[stage["stage"]] = max(peaks.get(stage["stage"], 0), stage.get("peak_rss_bytes") or 0)
    return peaks


def _where(stats: dict) -> str:
    ap = stats.get("apply") or {}
    return (f"filter {(stats.get('filter') or {}).get('ran_in', '?')}, barrier "
            f"{(stats.get('barrier') or {}).get('ran_in', '?')}, apply {ap.get('segments_in_process', 0)} here / "
            f"{ap.get('segments_in_spark', 0)} in Spark")


def report(rows: list[dict] | None) -> None:
    from cdcflow_devtools import bench_spark_floor
    from cdcflow_devtools.bench_common import fmt_bytes, fmt_rate, rate

    if not rows:
        return
    print()
    print("catch-ups, cycles until caught up (peak memory: the CLI's process tree; Spark share: the JVM's and Python "
          "workers' core-seconds over all of cdcflow's and Spark's):")
    print(f"{'shape':>6}{'row changes':>13}{'place':>10}{'cycle s':>9}{'changes/s':>11}{'vs smallest':>12}"
          f"{'peak memory':>13}{'Spark share':>12}{'consistent':>11}  stages (s)")
    smallest = {}  # per shape, the smallest window's changes/s on auto (on any place where auto did not run)
    for r in sorted(rows, key=lambda r: (r["shape"], r["rows"], r["place"] != "auto")):
        smallest.setdefault(r["shape"], rate(r["rows"], r["wall_seconds"]))
    for r in rows:
        speed = rate(r["rows"], r["wall_seconds"])
        base = smallest.get(r["shape"])
        cores = _core_seconds(r["census"])
        ours = sum(cores.get(k, 0.0) for k in ("cdcflow", "JVM", "Python workers"))
        spark = cores.get("JVM", 0.0) + cores.get("Python workers", 0.0)
        stages = ", ".join(f"{s} {stage_seconds(r['stats'], s):.1f}" for s in STAGES)
        print(f"{r['shape']:>6}{r['rows']:>13,}{r['place']:>10}{r['wall_seconds']:>9.1f}{fmt_rate(speed):>11}"
              f"{(speed / base if speed and base else 0.0):>11.2f}x{fmt_bytes(r['peak_rss_bytes']):>13}"
              f"{(spark / ours if ours else 0.0):>11.0%} {'yes' if r['consistent'] else 'NO':>10}  {stages}")
        print(f"{'':>28}{r.get('cycles', 1)} cycle(s); where: {_where(r['stats'])}; core-seconds: "
              + ", ".join(f"{k} {v:.1f}" for k, v in cores.items() if v))
        print(f"{'':>28}peak memory by stage: "
              + ", ".join(f"{k} {fmt_bytes(v)}" for k, v in _stage_peaks(r["census"]).items() if v))
        jobs = r.get("spark_jobs")
        if jobs:
            print(f"{'':>28}Spark jobs: {jobs['jobs']}, {jobs['wall_seconds']:.1f} s on the wall, their tasks "
                  f"{jobs['task_seconds']:.1f} s; the longest: " + ", ".join(
                      f"{name[:40]} ({v['jobs']} jobs, {v['wall_seconds']:.1f} s)"
                      for name, v in list(jobs["by_stage_name"].items())[:4]))
        if r.get("spark_floor"):
            print(f"{'':>28}{bench_spark_floor.line(r['spark_floor'])}")


def consistent(rows: list[dict] | None) -> bool:
    return all(r["consistent"] for r in rows or [])
