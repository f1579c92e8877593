"""The lag part's sysbench load (bench_lag --sysbench): Debian's sysbench `oltp_read_write`
against the upstream, with THREADS client threads on the machine's own cores, while the lag is
sampled, then how long the downstream takes to catch up once it stops.

Its tables (`sbtest1` .. `sbtest<TABLES>` in the bench schema, which the lag part's
changefeeds replicate) are made by `sysbench prepare` on the upstream before any changefeed
exists and copied to each downstream row by row, so every changefeed starts from the same data
and the run's updates, deletes and inserts replicate onto rows the downstream has.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from cdcflow_devtools.mariadb import HOST, ROOT_PASSWORD, ROOT_USER

TEST = "oltp_read_write"
THREADS = 4
TABLES = 4
TABLE_SIZE = 10_000
COPY_BATCH = 2_000


def available() -> bool:
    return shutil.which("sysbench") is not None


def args(up, schema: str, threads: int, *command: str) -> list[str]:
    return ["sysbench", TEST, "--db-driver=mysql", f"--mysql-host={HOST}", f"--mysql-port={up.port}",
            f"--mysql-user={ROOT_USER}", f"--mysql-password={ROOT_PASSWORD}", f"--mysql-db={schema}",
            f"--tables={TABLES}", f"--table-size={TABLE_SIZE}", f"--threads={threads}", *command]


def prepare(up, downs, schema: str, log_path: Path) -> None:
    """sysbench's tables on the upstream, and the same rows on every downstream."""
    if not available():
        raise RuntimeError("sysbench is not installed: apt-get install -y sysbench (make setup installs it)")
    with open(log_path, "ab") as log:
        subprocess.run(args(up, schema, THREADS, "prepare"), check=True, stdout=log, stderr=subprocess.STDOUT)
    for down in downs:
        for i in range(1, TABLES + 1):
            copy_table(up, down, schema, f"sbtest{i}")


def copy_table(up, down, schema: str, table: str) -> None:
    src, dst = up.connect(schema), down.connect(schema)
    try:
        with src.cursor() as s, dst.cursor() as d:
            s.execute(f"SHOW CREATE TABLE {table}")
            d.execute(f"DROP TABLE IF EXISTS {table}")
            d.execute(s.fetchone()[1])
            s.execute(f"SELECT * FROM {table}")
            while rows := s.fetchmany(COPY_BATCH):
                marks = ",".join(["%s"] * len(rows[0]))
                d.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
    finally:
        src.close()
        dst.close()


class Run:
    """One `sysbench oltp_read_write run` of `seconds`, in the background."""

    def __init__(self, up, schema: str, threads: int, seconds: float, log_path: Path):
        self.log_path = log_path
        self._out = open(log_path, "w")
        self._proc = subprocess.Popen(args(up, schema, threads, f"--time={max(1, round(seconds))}",
                                           "--report-interval=10", "run"),
                                      stdout=self._out, stderr=subprocess.STDOUT)

    def wait(self) -> dict:
        """Until it ends: its transactions and queries a second, from its report."""
        rc = self._proc.wait()
        self._out.close()
        text = self.log_path.read_text()
        if rc != 0:
            raise RuntimeError(f"sysbench ended with exit code {rc}: see {self.log_path}")
        return figures(text)

    def stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.terminate()
            self._proc.wait(30)
        self._out.close()


def figures(report: str) -> dict:
    """Transactions and queries per second and the errors from sysbench's final report."""
    out = {}
    for name in ("transactions", "queries", "ignored errors"):
        m = re.search(rf"^\s*{name}:\s+(\d+)\s+\(([\d.]+) per sec\.\)", report, re.M)
        if m:
            out[name.replace(" ", "_")] = int(m.group(1))
            out[name.replace(" ", "_") + "_per_second"] = float(m.group(2))
    return out
