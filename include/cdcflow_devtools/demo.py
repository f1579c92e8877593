"""`make demo`: a local MariaDB pair, a changefeed, a workload, one cycle through the Airflow DAG.

Everything lives under .local/ in the project (servers, CDCFLOW_HOME, AIRFLOW_HOME), so
running it again starts from the same servers with a fresh demo changefeed.
"""

from __future__ import annotations

import json
import os
import sys
import time

from cdcflow_devtools.demo_feed import CID, SCHEMAS, WORKLOAD, demo_changefeed, say


def main() -> int:
    pair = demo_changefeed(fresh=True)
    if pair is None:
        return 1
    up, down = pair
    from cdcflow.core import tso
    from cdcflow.config.spec_store import load_spec
    from cdcflow_devtools.airflow_local import airflow_env, dags_test
    from cdcflow_devtools.compare import compare, format_report
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
