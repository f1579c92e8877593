"""Peak memory of one cycle that replicates a single large upstream transaction.

    python -m cdcflow_devtools.large_txn [--rows 1000000] [--update] [--config TOML] [--out FILE]

Starts a MariaDB pair in a temporary folder, commits one transaction of `--rows` row
inserts (plus, with --update, an UPDATE of every row in the same transaction), runs one
cycle in this process with Spark local, checks the downstream equals the upstream, and
prints the peak resident memory (VmHWM) of every process that took part: this Python
driver (which also runs the pull stage), the Spark JVM (driver and local executor) and
the Python workers Spark starts, and the largest sum of all of them at one moment.  The
servers themselves are not counted.  Too slow for the test suite: `make bench
PARTS=large_txn` runs it per size (bench_large_txn), each in a process of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
from pathlib import Path


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(d.name))
    return kids


def _status_kb(pid: int, field: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _kind(pid: int) -> str | None:
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None
    if pid == os.getpid():
        return "python driver (pull stage, Spark driver side)"
    if "mariadbd" in cmd or "mysqld" in cmd:
        return None
    if "java" in cmd.split(" ", 1)[0]:
        return "Spark JVM (driver + local executor)"
    if "python" in cmd:
        return "Spark Python workers"
    return None


class PeakSampler(threading.Thread):
    """Polls this process's tree and keeps, per kind, the largest VmHWM any process had, the
    processes of each kind seen, and the largest sum of resident memory (VmRSS) of all of
    them at one sample (what the machine had to give at once)."""

    def __init__(self, every: float = 0.3):
        super().__init__(daemon=True)
        self.every = every
        self.peak_kb: dict[str, int] = {}
        self.pids: dict[str, set[int]] = {}
        self.total_kb = 0
        self.stop_event = threading.Event()

    def run(self) -> None:
        while not self.stop_event.is_set():
            self.sample()
            time.sleep(self.every)

    def sample(self) -> None:
        kids, todo, seen, total = _children(), [os.getpid()], set(), 0
        while todo:
            pid = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            todo.extend(kids.get(pid, []))
            kind = _kind(pid)
            if not kind:
                continue
            hwm, rss = _status_kb(pid, "VmHWM"), _status_kb(pid, "VmRSS")
            if hwm:
                self.peak_kb[kind] = max(self.peak_kb.get(kind, 0), hwm)
                self.pids.setdefault(kind, set()).add(pid)
            total += rss or 0
        self.total_kb = max(self.total_kb, total)

    def stop(self) -> dict[str, int]:
        self.sample()
        self.stop_event.set()
        self.join()
        return self.peak_kb


def measure(rows: int, update: bool = False, config: str = "") -> dict:
    """One cycle replicating one transaction of `rows` inserts (and with `update` an UPDATE of
    every row in it) on a fresh MariaDB pair: the report main prints.  `config`: more lines of
    the changefeed's TOML (e.g. a [sink] or [cdcflow] section)."""
    with tempfile.TemporaryDirectory(prefix="cdcflow-large-txn-") as tmp:
        os.environ["CDCFLOW_HOME"] = str(Path(tmp) / "home")
        Path(os.environ["CDCFLOW_HOME"]).mkdir()
        from cdcflow import cli
        from cdcflow.config.parsing import parse_config
        from cdcflow_devtools.compare import compare
        from cdcflow_devtools.mariadb import start_pair
        from cdcflow.launch.sessions import session_for
        from cdcflow.launch.in_process import run_cycle

        up, down = start_pair(Path(tmp) / "servers")
        sampler = PeakSampler()
        try:
            ddl = "CREATE TABLE big.t (id INT PRIMARY KEY, k INT NOT NULL, pad CHAR(32), UNIQUE KEY uk (k))"
            for server in (up, down):
                server.execute("CREATE DATABASE big", ddl)
            cfg = Path(tmp) / "cf.toml"
            cfg.write_text("[filter]\nrules = ['big.*']\n" + config)
            assert cli.main(["changefeed", "create", "-c", "large-txn", "--source-uri", up.uri,
                             "--sink-uri", down.uri, "--config", str(cfg)]) == 0
            spark = session_for(parse_config(cfg.read_text()), "large-txn")
            # a changefeed's first cycle always writes in safe mode; an idle one first makes the
            # measured cycle take the default path (safe-mode = false: two passes)
            run_cycle("large-txn", spark=spark)
            with up.connect(database="big") as c, c.cursor() as cur:
                cur.execute("BEGIN")
                cur.execute(f"INSERT INTO big.t SELECT seq, seq, MD5(seq) FROM seq_1_to_{rows}")
                if update:
                    cur.execute("UPDATE big.t SET pad = CONCAT('u', SUBSTR(pad, 2))")
                cur.execute("COMMIT")
            sampler.start()
            t0 = time.time()
            result = run_cycle("large-txn", spark=spark)
            seconds = time.time() - t0
            peaks = sampler.stop()
            with up.connect() as u, down.connect() as d:
                diffs = compare(u, d, schemas=["big"])
            spark.stop()
        finally:
            if sampler.is_alive():
                sampler.stop()
            up.stop()
            down.stop()
    return {
        "row_changes": result["pull"]["pulled"], "transactions": result["pull"]["transactions"],
        "cycle_seconds": round(seconds, 1), "consistent": not diffs,
        "peak_rss_mb": {k: round(v / 1024, 1) for k, v in sorted(peaks.items())},
        "processes": {k: len(v) for k, v in sorted(sampler.pids.items())},
        "total_peak_rss_mb": round(sampler.total_kb / 1024, 1),
        "stages": {k: v for k, v in result.items() if k in ("pull", "filter", "barrier", "apply")},
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--update", action="store_true", help="also update every row in the same transaction")
    p.add_argument("--config", default="", help="more lines of the changefeed's TOML (e.g. '[sink]\\n...')")
    p.add_argument("--out", help="also write the report (JSON) to this file")
    a = p.parse_args(argv)
    report = measure(a.rows, a.update, a.config.replace("\\n", "\n"))
    print(json.dumps(report, indent=1, default=str))
    if a.out:
        Path(a.out).write_text(json.dumps(report, indent=1, default=str))
    return 0 if report["consistent"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
