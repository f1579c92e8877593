"""`[cdcflow] follow-seconds`: a catch-up run of the DAG has its `follow` task run its cycles
back to back as the binlog moves, each recorded as its own, until the time is up or the
changefeed stops, the cycle's own tasks skipped; a run of another mode runs its one cycle.  Real MariaDB servers,
Airflow's dag.test(), the stages on the session's Spark Connect server."""

from __future__ import annotations

import threading
import time

import pytest

try:
    from airflow_env import parsed_changefeed_dag
except ImportError:  # tests/ imported as a package
    from tests.airflow_env import parsed_changefeed_dag

from e2e_helpers import assert_consistent, create_changefeed

from cdcflow.changefeed import commands
from cdcflow.store import metastore

pytestmark = [pytest.mark.e2e, pytest.mark.airflow]

S = "e2e_dag_follow"
CF = "dag-follow"
FOLLOW_S = 90  # the bound: the writer pauses the changefeed well before, which ends the follow
ROWS = 4


def _state(x) -> str:
    return str(getattr(x, "value", x))


def _events(uri: str) -> list:
    from airflow.models.asset import AssetEvent, AssetModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        return [(e.source_task_id, e.extra) for e in session.scalars(
            select(AssetEvent).join(AssetModel, AssetEvent.asset_id == AssetModel.id)
            .where(AssetModel.uri == uri).order_by(AssetEvent.id))]


class Writer(threading.Thread):
    """Once the run's first cycle has ended, a row at a time upstream, each waited for downstream;
    then the changefeed paused, which ends the follow.  What went wrong is kept for the test."""

    def __init__(self, up, down):
        super().__init__(daemon=True)
        self.up, self.down, self.error, self.arrived = up, down, None, []

    def run(self) -> None:
        try:
            self._wait(lambda: any(r.ended_at for r in metastore.recent_runs(CF, limit=5)), "the first cycle")
            for i in range(1, ROWS + 1):
                self.up.execute(f"INSERT INTO {S}.t VALUES ({i}, 'r{i}')", f"UPDATE {S}.t SET v = 'u' WHERE id < {i}")
                self._wait(lambda: self.down.query(f"SELECT COUNT(*) FROM {S}.t WHERE id = {i}")[0][0], f"row {i}")
                self.arrived.append(i)
        except BaseException as e:  # noqa: BLE001 - reported by the test
            self.error = e
        finally:
            commands.pause(CF)

    @staticmethod
    def _wait(done, what: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                raise AssertionError(f"{what}: not within {timeout} s")
            time.sleep(0.05)


def test_a_catch_up_run_follows_the_binlog_until_the_changefeed_stops(mariadb_pair, airflow_home, capsys):
    up, down = mariadb_pair
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {S}")
    create_changefeed(capsys, up, down, CF, f"[filter]\nrules = ['{S}.*']\n[cdcflow]\nfollow-seconds = {FOLLOW_S}\n")
    up.execute(f"CREATE DATABASE {S}", f"CREATE TABLE {S}.t (id INT PRIMARY KEY, v VARCHAR(20))")
    dag = parsed_changefeed_dag(CF)
    follow = dag.get_task("follow")
    assert follow.upstream_task_ids == {"prepare"} and follow.pool == "cdcflow_spark"
    assert f"for {FOLLOW_S} s" in dag.doc_md

    writer = Writer(up, down)
    writer.start()
    started = time.time()
    run = dag.test()
    writer.join(timeout=30)
    assert writer.error is None, writer.error
    assert writer.arrived == list(range(1, ROWS + 1))
    assert _state(run.state) == "success", run.state
    assert _state(run.get_task_instance("follow").state) == "success"
    # the cycle's own tasks: skipped by prepare at once, finish closing nothing
    assert {t: _state(run.get_task_instance(t).state) for t in ("pull", "apply", "wait_index", "finish")} == \
        {"pull": "skipped", "apply": "skipped", "wait_index": "skipped", "finish": "success"}
    assert time.time() - started < FOLLOW_S  # the pause ended it, not the time
    assert_consistent(up, down, [S])

    cycles = [r for r in metastore.recent_runs(CF, limit=50) if r.started_at >= started]
    # the first cycle (the tables' DDL), then at least one per row (each written once the one before arrived)
    assert len(cycles) >= 1 + ROWS, [r.run_id for r in cycles]
    assert all(r.run_id.startswith("airflow__") and r.status == "done" for r in cycles)
    feed = metastore.get_feed(CF)
    assert feed.state == "stopped" and feed.lease_owner is None
    # the tables its cycles changed, announced by the follow task with the last cycle's checkpoint
    from cdcflow_airflow.assets import table_asset

    events = _events(table_asset(down.uri, S, "t").uri)
    assert events[-1][0] == "follow" and events[-1][1]["checkpoint_ts"] == feed.checkpoint_ts

    # a stopped changefeed's run opens no cycle and says why (its follow task skipped with the stages)
    run = dag.test()
    assert _state(run.state) == "success" and _state(run.get_task_instance("follow").state) == "skipped"
    assert metastore.get_feed(CF).checkpoint_ts == feed.checkpoint_ts
    assert [r for r in metastore.recent_runs(CF, limit=50) if r.started_at >= started] == cycles

    # a run of another mode does its one thing and does not follow
    assert commands.resume(CF)[1] == "normal"
    up.execute(f"INSERT INTO {S}.t VALUES (100, 'dry')")
    before = len(metastore.recent_runs(CF, limit=50))
    run = dag.test(run_conf={"mode": "dry-run"})
    assert _state(run.state) == "success" and _state(run.get_task_instance("follow").state) == "success"
    assert len(metastore.recent_runs(CF, limit=50)) == before + 1  # the dry run's cycle alone
    assert down.query(f"SELECT COUNT(*) FROM {S}.t WHERE id = 100") == [(0,)]

