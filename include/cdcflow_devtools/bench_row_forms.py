"""What each statement form costs the downstream to write the same final row images.

`python -m cdcflow_devtools.bench_row_forms [--rows 233785] [--connections 4] [--batch 256]`:
the bench workload's four tables hold `rows` rows (ids 1..rows/4 each); every row is then
written again with a changed non-key column, as apply writes the final images of an update
window, in multi-row statements of `batch` rows over `connections` connections (rows spread
by key, as apply's partitions are). Each form starts from the same table contents; the
statements are built before the clock starts, so only the downstream's work is timed, and
each form's tables are checked to hold the final images afterwards.

  insert (empty)   INSERT into the emptied tables (the floor: no old row to find)
  replace          REPLACE over the existing rows (each a delete and an insert)
  delete+replace   DELETE … WHERE key IN (…), then REPLACE (apply's safe mode)
  delete+insert    DELETE … WHERE key IN (…), then INSERT
  odku             INSERT … ON DUPLICATE KEY UPDATE c = VALUES(c) for the non-key columns
  update case      UPDATE … SET c = CASE WHEN key = … THEN … END … WHERE key IN (…) (TiCDC's batch UPDATE)
  update each      one UPDATE … WHERE key = … per row, `batch` of them per round trip
"""

from __future__ import annotations

import argparse
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from pathlib import Path

from cdcflow.core.row_codec import quote_ident, sql_literal
from cdcflow_devtools import bench_workload

SCHEMA = "forms"
KEYS = {"accounts": ("id",), "orders": ("id",), "events": ("id", "shard"), "items": ("id",)}
# the non-key column each table's update changes, and how
CHANGED = {"accounts": ("balance", lambda v: v + Decimal("1.5")), "orders": ("amount", lambda v: (v or 0) + 1),
           "events": ("kind", lambda v: v + 1), "items": ("qty", lambda v: v + 1)}
FORMS = ("insert (empty)", "replace", "delete+replace", "delete+insert", "odku", "update case", "update each")


def table_rows(server) -> dict[str, tuple[list[str], list[tuple]]]:
    """Per table: its columns and its rows in key order."""
    out = {}
    conn = server.connect(SCHEMA)
    try:
        with conn.cursor() as cur:
            for table in bench_workload.TABLES:
                cur.execute(f"SELECT * FROM {SCHEMA}.{table} ORDER BY {', '.join(KEYS[table])}")
                out[table] = ([d[0] for d in cur.description], list(cur.fetchall()))
    finally:
        conn.close()
    return out


def final_images(server) -> dict[str, tuple[list[str], list[tuple]]]:
    """Per table: its columns and every row with CHANGED applied."""
    out = {}
    for table, (cols, rows) in table_rows(server).items():
        i, change = cols.index(CHANGED[table][0]), CHANGED[table][1]
        out[table] = (cols, [r[:i] + (change(r[i]),) + r[i + 1:] for r in rows])
    return out


def statements(form: str, table: str, cols: list[str], rows: list[tuple]) -> list[str]:
    """One batch's statements in `form`."""
    target = f"{SCHEMA}.{quote_ident(table)}"
    key = KEYS[table]
    ki = [cols.index(k) for k in key]
    lits = [[sql_literal(v) for v in r] for r in rows]
    keylits = ["(" + ", ".join(r[i] for i in ki) + ")" for r in lits]
    names = ", ".join(quote_ident(c) for c in cols)
    values = ",".join("(" + ", ".join(r) + ")" for r in lits)
    delete = f"DELETE FROM {target} WHERE ({', '.join(map(quote_ident, key))}) IN ({', '.join(keylits)})"
    rest = [c for c in cols if c not in key]
    if form in ("insert (empty)", "delete+insert"):
        out = [f"INSERT INTO {target} ({names}) VALUES {values}"]
    elif form in ("replace", "delete+replace"):
        out = [f"REPLACE INTO {target} ({names}) VALUES {values}"]
    elif form == "odku":
        out = [f"INSERT INTO {target} ({names}) VALUES {values} ON DUPLICATE KEY UPDATE "
               + ", ".join(f"{quote_ident(c)} = VALUES({quote_ident(c)})" for c in rest)]
    elif form == "update case":
        kcols = "(" + ", ".join(map(quote_ident, key)) + ")"
        sets = ", ".join(f"{quote_ident(c)} = CASE "
                         + " ".join(f"WHEN {kcols} = {k} THEN {r[cols.index(c)]}" for k, r in zip(keylits, lits))
                         + " END" for c in rest)
        out = [f"UPDATE {target} SET {sets} WHERE {kcols} IN ({', '.join(keylits)})"]
    elif form == "update each":
        out = [";".join(f"UPDATE {target} SET " + ", ".join(f"{quote_ident(c)} = {r[cols.index(c)]}" for c in rest)
                        + " WHERE " + " AND ".join(f"{quote_ident(k)} = {r[i]}" for k, i in zip(key, ki))
                        for r in lits)]
    else:
        raise ValueError(form)
    return [delete, *out] if form.startswith("delete") else out


