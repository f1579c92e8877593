"""pull's sequential read timed alone, with no server: the bench's workload written once into a
binlog file (`prepare`), then read by pull's own path over it as often as asked (`measure`):
the reader, the key stamper (its tracker follows the file's CREATE TABLEs) and the event writer,
as stages.pull.read_sequentially runs them.  So a change to pull is measured before and after on
the same window, and profiled (`--profile`), without the noise of a server being read.

    python -m cdcflow_devtools.pull_loop prepare .local/pull-loop [--rows 300000] [--shape oltp]
    python -m cdcflow_devtools.pull_loop measure .local/pull-loop [--repeat 3] [--profile out.prof]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from cdcflow.ddl.tracker import SchemaTracker
from cdcflow.source import binlog_file
from cdcflow.stages import pull_keys
from cdcflow.store.events import BATCH_ROWS, RunFolder
from cdcflow_devtools import bench_workload
from cdcflow_devtools.mariadb import MariaDB

WINDOW = "window.000001"  # the prepared binlog, beside its description (window.json)


def prepare(folder: Path, rows: int, shape: str) -> dict:
    """A fresh upstream under `folder`, the bench's schema and workload on it, its binlog kept."""
    server = MariaDB(folder, name="upstream", binlog=True)
    server.start()
    try:
        bench_workload.create_snapshot(server)
        plan = bench_workload.plan(rows, shape=shape)
        t = time.perf_counter()
        bench_workload.run(server, plan)
        seconds = time.perf_counter() - t
        server.execute("FLUSH BINARY LOGS")
        file, _pos = server.binlog_head()
    finally:
        server.stop()
    logs = sorted(p for p in (server.datadir).glob("binlog.0*") if p.name < file)
    if len(logs) != 1:
        raise RuntimeError(f"the workload spans {len(logs)} binlog files; one is read here")
    shutil.copyfile(logs[0], folder / WINDOW)
    shutil.rmtree(server.dir)
    about = {"rows": rows, "shape": shape, "transactions": plan.transactions, "workload_seconds": round(seconds, 1)}
    (folder / "window.json").write_text(json.dumps(about, indent=1) + "\n")
    return about


def read_once(path: Path, store: Path) -> tuple[int, float, float, float]:
    """pull's sequential read of the file into `store`: (events, seconds, CPU seconds of this
    process: on a shared machine the steadier figure, and of its main thread: what pull takes
    where the event writer's thread has a core of its own)."""
    folder = RunFolder(str(store), "pull-loop", "1")
    reader = binlog_file.FileBinlogReader(path)
    writer = folder.writer("raw", BATCH_ROWS)  # pull-batch-rows' default
    stamper = pull_keys.KeyStamper(SchemaTracker(), None, None)
    t, cpu, main = time.perf_counter(), time.process_time(), time.thread_time()
    try:
        reader.read(stamper.wrap(writer.add, writer), writer.columns, stamper)
    finally:
        spans = stamper.close()
    writer.close()
    pull_keys.mark_tangled(spans, stamper.pairs)
    return writer.count, time.perf_counter() - t, time.process_time() - cpu, time.thread_time() - main


def _file_read_once() -> None:
    """The file's events and the dump's packets made once, before the runs: a server sends them,
    so their making is no part of pull's time."""

    events, packets = binlog_file.events, binlog_file._packets
    made: dict = {}

    def events_once(path):
        if ("events", str(path)) not in made:
            made["events", str(path)] = events(path)
        return made["events", str(path)]

    def packets_once(name, file_events, checksum):
        if ("packets", name) not in made:
            made["packets", name] = packets(name, file_events, checksum)
        return made["packets", name]

    binlog_file.events, binlog_file._packets = events_once, packets_once


def measure(folder: Path, repeat: int, profile: str | None) -> dict:
    path = folder / WINDOW
    _file_read_once()
    read_once(path, folder / "warm-up")  # the file read, the modules imported
    shutil.rmtree(folder / "warm-up")
    about = json.loads((folder / "window.json").read_text())
    times, cpus, mains, events = [], [], [], 0
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        for i in range(repeat):
            store = Path(tmp) / str(i)
            if profile and i == repeat - 1:
                prof = cProfile.Profile()
                prof.enable()
                events, seconds, cpu, main = read_once(path, store)
                prof.disable()
                prof.dump_stats(profile)
            else:
                events, seconds, cpu, main = read_once(path, store)
            times.append(seconds)
            cpus.append(cpu)
            mains.append(main)
            shutil.rmtree(store)
    best, median = min(times), statistics.median(times)
    out = {**about, "events": events, "seconds": [round(t, 3) for t in times], "events_per_second_median":
           round(events / median), "events_per_second_best": round(events / best),
           "cpu_seconds": [round(c, 3) for c in cpus], "events_per_cpu_second_best": round(events / min(cpus)),
           "main_thread_cpu_seconds": [round(c, 3) for c in mains],
           "events_per_main_thread_cpu_second_best": round(events / min(mains))}
    print(json.dumps(out))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m cdcflow_devtools.pull_loop")
    sub = p.add_subparsers(dest="what", required=True)
    prep = sub.add_parser("prepare")
    prep.add_argument("folder", type=Path)
    prep.add_argument("--rows", type=int, default=300_000)
    prep.add_argument("--shape", default="oltp", choices=["oltp", "bulk"])
    meas = sub.add_parser("measure")
    meas.add_argument("folder", type=Path)
    meas.add_argument("--repeat", type=int, default=3)
    meas.add_argument("--profile")
    args = p.parse_args(argv)
    if args.what == "prepare":
        args.folder.mkdir(parents=True, exist_ok=True)
        print(json.dumps(prepare(args.folder, args.rows, args.shape)))
    else:
        measure(args.folder, args.repeat, args.profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
