"""Online schema change tools (online-ddl, as DM's), end to end against the real MariaDB pair.

The real `pt-online-schema-change` (percona-toolkit) alters a table while a thread keeps
writing to it and the changefeed runs cycles: one while the tool's copy is paused (the ALTER on
the shadow table is read in that cycle), one after the cut-over.  With a filter naming only the
real table and with one matching every table, the downstream table ends equal to the upstream's
(rows, columns, indexes), the cut-over being the one DDL run downstream and no shadow or trash
table left there.  gh-ost is not packaged here: its published cut-over is replayed as SQL
(`_t_gho`, `_t_ghc`, the sentry `_t_del`, the atomic RENAME), with a cycle killed right after the
cut-over ran downstream (its rerun reads the ALTER, from an earlier cycle, from the metadata
store, and takes the downstream's "duplicate column" for its own replay)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pymysql
import pytest
from e2e_helpers import (
    assert_consistent,
    cli_ok,
    cli_run,
    create_changefeed,
    decisions,
    fresh_schema,
    query,
    run_fails,
    tables,
)

from cdcflow.store import metastore
from cdcflow_devtools.mariadb import ROOT_PASSWORD, ROOT_USER

pytestmark = pytest.mark.e2e

ORDERS = "CREATE TABLE orders (id INT PRIMARY KEY AUTO_INCREMENT, v VARCHAR(40), n INT NOT NULL DEFAULT 0)"
ALTER = "ADD COLUMN note VARCHAR(30) NOT NULL DEFAULT 'fresh', ADD INDEX idx_v (v)"
INDEXES = ("SELECT TABLE_NAME, INDEX_NAME, NON_UNIQUE, SEQ_IN_INDEX, COLUMN_NAME FROM information_schema.STATISTICS "
           "WHERE TABLE_SCHEMA = %s ORDER BY 1, 2, 4")


class Writer(threading.Thread):
    """Inserts, updates and deletes on the real table until stopped, as an application would
    while the tool copies."""

    def __init__(self, db, table: str):
        super().__init__(daemon=True)
        self.db, self.table, self.done, self.writes, self.error = db, table, threading.Event(), 0, None

    def run(self) -> None:
        try:
            conn = self.db.connect()
            with conn.cursor() as cur:
                while not self.done.is_set():
                    i = self.writes
                    try:
                        cur.execute(f"INSERT INTO {self.table} (v, n) VALUES (%s, %s)", (f"w{i}", i))
                        cur.execute(f"UPDATE {self.table} SET n = n + 1, v = CONCAT('u', n) WHERE id = %s",
                                    (i % 97 + 1,))
                        if i % 7 == 0:
                            cur.execute(f"DELETE FROM {self.table} WHERE id = %s", (i // 7 * 3 + 5,))
                    except pymysql.err.OperationalError as e:
                        if e.args[0] not in (1205, 1213):  # the tool's locks: an application retries
                            raise
                    self.writes += 1
                    time.sleep(0.003)
            conn.close()
        except Exception as e:  # noqa: BLE001 - reported by stop()
            self.error = e

    def stop(self) -> int:
        self.done.set()
        self.join(60)
        assert self.error is None, self.error
        return self.writes


def _wait_for(check, what: str, timeout: float = 120) -> None:
    end = time.time() + timeout
    while not check():
        assert time.time() < end, f"timed out waiting for {what}"
        time.sleep(0.2)


# pt-online-schema-change's --pause-file is looked at again only every 60 s; this plugin holds the
# tool at the same point (triggers created, no row copied) and looks at the file every 0.1 s.
HOLD_PLUGIN = """package pt_online_schema_change_plugin;
use strict;
sub new { my ($class, %args) = @_; return bless {%args}, $class; }
sub before_copy_rows { select(undef, undef, undef, 0.1) while -f $ENV{CDCFLOW_TEST_HOLD_FILE}; }
1;
"""


def _cycle_ok(capsys, changefeed_id: str) -> None:
    rc, err = cli_run(capsys, changefeed_id)
    assert rc == 0, err
    assert query(capsys, changefeed_id)["state"] == "normal"


@pytest.mark.parametrize("rules", ["orders", "*"], ids=["real-table-only", "whole-schema"])
def test_pt_online_schema_change_under_writes(mariadb_pair, spark, cdcflow_home, capsys, tmp_path, rules):
    up, down = mariadb_pair
    schema = "osc_one" if rules == "orders" else "osc_all"
    changefeed_id = schema.replace("_", "-")
    fresh_schema(up, down, schema, ORDERS)
    create_changefeed(capsys, up, down, changefeed_id, f"[filter]\nrules = ['{schema}.{rules}']\n")
    up.execute(*[f"INSERT INTO {schema}.orders (v, n) VALUES ('r{i}', {i})" for i in range(300)])
    _cycle_ok(capsys, changefeed_id)

    pause, plugin = tmp_path / "pause", tmp_path / "hold.pm"
    pause.touch()  # the tool copies nothing while the file exists
    plugin.write_text(HOLD_PLUGIN)
    writer = Writer(up, f"{schema}.orders")
    writer.start()
    tool = subprocess.Popen(
        ["pt-online-schema-change", "--alter", ALTER, "--execute", "--recursion-method=none", "--no-check-alter",
         "--chunk-size=100", "--plugin", str(plugin),
         f"h=127.0.0.1,P={up.port},u={ROOT_USER},p={ROOT_PASSWORD},D={schema},t=orders"],
        env={**os.environ, "CDCFLOW_TEST_HOLD_FILE": str(pause)}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)
    try:
        triggers = f"SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = '{schema}'"
        _wait_for(lambda: up.query(triggers)[0][0] == 3, "pt-online-schema-change's triggers")
        shadow = f"SELECT COUNT(*) FROM {schema}._orders_new"
        _wait_for(lambda: up.query(shadow)[0][0] >= 20, "rows the triggers copy into the shadow table")
        # a cycle while the tool waits to copy: the shadow table's CREATE and ALTER, the triggers'
        # rows, the real table's own rows
        _cycle_ok(capsys, changefeed_id)
        assert tables(down, schema) == ["orders"]
        first = decisions(changefeed_id)
        assert first["apply"]["ddl_applied"] == 0 and first["filter"]["kept_ddl"] == 0
        pause.unlink()
        out, _ = tool.communicate(timeout=300)
    finally:
        if tool.poll() is None:
            tool.kill()
        writes = writer.stop()
    assert tool.returncode == 0, out
    assert "Successfully altered" in out and writes > 50

    _cycle_ok(capsys, changefeed_id)
    cut = decisions(changefeed_id)
    assert cut["apply"]["ddl_applied"] == 1  # the cut-over, as the ALTER of the real table; nothing else
    assert tables(down, schema) == tables(up, schema) == ["orders"]
    assert_consistent(up, down, [schema])  # columns (note included) and rows
    assert down.query(INDEXES, (schema,)) == up.query(INDEXES, (schema,))
    assert ("orders", "idx_v", 1, 1, "v") in down.query(INDEXES, (schema,))
    # the real table's own changes after the cut-over replicate on the new definition
    up.execute(f"INSERT INTO {schema}.orders (v, n, note) VALUES ('after', 1, 'late')",
               f"UPDATE {schema}.orders SET note = 'moved' WHERE id = 2")
    _cycle_ok(capsys, changefeed_id)
    assert_consistent(up, down, [schema])


# gh-ost's published cut-over (github/gh-ost doc/cut-over.md and go/logic/applier.go), replayed as SQL:
# the ghost table is created like the real one and altered, its changelog table gets heartbeats,
# rows are copied (gh-ost applies the real table's binlog events to the ghost: replayed here as
# writes to both), then the sentry table `_t_del` is created and dropped around the atomic rename.
def _gh_ost_copy(s: str) -> list[str]:
    return [
        f"CREATE TABLE {s}._t_gho LIKE {s}.t",
        f"ALTER TABLE {s}._t_gho ADD COLUMN note VARCHAR(30) NOT NULL DEFAULT 'fresh', ADD INDEX idx_v (v)",
        f"CREATE TABLE {s}._t_ghc (id BIGINT AUTO_INCREMENT PRIMARY KEY, last_update TIMESTAMP, hint VARCHAR(64) "
        "UNIQUE, value TEXT)",
        f"INSERT INTO {s}._t_ghc (hint, value) VALUES ('state', 'GhostTableMigrated')",
        f"INSERT INTO {s}._t_gho (id, v, n) SELECT id, v, n FROM {s}.t",
        f"INSERT INTO {s}.t (v, n) VALUES ('during', 7)",
        f"INSERT INTO {s}._t_gho (id, v, n) SELECT id, v, n FROM {s}.t WHERE v = 'during'",
        f"REPLACE INTO {s}._t_ghc (hint, value) VALUES ('heartbeat', NOW())",
    ]


def _gh_ost_cut_over(s: str) -> list[str]:
    return [
        f"CREATE TABLE {s}._t_del (id INT AUTO_INCREMENT PRIMARY KEY) COMMENT='ghost-cut-over-sentry'",
        f"DROP TABLE IF EXISTS {s}._t_del",
        f"RENAME TABLE {s}.t TO {s}._t_del, {s}._t_gho TO {s}.t",
        f"DROP TABLE IF EXISTS {s}._t_ghc",
        f"DROP TABLE IF EXISTS {s}._t_del",
        f"INSERT INTO {s}.t (v, n, note) VALUES ('after', 8, 'late')",
    ]


# `cdcflow changefeed run` in a child process whose checkpoint write after the cut-over (the DDL
# marked in flight) kills it, once: the ALTER ran downstream, the checkpoint is below it.
CRASH_AFTER_DDL = r"""
import os, sys
from cdcflow import cli
from cdcflow.store import metastore

