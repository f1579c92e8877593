"""Reading TiDB's ADMIN SHOW DDL JOBS, deciding pending/done/failed, and detecting the downstream kind.

TiDB cannot run here: the result sets in tests/tidb_recorded/ stand in for it (TiDB's
documented columns and values), served through the same DB-API calls a real pymysql
connection to TiDB gets (cdcflow_devtools.tidb_standin over a real MariaDB server).
"""

from __future__ import annotations

import json
from pathlib import Path

import pymysql
import pytest
from e2e_helpers import index_jobs_of

from cdcflow_devtools.mariadb import HOST, ROOT_PASSWORD, ROOT_USER
from cdcflow_devtools.tidb_standin import VERSION, TiDBStandIn
from cdcflow.sink import async_index, connection, downstream, tidb_ddl_jobs
from cdcflow.source.binlog import Position
from cdcflow.stages.contracts import DdlEntry

RECORDED = Path(__file__).resolve().parents[1] / "tidb_recorded" / "admin_show_ddl_jobs.json"
SETS = json.loads(RECORDED.read_text())

# The six states the issue names, as the recorded sets show job 122 (the ADD INDEX on tidb_async.t).
STATE_SETS = [("queueing", "queueing", "pending"), ("running", "running", "pending"), ("done", "done", "done"),
              ("synced", "synced", "done"), ("cancelled", "cancelled", "failed"),
              ("rollback done", "rollback done", "failed")]


@pytest.fixture
def standin(mariadb_pair):
    _, down = mariadb_pair
    sink = {"host": HOST, "port": down.port, "user": ROOT_USER, "password": ROOT_PASSWORD}
    s = TiDBStandIn(RECORDED, connection.connect)
    conn = s.connect(sink)
    yield s, conn
    conn.close()


def test_recorded_sets_have_tidbs_documented_columns():
    assert SETS["columns"] == list(tidb_ddl_jobs.COLUMNS)
    for name, rows in SETS["sets"].items():
        assert all(len(r) == len(tidb_ddl_jobs.COLUMNS) for r in rows), name


@pytest.mark.parametrize("set_name, state, outcome", STATE_SETS)
def test_each_state_through_a_connection(standin, set_name, state, outcome):
    s, conn = standin
    s.show(set_name)
    job = tidb_ddl_jobs.find(conn, 122)
    assert (job.job_id, job.db_name, job.table_name, job.state) == (122, "tidb_async", "t", state)
    assert job.is_add_index
    assert job.outcome == outcome
    active = tidb_ddl_jobs.active_on(conn, "tidb_async", "T")  # TiDB names are case-insensitive
    assert [j.job_id for j in active] == ([122] if outcome == "pending" else [])
    assert tidb_ddl_jobs.active_on(conn, "tidb_async", "u") == []


@pytest.mark.parametrize("state, outcome", sorted(tidb_ddl_jobs.STATE_OUTCOME.items()))
def test_every_tidb_job_state_has_one_outcome(state, outcome):
    row = dict(zip(tidb_ddl_jobs.COLUMNS, SETS["sets"]["running"][0]))
    row["STATE"] = state.upper() if state == "running" else state
    (job,) = tidb_ddl_jobs.parse([(c,) for c in row], [list(row.values())])
    assert job.outcome == outcome
    expected = {"none": "pending", "queueing": "pending", "running": "pending", "pausing": "pending",
                "paused": "pending", "done": "done", "synced": "done", "cancelling": "failed",
                "cancelled": "failed", "rollingback": "failed", "rollback done": "failed"}
    assert expected[state] == outcome


def test_unknown_state_is_an_error_not_a_guess():
    row = list(SETS["sets"]["running"][0])
    row[-1] = "exploded"
    (job,) = tidb_ddl_jobs.parse([(c,) for c in tidb_ddl_jobs.COLUMNS], [row])
    with pytest.raises(ValueError, match="exploded"):
        job.outcome


