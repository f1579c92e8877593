"""`make bench`'s pull table: pull alone on parts of the compared window, read sequentially
(in this process, as pull reads without Spark) and in ranges by Spark tasks
(stages.pull_ranges), on an embedded Spark (`local[*]`) started and warmed up before the
table, as a long-running Spark Connect server is.

The parts are the window's first 1%, 3%, 10%, 30% and all of it, cut at transaction
starts.  Each part is read both ways into an event store of its own, and the two stores are
compared event by event (commit ts included).  The smallest part where the ranges win is
the measured threshold of `[cdcflow] pull-parallel-min-bytes` on this machine.

The whole window is also read sequentially by the Python binlog reader (the reference,
CDCFLOW_BINLOG_READER=python): pull's events/s with each reader, in the same run, and the two
stores compared.
"""

from __future__ import annotations

import os
import shutil
import statistics
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

FRACTIONS = (0.01, 0.03, 0.1, 0.3, 1.0)
REPEATS_BELOW = 0.3  # parts smaller than this fraction are read three times, the median kept


@dataclass
class PullCycle:
    """What pull's two paths read of a stages.cycle.Cycle: where from, how, where to."""

    source: object
    config: object
    folder: object
    changefeed_id: str = "bench-pull"

    @property
    def engine(self):
        """The config's policy, but nothing kept in memory: the sequential read writes the window
        to the store, as the ranges do, so that the two are compared file by file."""
        from dataclasses import replace

        from cdcflow.stages.engine import SPARK, Engine

        return replace(Engine.of(self.config), mode=SPARK)


def read_whole(source, config, store: Path, name: str, window) -> tuple[int, float, str]:
    """The window read sequentially by pull's own path (stages.pull.read_sequentially, in this
    process) into the event store `store`, run `name`: (events, seconds, the raw folder's path)."""
    from cdcflow.stages.pull import read_sequentially
    from cdcflow.store.events import RunFolder

    cycle = PullCycle(source, config, RunFolder(str(store), "seq", name))
    t = time.perf_counter()
    pulled, _reader = read_sequentially(cycle, window, 3_000_001)
    return pulled.events, time.perf_counter() - t, cycle.folder.path("raw")


def _heads(conn, start, stop):
    """The end position of each part of the window (FRACTIONS), at transaction starts."""
    from cdcflow.source.binlog_ranges import cuts

    marks = cuts(conn, start, stop, 100)  # 1%, 2%, ... of the bytes
    out = []
    for f in FRACTIONS:
        i = round(f * 100) - 1
        out.append(stop if f >= 1 or i >= len(marks) else marks[i])
    return out


def _same_events(a: str, b: str) -> bool:
    import pyarrow.parquet as pq

    def events(path):
        return pq.read_table(path).sort_by([("commit_ts", "ascending"), ("seq", "ascending")])

    return events(a).equals(events(b))


@contextmanager
def _python_reader():
    from cdcflow.source.binlog_events import READER_ENV

    before = os.environ.get(READER_ENV)
    os.environ[READER_ENV] = "python"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(READER_ENV)
        else:
            os.environ[READER_ENV] = before


def _readers(source, config, store: Path, window, compiled: dict) -> dict:
    """The whole window read sequentially by the Python reader, against the compiled reader's
    read of it (`compiled`: the table's row of the whole window)."""
    from cdcflow.source.binlog_events import compiled_module
    from cdcflow_devtools.bench_common import say

    with _python_reader():
        _n, python_seconds, folder = read_whole(source, config, store, "python", window)
    same = _same_events(compiled["folder"], folder)
    n, built = compiled["events"], compiled_module() is not None
    out = {"events": n, "compiled": built, "compiled_seconds": compiled["sequential_seconds"],
           "python_seconds": python_seconds, "identical": same}
    out["speedup"] = python_seconds / out["compiled_seconds"]
    say(f"pull table: the whole window read sequentially by the {'compiled' if built else 'Python (not built!)'} "
        f"reader at {n / out['compiled_seconds']:,.0f} events/s, by the Python reader at {n / python_seconds:,.0f} "
        f"events/s ({out['speedup']:.2f}x){'' if same else ' OUTPUT DIFFERS'}")
    return out


