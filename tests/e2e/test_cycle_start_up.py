"""`cdcflow changefeed run` in a process of its own loads and opens only what its window needs:
an idle cycle (nothing written since the checkpoint) opens one upstream connection (prepare's)
and loads neither the binlog library nor Spark nor pandas nor pyarrow's remote filesystems; a small window read by the compiled
reader writes its rows from this process without loading Spark or numpy's masked arrays, nor
Parquet, nor the code of features its changefeed does not use (value expressions, a snapshot's
copy).  The
modules a cycle loaded are listed by the process itself once its cycle ended."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from e2e_helpers import assert_consistent, schema_changefeed

S = "cycle_start_up"
CID = "start-up"

# the CLI's main in a process of its own, pandas held as cli.entry holds it, then the modules it
# loaded and the metadata store's commits it made (each by the stages' functions on the stack),
# written to argv[1]
LISTING = ("import json, sys, traceback\nfrom cdcflow import cli\nfrom cdcflow.core import pandas_hold\n"
           "from cdcflow.store import engine\npandas_hold.hold()\ncommits = []\n"
           "with engine.listening_to_commits(lambda: commits.append([f.name for f in traceback.extract_stack()])):\n"
           "    status = cli.main(sys.argv[2:])\n"
           "open(sys.argv[1], 'w').write(json.dumps({'modules': sorted(sys.modules), 'commits': commits}))\n"
           "sys.exit(status)\n")
# the functions of the stages whose commits are counted: each writes the store in as few commits
# as its meaning allows (prepare: the lease with the runs it replaces, then the run's record;
# filter: the schema versions and shadow marks; finish: the run's end with the changefeed's
# state, then the lease's release with the run's last record)
COUNTED = ("prepare", "filter_events", "finish")


def _cycle(tmp_path) -> tuple[dict, set[str], dict[str, int]]:
    listing = tmp_path / "modules.json"
    # the changefeed's own engine (auto): a suite forced to Spark (--engine spark) would start it
    env = {k: v for k, v in os.environ.items() if k != "CDCFLOW_ENGINE"}
    proc = subprocess.run([sys.executable, "-c", LISTING, str(listing), "changefeed", "run", "-c", CID],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(listing.read_text())
    commits = {stage: sum(1 for names in seen["commits"] if stage in names) for stage in COUNTED}
    return json.loads(proc.stdout[proc.stdout.index("{"):]), set(seen["modules"]), commits


def _connections(server) -> int:
    """Connections the server accepted so far (this query's own included)."""
    return int(server.query("SHOW GLOBAL STATUS LIKE 'Connections'")[0][1])


def test_an_idle_cycle_and_a_small_window_load_and_open_only_what_they_need(mariadb_pair, cdcflow_home, capsys,
                                                                             tmp_path):
    up, down = mariadb_pair
    try:
        schema_changefeed(capsys, up, down, CID, S, f"CREATE DATABASE {S}",
                          f"CREATE TABLE {S}.t (id INT PRIMARY KEY, v VARCHAR(20))")
        up.execute(*[f"INSERT INTO {S}.t VALUES ({i}, 'v{i}')" for i in range(20)],
                   f"UPDATE {S}.t SET v = 'changed' WHERE id < 5", f"DELETE FROM {S}.t WHERE id >= 15")
        result, loaded, commits = _cycle(tmp_path)
        assert result["apply"]["rows_in"] == 30 and result["apply"]["ddl_applied"] == 2
        assert commits == {"prepare": 2, "filter_events": 1, "finish": 2}, commits
        assert not result["spark_session"] and "pyspark" not in loaded and "py4j" not in loaded
        # barrier's counts and apply's spread hand numpy's arrays to Arrow without asking numpy.ma
        assert not loaded & {"pandas", "numpy.ma"}, sorted(loaded & {"pandas", "numpy.ma"})
        # a config without value expressions and a changefeed without a snapshot: neither the
        # expressions' evaluator nor the copy's planner (snapshot_indexes looks for deferred indexes)
        # a window kept in memory writes no Parquet file (pyarrow.dataset, which filter reads the
        # window with, imports pyarrow's remote filesystems itself)
        unused = {"cdcflow.filter.mysql_eval", "cdcflow.snapshot.chunk_copies", "cdcflow.snapshot.copy",
                  "cdcflow.verify", "pyarrow.parquet"}
        assert "cdcflow.snapshot.deferred_indexes" in loaded and not loaded & unused, sorted(loaded & unused)
        assert_consistent(up, down, [S])

        before = _connections(up)
        result, loaded, commits = _cycle(tmp_path)  # nothing written since: an idle cycle
        assert result["pull"]["pulled"] == 0 and result["finish"]["state"] == "normal"
        assert commits == {"prepare": 2, "filter_events": 0, "finish": 2}, commits  # no window: no filter
        assert _connections(up) - before == 2  # prepare's, and this test's second look
        # nor, on a local event store, pyarrow's remote filesystems (pyarrow.fs imports them)
        idle_unused = {"pymysqlreplication", "pyspark", "pandas", "pyarrow.dataset", "pyarrow.parquet", "pyarrow.fs",
                       "pyarrow._s3fs"}
        assert not loaded & idle_unused, sorted(loaded & idle_unused)
    finally:
        for s in (up, down):
            s.execute(f"DROP DATABASE IF EXISTS {S}")
