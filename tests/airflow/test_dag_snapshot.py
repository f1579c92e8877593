"""The trigger form's mode snapshot through Airflow's dag.test(): a changefeed created on an
upstream that already held rows misses them downstream; stopped, a snapshot run copies its
tables from a new consistent point while the upstream keeps writing (progress in the task
log), resumes it there, and the next catch-up run makes the downstream equal.  A changefeed
that is not stopped is refused, naming it and what to do."""

from __future__ import annotations

import logging
import threading

import pytest

try:
    from airflow_env import parsed_changefeed_dag
except ImportError:  # tests/ imported as a package
    from tests.airflow_env import parsed_changefeed_dag

from e2e_helpers import assert_consistent, cli_ok, create_changefeed, orphan_lease, query

from cdcflow.launch.cycle_runner import run_stage
from cdcflow.core.errors import CdcflowError
from cdcflow.stages.cycle import Cycle
from cdcflow.stages.prepare import prepare
from cdcflow.store import metastore, snapshots

pytestmark = [pytest.mark.e2e, pytest.mark.airflow]

S = "dag_sn"
SNAPSHOT = {"mode": "snapshot", "start_ts": None, "target_ts": None}
CATCH_UP = {"mode": "catch-up", "start_ts": None, "target_ts": None}
CONFIG = f"force-replicate = true\n[filter]\nrules = ['{S}.*']\n[cdcflow]\nsnapshot-chunk-size = 40\nsnapshot-workers = 2\n"


def _state(run) -> str:
    return str(run.state).rsplit(".", 1)[-1].lower()


def _run(dag, conf, capsys, caplog) -> tuple[str, str]:
    """One run: its state and its task logs (dag.test() writes them to stdout, or to the log
    handlers once an earlier test configured logging: both are read)."""
    capsys.readouterr()
    caplog.clear()
    with caplog.at_level(logging.INFO):
        run = dag.test(run_conf=conf)
    return _state(run), capsys.readouterr().out + caplog.text


def _keep_writing(up, stop: threading.Event) -> None:
    conn = up.connect()
    i = 0
    try:
        with conn.cursor() as cur:
            while not stop.is_set():
                i += 1
                cur.execute(f"INSERT INTO {S}.t VALUES ({10000 + i}, 'live{i}')")
                cur.execute(f"UPDATE {S}.t SET v = 'upd{i}' WHERE id = {i % 300 + 1}")
                cur.execute(f"DELETE FROM {S}.t WHERE id = {(i * 7) % 300 + 1}")
                cur.execute(f"INSERT INTO {S}.k VALUES ({i % 5}, 'w')")
    finally:
        conn.close()


def test_mode_snapshot_copies_a_stopped_changefeed_then_catch_up_replicates(mariadb_pair, airflow_home, capsys,
                                                                           caplog):
    up, down = mariadb_pair
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {S}")
    up.execute(f"CREATE DATABASE {S}", f"CREATE TABLE {S}.t (id INT PRIMARY KEY, v VARCHAR(20))",
               f"CREATE TABLE {S}.k (a INT, s VARCHAR(10))",
               f"INSERT INTO {S}.t VALUES " + ", ".join(f"({i}, 'v{i}')" for i in range(1, 301)),
               f"INSERT INTO {S}.k VALUES (1, 'x'), (1, 'x'), (NULL, NULL)")
    create_changefeed(capsys, up, down, "dag-sn", CONFIG)  # starts after the rows: a cycle never sees them
    dag = parsed_changefeed_dag("dag-sn")

    state, log = _run(dag, SNAPSHOT, capsys, caplog)  # normal: refused, nothing changes
    assert state == "failed"
    assert "changefeed dag-sn" in log and "a snapshot needs the changefeed stopped; it is normal" in log
    assert "cdcflow changefeed pause -c dag-sn" in log
    assert snapshots.get("dag-sn") is None and metastore.get_feed("dag-sn").state == "normal"

    cli_ok(capsys, "changefeed", "pause", "-c", "dag-sn")
    up.execute(f"UPDATE {S}.t SET v = 'while stopped' WHERE id = 5", f"DELETE FROM {S}.t WHERE id = 6")
    stop = threading.Event()
    writer = threading.Thread(target=_keep_writing, args=(up, stop), daemon=True)
    writer.start()
    try:
        state, log = _run(dag, SNAPSHOT, capsys, caplog)
    finally:
        stop.set()
        writer.join()
    assert state == "success", log[-3000:]
    status = query(capsys, "dag-sn")
    progress = status["cdcflow"]["snapshot"]
    assert progress["status"] == "done" and progress["chunks_done"] == progress["chunks_total"] >= 8, progress
    assert f"snapshot dag-sn: {progress['chunks_total']}/{progress['chunks_total']} chunks" in log
    assert "rows/s" in log
    assert status["state"] == "normal"  # resumed at the copy's point
    assert status["cdcflow"]["checkpoint_position"]["pos"] == progress["position"]["pos"]
    assert status["cdcflow"]["last_runs"] == []  # a snapshot is no cycle

    up.execute(f"INSERT INTO {S}.t VALUES (5000, 'after')", f"DELETE FROM {S}.k WHERE a IS NULL")
    state, log = _run(dag, CATCH_UP, capsys, caplog)
    assert state == "success", log[-3000:]
    assert_consistent(up, down, [S])
    for s in (up, down):
        s.execute(f"DROP DATABASE {S}")