def pull_table(up_uri: str, start: tuple[str, int], stop: tuple[str, int], workdir: Path,
               parallelism: int) -> dict:
    from cdcflow.config.keys import ChangefeedConfig
    from cdcflow.core.uri import parse_source_uri
    from cdcflow_devtools.bench_common import say
    from cdcflow.source.binlog import Position
    from cdcflow.source.binlog_ranges import window_bytes
    from cdcflow.spark.session import get_session
    from cdcflow.spark.warm_up import warm_up
    from cdcflow.stages import contracts, pull_ranges
    from cdcflow.store.events import RunFolder

    source = parse_source_uri(up_uri)
    first, last = Position(*start), Position(*stop)
    store = workdir / "pull-table"
    shutil.rmtree(store, ignore_errors=True)
    config = ChangefeedConfig(pull_parallelism=parallelism, pull_parallel_min_bytes=0, event_store=str(store))
    conn = source.connect()
    try:
        heads = _heads(conn, first, last)
        sizes = [window_bytes(conn, first, h) for h in heads]
    finally:
        conn.close()

    t0 = time.perf_counter()
    spark = get_session("cdcflow-bench-pull", "local[*]")
    started = time.perf_counter() - t0
    warmed = warm_up(spark, str(store / "warm-up"))
    say(f"pull table: Spark local[*] started in {started:.1f}s and warmed up in {warmed:.1f}s (not counted)")
    rows = []
    try:
        for frac, head, size in zip(FRACTIONS, heads, sizes):
            window = contracts.Window(start_ts=0, start_pos=first, head=head, head_tso=0)
            seq_times, par_times, detail, n = [], [], {}, 0
            for rep in range(3 if frac < REPEATS_BELOW else 1):
                n, seconds, seq_folder = read_whole(source, config, store, f"{frac}-{rep}", window)
                seq_times.append(seconds)
                par = PullCycle(source, config, RunFolder(str(store), "par", f"{frac}-{rep}"))
                t = time.perf_counter()
                starts = pull_ranges.plan(par, window)
                planned = time.perf_counter() - t
                _pulled, detail = pull_ranges.read(spark, par, window, 3_000_001, starts)
                par_times.append(time.perf_counter() - t)
                detail = {"plan_seconds": round(planned, 3), **detail}
                same = _same_events(seq_folder, par.folder.path("raw"))
            entry = {"fraction": frac, "bytes": size, "events": n, "sequential_seconds": statistics.median(seq_times),
                     "parallel_seconds": statistics.median(par_times), "ranges": len(detail["range_events"]),
                     "identical": same, **detail}
            if frac >= 1:
                entry["readers"] = readers = _readers(source, config, store, window, {**entry, "folder": seq_folder})
                entry["identical"] = same and readers["identical"]
            entry["ratio"] = entry["parallel_seconds"] / entry["sequential_seconds"]
            say(f"pull table: {frac:.0%} of the window ({n:,} events, {size / 2**20:.1f} MiB): sequential "
                f"{entry['sequential_seconds']:.2f}s, {entry['ranges']} ranges {entry['parallel_seconds']:.2f}s "
                f"({entry['ratio']:.2f}x){'' if same else ' OUTPUT DIFFERS'}")
            rows.append(entry)
    finally:
        spark.stop()
        shutil.rmtree(store, ignore_errors=True)
    wins = [e["bytes"] for e in rows if e["ratio"] < 1]
    return {"parallelism": parallelism, "spark_start_seconds": started, "rows": rows,
            "threshold_bytes": min(wins) if wins else None}


def report(table: dict) -> None:
    if not table:
        return
    print()
    print(f"pull alone, sequential vs in ranges on a warm Spark local[*] ({table['parallelism']} ranges asked):")
    print(f"{'part':>6}{'events':>10}{'MiB':>8}{'sequential s':>14}{'ranges s':>10}{'ratio':>7}"
          f"{'plan / decode / stamp s':>26}   events and seconds per range")
    for e in table["rows"]:
        per = ", ".join(f"{n:,} in {s:.1f}s" for n, s in zip(e["range_events"], e["range_seconds"]))
        print(f"{e['fraction']:>6.0%}{e['events']:>10,}{e['bytes'] / 2**20:>8.1f}{e['sequential_seconds']:>14.2f}"
              f"{e['parallel_seconds']:>10.2f}{e['ratio']:>7.2f}"
              f"{e['plan_seconds']:>10.2f} / {e['decode_seconds']:.2f} / {e['stamp_seconds']:.2f}   {per}"
              + ("" if e["identical"] else "  OUTPUT DIFFERS"))
    t = table["threshold_bytes"]
    print("smallest part where the ranges win: " + (f"{t / 2**20:.1f} MiB" if t else "none"))
    r = next((e["readers"] for e in table["rows"] if "readers" in e), None)
    if r:
        print(f"pull's reader, the whole window sequentially ({r['events']:,} events): "
              f"{'compiled' if r['compiled'] else 'compiled reader NOT BUILT'} {r['compiled_seconds']:.2f}s = "
              f"{r['events'] / r['compiled_seconds']:,.0f} events/s, Python {r['python_seconds']:.2f}s = "
              f"{r['events'] / r['python_seconds']:,.0f} events/s: {r['speedup']:.2f}x"
              + ("" if r["identical"] else "  OUTPUT DIFFERS"))
