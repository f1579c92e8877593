"""Asynchronous ADD INDEX on a TiDB downstream (TiCDC's DDL-replication doc), end to end.

TiDB cannot run on these machines. The downstream here is a TiDB stand-in
(cdcflow_devtools.tidb_standin): a real MariaDB server executes the rows and the DDL,
while SELECT VERSION(), ADMIN SHOW DDL JOBS and TiDB's DDL history are answered from
the recorded result sets in tests/tidb_recorded/ (TiDB's documented columns and
states), and an ADD INDEX sent without waiting is answered as TiDB answers one that
is still building.  Upstream, pull, filter, barrier and apply (Spark local mode) and
the metadata store are the real ones.
"""

from __future__ import annotations

import json
import logging

import pytest
from e2e_helpers import assert_consistent, backdate, index_jobs_of
from tidb_standin_helpers import SCHEMA, start_tidb_changefeed, tidb  # noqa: F401 - tidb: a fixture

from cdcflow import cli
from cdcflow.core.errors import CdcflowError
from cdcflow.launch.in_process import run_cycle
from cdcflow.stages.cycle import Cycle
from cdcflow.stages.wait_index import wait_index
from cdcflow.store import index_jobs, metastore

pytestmark = pytest.mark.e2e


def _columns(down, table: str) -> list[str]:
    return [r[0] for r in down.query("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s "
                                     "AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION", (SCHEMA, table))]


def _indexes(down, table: str) -> set[str]:
    return {r[0] for r in down.query("SELECT INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = %s "
                                     "AND TABLE_NAME = %s", (SCHEMA, table))}


def test_dml_flows_past_async_add_index_next_ddl_on_that_table_waits_and_a_restart_resumes(
        tidb, mariadb_pair, spark, capsys):
    up, down = mariadb_pair
    standin = start_tidb_changefeed(tidb, capsys, mariadb_pair, spark, "tidb-async")
    assert standin.async_submissions == []  # CREATE TABLE is not index DDL

    standin.on_submit = "queueing"  # TiDB accepts the job and queues it
    up.execute(f"ALTER TABLE {SCHEMA}.t ADD INDEX iv (v)",
               f"INSERT INTO {SCHEMA}.t VALUES (3, 30)",  # DML after the ADD INDEX
               f"ALTER TABLE {SCHEMA}.u ADD COLUMN d INT",  # a DDL on another table
               f"INSERT INTO {SCHEMA}.u VALUES (2, 2, 2)",
               f"ALTER TABLE {SCHEMA}.t ADD COLUMN w INT",  # the next DDL on t
               f"INSERT INTO {SCHEMA}.t VALUES (4, 40, 4)")
    result = run_cycle("tidb-async", spark=spark)

    assert standin.async_submissions == [f"ALTER TABLE {SCHEMA}.t ADD INDEX iv (v)"]
    # the row after the ADD INDEX is applied while TiDB still shows the job queueing
    assert down.query(f"SELECT id, v FROM {SCHEMA}.t ORDER BY id") == [(1, 10), (2, 20), (3, 30)]
    # the DDL on the other table did not wait, nor did the rows after it
    assert _columns(down, "u") == ["id", "c", "d"]
    assert down.query(f"SELECT * FROM {SCHEMA}.u ORDER BY id") == [(1, 1, None), (2, 2, 2)]
    # the next DDL on t waits: not sent, checkpoint just below its barrier
    assert _columns(down, "t") == ["id", "v"]
    assert not any("ADD COLUMN w" in s for s in standin.statements)
    barrier = result["apply"]["index_wait"]
    assert barrier["jobs"] == [122]
    feed = metastore.get_feed("tidb-async")
    assert feed.checkpoint_ts == barrier["commit_ts"] - 1 and feed.state == "normal"
    wait = result["wait_index"]
    assert wait["done"] is False and wait["waiting_at"] == barrier["commit_ts"]
    assert "index iv on tidb_async.t (TiDB job 122" in wait["waiting_for"][0]
    (job,) = index_jobs.pending("tidb-async")
    assert (job.job_id, job.index_name, job.table, job.tidb_state) == (122, "iv", "tidb_async.t", "queueing")
    assert job.commit_ts < barrier["commit_ts"]
    assert standin.queued_behind == []

    # a restart: a new process, TiDB now shows the job running; only the metadata store remembers
    restarted = tidb.new(show="running")
    poke = wait_index(None, Cycle.load("tidb-async", result["run_id"]))  # the sensor's next poke
    assert poke.done is False and poke.pending == [122]
    again = run_cycle("tidb-async", spark=spark)  # `cdcflow changefeed run` meanwhile
    assert again["apply"]["index_wait"] == barrier and again["wait_index"]["done"] is False
    assert restarted.statements == []  # neither the ADD INDEX again nor the waiting DDL
    assert metastore.get_feed("tidb-async").checkpoint_ts == barrier["commit_ts"] - 1

    restarted.show("synced")
    assert wait_index(None, Cycle.load("tidb-async", again["run_id"])).done is True
    last = run_cycle("tidb-async", spark=spark)
    assert "index_wait" not in last["apply"] and last["wait_index"]["done"] is True
    assert [s for s in restarted.statements] == [f"ALTER TABLE {SCHEMA}.t ADD COLUMN w INT"]
    assert restarted.queued_behind == []
    assert_consistent(up, down, [SCHEMA])
    assert "iv" in _indexes(down, "t")
    assert [(j.job_id, j.status, j.tidb_state) for j in index_jobs_of("tidb-async")] == [(122, "done", "synced")]
    assert metastore.get_feed("tidb-async").state == "normal"


