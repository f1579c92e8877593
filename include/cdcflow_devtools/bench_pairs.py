"""The pairs part: cdcflow's CLI cycle and the native replica over the compared window again,
in pairs run one right after the other, each on its downstream reset to the start.

One run of each moves by a third from one to the next on a shared two-core machine (the
replica took 1.2-1.9 s for the same bulk window), and the replication part runs each once, so
its ratio_vs_native_replica moves as much. Two runs a few seconds apart see the same machine:
the ratio of each pair holds while its speed drifts. The pairs alternate which runs first (A B,
B A, ...), so neither always runs on servers the other has just warmed. The part prints the
medians of each side and of the pairs' ratios (the replica's seconds over the cycle's, as
ratio_vs_native_replica), with their spread, and the median of the cycles' start-up, prepare and
finish (their time outside the stages), which one cycle gives no steadier than its whole.

    make bench PARTS=replication,pairs PAIRS=5 [SHAPE=bulk]
"""

from __future__ import annotations

import statistics
from pathlib import Path

from cdcflow_devtools.bench_census import QUIET_STEAL, quiet, stolen_share
from cdcflow_devtools.bench_common import reset_settled, run_cycle_measured, say, verify

DEFAULT_PAIRS = 5


def feed_id(i: int) -> str:
    """The changefeed of pair i's cycle, created beside the replication part's own before its
    workload runs (bench.main_comparison), so that it starts where that one does."""
    return f"bench-pair-{i}"


def spread(values: list[float]) -> dict:
    """The median, least and most of `values`."""
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def ratio(p: dict) -> float:
    """A pair's ratio_vs_native_replica."""
    return p["replica_seconds"] / p["cycle_seconds"]


def summary(pairs: list[dict]) -> dict:
    """Each side's seconds and the pairs' ratios (replica over cycle), as medians with their
    spread; the ratios' over the quiet pairs alone (None when none was)."""
    calm = [ratio(p) for p in pairs if quiet(p["cycle_stolen"], p["replica_stolen"])]
    return {"quiet_pairs": len(calm), "quiet_ratio_vs_native_replica": spread(calm) if calm else None,
            "cycle_seconds": spread([p["cycle_seconds"] for p in pairs]),
            "around_stages_seconds": spread([p["around_stages_seconds"] for p in pairs]),
            "replica_seconds": spread([p["replica_seconds"] for p in pairs]),
            "ratio_vs_native_replica": spread([ratio(p) for p in pairs])}


def pairs_table(servers, main: dict, n: int, log_dir: Path) -> dict:
    """`n` pairs over the replication part's window (`main`: its binlog range and row changes),
    the cycles by the changefeeds feed_id(0..n-1), each side on its downstream reset to the
    start's schema and every server settled before it (bench_common.reset_settled), each
    downstream checked after."""
    from cdcflow_devtools import bench_peers

    rng = bench_peers.BinlogRange(**main["binlog_range"])
    rows, pairs = main["rows"], []

    def cycle(i: int) -> dict:
        reset_settled(servers)
        cyc, stolen = stolen_share(lambda: run_cycle_measured(feed_id(i), rows, log_dir))
        return {"cycle_seconds": cyc.wall_seconds, "around_stages_seconds": cyc.around_stages_seconds,
                "cycle_stolen": stolen,
                "cycle_ok": not verify(servers.up, servers.cdcflow, f"cdcflow's downstream (pair {i + 1})")}

    def replica(i: int) -> dict:
        reset_settled(servers, servers.replica)
        secs, stolen = stolen_share(lambda: bench_peers.replica_catch_up(servers.up, servers.replica, rng))
        return {"replica_seconds": secs, "replica_stolen": stolen,
                "replica_ok": not verify(servers.up, servers.replica, f"the replica (pair {i + 1})")}

    for got in alternating(n, "pair", {"cdcflow's cycle": cycle, "the replica": replica}):
        pair = {**got["cdcflow's cycle"], **got["the replica"]}
        cycle_ok, replica_ok = pair.pop("cycle_ok"), pair.pop("replica_ok")  # both taken out, whichever failed
        pair["consistent"] = cycle_ok and replica_ok
        pairs.append(pair)
    return {"pairs": pairs, **summary(pairs), "consistent": all(p["consistent"] for p in pairs)}


def alternating(n: int, label: str, sides: dict) -> list[dict]:
    """`n` pairs of the two `sides` ({name: run(pair index)}), one right after the other,
    alternating which goes first (A B, B A, ...), so that neither always runs on servers the
    other has just warmed: per pair, {name: what its run returned}."""
    (a, run_a), (b, run_b) = sides.items()
    out = []
    for i in range(n):
        order = ((a, run_a), (b, run_b)) if i % 2 == 0 else ((b, run_b), (a, run_a))
        say(f"{label} {i + 1} of {n}: {order[0][0]}, then {order[1][0]}")
        out.append({name: run(i) for name, run in order})
    return out


def report(res: dict | None) -> None:
    if not res:
        return
    n = len(res["pairs"])
    print(f"\npaired runs ({n}): cdcflow's CLI cycle and the native replica one right after the other, "
          "alternating which goes first, each on its downstream reset to the start")
    print(f"  {'pair':>4} {'cdcflow cycle s':>16} {'start-up, prepare, finish s':>28} {'native replica s':>17} "
          f"{'ratio_vs_native_replica':>24} {'stolen cycle':>13} {'stolen replica':>15}")
    for i, p in enumerate(res["pairs"], 1):
        print(f"  {i:>4} {p['cycle_seconds']:>16.2f} {p['around_stages_seconds']:>28.2f} "
              f"{p['replica_seconds']:>17.2f} {ratio(p):>24.2f} {p['cycle_stolen']:>12.1%} {p['replica_stolen']:>14.1%}"
              + ("" if p["consistent"] else "  DIFFERS"))
    for key, label, unit in (("cycle_seconds", "cdcflow cycle", " s"),
                             ("around_stages_seconds", "its start-up, prepare and finish", " s"),
                             ("replica_seconds", "native replica", " s"),
                             ("ratio_vs_native_replica", "ratio_vs_native_replica", "")):
        s = res[key]
        print(f"  {label}: median {s['median']:.2f}{unit} (from {s['min']:.2f}{unit} to {s['max']:.2f}{unit})")
    q = res["quiet_ratio_vs_native_replica"]
    print(f"  over the {res['quiet_pairs']} pairs that stole less than {QUIET_STEAL:.0%}: ratio_vs_native_replica median "
          f"{q['median']:.2f} (from {q['min']:.2f} to {q['max']:.2f})" if q
          else f"  no pair stole less than {QUIET_STEAL:.0%} of the machine")
    print(f"paired_ratio_vs_native_replica={res['ratio_vs_native_replica']['median']:.2f}"
          + (f" quiet_paired_ratio_vs_native_replica={q['median']:.2f}" if q else ""))
