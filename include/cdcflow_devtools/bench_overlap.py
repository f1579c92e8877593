"""The overlap part: what applying a window's first segments while pull still reads the rest
could save at most, on this machine, before anyone builds it.

A cycle's stages run one after the other: apply starts once pull, filter and barrier are done
with the whole window.  Overlapping pull with apply would hide pull's time behind apply's, at
the price of the CPU pull then takes from apply (on a shared two-core machine, from the
writers and from the downstream).  This part measures both sides in pairs over the replication
part's window, each cycle on its downstream reset to the start:

  alone    cdcflow's CLI cycle as it runs
  beside   the same cycle while a second process reads the same window by pull's own path
           (bench_pull.read_whole), started the moment the cycle's log says barrier ended

The pull beside runs in its own process, so it takes no share of the cycle's interpreter lock
(an overlapped pull in the cycle's process would), and it writes the window to the store (the
cycle's pull keeps it in memory): the first makes apply's slowdown an underestimate, the
second an overestimate.  It reads the whole window beside apply, where an overlapped cycle
would have read the first segment before apply could start.  So `hidden`, the alone cycle's
pull seconds less the slowdown of apply beside a pull, is a ceiling, not a forecast.  The
pairs alternate which runs first.

    make bench PARTS=replication,overlap OVERLAP=4 [SHAPE=bulk]
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from cdcflow_devtools.bench_census import STAGE_ENDS
from cdcflow_devtools.bench_common import reset_settled, run_cycle_measured, verify
from cdcflow_devtools.bench_pairs import alternating, spread
from cdcflow_devtools.checkout import PROJECT

DEFAULT_PAIRS = 4
READY, GO = "ready", "go"
# the cycle log's event that ends barrier, as the census reads it: apply starts there
APPLY_STARTS = f" {dict(STAGE_ENDS)['barrier']} · "


def feed_id(i: int) -> str:
    """The changefeed of the part's i-th cycle (two a pair), created beside the replication
    part's own before its workload runs (bench.main_comparison), so that it starts where that
    one does."""
    return f"bench-overlap-{i}"


def ceiling(pair: dict) -> tuple[float, float]:
    """A pair's (apply's slowdown beside a pull, what overlapping could hide at most: the alone
    cycle's pull less that slowdown)."""
    slowdown = pair["beside"]["apply"] - pair["alone"]["apply"]
    return slowdown, pair["alone"]["pull"] - slowdown


def summary(pairs: list[dict]) -> dict:
    """Each pair's ceiling, as medians with their spread."""
    slowdown, hidden = zip(*map(ceiling, pairs))
    return {"apply_alone": spread([p["alone"]["apply"] for p in pairs]),
            "apply_beside": spread([p["beside"]["apply"] for p in pairs]),
            "pull_alone": spread([p["alone"]["pull"] for p in pairs]),
            "pull_beside": spread([p["beside"]["pull_beside"] for p in pairs]),
            "slowdown": spread(list(slowdown)), "hidden": spread(list(hidden)),
            "hidden_of_cycle": spread([h / p["alone"]["wall"] for p, h in zip(pairs, hidden)])}


class _PullBeside:
    """A second process reading the window by pull's path, ready before the cycle starts (the
    window read once already: its modules loaded, the binlog in the upstream's page cache, as
    the cycle's pull left it); its read starts when the cycle's log says apply starts
    (APPLY_STARTS), as watched by `watch`."""

    def __init__(self, up_uri: str, rng: dict, store: Path):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "cdcflow_devtools.bench_overlap", up_uri, json.dumps(rng), str(store)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(PROJECT / "include")})
        line = self.proc.stdout.readline().strip()
        if line != READY:
            self.proc.kill()
            raise RuntimeError(f"the pull beside did not start: {line!r}")
        self.started_at: float | None = None

    def watch(self, _pid: int, log_path: Path):
        """A watcher of the cycle's log (bench_common.run_cycle_measured's `watch`)."""
        done = threading.Event()

        def tail():
            with open(log_path, errors="replace") as log:
                while not done.is_set():
                    line = log.readline()
                    if not line:
                        time.sleep(0.005)
                    elif APPLY_STARTS in line:
                        self.started_at = time.perf_counter()
                        self.proc.stdin.write(GO + "\n")
                        self.proc.stdin.flush()
                        return

        thread = threading.Thread(target=tail, daemon=True)
        thread.start()

        class Stop:
            def stop(self):
                done.set()
                thread.join()
        return Stop()

    def result(self) -> dict:
        """The read's figures; raises where it never started (the cycle did not reach apply)."""
        if self.started_at is None:
            self.proc.kill()
            raise RuntimeError("the cycle never reached apply: no pull ran beside it")
        out, _ = self.proc.communicate(timeout=600)
        if self.proc.returncode:
            raise RuntimeError(f"the pull beside failed (exit {self.proc.returncode})")
        return json.loads(out.strip().splitlines()[-1])


