"""`make bench`'s snapshot part: the initial copy and the verification, against what a
MariaDB user reaches for, on the same tables in the same run.

The upstream's `snapbench` schema holds bench_workload's four tables (the replication
workload's column types), filled by the server.  Then, one after the other, each into a
downstream server of its own with no `snapbench` schema yet:

    cdcflow      `cdcflow changefeed create … --snapshot --snapshot-workers T` in a child process
                 (its Spark embedded: the copy opens no session and runs in T threads), then the
                 same on a warm Spark Connect server (T Spark tasks)
    dump         `mariadb-dump --single-transaction | mariadb`
    mydumper     `mydumper -t T` into a folder, then `myloader -t T` from it: one contender,
                 both timed (the reference: the same job end to end)

and each downstream is compared with the upstream.  cdcflow embedded and mydumper + myloader,
the ratio's two, run ROUNDS times alternating who goes first, each kept at its best; before
each copy the servers write out their dirty pages (settle), so no copy pays for the fill's or
a DROP's background writes.  Then `cdcflow changefeed verify` of the
cdcflow changefeed against `pt-table-sync --print` (the reference) on the same tables, with
no difference and with INJECTED differences made in the downstream (bench_table_sync).
verify starts no Spark (its chunks are compared by threads of its own, `--spark-remote` is
accepted and unused), so it runs once per case, not once per Spark set-up.  cdcflow's fix SQL
must name exactly the injected rows and, applied, make the downstream equal again;
pt-table-sync's rows are compared with them, and a row it misses counts as explained only
when its `--function MD5` run over the missed rows names it (CRC32 sums that cancelled under
BIT_XOR).  `CHECKSUM TABLE` of both servers at once is the floor.
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
DEFAULT_SIZES = (2_000_000, 10_000_000)
DEFAULT_THREADS = 4
CHUNK_ROWS = 100_000  # cdcflow's default chunk size; mydumper's --rows the same
INJECTED = 1_000  # differences made in the downstream for the second verification


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
    myloader from it; seconds of each.  myloader's threads have deadlocked with each other
    on snapbench.events: then its partial copy is dropped and it runs once more, and the
    result says so (`load_retried`: the first attempt's error and seconds)."""
    out = work / "mydumper"
    shutil.rmtree(out, ignore_errors=True)
    dump = _timed(["mydumper", *_login(up), "-B", SCHEMA, "-t", str(threads), "--rows", str(CHUNK_ROWS),
                   "-o", str(out), "-v", "1"], "mydumper")
    load_args = ["myloader", *_login(down), "-d", str(out), "-t", str(threads), "-v", "1"]
    retried = None
    t0 = time.perf_counter()
    try:
        load = _timed(load_args, "myloader")
    except RuntimeError as e:
        if "deadlock" not in str(e).lower():
            raise
        retried = {"error": str(e)[-300:], "seconds": time.perf_counter() - t0}
        say(f"snapshot: myloader deadlocked after {retried['seconds']:.1f}s, once more: {retried['error']}")
        down.execute(f"DROP DATABASE IF EXISTS {SCHEMA}")
        load = _timed(load_args, "myloader (second attempt)")
    return {"dump_seconds": dump, "load_seconds": load, "seconds": dump + load, "load_retried": retried,
            "dump_bytes": sum(p.stat().st_size for p in out.iterdir())}


def cdcflow_verify(changefeed_id: str, log_dir: Path, fix_sql: Path | None = None) -> dict:
    from cdcflow_devtools.bench_common import run_measured

    args = ["changefeed", "verify", "-c", changefeed_id, "--wait", "0s"] + (["--fix-sql", str(fix_sql)] if fix_sql else [])
    wall, peak, out = run_measured(args, log_dir / f"verify-{changefeed_id}.log", ok=(0, 2, 3))
    result = json.loads(out)
    return {"wall_seconds": wall, "peak_rss_bytes": peak, "status": result["status"],
            "rows_compared": result["rows_compared"], "chunks": result["chunks_checked"],
            "differences": len(result["differences"])}


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


ROUNDS = 2
SETTLE_SECONDS = 60


