"""`make demo`: a local MariaDB pair, a changefeed, a workload, one cycle through the Airflow DAG.

Everything lives under .local/ in the project (servers, CDCFLOW_HOME, AIRFLOW_HOME), so
running it again starts from the same servers with a fresh demo changefeed.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import time
from pathlib import Path

from cdcflow.devtools.checkout import LOCAL

CID = "demo"
SCHEMAS = ("shop", "crm")
CONFIG = """\
# The demo changefeed: everything in shop and crm except crm's audit tables.
[filter]
rules = ['shop.*', 'crm.*', '!crm.audit*']

[sink]
worker-count = 4
max-txn-row = 256

[cdcflow]
schedule = "*/5 * * * *"
"""

WORKLOAD = [
    "CREATE DATABASE shop",
    "CREATE DATABASE crm",
    "CREATE TABLE shop.customers (id INT PRIMARY KEY, email VARCHAR(80) NOT NULL, name VARCHAR(80),"
    " UNIQUE KEY uk_email (email))",
    "CREATE TABLE shop.orders (id BIGINT PRIMARY KEY, customer_id INT NOT NULL, amount DECIMAL(12,2),"
    " note TEXT, created DATETIME(6))",
    "CREATE TABLE crm.contacts (id INT PRIMARY KEY, who VARCHAR(40), phone VARCHAR(20))",
    "CREATE TABLE crm.audit_log (id INT PRIMARY KEY, what VARCHAR(80))",
    "INSERT INTO shop.customers SELECT seq, CONCAT('c', seq, '@example.com'), CONCAT('Customer ', seq)"
    " FROM seq_1_to_5000",
    "INSERT INTO shop.orders SELECT seq, 1 + seq % 5000, seq / 7, IF(seq % 10 = 0, NULL, CONCAT('it''s #', seq)),"
    " '2026-11-22 10:00:00.123456' FROM seq_1_to_20000",
    "INSERT INTO crm.contacts SELECT seq, CONCAT('who ', seq), NULL FROM seq_1_to_2000",
    "INSERT INTO crm.audit_log SELECT seq, 'filtered out' FROM seq_1_to_1000",
    "UPDATE shop.orders SET amount = amount * 2 WHERE id % 3 = 0",
    "UPDATE shop.customers SET email = CONCAT('new-', email) WHERE id % 4 = 0",  # unique key changes
    "UPDATE shop.customers SET id = id + 100000 WHERE id % 50 = 0",  # primary key changes
    "DELETE FROM shop.orders WHERE id % 11 = 0",
    "ALTER TABLE shop.orders ADD COLUMN status VARCHAR(16) NOT NULL DEFAULT 'new'",
    "UPDATE shop.orders SET status = 'shipped' WHERE id % 5 = 0",
    "ALTER TABLE crm.contacts MODIFY COLUMN phone VARCHAR(40)",
    "UPDATE crm.contacts SET phone = '+49 30 1234' WHERE id < 100",
    "CREATE TABLE shop.tmp_import (id INT PRIMARY KEY, v INT)",
    "INSERT INTO shop.tmp_import SELECT seq, seq FROM seq_1_to_500",
    "TRUNCATE TABLE shop.tmp_import",
    "RENAME TABLE crm.contacts TO crm.people",
    "INSERT INTO crm.people VALUES (900001, 'after rename', NULL)",
    "DROP TABLE shop.tmp_import",
]


def say(text: str) -> None:
    print(f"[demo] {text}", flush=True)


def demo_changefeed(fresh: bool):
    """Start the demo's MariaDB pair and create the demo changefeed: anew (dropping the demo
    schemas) when `fresh`, else only if it does not exist yet.  None if create failed."""
    os.environ.setdefault("CDCFLOW_HOME", str(LOCAL / "cdcflow-home"))
    from cdcflow import cli
    from cdcflow.core.home import spec_exists
    from cdcflow.devtools.mariadb import start_pair

    say("starting a local MariaDB pair under .local/mariadb (upstream with a ROW binlog, downstream)")
    up, down = start_pair(LOCAL / "mariadb")
    if not fresh and spec_exists(CID):
        return up, down
    for server in (up, down):
        server.execute(*[f"DROP DATABASE IF EXISTS {s}" for s in SCHEMAS])
    if spec_exists(CID):
        with contextlib.redirect_stdout(io.StringIO()):
            cli.main(["changefeed", "remove", "-c", CID])
    cfg = Path(os.environ["CDCFLOW_HOME"]) / "demo-changefeed.toml"
    cfg.write_text(CONFIG)
    say(f"creating changefeed {CID}: {up.uri.replace(':cdcflow@', ':***@')} -> downstream port {down.port}")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):  # the changefeed's info as JSON: `cdcflow changefeed query` shows it
        created = cli.main(["changefeed", "create", "-c", CID, "--source-uri", up.uri, "--sink-uri", down.uri,
                            "--config", str(cfg)])
    if created != 0:
        print(out.getvalue())
        return None
    say(f"changefeed {CID} created (`CDCFLOW_HOME={os.environ['CDCFLOW_HOME']} cdcflow changefeed query -c {CID}` "
        "shows it)")
    return up, down


def main() -> int:
    pair = demo_changefeed(fresh=True)
    if pair is None:
        return 1
    up, down = pair
    from cdcflow.core import tso
    from cdcflow.core.home import load_spec
    from cdcflow.devtools.airflow_local import airflow_env, dags_test
    from cdcflow.devtools.compare import compare, format_report
    from cdcflow.filter.table import TableFilter
    from cdcflow.store import metastore

    before = metastore.get_feed(CID).checkpoint_ts

    say(f"running a workload of {len(WORKLOAD)} statements (DML and DDL) on the upstream")
    for stmt in WORKLOAD:
        up.execute(stmt, database=None if stmt.startswith("CREATE DATABASE") else "shop")

    say("running one cycle through the Airflow DAG changefeed__demo (airflow dags test)")
    env = airflow_env()
    env["CDCFLOW_HOME"] = os.environ["CDCFLOW_HOME"]
    t0 = time.time()
    rc = dags_test("changefeed__" + CID, env)
    took = time.time() - t0
    feed = metastore.get_feed(CID)
    runs = metastore.recent_runs(CID, limit=1)
    stats = runs[0].stats if runs else {}
    pull, filt, apply = stats.get("pull", {}), stats.get("filter", {}), stats.get("apply", {})

    print()
    print("=" * 72)
    print(f"changefeed {CID}: state {feed.state}, DAG run {'succeeded' if rc == 0 else 'FAILED'} in {took:.1f}s")
    print(f"  events pulled       {pull.get('pulled', 0)} ({pull.get('transactions', 0)} transactions)")
    print(f"  DDL kept / skipped  {filt.get('kept_ddl', 0)} / {filt.get('skipped_ddl', 0)}")
    print(f"  tables kept         {filt.get('kept_tables', 0)} of {filt.get('tables', 0)}")
    print(f"  row changes applied {apply.get('rows_in', 0)} -> {apply.get('rows_written', 0)} final rows in "
          f"{apply.get('statements', 0)} statements, {apply.get('rows_per_second')} row changes/s")
    print(f"  DDL applied         {apply.get('ddl_applied', 0)}")
    print(f"  checkpoint before   {before} ({tso.to_text(before)})")
    print(f"  checkpoint after    {feed.checkpoint_ts} ({tso.to_text(feed.checkpoint_ts)})")
    if feed.error:
        print(f"  error               {feed.error.get('message')}")
    print()
    print("consistency, table by table:")
    cfg = load_spec(CID).config()
    replicated = TableFilter(list(cfg.rules), cfg.case_sensitive).match_table
    with up.connect() as u, down.connect() as d:
        report = format_report(u, d, schemas=list(SCHEMAS), replicated=replicated)
        diffs = [x for x in compare(u, d, schemas=list(SCHEMAS)) if replicated(x.schema, x.table)]
    print(report)
    ok = rc == 0 and not diffs
    print("RESULT: every replicated table is consistent" if ok else "RESULT: INCONSISTENT (see above)")
    print()
    print("Open the Airflow UI on this changefeed: make airflow (it prints the URL and the login).")
    print(f"The MariaDB servers keep running: upstream {up.uri.replace(':cdcflow@', ':***@')}, "
          f"downstream port {down.port} (password 'cdcflow').")
    print(json.dumps({"demo_ok": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