def overlap_table(servers, main: dict, n: int, log_dir: Path) -> dict:
    """`n` pairs over the replication part's window (`main`), the cycles by feed_id(0..2n-1),
    alternating which goes first (bench_pairs.alternating), each on cdcflow's downstream reset
    to the start and every server settled before it, each downstream checked after."""
    rows, pairs = main["rows"], []

    def run(i: int, beside: bool) -> tuple[dict, bool]:
        puller = _PullBeside(servers.up.uri, main["binlog_range"], log_dir / f"overlap-store-{i}") if beside else None
        try:
            reset_settled(servers)  # after the pull beside's first read
            cyc = run_cycle_measured(feed_id(i), rows, log_dir, watch=puller.watch if puller else None)
            figures = {"wall": cyc.wall_seconds,
                       **{s: cyc.stage_seconds(s) for s in ("pull", "filter", "barrier", "apply")}}
            if puller:
                read = puller.result()
                figures.update(pull_beside=read["seconds"], pull_beside_events=read["events"])
        finally:
            if puller:
                puller.proc.kill()  # gone already, unless the cycle failed: it would wait for its go
                shutil.rmtree(log_dir / f"overlap-store-{i}", ignore_errors=True)
        return figures, not verify(servers.up, servers.cdcflow, f"cdcflow's downstream (overlap cycle {i + 1})")

    for got in alternating(n, "overlap pair", {"alone": lambda i: run(2 * i, False),
                                               "beside a pull": lambda i: run(2 * i + 1, True)}):
        (alone, a_ok), (beside, b_ok) = got["alone"], got["beside a pull"]
        pairs.append({"alone": alone, "beside": beside, "consistent": a_ok and b_ok})
    return {"pairs": pairs, **summary(pairs), "consistent": all(p["consistent"] for p in pairs)}


def report(res: dict | None) -> None:
    if not res:
        return
    n = len(res["pairs"])
    print(f"\noverlap ({n} pairs): the CLI cycle alone, and beside a second read of the window by pull's path "
          "started as apply starts (a ceiling: see bench_overlap)")
    print(f"  {'pair':>4} {'cycle s':>8} {'pull s':>7} {'apply s':>8} {'apply beside s':>15} {'pull beside s':>14}"
          f" {'slowdown s':>11} {'hidden s':>9}")
    for i, p in enumerate(res["pairs"], 1):
        a, b = p["alone"], p["beside"]
        slow, hidden = ceiling(p)
        print(f"  {i:>4} {a['wall']:>8.2f} {a['pull']:>7.2f} {a['apply']:>8.2f} {b['apply']:>15.2f}"
              f" {b['pull_beside']:>14.2f} {slow:>11.2f} {hidden:>9.2f}" + ("" if p["consistent"] else "  DIFFERS"))
    for key, label in (("slowdown", "apply's slowdown beside a pull"), ("hidden", "hidden at most")):
        s = res[key]
        print(f"  {label}: median {s['median']:.2f} s (from {s['min']:.2f} to {s['max']:.2f} s)")
    h = res["hidden_of_cycle"]
    print(f"overlap_ceiling_of_cycle={h['median']:.2f} (from {h['min']:.2f} to {h['max']:.2f})")


def _pull_beside(up_uri: str, rng: dict, store: Path) -> None:
    """The child: the window read once, ready, then on GO read again; prints the second read's figures."""
    from cdcflow.config.keys import ChangefeedConfig
    from cdcflow.core.uri import parse_source_uri
    from cdcflow.source.binlog import Position
    from cdcflow.stages import contracts
    from cdcflow_devtools import bench_pull

    window = contracts.Window(start_ts=0, start_pos=Position(rng["start_file"], rng["start_pos"]),
                              head=Position(rng["stop_file"], rng["stop_pos"]), head_tso=0)
    source, config = parse_source_uri(up_uri), ChangefeedConfig()
    bench_pull.read_whole(source, config, store, "first", window)
    print(READY, flush=True)
    if sys.stdin.readline().strip() != GO:
        return
    events, seconds, _folder = bench_pull.read_whole(source, config, store, "beside", window)
    print(json.dumps({"events": events, "seconds": seconds}), flush=True)


if __name__ == "__main__":
    _pull_beside(sys.argv[1], json.loads(sys.argv[2]), Path(sys.argv[3]))
