"""The downstream's side of a snapshot's writes, measured alone: the same rows of the bench's
four tables (bench_workload) written into a fresh downstream as the copy writes them
(multi-row REPLACE statements of `--batch` rows, the values as the upstream prints them:
snapshot.copy.row_text_sql) and as `LOAD DATA LOCAL INFILE … REPLACE` of `--chunk`-row files
(the upstream's own SELECT … INTO OUTFILE text), each into tables with all their indexes and
into tables with the primary key alone plus the ALTER TABLE that adds the others after (the
statements also with unique_checks = 0 there).
The payloads are built before the clock starts; one connection, table after table.

    python -m cdcflow_devtools.bench_load_data --rows 500000
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from cdcflow_devtools import bench_workload
from cdcflow_devtools.mariadb import MariaDB

SCHEMA = "loadbench"


def _definitions(deferred: bool) -> dict[str, tuple[str, str | None]]:
    """table -> (CREATE TABLE, the ALTER adding its secondary indexes after, when `deferred`)."""
    out = {}
    for table, create in zip(bench_workload.TABLES, bench_workload.table_definitions(SCHEMA)):
        head, _, _ = create.partition(", UNIQUE KEY") if "UNIQUE KEY" in create else create.partition(", KEY")
        index = create[len(head) + 2:-1] if head != create else ""
        out[table] = (head + ")" if deferred and index else create,
                      f"ALTER TABLE {SCHEMA}.{table} ADD {index}" if deferred and index else None)
    return out


def _statements(up, table: str, batch: int) -> tuple[str, list[bytes]]:
    from cdcflow.snapshot.copy import _columns, row_text_sql

    columns = _columns(up, SCHEMA, table)
    names = ", ".join(f"`{c.name}`" for c in columns)
    with up.cursor() as cur:
        cur.execute(f"SELECT {row_text_sql(columns)} FROM {SCHEMA}.{table} ORDER BY 1")
        texts = [r[0] for r in cur.fetchall()]
    head = f"REPLACE INTO {SCHEMA}.{table} ({names}) VALUES ".encode()
    return names, [head + b",".join(texts[i:i + batch]) for i in range(0, len(texts), batch)]


def _files(up, table: str, chunk: int, folder: Path) -> list[Path]:
    (n,), = up.query(f"SELECT COUNT(*) FROM {SCHEMA}.{table}")
    files = []
    for i, lo in enumerate(range(0, n, chunk)):
        path = folder / f"{table}.{i}.tsv"
        up.execute(f"SELECT * FROM {SCHEMA}.{table} ORDER BY 1 LIMIT {chunk} OFFSET {lo} INTO OUTFILE '{path}'")
        files.append(path)
    return files


def _run(down, deferred: bool, write, unique_checks: int = 1) -> tuple[float, float]:
    """(seconds writing, seconds building the deferred indexes)."""
    down.execute(f"DROP DATABASE IF EXISTS {SCHEMA}", f"CREATE DATABASE {SCHEMA}")
    defs = _definitions(deferred)
    down.execute(*(create for create, _ in defs.values()))
    conn = down.connect(SCHEMA, local_infile=True)
    try:
        with conn.cursor() as cur:
            cur.execute(f"SET SESSION unique_checks = {unique_checks}, foreign_key_checks = 0")
            t0 = time.perf_counter()
            for table in defs:
                write(cur, table)
            t1 = time.perf_counter()
            for _, alter in defs.values():
                if alter:
                    cur.execute(alter)
            t2 = time.perf_counter()
    finally:
        conn.close()
    return t1 - t0, t2 - t1


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=500_000)
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--chunk", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=2)
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="loadbench-") as base:
        folder = Path(base) / "files"
        folder.mkdir()
        os.chmod(folder, 0o777)
        with MariaDB(base, name="up", extra_args=[f"--secure-file-priv={folder}"]) as up, \
                MariaDB(base, name="down") as down:
            rows = bench_workload.fill(up, SCHEMA, args.rows)
            uc = up.connect(SCHEMA)
            try:
                statements = {t: _statements(uc, t, args.batch)[1] for t in bench_workload.TABLES}
            finally:
                uc.close()
            files = {t: _files(up, t, args.chunk, folder) for t in bench_workload.TABLES}

            def replace(cur, table):
                for s in statements[table]:
                    cur.execute(s)

            def load(cur, table):
                for f in files[table]:
                    cur.execute(f"LOAD DATA LOCAL INFILE '{f}' REPLACE INTO TABLE {SCHEMA}.{table}")

            print(f"{rows:,} rows, load average {os.getloadavg()[0]:.2f} at the start")
            # unique_checks = 0 with the indexes deferred: the primary key is the only unique index left
            for name, write, checks in (("REPLACE statements", replace, 1), ("LOAD DATA LOCAL INFILE", load, 1),
                                        ("REPLACE, unique_checks=0", replace, 0)):
                for deferred in (False, True) if checks else (True,):
                    for i in range(args.repeat):
                        w, b = _run(down, deferred, write, checks)
                        tables = "primary key, then ALTER" if deferred else "all indexes"
                        print(f"{name:24} {tables:24} run {i + 1}: write {w:6.2f} s, index build {b:5.2f} s, "
                              f"total {w + b:6.2f} s ({rows / (w + b):,.0f} rows/s)", flush=True)
            print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