@pytest.mark.parametrize("state, tidb_text", [("cancelled", "[8214] Cancelled DDL job"),
                                              ("rollback done", "[1062] Duplicate entry '7' for key 't.iv'")])
def test_a_failed_index_build_fails_the_changefeed_naming_table_index_ts_and_tidbs_error(
        tidb, mariadb_pair, spark, capsys, state, tidb_text):
    up, down = mariadb_pair
    changefeed_id = "tidb-fail-" + state.replace(" ", "-")
    standin = start_tidb_changefeed(tidb, capsys, mariadb_pair, spark, changefeed_id, on_submit="running")
    up.execute(f"CREATE UNIQUE INDEX iv ON {SCHEMA}.t (v)", f"INSERT INTO {SCHEMA}.t VALUES (3, 30)")
    first = run_cycle(changefeed_id, spark=spark)
    assert first["wait_index"]["done"] is True  # no DDL waits for it: DML keeps flowing
    assert first["wait_index"]["pending"] == [122]
    (job,) = index_jobs.pending(changefeed_id)

    standin.show(state)  # TiDB gave the job up and rolled the index back
    down.execute(f"ALTER TABLE {SCHEMA}.t DROP INDEX iv")
    with pytest.raises(CdcflowError) as e:
        run_cycle(changefeed_id, spark=spark)
    text = str(e.value)
    for part in ("index iv on tidb_async.t", "TiDB job 122", f"commit ts {job.commit_ts}", f"ended {state}",
                 tidb_text, "CREATE UNIQUE INDEX iv"):
        assert part in text, part
    feed = metastore.get_feed(changefeed_id)
    assert feed.state == "failed" and tidb_text in feed.error["message"]
    assert feed.error["code"] == "CDCFLOW:ErrAsyncIndexFailed"
    assert [(j.status, j.tidb_state) for j in index_jobs_of(changefeed_id)] == [("failed", state)]


def test_without_super_index_ddl_runs_synchronously_and_says_why(tidb, mariadb_pair, spark, capsys, caplog):
    up, down = mariadb_pair
    standin = start_tidb_changefeed(tidb, capsys, mariadb_pair, spark, "tidb-nosuper", super_privilege=False)
    up.execute(f"ALTER TABLE {SCHEMA}.t ADD INDEX iv (v)", f"INSERT INTO {SCHEMA}.t VALUES (3, 30)",
               f"ALTER TABLE {SCHEMA}.t ADD COLUMN w INT", f"INSERT INTO {SCHEMA}.t VALUES (4, 40, 4)")
    with caplog.at_level(logging.WARNING, logger="cdcflow"):
        result = run_cycle("tidb-nosuper", spark=spark)
    assert any("run synchronously" in r.getMessage() and "SUPER privilege" in r.getMessage()
               for r in caplog.records)
    assert standin.async_submissions == []
    assert standin.statements[-2:] == [f"ALTER TABLE {SCHEMA}.t ADD INDEX iv (v)",
                                       f"ALTER TABLE {SCHEMA}.t ADD COLUMN w INT"]
    assert "index_wait" not in result["apply"] and result["wait_index"]["done"] is True
    assert index_jobs_of("tidb-nosuper") == []
    assert_consistent(up, down, [SCHEMA])
    assert "iv" in _indexes(down, "t")