def plan(images: dict, form: str, connections: int, batch: int) -> list[list[str]]:
    """Per connection, its statements: rows spread by key, batches of `batch` rows in key order."""
    work: list[list[str]] = [[] for _ in range(connections)]
    for table, (cols, rows) in images.items():
        for c in range(connections):
            mine = [r for r in rows if hash(r[0]) % connections == c]
            for lo in range(0, len(mine), batch):
                work[c] += statements(form, table, cols, mine[lo:lo + batch])
    return work


def timed(server, work: list[list[str]]) -> tuple[float, int]:
    import pymysql
    from pymysql.constants import CLIENT

    from cdcflow.sink.connection import DML_SESSION

    conns = [server.connect(SCHEMA, client_flag=CLIENT.MULTI_STATEMENTS) for _ in work]
    for c in conns:
        with c.cursor() as cur:
            for s in DML_SESSION:
                cur.execute(s)

    retries = []

    def run(conn, stmts):
        with conn.cursor() as cur:
            for s in stmts:
                for attempt in range(5):  # as RowWriter._run: deadlocks between connections are retried
                    try:
                        cur.execute(s)
                        while cur.nextset():
                            pass
                        break
                    except pymysql.err.OperationalError as e:
                        if e.args[0] not in (1205, 1213) or attempt == 4:
                            raise
                        retries.append(e.args[0])

    try:
        t0 = time.perf_counter()
        with ThreadPoolExecutor(len(work)) as pool:
            list(pool.map(run, conns, work))
        return time.perf_counter() - t0, len(retries)
    finally:
        for c in conns:
            c.close()


def main(argv: list[str] | None = None) -> int:
    from cdcflow_devtools.mariadb import MariaDB

    p = argparse.ArgumentParser(prog="python -m cdcflow_devtools.bench_row_forms", description=__doc__.split("\n")[0])
    p.add_argument("--rows", type=int, default=233_785)
    p.add_argument("--connections", type=int, default=4)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--forms", default=",".join(FORMS))
    p.add_argument("--repeat", type=int, default=1)
    a = p.parse_args(argv)
    forms = [f.strip() for f in a.forms.split(",")]
    with tempfile.TemporaryDirectory(prefix="row-forms-") as base, MariaDB(Path(base), name="forms") as server:
        rows = bench_workload.fill(server, SCHEMA, a.rows)
        images = final_images(server)
        print(f"{rows:,} rows in 4 tables, {a.connections} connections, {a.batch} rows per statement")
        print(f"{'form':18}{'seconds':>10}{'rows/s':>12}{'statements':>12}{'retried':>9}")
        for _ in range(a.repeat):
            for form in forms:
                bench_workload.fill(server, SCHEMA, a.rows)
                if form == "insert (empty)":
                    server.execute(*(f"TRUNCATE {SCHEMA}.{t}" for t in bench_workload.TABLES))
                work = plan(images, form, a.connections, a.batch)
                secs, retried = timed(server, work)
                if table_rows(server) != images:  # every form must end with the final images
                    raise RuntimeError(f"form {form!r} left the tables different from the final images")
                print(f"{form:18}{secs:>10.2f}{rows / secs:>12,.0f}{sum(map(len, work)):>12,}{retried:>9}",
                      flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
