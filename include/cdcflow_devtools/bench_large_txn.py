"""`make bench`'s large-transaction part: the peak memory and wall time of one cycle that
replicates a single upstream transaction of N rows, per size (`make bench PARTS=large_txn
LARGE_TXN=1000000,5000000`).

Each size runs `python -m cdcflow_devtools.large_txn` (its own MariaDB pair, changefeed and
embedded Spark) in a process of its own: a JVM outlives a stopped session in the process
that started it, so a second size in one process would inherit the first one's peak.  The
figures are large_txn's: the peak resident memory of the driver (which runs pull), the Spark
JVM and the largest of Spark's Python workers, and the largest sum of all of them at one
moment; the downstream is compared with the upstream.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

DEFAULT_SIZES = (1_000_000, 5_000_000)
KINDS = {"driver": "python driver", "jvm": "Spark JVM", "workers": "Spark Python workers"}


def large_txn_table(sizes: list[int], workdir: Path, config: str = "") -> list[dict]:
    """One large_txn run per size: its report, wall time and the machine's load before it."""
    from cdcflow_devtools.bench_common import say

    out = []
    for n in sizes:
        load = os.getloadavg()[0]
        say(f"large transaction: {n:,} rows in one upstream transaction, one cycle (load average {load:.1f})")
        report, log = workdir / f"large-txn-{n}.json", workdir / f"large-txn-{n}.log"
        t0 = time.perf_counter()
        with log.open("w") as f:
            rc = subprocess.run([sys.executable, "-m", "cdcflow_devtools.large_txn", "--rows", str(n), "--out",
                                 str(report), *(["--config", config] if config else [])],
                                stdout=f, stderr=subprocess.STDOUT, env=os.environ.copy()).returncode
        wall = time.perf_counter() - t0
        if not report.exists():  # the other sizes' figures are kept
            say(f"large transaction: {n:,} rows failed (exit {rc}); see {log}")
            out.append({"rows": n, "load_average_before": round(load, 1), "wall_seconds": round(wall, 1),
                        "error": f"exit {rc}, see {log}", "consistent": False})
            continue
        r = json.loads(report.read_text())
        peaks = {short: next((v for k, v in r["peak_rss_mb"].items() if k.startswith(long)), 0.0)
                 for short, long in KINDS.items()}
        out.append({"rows": n, "load_average_before": round(load, 1), "wall_seconds": round(wall, 1),
                    "cycle_seconds": r["cycle_seconds"], "peak_mb": peaks, "total_peak_mb": r["total_peak_rss_mb"],
                    "processes": r["processes"], "consistent": r["consistent"], "stages": r["stages"]})
    return out


def report(rows: list[dict] | None) -> None:
    if not rows:
        return
    print()
    print("one large transaction, one cycle (peak resident MB; workers: the largest one; total: all at once):")
    print(f"{'rows':>12}{'cycle s':>9}{'pull s':>8}{'apply s':>9}{'driver':>8}{'JVM':>8}{'workers':>9}"
          f"{'total':>8}{'held':>14}{'consistent':>12}")
    for e in rows:
        if "error" in e:
            print(f"{e['rows']:>12,}  failed: {e['error']}")
            continue
        pull, apply, p = e["stages"]["pull"], e["stages"]["apply"], e["peak_mb"]
        pull_s = (pull.get("sequential_seconds") or 0) + (pull.get("decode_seconds") or 0) + \
            (pull.get("stamp_seconds") or 0)
        held = f"{pull.get('events_held', 0):,}/{apply.get('rows_held', 0):,}"
        pull_text = f"{pull_s:.1f}" if pull.get("spark") else "-"  # a sequential read reports no seconds
        print(f"{e['rows']:>12,}{e['cycle_seconds']:>9.1f}{pull_text:>8}{apply.get('apply_seconds', 0):>9.1f}"
              f"{p['driver']:>8.0f}{p['jvm']:>8.0f}{p['workers']:>9.0f}{e['total_peak_mb']:>8.0f}{held:>14}"
              f"{'yes' if e['consistent'] else 'NO':>12}")
    print("(held: the most events pull's writer held / the most row images one apply writer held)")