real = metastore.advance_checkpoint

def advance_checkpoint(changefeed_id, ts, pos):
    if metastore.get_feed(changefeed_id).ddl_in_flight_ts == ts:
        os._exit(9)
    return real(changefeed_id, ts, pos)

metastore.advance_checkpoint = advance_checkpoint
sys.exit(cli.main(["changefeed", "run", "-c", sys.argv[1], "--spark-remote", sys.argv[2]]))
"""


def test_gh_ost_cut_over_in_a_later_cycle_survives_a_killed_cycle(mariadb_pair, cdcflow_home, capsys,
                                                                  spark_connect):
    up, down = mariadb_pair
    s, changefeed_id = "ghost_t", "ghost-t"
    fresh_schema(up, down, s, ORDERS.replace("orders", "t"))
    create_changefeed(capsys, up, down, changefeed_id, f"[filter]\nrules = ['{s}.t']\n")
    up.execute(*[f"INSERT INTO {s}.t (v, n) VALUES ('r{i}', {i})" for i in range(20)], *_gh_ost_copy(s))

    def run(crash: bool) -> subprocess.CompletedProcess:
        code = CRASH_AFTER_DDL if crash else "import sys; from cdcflow import cli; sys.exit(cli.main(" \
            "['changefeed', 'run', '-c', sys.argv[1], '--spark-remote', sys.argv[2]]))"
        return subprocess.run([sys.executable, "-c", code, changefeed_id, spark_connect.url], env=dict(os.environ),
                              capture_output=True, text=True, timeout=600)

    first = run(crash=False)  # the ghost table's CREATE and ALTER, its rows and the changelog's: not replicated
    assert first.returncode == 0, first.stderr[-3000:]
    assert tables(down, s) == ["t"] and metastore.get_feed(changefeed_id).ddl_in_flight_ts is None
    up.execute(*_gh_ost_cut_over(s))
    killed = run(crash=True)
    assert killed.returncode == 9, killed.stderr[-3000:]
    feed = metastore.get_feed(changefeed_id)
    assert feed.checkpoint_ts < feed.ddl_in_flight_ts  # apply writes no checkpoint before a DDL no rows precede
    assert "note" in {r[0] for r in down.query(f"SHOW COLUMNS FROM {s}.t")}  # the ALTER ran before the kill
    rerun = run(crash=False)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert query(capsys, changefeed_id)["state"] == "normal"
    assert metastore.get_feed(changefeed_id).ddl_in_flight_ts is None
    assert tables(down, s) == tables(up, s) == ["t"]
    assert_consistent(up, down, [s])
    assert down.query(INDEXES, (s,)) == up.query(INDEXES, (s,))
    assert down.query(f"SELECT v, note FROM {s}.t WHERE v IN ('during', 'after') ORDER BY n") == [
        ("during", "fresh"), ("after", "late")]


def test_a_cut_over_whose_alter_ran_before_the_start_stops_with_the_remedy(mariadb_pair, spark, cdcflow_home,
                                                                           capsys):
    up, down = mariadb_pair
    s, changefeed_id = "ghost_early", "ghost-early"
    fresh_schema(up, down, s, ORDERS.replace("orders", "t"))
    up.execute(*_gh_ost_copy(s))  # the tool's ALTER runs before the changefeed exists
    for row in up.query(f"SELECT id, v, n FROM {s}.t"):  # the downstream as of the start
        down.execute(f"INSERT INTO {s}.t (id, v, n) VALUES {row!r}")
    create_changefeed(capsys, up, down, changefeed_id, f"[filter]\nrules = ['{s}.t']\n")
    up.execute(*_gh_ost_cut_over(s))
    status, message, ts = run_fails(capsys, changefeed_id)
    assert status["error"]["code"] == "CDCFLOW:ErrOnlineDDLUnfollowed"
    assert f"RENAME TABLE {s}.t TO {s}._t_del, {s}._t_gho TO {s}.t" in message and ts is not None
    assert "no ALTER of ghost_early._t_gho was read" in message
    assert f"skip-ddl -c {changefeed_id} --commit-ts {ts}" in status["cdcflow"]["error_remedy"]
    # the remedy: the change by hand downstream, the cut-over skipped
    down.execute(f"ALTER TABLE {s}.t ADD COLUMN note VARCHAR(30) NOT NULL DEFAULT 'fresh', ADD INDEX idx_v (v)")
    cli_ok(capsys, "changefeed", "skip-ddl", "-c", changefeed_id, "--commit-ts", str(ts))
    cli_ok(capsys, "changefeed", "resume", "-c", changefeed_id)
    _cycle_ok(capsys, changefeed_id)
    assert_consistent(up, down, [s])