def test_mode_snapshot_waits_for_a_live_cycle_and_replaces_a_dag_run_left_open(mariadb_pair, airflow_home, capsys,
                                                                               caplog):
    """A cycle prepared before the pause holds the changefeed's lease: while its process lives a
    snapshot is refused (its apply would write the tables the copy writes); once only a DAG run
    left open between its tasks remains (no live holder), the snapshot replaces it, and that
    run's next stage stops, changing nothing."""
    up, down = mariadb_pair
    s2 = "dag_sn2"
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {s2}")
    up.execute(f"CREATE DATABASE {s2}", f"CREATE TABLE {s2}.t (id INT PRIMARY KEY, v VARCHAR(20))",
               f"INSERT INTO {s2}.t VALUES " + ", ".join(f"({i}, 'v{i}')" for i in range(1, 51)))
    create_changefeed(capsys, up, down, "dag-sn2", CONFIG.replace(S, s2))
    dag = parsed_changefeed_dag("dag-sn2")
    open_run = "airflow__left_open"
    assert not prepare(Cycle.load("dag-sn2", open_run)).skip  # holds the lease, as a running prepare task does
    cli_ok(capsys, "changefeed", "pause", "-c", "dag-sn2")

    state, log = _run(dag, SNAPSHOT, capsys, caplog)
    assert state == "failed"
    assert "changefeed dag-sn2" in log and "a snapshot cannot start while a cycle of the changefeed runs" in log
    assert "wait for that cycle to end" in log and snapshots.get("dag-sn2") is None
    assert metastore.get_feed("dag-sn2").state == "stopped"

    orphan_lease("dag-sn2")  # the prepare task's process has ended: its run stays open, unheld
    state, log = _run(dag, SNAPSHOT, capsys, caplog)
    assert state == "success", log[-3000:]
    left = metastore.get_run("dag-sn2", open_run)
    assert left.status == "superseded" and left.stats["superseded_by"].startswith("snapshot-"), left
    feed = metastore.get_feed("dag-sn2")
    assert feed.state == "normal" and feed.lease_owner is None
    with pytest.raises(CdcflowError) as stopped:
        run_stage("pull", None, Cycle.load("dag-sn2", open_run))
    assert stopped.value.code == "CDCFLOW:ErrCycleSuperseded"

    up.execute(f"INSERT INTO {s2}.t VALUES (500, 'after')")
    state, log = _run(dag, CATCH_UP, capsys, caplog)
    assert state == "success", log[-3000:]
    assert_consistent(up, down, [s2])
    for s in (up, down):
        s.execute(f"DROP DATABASE {s2}")


def _last_mode(changefeed_id: str) -> str:
    """The mode `query` and the Changefeeds page show for the changefeed's latest run."""
    from cdcflow.changefeed.status_view import run_summary  # lazy: as table_copies below, for these tests only

    return run_summary(metastore.recent_runs(changefeed_id, 1)[0])["mode"]


def test_modes_add_tables_and_resync_tables_copy_tables_while_the_changefeed_runs(mariadb_pair, airflow_home,
                                                                                  capsys, caplog):
    """The trigger form's add-tables and resync-tables: the run records the copy and catches up,
    its apply joining the table; the next runs copy it on while the other table replicates."""
    from cdcflow.store import table_copies

    up, down = mariadb_pair
    schema = "dag_at"
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {schema}")
    down.execute(f"CREATE DATABASE {schema}", f"CREATE TABLE {schema}.a (id INT PRIMARY KEY, v VARCHAR(20))")
    up.execute(f"CREATE DATABASE {schema}", f"CREATE TABLE {schema}.a (id INT PRIMARY KEY, v VARCHAR(20))",
               f"CREATE TABLE {schema}.b (id INT PRIMARY KEY, v VARCHAR(20), UNIQUE KEY uv (v))",
               f"INSERT INTO {schema}.b SELECT seq, CONCAT('b', seq) FROM {schema}.seq_1_to_3000")
    create_changefeed(capsys, up, down, "dag-at", f"[filter]\nrules = ['{schema}.a']\n[cdcflow]\n"
                                                  "snapshot-chunk-size = 200\ntable-copy-seconds = 1\n")
    dag = parsed_changefeed_dag("dag-at")

    state, log = _run(dag, {**CATCH_UP, "mode": "add-tables"}, capsys, caplog)  # no tables: refused at prepare
    assert state == "failed" and "changefeed dag-at" in log and "mode add-tables needs tables" in log
    state, log = _run(dag, {**CATCH_UP, "mode": "add-tables", "tables": f"{schema}.b"}, capsys, caplog)
    assert state == "success", log[-3000:]
    assert table_copies.all_of("dag-at")[0]["status"] in ("copying", "replaying", "done")  # the run joined it
    assert _last_mode("dag-at") == "add-tables"  # as the page shows the run
    for i in range(30):
        if table_copies.all_of("dag-at")[0]["status"] == "done":
            break
        up.execute(f"INSERT INTO {schema}.a VALUES ({i}, 'a')",
                   f"UPDATE {schema}.b SET v = 'moved{i}' WHERE id = {i + 1}")
        assert _run(dag, CATCH_UP, capsys, caplog)[0] == "success"
    assert table_copies.all_of("dag-at")[0]["status"] == "done"
    assert_consistent(up, down, [schema])

    down.execute(f"DELETE FROM {schema}.b WHERE id % 5 = 0")  # damaged downstream: copied again
    state, log = _run(dag, {**CATCH_UP, "mode": "resync-tables", "tables": f"{schema}.b"}, capsys, caplog)
    assert state == "success", log[-3000:]
    assert _last_mode("dag-at") == "resync-tables"
    for _ in range(30):
        if table_copies.all_of("dag-at")[0]["status"] == "done":
            break
        assert _run(dag, CATCH_UP, capsys, caplog)[0] == "success"
    assert table_copies.all_of("dag-at")[0]["kind"] == "resync"
    assert_consistent(up, down, [schema])
