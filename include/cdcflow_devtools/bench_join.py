"""`make bench PARTS=join [JOIN=rows]`: a table joining a running changefeed (`add-tables`),
against the initial copy of the same table (`create --snapshot`), and the lag of the
changefeed's other table while the copy runs (snapshot/table_join.py).

The upstream's `joinbench` schema holds `b`, JOIN rows (default 1,000,000) of the replication
workload's orders-like columns, and `a`, a small table.  Then on cdcflow's downstream:

    snapshot   `create --snapshot` of joinbench.b alone (threads of the command: no Spark), timed:
               the reference, the same table by the method the copy reuses
    join       a changefeed of joinbench.a; LAG_CYCLES cycles, each a `cdcflow changefeed run` in
               a child process after a marker row is written into a: a's lag at the cycle's end
               (from the marker's write); then `add-tables joinbench.b` and cycles, each after a
               marker, until b's copy is done: a's lag in each, and b's copy from its join to its
               last chunk (rows/s over that wall time, the cycles' applies in between included)

and the downstream is compared with the upstream.  The figure to read: a's lag during the copy
against its lag without it plus `table-copy-seconds` (what each cycle spends on the copy).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from cdcflow_devtools.bench_common import Servers, create_changefeed, run_cycle_measured, say, verify

SCHEMA = "joinbench"
DEFAULT_ROWS = 1_000_000
LAG_CYCLES = 3
COPY_SECONDS = 20  # [cdcflow] table-copy-seconds: the default
CONFIG = f"[filter]\nrules = ['{SCHEMA}.a']\n[cdcflow]\ntable-copy-seconds = {COPY_SECONDS}\n"


def _fill(up, rows: int) -> None:
    up.execute(f"DROP DATABASE IF EXISTS {SCHEMA}", f"CREATE DATABASE {SCHEMA}",
               f"CREATE TABLE {SCHEMA}.a (id INT PRIMARY KEY, at DOUBLE)",
               f"CREATE TABLE {SCHEMA}.b (id BIGINT PRIMARY KEY, customer INT NOT NULL, status VARCHAR(16), "
               "amount DECIMAL(12,2), note VARCHAR(64), created DATETIME(6), KEY ix_customer (customer))")
    up.execute(f"INSERT INTO {SCHEMA}.b SELECT seq, seq % 5000, ELT(1 + seq % 3, 'new', 'paid', 'shipped'), "
               f"seq % 1000 + 0.25, CONCAT('order ', seq), '2026-01-01' + INTERVAL seq SECOND "
               f"FROM {SCHEMA}.seq_1_to_{rows}")


def _cli(*args: str) -> None:
    import contextlib
    import io

    from cdcflow import cli

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        rc = cli.main(list(args))
    if rc:
        raise RuntimeError(f"cdcflow {' '.join(args)} failed: {out.getvalue()[-800:]}")


def _snapshot(servers: Servers, home: Path, rows: int) -> dict:
    up, down = servers.up, servers.cdcflow
    down.execute(f"DROP DATABASE IF EXISTS {SCHEMA}")
    cfg = home / "joinbench-snapshot.toml"
    cfg.write_text(f"[filter]\nrules = ['{SCHEMA}.b']\n")
    t0 = time.perf_counter()
    _cli("changefeed", "create", "-c", "joinbench-snapshot", "--source-uri", up.uri, "--sink-uri", down.uri,
         "--config", str(cfg), "--snapshot")
    secs = time.perf_counter() - t0
    _cli("changefeed", "remove", "-c", "joinbench-snapshot")
    say(f"join: create --snapshot of {SCHEMA}.b: {secs:.1f}s, {rows / secs:,.0f} rows/s")
    return {"seconds": secs, "rows_per_second": rows / secs}


def _marker_cycle(up, changefeed_id: str, marker: int, log_dir: Path) -> dict:
    """A row written into a, then a cycle: a's lag at the cycle's end, from the row's write."""
    t0 = time.time()
    up.execute(f"INSERT INTO {SCHEMA}.a VALUES ({marker}, {t0})")
    cyc = run_cycle_measured(changefeed_id, 1, log_dir)
    return {"lag_seconds": time.time() - t0, "wall_seconds": cyc.wall_seconds}


def join_table(servers: Servers, rows: int, home: Path, log_dir: Path) -> dict:
    from cdcflow.store import table_copies

    up, down = servers.up, servers.cdcflow
    say(f"join: filling {SCHEMA}.b with {rows:,} rows")
    _fill(up, rows)
    snapshot = _snapshot(servers, home, rows)
    down.execute(f"DROP DATABASE IF EXISTS {SCHEMA}", f"CREATE DATABASE {SCHEMA}",
                 f"CREATE TABLE {SCHEMA}.a (id INT PRIMARY KEY, at DOUBLE)")
    cid = "joinbench"
    create_changefeed(cid, up, down, home, CONFIG, base="")
    before = [_marker_cycle(up, cid, i, log_dir) for i in range(1, LAG_CYCLES + 1)]
    _cli("changefeed", "add-tables", "-c", cid, "--tables", f"{SCHEMA}.b")
    during, marker = [], 1000
    while True:
        copy = next(c for c in table_copies.all_of(cid) if c["table_name"] == f"{SCHEMA}.b")
        if copy["status"] not in (table_copies.REQUESTED, table_copies.COPYING) or len(during) > 200:
            break
        during.append(_marker_cycle(up, cid, marker, log_dir))
        marker += 1
        say(f"join: cycle {len(during)} of the copy: a's lag {during[-1]['lag_seconds']:.1f}s")
    copy = next(c for c in table_copies.all_of(cid) if c["table_name"] == f"{SCHEMA}.b")
    copy_secs = (copy["finished_at"] or time.time()) - copy["started_at"]
    _marker_cycle(up, cid, marker, log_dir)  # past the copy's last read: done
    ok = not verify(up, down, "cdcflow's downstream after the join", SCHEMA)
    return {"rows": rows, "snapshot": snapshot, "copy_seconds": copy_secs, "copy_rows_per_second": rows / copy_secs,
            "copy_cycles": len(during), "lag_before": before, "lag_during": during, "copy_budget": COPY_SECONDS,
            "consistent": ok}


def report(res: dict | None) -> None:
    if not res:
        return
    base = statistics.median(c["lag_seconds"] for c in res["lag_before"])
    worst = max((c["lag_seconds"] for c in res["lag_during"]), default=0.0)
    print()
    print(f"a table joining a running changefeed ({res['rows']:,} rows; table-copy-seconds {res['copy_budget']}):")
    print(f"  create --snapshot of the table     {res['snapshot']['seconds']:8.1f} s "
          f"{res['snapshot']['rows_per_second']:12,.0f} rows/s")
    print(f"  add-tables, join to last chunk     {res['copy_seconds']:8.1f} s {res['copy_rows_per_second']:12,.0f} rows/s"
          f"   over {res['copy_cycles']} cycles  ({res['copy_rows_per_second'] / res['snapshot']['rows_per_second']:.2f}"
          f"x the snapshot's rate)")
    print(f"  the other table's lag: {base:.1f} s without the copy (median of {len(res['lag_before'])} cycles), "
          f"at most {worst:.1f} s during it (bound: {base:.1f} + {res['copy_budget']} s)   consistent: "
          f"{res['consistent']}")