def test_older_and_newer_column_shapes_parse():
    older = [c for c in tidb_ddl_jobs.COLUMNS if c != "CREATE_TIME"]  # before CREATE_TIME was added
    row = dict(zip(tidb_ddl_jobs.COLUMNS, SETS["sets"]["running"][0]))
    (job,) = tidb_ddl_jobs.parse([(c,) for c in older], [[row[c] for c in older]])
    assert (job.job_id, job.state, job.create_time, job.row_count) == (122, "running", None, 88576)
    newer = list(tidb_ddl_jobs.COLUMNS) + ["QUERY", "COMMENTS"]
    (job,) = tidb_ddl_jobs.parse([(c,) for c in newer], [list(row.values()) + ["ALTER TABLE t ADD INDEX iv(v)", ""]])
    assert job.job_type == "add index /* txn-merge */" and job.end_time is None
    with pytest.raises(ValueError, match="STATE"):
        tidb_ddl_jobs.parse([(c,) for c in tidb_ddl_jobs.COLUMNS[:-1]], [])


def test_submitted_job_is_the_first_add_index_past_the_newest_before(standin):
    s, conn = standin
    assert tidb_ddl_jobs.newest_job_id(conn) == 121
    assert tidb_ddl_jobs.submitted_after(conn, 121, "tidb_async", "t") is None
    s.show("queueing")
    assert tidb_ddl_jobs.submitted_after(conn, 121, "tidb_async", "t").job_id == 122
    assert tidb_ddl_jobs.submitted_after(conn, 122, "tidb_async", "t") is None
    assert tidb_ddl_jobs.submitted_after(conn, 121, "tidb_async", "u") is None


def test_missing_super_is_told_apart_from_other_errors(standin):
    s, conn = standin
    assert tidb_ddl_jobs.can_show_jobs(conn) == (True, None)
    s.super_privilege = False
    ok, why = tidb_ddl_jobs.can_show_jobs(conn)
    assert not ok and "SUPER privilege" in why
    # a MySQL/MariaDB server has no ADMIN SHOW DDL JOBS at all: not "missing SUPER"
    ok, why = tidb_ddl_jobs.can_show_jobs(conn.real)
    assert not ok and "SUPER" not in why and "ADMIN SHOW DDL JOBS failed" in why


def test_tidb_error_text_from_the_ddl_history(standin):
    s, conn = standin
    s.show("rollback done")
    assert tidb_ddl_jobs.error_text(conn, 122) == "[1062] Duplicate entry '7' for key 't.iv'"
    s.show("cancelled")
    assert tidb_ddl_jobs.error_text(conn, 122) == "[8214] Cancelled DDL job"
    s.show("running")
    assert tidb_ddl_jobs.error_text(conn, 122) is None
    # a real MariaDB has no such table: no text, no exception
    assert tidb_ddl_jobs.error_text(conn.real, 122) is None


@pytest.mark.parametrize("version, scheme, kind", [
    (VERSION, "mysql", "tidb"),
    ("5.7.25-TiDB-v7.5.0", "mysql", "tidb"),
    ("8.0.11", "tidb", "tidb"),  # TiDB with server-version set: the scheme says so
    ("10.11.6-MariaDB-0+deb12u1", "mysql", "mysql"),
    ("8.0.36", "mysql", "mysql"),
])
def test_downstream_kind(version, scheme, kind):
    assert downstream.kind_of(version, scheme) == kind


def test_downstream_kind_from_real_servers(standin, mariadb_pair):
    _, conn = standin
    assert downstream.detect(conn, "mysql") == ("tidb", VERSION)
    kind, version = downstream.detect(conn.real, "mysql")
    assert kind == "mysql" and "MariaDB" in version


@pytest.mark.parametrize("query, name", [
    ("CREATE INDEX iv ON t (v)", "iv"),
    ("create unique index `my idx` on t(v)", "my idx"),
    ("ALTER TABLE t ADD INDEX iv (v)", "iv"),
    ("ALTER TABLE t ADD INDEX IF NOT EXISTS iv USING BTREE (v)", "iv"),
    ("alter table t add unique key uv(v)", "uv"),
    ("ALTER TABLE t ADD CONSTRAINT c1 UNIQUE KEY k1 (v)", "k1"),
    ("ALTER TABLE t ADD KEY (v)", None),
])
def test_index_name(query, name):
    assert async_index.index_name(query) == name