def settle(*servers) -> None:
    """Wait (at most SETTLE_SECONDS) until each server has flushed its dirty pages: a fill or a
    DROP leaves InnoDB writing in the background, on the cores the next contender needs."""
    t0 = time.perf_counter()
    for server in servers:
        (pct, io, io_max), = server.query("SELECT @@GLOBAL.innodb_max_dirty_pages_pct, @@GLOBAL.innodb_io_capacity, "
                                          "@@GLOBAL.innodb_io_capacity_max")
        # flush all, as fast as the disk takes it (the default capacity writes 200 pages a second)
        server.execute("SET GLOBAL innodb_io_capacity_max = 40000", "SET GLOBAL innodb_io_capacity = 20000",
                       "SET GLOBAL innodb_max_dirty_pages_pct = 0")
        try:
            while time.perf_counter() - t0 < SETTLE_SECONDS:
                (_, dirty), = server.query("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'")
                if int(dirty) < 64:
                    break
                time.sleep(0.2)
        finally:
            server.execute(f"SET GLOBAL innodb_max_dirty_pages_pct = {float(pct)}",
                           f"SET GLOBAL innodb_io_capacity = {int(io)}",
                           f"SET GLOBAL innodb_io_capacity_max = {int(io_max)}")
    if time.perf_counter() - t0 > 1:
        say(f"snapshot: waited {time.perf_counter() - t0:.1f}s for the servers' dirty pages to be written")


def snapshot_table(servers, rows: int, threads: int, base: Path) -> dict:
    """The whole part at one size: fill, the copies, their checks, the verifications."""
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
    out: dict = {"rows": total, "threads": threads, "chunk_rows": CHUNK_ROWS, "consistent": {},
                 "load_average_before": os.getloadavg()}
    work = base / f"snapshot-{rows}"
    work.mkdir(parents=True, exist_ok=True)

    def check(name: str, server) -> None:
        # every run's downstream counts: one that differs marks its contender
        out["consistent"][name] = out["consistent"].get(name, True) and not verify(
            up, server, f"{name}'s snapshot", schema=SCHEMA)

    cid = f"{CID}-{rows}"
    settle(up, *targets.values())
    # the two contenders of the ratio run ROUNDS times, alternating who goes first, each kept at
    # its best: the machine's speed drifts by more than the changes measured (docs/performance.md)
    runs: dict[str, list] = {"cdcflow": [], "mydumper": []}
    for r in range(ROUNDS):
        for name in (("cdcflow", "mydumper") if r % 2 == 0 else ("mydumper", "cdcflow")):
            targets[name].execute(f"DROP DATABASE IF EXISTS {SCHEMA}")
            settle(targets[name])
            if name == "cdcflow":
                say(f"snapshot: cdcflow changefeed create --snapshot --snapshot-workers {threads} "
                    f"(Spark embedded: the copy in threads), round {r + 1}")
                runs[name].append(cdcflow_snapshot(up, targets[name], f"{cid}-r{r + 1}", threads, work))
            else:
                say(f"snapshot: mydumper -t {threads}, then myloader -t {threads}, round {r + 1}")
                runs[name].append(mydumper_myloader(up, targets[name], threads, work))
                shutil.rmtree(work / "mydumper", ignore_errors=True)
            check(name, targets[name])
    out["cdcflow"] = min(runs["cdcflow"], key=lambda c: c["wall_seconds"])
    out["mydumper"] = min(runs["mydumper"], key=lambda m: m["seconds"])
    out["rounds"] = {"cdcflow": [c["wall_seconds"] for c in runs["cdcflow"]],
                     "mydumper": [m["seconds"] for m in runs["mydumper"]]}
    cid = f"{cid}-r{ROUNDS}"  # the downstream holds the last round's copy
    say("verify: cdcflow changefeed verify (no Spark: once, not per Spark set-up)")
    out["verify"] = cdcflow_verify(cid, work)
    say("snapshot: mariadb-dump --single-transaction | mariadb")
    out["dump_seconds"] = dump_pipe(up, targets["dump"])
    check("dump", targets["dump"])

    say(f"snapshot: a warm Spark Connect server (local[{threads}]), then the same copy on it")
    server = spark_connect.start(work / "spark-connect", port=free_port(), master=f"local[{threads}]")
    try:
        targets["cdcflow"].execute(f"DROP DATABASE {SCHEMA}")
        settle(targets["cdcflow"])
        out["cdcflow_connect"] = cdcflow_snapshot(up, targets["cdcflow"], f"{cid}-connect", threads, work,
                                                  server.url)
        check("cdcflow_connect", targets["cdcflow"])
    finally:
        server.stop()
    say("verify: CHECKSUM TABLE on both servers")
    out["checksum"] = checksum_tables(up, targets["cdcflow"], list(bench_workload.TABLES))
    out["anchor"] = verify_anchor(up, targets["cdcflow"], total // len(bench_workload.TABLES), work,
                                  f"{cid}-connect")
    out["load_average_after"] = os.getloadavg()  # the machine may be shared: say how busy it was
    return out


