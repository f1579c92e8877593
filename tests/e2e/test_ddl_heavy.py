"""A DDL-heavy window: a table created per tenant, over a thousand CREATE TABLEs in one
window with rows between some of them, replicated in one cycle.  CDCFLOW_DDL_HEAVY_TABLES
raises the count for a longer run (10000 was measured; see docs/performance.md)."""

from __future__ import annotations

import os
import time

import pytest
from e2e_helpers import assert_consistent, create_changefeed, query

from cdcflow.launch.in_process import run_cycle

pytestmark = pytest.mark.e2e

TABLES = int(os.environ.get("CDCFLOW_DDL_HEAVY_TABLES", "1200"))


def test_a_thousand_create_tables_in_one_window(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    for s in (up, down):
        s.execute("DROP DATABASE IF EXISTS ddl_heavy")
    create_changefeed(capsys, up, down, "e2e-ddl-heavy", "[filter]\nrules = ['ddl_heavy.*']\n")
    statements = ["CREATE DATABASE ddl_heavy"]
    for i in range(TABLES):
        statements.append(f"CREATE TABLE ddl_heavy.t{i} (id INT PRIMARY KEY, tenant VARCHAR(20))")
        if i % 7 == 0:  # a row between some DDLs; runs of empty segments between the others
            statements.append(f"INSERT INTO ddl_heavy.t{i} VALUES (1, 'tenant {i}'), (2, NULL)")
        if i % 50 == 49:  # and a row in an older table, after many DDLs
            statements.append(f"UPDATE ddl_heavy.t{i - 49} SET tenant = 'moved' WHERE id = 1")
    t0 = time.time()
    up.execute(*statements)
    upstream_seconds = time.time() - t0
    result = run_cycle("e2e-ddl-heavy", spark=spark)
    with capsys.disabled():  # the numbers docs/performance.md reports
        print(f"\n{TABLES} tables: upstream {upstream_seconds:.1f} s, cycle {result['seconds']} s "
              f"(apply {result['apply']['apply_seconds']} s), segments {result['barrier']['segments']}")
    assert result["apply"]["ddl_applied"] == TABLES + 1
    assert result["barrier"]["barriers"] == TABLES + 1
    assert query(capsys, "e2e-ddl-heavy")["state"] == "normal"
    assert len(down.query("SHOW TABLES IN ddl_heavy")) == TABLES
    assert_consistent(up, down, ["ddl_heavy"])
