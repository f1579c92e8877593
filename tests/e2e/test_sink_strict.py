"""Rows are written in strict mode: a value the downstream column cannot hold stops the
changefeed (naming table, key, column and commit ts) instead of being cut.  Like every row the
downstream refuses, it is retryable (TiCDC retries its sink): warning and backoff, and once the
column is widened the next cycle replicates it whole, with nobody resuming anything."""

from __future__ import annotations

import pytest
from e2e_helpers import assert_consistent, backdate, create_changefeed, query, run_fails

from cdcflow import cli
from cdcflow.core.errors import MYSQL_TXN_ERROR

pytestmark = pytest.mark.e2e


def test_a_value_longer_than_the_downstream_column_fails_then_resumes(mariadb_pair, spark, cdcflow_home,
                                                                      capsys):
    up, down = mariadb_pair
    ddl = "CREATE TABLE nar.t (id INT PRIMARY KEY, name VARCHAR(20), d DATE)"
    up.execute("CREATE DATABASE nar", ddl)
    down.execute("CREATE DATABASE nar", ddl, "ALTER TABLE nar.t MODIFY name VARCHAR(2)")
    create_changefeed(capsys, up, down, "nar", "[filter]\nrules = ['nar.*']\n")
    up.execute("SET SESSION sql_mode = ''",
               "INSERT INTO nar.t VALUES (1, 'ok', '0000-00-00'), (2, 'longer than two', '2024-01-31')")
    status, message, at = run_fails(capsys, "nar", state="warning")
    assert status["error"]["code"] == MYSQL_TXN_ERROR
    for word in ("nar.t", "column 'name'", "key id = 2", f"commit ts {at}"):
        assert word in message, message
    assert "widen" in message
    assert down.query("SELECT name FROM nar.t WHERE id = 2") == []  # never written cut
    down.execute("ALTER TABLE nar.t MODIFY name VARCHAR(20)")
    backdate("nar", 11, "next_retry_at")  # the warning's first backoff (10 s) runs out
    assert cli.main(["changefeed", "run", "-c", "nar"]) == 0
    assert query(capsys, "nar")["state"] == "normal"
    assert_consistent(up, down, ["nar"])