def verify_anchor(up, down, per_table: int, work: Path, changefeed_id: str) -> dict:
    """pt-table-sync --print and verify --fix-sql of `changefeed_id` after INJECTED differences
    (pt-table-sync on the equal downstream first): the rows each names against the injected
    ones, pt-table-sync's misses explained or not; then cdcflow's fix SQL applied and the
    downstream checked."""
    from cdcflow_devtools import bench_table_sync as ts
    from cdcflow_devtools import bench_workload
    from cdcflow_devtools.bench_common import verify
    from cdcflow_devtools.pt_table_sync import fix_rows

    tables = list(bench_workload.TABLES)
    keys = ts.primary_keys(up, SCHEMA)
    say("verify: pt-table-sync --print, the downstream equal")
    secs, text = ts.timed_print(up, down, SCHEMA, tables)
    out = {"pt_seconds_equal": secs, "pt_rows_equal": len(fix_rows(text, keys))}
    expected = ts.inject(down, SCHEMA, per_table, INJECTED)
    say(f"verify: {len(expected):,} differences injected into the downstream (values drawn per row); "
        "pt-table-sync --print")
    secs, text = ts.timed_print(up, down, SCHEMA, tables)
    (work / "pt-table-sync.sql").write_text(text)
    pt_rows = fix_rows(text, keys)
    say(f"verify: cdcflow changefeed verify --fix-sql, {len(expected):,} differences")
    fix = work / "fix.sql"
    res = cdcflow_verify(changefeed_id, work, fix_sql=fix)
    rows = fix_rows(fix.read_text(), keys) if fix.exists() else set()
    missed = expected - pt_rows
    explained = ts.md5_named(up, down, missed, keys) if missed else set()
    res.update({"fix_rows": len(rows), "missing": sorted(expected - rows)[:5],
                "unexpected": sorted(rows - expected)[:5], "exact": rows == expected})
    out.update({"injected": len(expected), "pt_seconds": secs, "pt_rows": len(pt_rows), "verify": res,
                "pt_missed": sorted(missed), "pt_missed_explained": sorted(explained),
                "pt_unexplained": sorted((missed - explained) | (pt_rows - expected))})
    if not res["exact"]:
        say(f"verify: cdcflow's fix SQL does NOT name the injected rows: missing {res['missing']}, "
            f"not injected {res['unexpected']}")
    for table, key in sorted(missed):
        why = ("CRC32 sums cancelled under BIT_XOR (pt-table-sync --function MD5 names it)"
               if (table, key) in explained else "NOT explained")
        say(f"verify: pt-table-sync misses {table} {key}: {why}")
    say("verify: cdcflow's fix SQL applied to the downstream")
    with open(fix, "rb") as f:
        subprocess.run(["mariadb", *client_args(down.port)], stdin=f, check=True, capture_output=True)
    out["equal_after_fix"] = not verify(up, down, "the downstream after cdcflow's fix SQL", schema=SCHEMA)
    return out


def anchor_consistent(a: dict) -> bool:
    """cdcflow names exactly the injected rows and its fix makes the downstream equal;
    pt-table-sync names none on the equal downstream and, after the injection, none it should
    not and misses none but the ones its MD5 run explains."""
    return (a["pt_rows_equal"] == 0 and not a["pt_unexplained"] and a["equal_after_fix"]
            and a["verify"]["exact"] and a["verify"]["status"] == "different")


def _row(label: str, rows: int, secs: float | None, ref: float | None, extra: str = "") -> str:
    rate = rows / secs if secs else None
    ratio = f"{rate / ref:.2f}x" if rate and ref else "-"
    return f"{label:58}{(f'{rate:,.0f}' if rate else '-'):>12}{secs or 0:>10.1f}{ratio:>10}  {extra}"


def report(results: list[dict] | None) -> None:
    for res in results or []:
        _report(res)