def test_standin_passes_everything_else_to_mariadb(standin):
    _, conn = standin
    with conn.cursor() as cur:
        cur.execute("SELECT 1 + %s", (1,))
        assert cur.fetchone() == (2,)
        assert cur.description[0][0] == "1 + 1"
    with pytest.raises(pymysql.err.ProgrammingError):
        with conn.cursor() as cur:
            cur.execute("SELECT * FROM no_such_schema.no_such_table")


# -- which DDL waits for a pending job, and a job TiDB no longer lists (no Spark needed)

def _pending_job_122(changefeed_id: str) -> None:
    from cdcflow.store import index_jobs

    index_jobs.record(changefeed_id, 122, commit_ts=1000, schema="tidb_async", table="t", index_name="iv",
                      query="ALTER TABLE tidb_async.t ADD INDEX iv (v)", tidb_state="running")


def _ddl(query: str, tables: list[list[str]], ts: int = 2000, type: str | None = None) -> DdlEntry:
    return DdlEntry(commit_ts=ts, query=query, default_schema="tidb_async", sql_mode="", tables=tables, type=type,
                    start_pos=Position("b.1", 4), end_pos=Position("b.1", 90))


@pytest.mark.parametrize("query, tables, waits", [
    ("ALTER TABLE tidb_async.t ADD COLUMN w INT", [["tidb_async", "t"]], True),
    ("ALTER TABLE TIDB_ASYNC.T DROP INDEX iv", [["TIDB_ASYNC", "T"]], True),  # names compare case-insensitively
    ("RENAME TABLE tidb_async.t TO tidb_async.t2", [["tidb_async", "t"], ["tidb_async", "t2"]], True),
    ("DROP DATABASE tidb_async", [], True),  # schema-level DDL on the job's schema
    ("ALTER TABLE tidb_async.u ADD COLUMN w INT", [["tidb_async", "u"]], False),
    ("CREATE DATABASE other_db", [], False),
])
def test_which_ddl_waits_for_a_pending_index(standin, cdcflow_home, query, tables, waits):
    from cdcflow.store import metastore

    s, conn = standin
    metastore.create_feed("blockers", 1, {})
    _pending_job_122("blockers")
    s.show("running")
    index_ddl = async_index.IndexDDL("blockers", conn, {}, "tidb", True, None)
    found = index_ddl.blockers(_ddl(query, tables), replay=False)
    assert [j.job_id for j in found] == ([122] if waits else [])


def test_mysql_downstream_never_waits(standin, cdcflow_home):
    from cdcflow.store import metastore

    _, conn = standin
    metastore.create_feed("on-mariadb", 1, {})
    _pending_job_122("on-mariadb")
    index_ddl = async_index.IndexDDL("on-mariadb", conn.real, {}, "mysql", False, None)
    assert index_ddl.blockers(_ddl("ALTER TABLE tidb_async.t ADD COLUMN w INT", [["tidb_async", "t"]]), False) == []
    assert not index_ddl.is_async(_ddl("ALTER TABLE tidb_async.t ADD INDEX i (v)", [["tidb_async", "t"]],
                                    type="add index"))


@pytest.mark.parametrize("index_exists", [True, False])
def test_a_job_gone_from_the_history_is_judged_by_the_index(standin, mariadb_pair, cdcflow_home, index_exists):
    from cdcflow.store import index_jobs, metastore

    _, down = mariadb_pair
    s, conn = standin
    down.execute("DROP DATABASE IF EXISTS tidb_async", "CREATE DATABASE tidb_async",
                 "CREATE TABLE tidb_async.t (id INT PRIMARY KEY, v INT" + (", KEY iv (v))" if index_exists else ")"))
    metastore.create_feed("gone", 1, {})
    _pending_job_122("gone")
    s.show("before")  # job 122 is neither running nor among the recent finished jobs
    if index_exists:
        assert async_index.poll(conn, "gone", index_jobs.pending("gone")) == []
        assert [(j.status, j.tidb_state) for j in index_jobs_of("gone")] == [("done", "finished")]
    else:
        with pytest.raises(async_index.IndexBuildFailed, match="no longer lists the job and the index is missing"):
            async_index.poll(conn, "gone", index_jobs.pending("gone"))
        assert [j.status for j in index_jobs_of("gone")] == ["failed"]
