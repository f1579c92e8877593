"""End to end against real servers: a MariaDB upstream with a ROW binlog, a MariaDB
downstream, Spark in local mode, and the same stage functions the DAG runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from e2e_helpers import assert_consistent, create_changefeed, query
from stall_proxy import StallProxy, query_containing

from cdcflow import cli
from cdcflow.core import log_line, tso
from cdcflow.launch.in_process import run_cycle
from cdcflow.store import metastore

pytestmark = pytest.mark.e2e


def test_dml_and_ddl_interleaved_replicate(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    create_changefeed(capsys, up, down, "e2e-mixed", "[filter]\nrules = ['e2e_mixed.*']\n")
    before = query(capsys, "e2e-mixed")
    up.execute(
        "CREATE DATABASE e2e_mixed",
        "CREATE TABLE e2e_mixed.t (id INT PRIMARY KEY, name VARCHAR(40), note TEXT, amount DECIMAL(12,4))",
        "CREATE TABLE e2e_mixed.u (a INT NOT NULL, b VARCHAR(10), UNIQUE KEY ua (a))",
        "INSERT INTO e2e_mixed.t VALUES (1,'plain',NULL,1.5),(2,'it''s',\"back\\\\slash\",NULL),"
        "(3,'emoji 😀','tab\\tnew\\nline',-0.0001),(4,NULL,NULL,NULL)",
        "INSERT INTO e2e_mixed.u VALUES (1,'x'),(2,'y'),(3,'z')",
    )
    with up.connect() as c, c.cursor() as cur:  # one transaction with several kinds of change
        cur.execute("BEGIN")
        cur.execute("UPDATE e2e_mixed.t SET name = CONCAT(name, '!') WHERE id <= 2")
        cur.execute("UPDATE e2e_mixed.t SET id = 40 WHERE id = 4")  # key change: delete + insert
        cur.execute("DELETE FROM e2e_mixed.t WHERE id = 3")
        cur.execute("INSERT INTO e2e_mixed.t VALUES (3, 'back', 'again', 3)")
        cur.execute("UPDATE e2e_mixed.u SET a = a + 10")  # unique key changes on every row
        cur.execute("COMMIT")
    up.execute(
        "ALTER TABLE e2e_mixed.t ADD COLUMN extra INT DEFAULT 7",
        "INSERT INTO e2e_mixed.t (id, name, extra) VALUES (5, 'after add', 8)",
        "ALTER TABLE e2e_mixed.t MODIFY COLUMN name VARCHAR(80)",
        "UPDATE e2e_mixed.t SET name = REPEAT('n', 70) WHERE id = 5",
        "ALTER TABLE e2e_mixed.t DROP COLUMN note",
        "INSERT INTO e2e_mixed.t (id, name) VALUES (6, 'after drop')",
        "CREATE TABLE e2e_mixed.gone (id INT PRIMARY KEY)",
        "INSERT INTO e2e_mixed.gone VALUES (1),(2)",
        "RENAME TABLE e2e_mixed.u TO e2e_mixed.u2",
        "INSERT INTO e2e_mixed.u2 VALUES (100, 'renamed')",
        "TRUNCATE TABLE e2e_mixed.gone",
        "INSERT INTO e2e_mixed.gone VALUES (3)",
        "DROP TABLE e2e_mixed.gone",
    )
    result = run_cycle("e2e-mixed", spark=spark)
    assert result["apply"]["ddl_applied"] >= 10
    assert_consistent(up, down, ["e2e_mixed"])
    assert down.query("SHOW TABLES FROM e2e_mixed") == [("t",), ("u2",)]

    after = query(capsys, "e2e-mixed")
    assert after["state"] == "normal" and after["error"] is None
    assert after["checkpoint_tso"] > before["checkpoint_tso"]
    assert abs(tso.physical_ms(after["checkpoint_tso"]) / 1000 - time.time()) < 120
    assert after["checkpoint_time"] == tso.to_text(after["checkpoint_tso"])

    # a second cycle continues from the checkpoint; an idle one only moves the checkpoint
    up.execute("DELETE FROM e2e_mixed.t WHERE id = 1", "UPDATE e2e_mixed.u2 SET b = NULL")
    run_cycle("e2e-mixed", spark=spark)
    assert_consistent(up, down, ["e2e_mixed"])
    cp = query(capsys, "e2e-mixed")["checkpoint_tso"]
    idle = run_cycle("e2e-mixed", spark=spark)
    assert idle["apply"]["rows_in"] == 0
    assert query(capsys, "e2e-mixed")["checkpoint_tso"] >= cp


def test_table_filter_rules_with_negation_and_wildcards(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    cfg = "[filter]\nrules = ['e2e_fa.*', '!e2e_fa.secret*', 'e2e_fb.keep?', 'e2e_fb./^log_[0-9]+$/']\n"
    create_changefeed(capsys, up, down, "e2e-filter", cfg)
    up.execute("CREATE DATABASE e2e_fa", "CREATE DATABASE e2e_fb")
    for t in ("e2e_fa.a1", "e2e_fa.secret_1", "e2e_fb.keep1", "e2e_fb.keepme", "e2e_fb.log_42", "e2e_fb.log_x"):
        up.execute(f"CREATE TABLE {t} (id INT PRIMARY KEY, v INT)", f"INSERT INTO {t} VALUES (1, 1), (2, 2)")
    run_cycle("e2e-filter", spark=spark)
    assert sorted(down.query("SHOW TABLES FROM e2e_fa")) == [("a1",)]
    assert sorted(down.query("SHOW TABLES FROM e2e_fb")) == [("keep1",), ("log_42",)]
    for t in ("e2e_fa.a1", "e2e_fb.keep1", "e2e_fb.log_42"):
        assert down.query(f"SELECT id, v FROM {t} ORDER BY id") == [(1, 1), (2, 2)]


def test_bulk_statements_80k_row_changes(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    create_changefeed(capsys, up, down, "e2e-bulk", "[filter]\nrules = ['e2e_bulk.*']\n")
    up.execute("CREATE DATABASE e2e_bulk")
    up.execute(
        "CREATE TABLE e2e_bulk.big (id INT PRIMARY KEY, k INT NOT NULL, pad VARCHAR(64), UNIQUE KEY uk (k))",
        "INSERT INTO e2e_bulk.big SELECT seq, seq, MD5(seq) FROM seq_1_to_48000",
        "UPDATE e2e_bulk.big SET pad = CONCAT('u', pad) WHERE id % 2 = 0",
        "UPDATE e2e_bulk.big SET k = k + 1000000 WHERE id % 5 = 0",
        "DELETE FROM e2e_bulk.big WHERE id % 7 = 0",
        database="e2e_bulk",
    )
    t0 = time.time()
    result = run_cycle("e2e-bulk", spark=spark)
    pulled = result["pull"]["pulled"]
    assert pulled >= 80_000
    assert_consistent(up, down, ["e2e_bulk"])
    apply = result["apply"]
    print(f"\nbulk window: {pulled} row changes, apply {apply['apply_seconds']}s "
          f"({apply['rows_per_second']} rows/s), whole cycle {time.time() - t0:.1f}s")


def test_killed_cycle_reruns_to_the_same_state(mariadb_pair, spark, cdcflow_home, capsys):
    """Kill `cdcflow changefeed run` while it applies, run again: the downstream converges.  The
    downstream is reached through a proxy that holds the answer to the second ADD COLUMN, so
    the kill lands inside apply however fast apply is."""
    up, down = mariadb_pair
    proxy = StallProxy(down.port, hold=query_containing("ADD COLUMN", "c1"), pass_bytes=0)
    try:
        _killed_cycle_reruns(capsys, up, down, spark, proxy)
    finally:
        proxy.close()


def _killed_cycle_reruns(capsys, up, down, spark, proxy: StallProxy) -> None:
    create_changefeed(capsys, up, down, "e2e-crash", "[filter]\nrules = ['e2e_crash.*']\n",
                      sink_uri=proxy.uri(down.uri))
    up.execute("CREATE DATABASE e2e_crash",
               "CREATE TABLE e2e_crash.t (id INT PRIMARY KEY, v INT, s VARCHAR(20))")
    for i in range(6):
        up.execute(f"INSERT INTO e2e_crash.t (id, v, s) SELECT seq + {i * 5000}, seq, 'r{i}' FROM seq_1_to_5000",
                   f"UPDATE e2e_crash.t SET v = v + 1 WHERE id % 3 = {i % 3}",
                   f"ALTER TABLE e2e_crash.t ADD COLUMN c{i} INT DEFAULT {i}",
                   f"DELETE FROM e2e_crash.t WHERE id % 11 = {i}", database="e2e_crash")
    env = dict(os.environ)
    proc = subprocess.Popen([sys.executable, "-m", "cdcflow.cli", "changefeed", "run", "-c", "e2e-crash"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    killed_after = None
    for line in proc.stderr:
        if (log_line.parse(line) or {}).get("event") == "ddl applied":  # inside apply, with more segments to go
            killed_after = line
            assert proxy.stalled.wait(timeout=300), "apply never reached the second ADD COLUMN"
            proc.send_signal(signal.SIGKILL)
            break
    proc.wait(timeout=120)
    proxy.release()
    assert killed_after is not None, "the run ended before apply began"
    feed = metastore.get_feed("e2e-crash")
    assert feed.lease_owner is not None  # the dead run still holds the lease ...
    run_cycle("e2e-crash", spark=spark)  # ... which a run on the same host takes over
    assert_consistent(up, down, ["e2e_crash"])
    assert query(capsys, "e2e-crash")["state"] == "normal"


def test_cli_errors_are_one_line(mariadb_pair, cdcflow_home, capsys):
    up, down = mariadb_pair
    assert cli.main(["changefeed", "query", "-c", "no-such-feed"]) == 1
    err = capsys.readouterr().err
    assert "no-such-feed" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1

    # the downstream writes no binlog: refused, naming what to change
    rc = cli.main(["changefeed", "create", "-c", "bad-up", "--source-uri", down.uri, "--sink-uri", up.uri])
    err = capsys.readouterr().err
    assert rc == 1 and "log_bin" in err and "Traceback" not in err

    rc = cli.main(["changefeed", "create", "-c", "bad-key", "--source-uri", up.uri, "--sink-uri",
                   down.uri + "?worker-cnt=4"])
    err = capsys.readouterr().err
    assert rc == 1 and "worker-cnt" in err


def test_query_list_remove(mariadb_pair, cdcflow_home, capsys):
    up, down = mariadb_pair
    create_changefeed(capsys, up, down, "e2e-one", "")
    create_changefeed(capsys, up, down, "e2e-two", "")
    assert cli.main(["changefeed", "list"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [x["id"] for x in listed] == ["e2e-one", "e2e-two"]
    assert all(x["summary"]["state"] == "normal" for x in listed)
    assert cli.main(["changefeed", "remove", "-c", "e2e-one"]) == 0
    capsys.readouterr()
    assert cli.main(["changefeed", "list"]) == 0
    assert [x["id"] for x in json.loads(capsys.readouterr().out)] == ["e2e-two"]
    assert cli.main(["changefeed", "query", "-c", "e2e-one"]) == 1


def test_rejected_ddl_fails_the_changefeed_until_an_operator_skips_it(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    create_changefeed(capsys, up, down, "e2e-skip", "[filter]\nrules = ['e2e_skip.*']\n")
    down.execute("CREATE DATABASE e2e_skip")
    up.execute("CREATE DATABASE e2e_skip")  # the downstream has it already: rejected, not a replay
    up.execute("CREATE TABLE e2e_skip.t (id INT PRIMARY KEY, v INT)", "INSERT INTO e2e_skip.t VALUES (1, 1)")
    with pytest.raises(Exception) as failure:
        run_cycle("e2e-skip", spark=spark)
    status = query(capsys, "e2e-skip")
    assert status["state"] == "failed"
    message = status["error"]["message"]
    assert "CREATE DATABASE e2e_skip" in message and "skip-ddl" in message and str(failure.value) == message
    ts = int(message.split("commit ts ")[1].split(":")[0])
    # a failed changefeed's cycle does nothing until an operator acts
    assert run_cycle("e2e-skip", spark=spark)["skipped"]
    assert cli.main(["changefeed", "skip-ddl", "-c", "e2e-skip", "--commit-ts", str(ts)]) == 0
    assert cli.main(["changefeed", "resume", "-c", "e2e-skip"]) == 0
    run_cycle("e2e-skip", spark=spark)
    assert_consistent(up, down, ["e2e_skip"])
    assert query(capsys, "e2e-skip")["state"] == "normal"


def test_forbidden_rename_fails_the_changefeed_naming_it(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    create_changefeed(capsys, up, down, "e2e-rename", "[filter]\nrules = ['e2e_ren.t*']\n")
    up.execute("CREATE DATABASE e2e_ren", "CREATE TABLE e2e_ren.t1 (id INT PRIMARY KEY)",
               "CREATE TABLE e2e_ren.n1 (id INT PRIMARY KEY)", "INSERT INTO e2e_ren.t1 VALUES (1)",
               "RENAME TABLE e2e_ren.t1 TO e2e_ren.t2",  # old name matches: replicated
               "RENAME TABLE e2e_ren.n1 TO e2e_ren.t3")  # old unmatched, new matched: an error
    with pytest.raises(Exception):
        run_cycle("e2e-rename", spark=spark)
    status = query(capsys, "e2e-rename")
    assert status["state"] == "failed"
    message = status["error"]["message"]
    assert "RENAME TABLE e2e_ren.n1 TO e2e_ren.t3" in message and "commit ts" in message
    assert down.query("SHOW TABLES FROM e2e_ren") == [("t2",)]  # everything before it was applied
    assert down.query("SELECT id FROM e2e_ren.t2") == [(1,)]
