"""`make bench`'s tables part: what a cycle costs as the number of tables grows (a table per
tenant), for each size N of TABLES (default 100, 1,000 and 10,000).

For each N a fresh `tablesbench` schema on the upstream and on cdcflow's downstream, a fresh
changefeed, then four cycles, each a `cdcflow changefeed run` in a child process (wall time
and peak memory of it and its children, bench_common.run_cycle_measured):

    create   N CREATE TABLEs in one window
    rows     three rows INSERTed into each table, a transaction per table
    one txn  one transaction UPDATEing a row of every table
    idle     nothing to read

then the downstream is compared with the upstream.  The figure to read is the growth: a
cycle's seconds per table, which stays flat while the cycle's work grows linearly.
"""

from __future__ import annotations

import time
from pathlib import Path

from cdcflow_devtools.bench_common import (
    Servers, create_changefeed, fmt_bytes, run_cycle_measured, say, stage_seconds, verify,
)

SCHEMA = "tablesbench"
DEFAULT_SIZES = (100, 1_000, 10_000)
CONFIG = f"# a table per tenant\n[filter]\nrules = ['{SCHEMA}.*']\n"
CYCLES = ("create", "rows", "one txn", "idle")


def _statements(cycle: str, n: int) -> list[str]:
    """The upstream's statements before a cycle."""
    if cycle == "create":
        return [f"CREATE TABLE {SCHEMA}.t{i} (id INT PRIMARY KEY, tenant VARCHAR(32) NOT NULL, "
                f"amount DECIMAL(12,2), updated DATETIME(6), KEY ix_tenant (tenant))" for i in range(n)]
    if cycle == "rows":
        return [f"INSERT INTO {SCHEMA}.t{i} VALUES (1, 'tenant {i}', 10.5, NOW(6)), (2, 'tenant {i}', NULL, NULL), "
                f"(3, 'tenant {i}', -1.25, '2026-01-01 00:00:00.5')" for i in range(n)]
    if cycle == "one txn":
        return ["BEGIN", *(f"UPDATE {SCHEMA}.t{i} SET amount = amount + 1, updated = NOW(6) WHERE id = 1"
                           for i in range(n)), "COMMIT"]
    return []


def one_size(servers: Servers, n: int, home: Path, log_dir: Path) -> dict:
    up, down = servers.up, servers.cdcflow
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {SCHEMA}", f"CREATE DATABASE {SCHEMA}")
    changefeed_id = f"tables-{n}"
    create_changefeed(changefeed_id, up, down, home, CONFIG, base="")
    cycles = {}
    for name in CYCLES:
        sql = _statements(name, n)
        t0 = time.perf_counter()
        if sql:
            up.execute(*sql)
        upstream = time.perf_counter() - t0
        say(f"tables: {n:,} tables, the {name} cycle (upstream took {upstream:.1f}s)")
        cyc = run_cycle_measured(changefeed_id, 0, log_dir)  # raises if the cycle fails
        cycles[name] = {"wall_seconds": cyc.wall_seconds, "peak_rss_bytes": cyc.peak_rss_bytes,
                        "upstream_seconds": upstream, "stats": cyc.stats}
    ok = not verify(up, down, f"cdcflow's downstream after {n:,} tables", SCHEMA)
    return {"tables": n, "cycles": cycles, "consistent": ok}


def tables_table(servers: Servers, sizes: list[int], home: Path, log_dir: Path) -> list[dict]:
    return [one_size(servers, n, home, log_dir) for n in sizes]


def report(res: list[dict] | None) -> None:
    if not res:
        return
    print()
    print("cycle time by number of tables (a fresh changefeed per size; ms/table = cycle seconds per table):")
    print(f"{'tables':>8}{'cycle':>9}{'wall s':>9}{'ms/table':>10}{'apply s':>9}{'peak memory':>13}"
          f"{'consistent':>12}")
    for e in res:
        for name, c in e["cycles"].items():
            apply_s = stage_seconds(c["stats"], "apply")
            print(f"{e['tables']:>8,}{name:>9}{c['wall_seconds']:>9.1f}{c['wall_seconds'] * 1000 / e['tables']:>10.1f}"
                  f"{apply_s:>9.1f}{fmt_bytes(c['peak_rss_bytes']):>13}{'yes' if e['consistent'] else 'NO':>12}")


def consistent(res: list[dict] | None) -> bool:
    return all(e["consistent"] for e in res or [])