def _report(res: dict) -> None:
    n, t, m = res["rows"], res["threads"], res["mydumper"]
    ok = {True: "consistent", False: "DIFFERS"}
    cons = res["consistent"]
    ref = n / m["seconds"]
    before, after = res["load_average_before"], res["load_average_after"]
    print()
    print(f"snapshot of {n:,} rows in 4 tables, {t} threads / workers each; load average (1, 5, 15 min) "
          f"{before[0]:.2f} {before[1]:.2f} {before[2]:.2f} after the fill, {after[0]:.2f} {after[1]:.2f} "
          f"{after[2]:.2f} at the end (ratio: rows/s / mydumper + myloader's, end to end):")
    print(f"{'':58}{'rows/s':>12}{'seconds':>10}{'ratio':>10}")
    # an embedded (local) Spark: the copy starts no session and copies in threads (docs/guides/snapshot.md)
    for name, how in (("cdcflow", "embedded (threads)"), ("cdcflow_connect", "warm Spark Connect")):
        c = res[name]
        print(_row(f"cdcflow create --snapshot, {how}", n, c["wall_seconds"], ref,
                   f"whole command, peak memory {c['peak_rss_bytes'] / 2**30:.2f} GiB"))
        print(_row("  its copy", n, c["copy_seconds"], ref, ok[cons[name]]))
    retried = m.get("load_retried")
    print(_row("mydumper + myloader (end to end)", n, m["seconds"], ref, ok[cons["mydumper"]]
               + (f"; myloader deadlocked after {retried['seconds']:.1f}s and ran again (not counted): "
                  f"{retried['error'][-120:]}" if retried else "")))
    print(_row("  mydumper", n, m["dump_seconds"], ref, f"{m['dump_bytes'] / 2**20:,.0f} MiB of files"))
    print(_row("  myloader", n, m["load_seconds"], ref))
    print(_row("mariadb-dump --single-transaction | mariadb", n, res["dump_seconds"], ref, ok[cons["dump"]]))
    if res.get("rounds"):
        rounds = res["rounds"]
        print(f"(cdcflow embedded and mydumper + myloader ran {len(rounds['cdcflow'])} times each, alternating who "
              f"went first, the best kept: cdcflow {' / '.join(f'{x:.1f}' for x in rounds['cdcflow'])} s, "
              f"mydumper + myloader {' / '.join(f'{x:.1f}' for x in rounds['mydumper'])} s)")
    a, k = res["anchor"], res["checksum"]
    pt = n / a["pt_seconds_equal"]
    print(f"verify of the same {n:,} rows (ratio: rows/s / pt-table-sync --print's, the same differences); "
          "one verify row per case: verify starts no Spark, so embedded and Spark Connect are the same run:")
    v = res["verify"]
    print(_row("cdcflow changefeed verify", n, v["wall_seconds"], pt, f"{v['status']}, {v['chunks']} chunks"))
    print(_row("pt-table-sync --print", n, a["pt_seconds_equal"], pt, f"{a['pt_rows_equal']} statements"))
    print(_row("CHECKSUM TABLE, both servers at once (the floor)", n, k["wall_seconds"], pt,
               "equal" if k["equal"] else "DIFFERENT"))
    pt = n / a["pt_seconds"]
    print(f"the same with {a['injected']:,} differences injected into the downstream (updated with values "
          "drawn per row, deleted, extra rows):")
    v = a["verify"]
    print(_row("cdcflow changefeed verify --fix-sql", n, v["wall_seconds"], pt,
               f"{v['status']}, {v['fix_rows']:,} rows in the fix SQL: " + (
                   "exactly the injected ones" if v["exact"] else
                   f"NOT the injected ones: missing {v['missing']}, not injected {v['unexpected']}")))
    missed, explained = a["pt_missed"], a["pt_missed_explained"]
    print(_row("pt-table-sync --print", n, a["pt_seconds"], pt,
               f"{a['pt_rows']:,} rows, {len(missed)} injected missed ({len(explained)} explained: CRC32 sums "
               f"cancelled under BIT_XOR, named by --function MD5), unexplained {a['pt_unexplained'][:5] or 'none'}"))
    for row in missed:
        print(f"  pt-table-sync missed {row[0]} {row[1]}: "
              + ("CRC32 cancelled (MD5 names it)" if row in explained else "NOT explained"))
    print(f"cdcflow's fix SQL applied to the downstream: "
          f"{'equal to the upstream' if a['equal_after_fix'] else 'it still DIFFERS'}")
    print("verify against pt-table-sync: " + ("consistent" if anchor_consistent(a) else "INCONSISTENT")
          + " (cdcflow must name exactly the injected rows and its fix make the downstream equal; pt-table-sync "
            "may miss only rows its --function MD5 run over them names)")


def ratios(results: list[dict]) -> dict[str, float]:
    """The headline ratios for results.json, per size: cdcflow's rows/s over the reference's
    (above 1: cdcflow is faster); the create ones over mydumper + myloader end to end, the
    verify ones over pt-table-sync --print's on the same differences."""
    out = {}
    for res in results:
        m, a, n = res["mydumper"], res["anchor"], res["rows"]
        for name in ("cdcflow", "cdcflow_connect"):
            c = res[name]
            out.update({f"{name}_create_vs_mydumper_myloader_{n}": m["seconds"] / c["wall_seconds"],
                        f"{name}_copy_vs_mydumper_myloader_{n}": m["seconds"] / c["copy_seconds"],
                        f"{name}_copy_vs_mariadb_dump_{n}": res["dump_seconds"] / c["copy_seconds"]})
        out[f"verify_vs_pt_table_sync_{n}"] = a["pt_seconds_equal"] / res["verify"]["wall_seconds"]
        out[f"verify_injected_vs_pt_table_sync_{n}"] = a["pt_seconds"] / a["verify"]["wall_seconds"]
    return out


def consistent(results: list[dict] | None) -> bool:
    return all(all(r["consistent"].values()) and r["checksum"]["equal"] and anchor_consistent(r["anchor"])
               and r["verify"]["status"] == "equal" for r in results or [])
