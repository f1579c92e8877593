"""`make bench`'s snapshot part: the initial copy and the verification, against what a
MariaDB user reaches for, on the same tables in the same run.

The upstream's `snapbench` schema holds bench_workload's four tables (the replication
workload's column types), filled by the server.  Then, one after the other, each into a
downstream server of its own with no `snapbench` schema yet:

    cdcflow      `cdcflow changefeed create … --snapshot --snapshot-workers T` in a child process
    dump         `mariadb-dump --single-transaction | mariadb`
    mydumper     `mydumper -t T` into a folder, then `myloader -t T` from it

and each downstream is compared with the upstream.  Then `cdcflow changefeed verify` of the
cdcflow changefeed, against `CHECKSUM TABLE` of the same tables on both servers at once.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

from cdcflow_devtools.bench_peers import client_args, pipe
from cdcflow_devtools.mariadb import HOST, ROOT_PASSWORD, ROOT_USER

SCHEMA = "snapbench"
CID = "snapbench"
DEFAULT_ROWS = 2_000_000
DEFAULT_THREADS = 4
CHUNK_ROWS = 100_000  # cdcflow's default chunk size; mydumper's --rows the same


def say(text: str) -> None:
    print(f"[bench] {text}", flush=True)


def _timed(args: list[str], what: str, **kw) -> float:
    t0 = time.perf_counter()
    res = subprocess.run(args, capture_output=True, text=True, **kw)
    secs = time.perf_counter() - t0
    if res.returncode:
        raise RuntimeError(f"{what} failed (exit {res.returncode}): {(res.stderr or res.stdout).strip()[-800:]}")
    return secs


def cdcflow_snapshot(up, down, changefeed_id: str, threads: int, log_dir: Path, remote: str | None = None) -> dict:
    """`cdcflow changefeed create --snapshot` as a child process (its Spark embedded, or on the
    Spark Connect server `remote`): its wall time and peak memory, and the copy's own seconds
    (chunks recorded .. last chunk done, Spark's start included) from the store."""
    from cdcflow_devtools.bench_common import run_measured
    from cdcflow.store import snapshots

    cfg = log_dir / f"{changefeed_id}.toml"
    # as many Spark task slots as workers (local[*] would give one per core: two on a small machine)
    cfg.write_text(f"[filter]\nrules = ['{SCHEMA}.*']\n[cdcflow]\nspark-master = \"local[{threads}]\"\n")
    args = ["changefeed", "create", "-c", changefeed_id, "--source-uri", up.uri, "--sink-uri", down.uri, "--config",
            str(cfg),
            "--snapshot", "--snapshot-workers", str(threads), "--snapshot-chunk-size", str(CHUNK_ROWS)]
    wall, peak, _ = run_measured(args + (["--spark-remote", remote] if remote else []),
                                 log_dir / f"snapshot-{changefeed_id}.log")
    head, progress = snapshots.get(changefeed_id), snapshots.progress(changefeed_id)
    return {"wall_seconds": wall, "peak_rss_bytes": peak, "rows": progress["rows_copied"],
            "chunks": progress["chunks_total"], "copy_seconds": head["finished_at"] - head["started_at"]}


def dump_pipe(up, down) -> float:
    """`mariadb-dump --single-transaction --databases snapbench | mariadb`: the pipe's seconds."""
    return pipe(["mariadb-dump", *client_args(up.port), "--single-transaction", "--databases", SCHEMA],
                ["mariadb", *client_args(down.port)], "mariadb-dump | mariadb")


def _login(server) -> list[str]:
    return ["-h", HOST, "-P", str(server.port), "-u", ROOT_USER, "-p", ROOT_PASSWORD]


def mydumper_myloader(up, down, threads: int, work: Path) -> dict:
    """mydumper (consistent: its default lock, --rows chunks as cdcflow's) into `work`, then
    myloader from it; seconds of each."""
    out = work / "mydumper"
    shutil.rmtree(out, ignore_errors=True)
    dump = _timed(["mydumper", *_login(up), "-B", SCHEMA, "-t", str(threads), "--rows", str(CHUNK_ROWS),
                   "-o", str(out), "-v", "1"], "mydumper")
    load = _timed(["myloader", *_login(down), "-d", str(out), "-t", str(threads), "-v", "1"], "myloader")
    return {"dump_seconds": dump, "load_seconds": load, "dump_bytes": sum(p.stat().st_size for p in out.iterdir())}


def cdcflow_verify(changefeed_id: str, log_dir: Path, remote: str | None = None) -> dict:
    from cdcflow_devtools.bench_common import run_measured

    args = ["changefeed", "verify", "-c", changefeed_id, "--wait", "0s"] + (["--spark-remote",
                                                                             remote] if remote else [])
    wall, peak, out = run_measured(args, log_dir / f"verify-{changefeed_id}.log", ok=(0, 2, 3))
    result = json.loads(out)
    return {"wall_seconds": wall, "peak_rss_bytes": peak, "status": result["status"],
            "rows_compared": result["rows_compared"], "chunks": result["chunks_checked"]}


def checksum_tables(up, down, tables: list[str]) -> dict:
    """CHECKSUM TABLE of every table on both servers at once; seconds and whether they agree."""
    sums: dict[str, list] = {}

    def run(server, side: str) -> None:
        t0 = time.perf_counter()
        rows = server.query(f"CHECKSUM TABLE {', '.join(f'{SCHEMA}.{t}' for t in tables)}")
        sums[side] = [rows, time.perf_counter() - t0]

    t0 = time.perf_counter()
    threads = [threading.Thread(target=run, args=(s, side)) for s, side in ((up, "up"), (down, "down"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"wall_seconds": time.perf_counter() - t0, "up_seconds": sums["up"][1], "down_seconds": sums["down"][1],
            "equal": sums["up"][0] == sums["down"][0]}


def snapshot_table(servers, rows: int, threads: int, base: Path) -> dict:
    """The whole part: fill, the copies, their checks, the verifications."""
    from cdcflow_devtools import bench_workload, spark_connect
    from cdcflow_devtools.bench_common import verify
    from cdcflow_devtools.mariadb import free_port

    up = servers.up
    targets = {"cdcflow": servers.cdcflow, "dump": servers.binlog, "mydumper": servers.replica}
    for s in targets.values():
        s.execute(f"DROP DATABASE IF EXISTS {SCHEMA}")
    say(f"snapshot: filling {SCHEMA} upstream with {rows:,} rows in 4 tables")
    t0 = time.perf_counter()
    total = bench_workload.fill(up, SCHEMA, rows)
    say(f"snapshot: filled in {time.perf_counter() - t0:.1f}s")
    out: dict = {"rows": total, "threads": threads, "chunk_rows": CHUNK_ROWS, "consistent": {}}

    def check(name: str, server) -> None:
        out["consistent"][name] = not verify(up, server, f"{name}'s snapshot", schema=SCHEMA)

    say(f"snapshot: cdcflow changefeed create --snapshot --snapshot-workers {threads} (Spark embedded)")
    out["cdcflow"] = cdcflow_snapshot(up, targets["cdcflow"], CID, threads, base)
    check("cdcflow", targets["cdcflow"])
    say("verify: cdcflow changefeed verify (Spark embedded)")
    out["verify"] = cdcflow_verify(CID, base)
    say("snapshot: mariadb-dump --single-transaction | mariadb")
    out["dump_seconds"] = dump_pipe(up, targets["dump"])
    check("dump", targets["dump"])
    say(f"snapshot: mydumper -t {threads}, then myloader -t {threads}")
    out["mydumper"] = mydumper_myloader(up, targets["mydumper"], threads, base)
    check("mydumper", targets["mydumper"])

    say(f"snapshot: a warm Spark Connect server (local[{threads}]), then the same copy and verify on it")
    server = spark_connect.start(base / "spark-connect", port=free_port(), master=f"local[{threads}]")
    try:
        targets["cdcflow"].execute(f"DROP DATABASE {SCHEMA}")
        out["cdcflow_connect"] = cdcflow_snapshot(up, targets["cdcflow"], f"{CID}-connect", threads, base,
                                                  server.url)
        check("cdcflow_connect", targets["cdcflow"])
        out["verify_connect"] = cdcflow_verify(f"{CID}-connect", base, server.url)
    finally:
        server.stop()
    say("verify: CHECKSUM TABLE on both servers")
    out["checksum"] = checksum_tables(up, targets["cdcflow"], list(bench_workload.TABLES))
    out["load_average_after"] = os.getloadavg()[0]  # the machine may be shared: say how busy it was
    return out


def _row(label: str, rows: int, secs: float | None, ref: float | None, extra: str = "") -> str:
    rate = rows / secs if secs else None
    ratio = f"{rate / ref:.2f}x" if rate and ref else "-"
    return f"{label:52}{(f'{rate:,.0f}' if rate else '-'):>12}{secs or 0:>10.1f}{ratio:>14}  {extra}"


def report(res: dict | None) -> None:
    if not res:
        return
    n, t, m = res["rows"], res["threads"], res["mydumper"]
    ok = {True: "consistent", False: "DIFFERS"}
    cons = res["consistent"]
    myloader = n / m["load_seconds"]
    print()
    print(f"snapshot of {n:,} rows in 4 tables, {t} threads / workers each, load average {res['load_average_after']:.2f} "
          "at the end (ratio: rows/s / myloader's rows/s):")
    print(f"{'':52}{'rows/s':>12}{'seconds':>10}{'vs myloader':>14}")
    for name, how in (("cdcflow", "Spark embedded"), ("cdcflow_connect", "warm Spark Connect")):
        c = res[name]
        print(_row(f"cdcflow copy, {how}", n, c["copy_seconds"], myloader, ok[cons[name]]))
        print(_row(f"cdcflow create --snapshot, {how}", n, c["wall_seconds"], myloader,
                   f"whole command, peak memory {c['peak_rss_bytes'] / 2**30:.2f} GiB"))
    print(_row("mariadb-dump | mariadb", n, res["dump_seconds"], myloader, ok[cons["dump"]]))
    print(_row("mydumper", n, m["dump_seconds"], myloader))
    print(_row("myloader", n, m["load_seconds"], myloader, ok[cons["mydumper"]]))
    print(_row("mydumper + myloader", n, m["dump_seconds"] + m["load_seconds"], myloader))
    k = res["checksum"]
    ck = n / k["wall_seconds"]
    print(f"verify of the same {n:,} rows (ratio: rows/s / CHECKSUM TABLE's):")
    for name, how in (("verify", "Spark embedded"), ("verify_connect", "warm Spark Connect")):
        v = res[name]
        print(_row(f"cdcflow changefeed verify, {how}", n, v["wall_seconds"], ck,
                   f"{v['status']}, {v['chunks']} chunks"))
    print(_row("CHECKSUM TABLE, both servers at once", n, k["wall_seconds"], ck,
               "equal" if k["equal"] else "DIFFERENT"))


def ratios(res: dict) -> dict[str, float]:
    """The headline ratios for results.json: cdcflow's copy (rows/s) over each peer's, verify's
    over CHECKSUM TABLE's (above 1: cdcflow is faster)."""
    m, out = res["mydumper"], {}
    for name in ("cdcflow", "cdcflow_connect"):
        c = res[name]["copy_seconds"]
        out.update({f"{name}_vs_myloader": m["load_seconds"] / c,
                    f"{name}_vs_mydumper_myloader": (m["dump_seconds"] + m["load_seconds"]) / c,
                    f"{name}_vs_mariadb_dump": res["dump_seconds"] / c})
    for name in ("verify", "verify_connect"):
        out[f"{name}_vs_checksum_table"] = res["checksum"]["wall_seconds"] / res[name]["wall_seconds"]
    return out


def consistent(res: dict | None) -> bool:
    return res is None or (all(res["consistent"].values()) and res["checksum"]["equal"]
                           and res["verify"]["status"] == res["verify_connect"]["status"] == "equal")