def test_a_job_tidb_shows_running_on_the_table_is_waited_for_never_joined(tidb, mariadb_pair, spark, capsys):
    up, down = mariadb_pair
    standin = start_tidb_changefeed(tidb, capsys, mariadb_pair, spark, "tidb-busy")
    standin.statements.clear()
    standin.show("other job running on t")  # an index build cdcflow did not submit
    up.execute(f"ALTER TABLE {SCHEMA}.t ADD COLUMN w INT", f"INSERT INTO {SCHEMA}.t VALUES (3, 30, 3)")
    first = run_cycle("tidb-busy", spark=spark)
    assert first["apply"]["index_wait"]["jobs"] == [130] and first["wait_index"]["done"] is False
    assert standin.statements == [] and standin.queued_behind == []
    (job,) = index_jobs.pending("tidb-busy")
    assert (job.job_id, job.commit_ts, job.index_name) == (130, None, None)
    assert "not submitted by cdcflow" in job.what()

    standin.show("other job synced on t")
    second = run_cycle("tidb-busy", spark=spark)
    assert "index_wait" not in second["apply"]
    assert standin.statements == [f"ALTER TABLE {SCHEMA}.t ADD COLUMN w INT"] and standin.queued_behind == []
    assert_consistent(up, down, [SCHEMA])


def test_an_add_index_sent_before_a_crash_is_adopted_not_sent_again(tidb, mariadb_pair, spark, capsys, monkeypatch):
    up, down = mariadb_pair
    standin = start_tidb_changefeed(tidb, capsys, mariadb_pair, spark, "tidb-crash", on_submit="running")
    up.execute(f"ALTER TABLE {SCHEMA}.t ADD INDEX iv (v)", f"INSERT INTO {SCHEMA}.t VALUES (3, 30)")

    def crash(*a, **kw):
        raise ConnectionError("the metadata store went away after TiDB accepted the job")

    with monkeypatch.context() as m:  # TiDB took the job; cdcflow died before writing it down
        m.setattr(index_jobs, "record", crash)
        with pytest.raises(CdcflowError):
            run_cycle("tidb-crash", spark=spark)
    assert standin.async_submissions == [f"ALTER TABLE {SCHEMA}.t ADD INDEX iv (v)"]
    feed = metastore.get_feed("tidb-crash")
    assert feed.state == "warning" and feed.ddl_in_flight_ts is not None
    assert index_jobs_of("tidb-crash") == []

    backdate("tidb-crash", 11, "next_retry_at")  # the warning's first backoff (10 s) runs out
    result = run_cycle("tidb-crash", spark=spark)  # the replay finds job 122 running: adopts it
    assert len(standin.async_submissions) == 1 and standin.queued_behind == []
    (job,) = index_jobs.pending("tidb-crash")
    assert (job.job_id, job.commit_ts, job.index_name) == (122, feed.ddl_in_flight_ts, "iv")
    assert down.query(f"SELECT id FROM {SCHEMA}.t ORDER BY id") == [(1,), (2,), (3,)]
    assert metastore.get_feed("tidb-crash").state == "normal"
    assert result["wait_index"]["pending"] == [122]


def test_cli_run_says_where_it_stopped(tidb, mariadb_pair, spark, capsys, monkeypatch):
    up, down = mariadb_pair
    standin = start_tidb_changefeed(tidb, capsys, mariadb_pair, spark, "tidb-cli", on_submit="running")
    up.execute(f"ALTER TABLE {SCHEMA}.t ADD INDEX iv (v)", f"ALTER TABLE {SCHEMA}.t DROP COLUMN v")
    import cdcflow.launch.in_process as in_process

    monkeypatch.setattr(in_process, "run_cycle", lambda changefeed_id, dry_run=False, **kw: run_cycle(changefeed_id,
                                                                                                      spark=spark, dry_run=dry_run))
    capsys.readouterr()
    assert cli.main(["changefeed", "run", "-c", "tidb-cli"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["wait_index"]["done"] is False
    assert "Changefeed tidb-cli stopped at commit ts" in out.err and "index iv on tidb_async.t" in out.err
    assert standin.statements[-1] == f"ALTER TABLE {SCHEMA}.t ADD INDEX iv (v)"
