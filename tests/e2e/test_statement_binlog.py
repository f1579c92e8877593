"""Row changes a session logs as statements (binlog_format STATEMENT) through the CLI against the
real MariaDB pair: on a replicated table the changefeed stops at the statement, naming it, its
commit ts and the remedy, and converges after the operator repairs the rows and skips it; on a
filtered-out table nothing stops."""

from __future__ import annotations

import pytest
from e2e_helpers import assert_consistent, cli_ok, cli_run, create_changefeed, run_fails

pytestmark = pytest.mark.e2e

CID = "e2e-sb"


def test_a_row_change_logged_as_a_statement_stops_the_changefeed(mariadb_pair, spark, cdcflow_home, capsys,
                                                                 tmp_path):
    up, down = mariadb_pair
    for db, servers in (("sb", (up, down)), ("sbx", (up, down))):
        for s in servers:
            s.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}")
    create_changefeed(capsys, up, down, CID, "[filter]\nrules = ['sb.*']\n")
    up.execute("CREATE TABLE sb.t (id INT PRIMARY KEY, v INT)", "CREATE TABLE sbx.t (id INT PRIMARY KEY, v INT)",
               "INSERT INTO sb.t VALUES (1, 1)")
    up.execute("SET SESSION binlog_format = 'STATEMENT'",
               "INSERT INTO sbx.t VALUES (1, 1)",  # filtered out: no concern of the downstream
               "INSERT INTO t VALUES (2, 2)", database="sb")
    up.execute("INSERT INTO sb.t VALUES (3, 3)")
    status, message, ts = run_fails(capsys, CID)
    assert "INSERT on sb.t was logged as a statement" in message and "INSERT INTO t VALUES (2, 2)" in message
    assert "binlog_format=ROW" in message and f"cdcflow changefeed skip-ddl -c {CID} --commit-ts {ts}" in message
    assert status["error"]["code"] == "CDCFLOW:ErrRowChangeAsStatement"
    assert status["checkpoint_tso"] == ts - 1
    assert down.query("SELECT * FROM sb.t") == [(1, 1)]

    # the remedy: repair the rows downstream by hand, skip the statement, resume
    down.execute("INSERT INTO sb.t VALUES (2, 2)")
    cli_ok(capsys, "changefeed", "skip-ddl", "-c", CID, "--commit-ts", str(ts))
    cli_ok(capsys, "changefeed", "resume", "-c", CID)
    up.execute("SET SESSION binlog_format = 'STATEMENT'", "DELETE FROM sbx.t", "UPDATE sbx.t SET v = 9")
    up.execute("UPDATE sb.t SET v = 30 WHERE id = 3")
    # LOAD DATA logs differently (Begin_load_query + Execute_load_query events): it stops too
    (tmp_path / "rows.tsv").write_text("4\t4\n5\t5\n")
    conn = up.connect("sb", local_infile=True)
    with conn.cursor() as cur:
        cur.execute("SET SESSION binlog_format = 'STATEMENT'")
        cur.execute(f"LOAD DATA LOCAL INFILE '{tmp_path / 'rows.tsv'}' INTO TABLE t")
    conn.close()
    up.execute("INSERT INTO sb.t VALUES (6, 6)")
    status, message, ts = run_fails(capsys, CID)
    assert "LOAD DATA on sb.t was logged as a statement" in message and "INTO TABLE" in message
    assert sorted(down.query("SELECT * FROM sb.t")) == [(1, 1), (2, 2), (3, 30)]
    down.execute("INSERT INTO sb.t VALUES (4, 4), (5, 5)")
    cli_ok(capsys, "changefeed", "skip-ddl", "-c", CID, "--commit-ts", str(ts))
    cli_ok(capsys, "changefeed", "resume", "-c", CID)
    rc, err = cli_run(capsys, CID)
    assert rc == 0, err
    assert_consistent(up, down, ["sb"])
