"""The demo changefeed: its MariaDB pair under .local/, its config and its workload; `make demo`
(demo.py) runs it through the DAG, `make airflow` (airflow_local.py) serves it."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

from cdcflow_devtools.checkout import LOCAL

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
    from cdcflow.config.spec_store import spec_exists
    from cdcflow_devtools.mariadb import pair_running, start_pair

    base = LOCAL / "mariadb"
    if pair_running(base):
        say(f"using the local MariaDB pair already running under {base}")
    else:
        say(f"starting a local MariaDB pair under {base} (upstream with a ROW binlog, "
            "downstream)")
    up, down = start_pair(base)
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
