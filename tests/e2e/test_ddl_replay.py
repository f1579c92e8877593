"""Replay-safe DDL (issue item 8), end to end: `cdcflow changefeed run` dies right after the
downstream executed a DDL and before the checkpoint passed it; the next run reads the DDL
again, runs it again, and must tolerate that it already ran ("already exists" / "doesn't
exist", only for the DDL the metadata store marks as in flight) and lose nothing."""

from __future__ import annotations

import os

import pytest
from e2e_helpers import assert_consistent, create_changefeed, forked_runs, next_second, query

from cdcflow.store import metastore

pytestmark = pytest.mark.e2e

# Runs the CLI in a child process (on the session's Spark Connect server: no JVM per process;
# forked from one that imported the CLI once: e2e_helpers.forked_runs) whose checkpoint write
# after a DDL kills the process (os._exit: no cleanup, the lease stays held, the run stays
# "running"), once per DDL: the commit ts of each DDL it died after is appended to CRASHED so
# the rerun gets past it.
CRASHING_RUN = r"""
import os, sys
from cdcflow import cli
from cdcflow.store import metastore

crashed = os.environ["CRASHED"]
real = metastore.advance_checkpoint

def advance_checkpoint(changefeed_id, ts, pos, conn=None):
    done = open(crashed).read().split() if os.path.exists(crashed) else []
    if metastore.get_feed(changefeed_id).ddl_in_flight_ts == ts and str(ts) not in done:
        with open(crashed, "a") as f:
            f.write(f"{ts}\n")
        os._exit(9)  # the DDL ran downstream; its checkpoint is never written
    return real(changefeed_id, ts, pos, conn=conn)

metastore.advance_checkpoint = advance_checkpoint
sys.exit(cli.main(["changefeed", "run", "-c", sys.argv[1], "--spark-remote", sys.argv[2]]))
"""

# (statement, DML after it): each kind runs twice downstream; the DML checks nothing is lost
DDLS = [
    ("CREATE TABLE rp.t (id INT PRIMARY KEY, v INT, KEY kv (v))", "INSERT INTO rp.t VALUES (1, 1), (2, 2)"),
    ("CREATE TABLE rp.d (id INT PRIMARY KEY)", "INSERT INTO rp.d VALUES (1)"),
    ("ALTER TABLE rp.t ADD COLUMN c VARCHAR(10) DEFAULT 'x'", "INSERT INTO rp.t VALUES (3, 3, 'c')"),
    ("ALTER TABLE rp.t DROP INDEX kv", "UPDATE rp.t SET v = 20 WHERE id = 2"),
    ("ALTER TABLE rp.t ADD COLUMN w INT, ADD INDEX kw (w)", "INSERT INTO rp.t VALUES (5, 5, 'e', 5)"),
    ("RENAME TABLE rp.t TO rp.t2", "INSERT INTO rp.t2 VALUES (7, 7, 'g', 7)"),
    ("CREATE VIEW rp.v AS SELECT id, c FROM rp.t2", "DELETE FROM rp.t2 WHERE id = 1"),
    ("DROP VIEW rp.v", "UPDATE rp.t2 SET c = 'u' WHERE id = 3"),
    ("DROP TABLE rp.d", "INSERT INTO rp.t2 VALUES (8, 8, 'h', 8)"),
]


def test_crash_between_ddl_and_checkpoint_replays_safely(mariadb_pair, cdcflow_home, capsys, tmp_path,
                                                         spark_connect):
    up, down = mariadb_pair
    for s in (up, down):
        s.execute("DROP DATABASE IF EXISTS rp", "CREATE DATABASE rp")
    create_changefeed(capsys, up, down, "e2e-replay", "[filter]\nrules = ['rp.*']\n")
    start_ts = metastore.get_feed("e2e-replay").checkpoint_ts
    next_second()  # the first DDL in a later second than the create: no row and no ts just below it
    for ddl, dml in DDLS:
        up.execute(ddl, *([dml] if dml else []))
    crashed = tmp_path / "crashed"
    codes = []
    with forked_runs(tmp_path, {**os.environ, "CRASHED": str(crashed)}) as run:
        for _ in range(len(DDLS) + 2):
            proc = run(CRASHING_RUN, "e2e-replay", spark_connect.url)
            codes.append(proc.returncode)
            if proc.returncode != 9:
                break
            # the process died with the DDL run downstream and the checkpoint below it: just below it
            # where rows precede it (each DDL but the first), else where the changefeed started
            feed = metastore.get_feed("e2e-replay")
            last = int(crashed.read_text().split()[-1])
            assert feed.ddl_in_flight_ts == last
            assert feed.checkpoint_ts == (start_ts if len(codes) == 1 else last - 1), (codes, feed.checkpoint_ts, last)
    assert codes[-1] == 0, proc.stderr[-3000:]
    # every DDL was cut off once after it ran, and each rerun got past the one before
    assert codes.count(9) == len(DDLS)
    assert len(set(crashed.read_text().split())) == len(DDLS)
    assert query(capsys, "e2e-replay")["state"] == "normal"
    assert metastore.get_feed("e2e-replay").ddl_in_flight_ts is None
    assert down.query("SHOW FULL TABLES FROM rp") == [("t2", "BASE TABLE")]
    assert_consistent(up, down, ["rp"])
    assert down.query("SELECT * FROM rp.t2 ORDER BY id") == [
        (2, 20, "x", None), (3, 3, "u", None), (5, 5, "e", 5), (7, 7, "g", 7), (8, 8, "h", 8)]
    idx = "SELECT INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'rp' ORDER BY 1"
    assert down.query(idx) == up.query(idx) == [("kw",), ("PRIMARY",)]
