"""sink.ddl_sink: one DDL on the downstream, marked in flight with the checkpoint the barrier loop
holds, in the downstream's words, and its failure classed by what the downstream said.

What MariaDB answers is asked of the real downstream; a connection lost or timed out in the
middle of a DDL cannot be caused on demand there, so those two stand on a fake connection."""

from __future__ import annotations

import pymysql
import pytest
from fake_downstream import FakeConn, failing

from cdcflow.core.errors import (
    DDL_UNSUPPORTED_DOWNSTREAM,
    DOWNSTREAM_UNREACHABLE,
    EXEC_DDL_FAILED,
    EXEC_DDL_INTERRUPTED,
    CdcflowError,
)
from cdcflow.core.sink_params import SinkOptions
from cdcflow.core.uri import parse_sink_uri
from cdcflow.ddl import types as T
from cdcflow.sink.async_index import IndexDDL
from cdcflow.sink.ddl_sink import DdlSink
from cdcflow.source.binlog import Position
from cdcflow.stages.contracts import DdlEntry
from cdcflow.store import metastore

POS = Position(file="bin.000001", pos=4)
CHECKPOINT = (99, {"file": "bin.000001", "pos": 120})


def ddl(query: str, ts: int = 100, **kw) -> DdlEntry:
    return DdlEntry(commit_ts=ts, query=query, default_schema="ddlsink", sql_mode=None, start_pos=POS, end_pos=POS,
                    name=query.split(" (")[0], **kw)


@pytest.fixture
def feed(cdcflow_home):
    metastore.create_feed("ds", 1, {"file": "bin.000001", "pos": 4})
    return "ds"


@pytest.fixture
def down(mariadb_pair):
    _, down = mariadb_pair
    down.execute("DROP DATABASE IF EXISTS ddlsink", "CREATE DATABASE ddlsink",
                 "CREATE TABLE ddlsink.t (id INT PRIMARY KEY, v INT, KEY iv (v))")
    return down


@pytest.fixture
def sink(down, feed):
    events = []
    s = DdlSink.open(feed, parse_sink_uri(down.uri), SinkOptions(), lambda what, **f: events.append((what, f)))
    s.events = events
    yield s
    s.close()


def on_fake(feed: str, conn: FakeConn) -> DdlSink:
    return DdlSink(feed, conn, {}, IndexDDL(feed, conn, {}, "mysql", False, None, version="10.11.6-MariaDB"), "1h")


def test_open_says_what_the_downstream_is(sink):
    (what, fields), = sink.events
    assert what == "downstream" and fields["kind"] == "mysql" and "mariadb" in fields["version"].lower()
    assert fields["async_index"] is False


def test_a_downstream_that_cannot_be_reached_is_retryable(feed):
    uri = parse_sink_uri("mysql://root:secret@127.0.0.1:1/")
    with pytest.raises(CdcflowError) as e:
        DdlSink.open(feed, uri, SinkOptions(), lambda *a, **k: None)
    assert e.value.code == DOWNSTREAM_UNREACHABLE and e.value.retryable
    assert "root:***@127.0.0.1:1" in str(e.value) and "secret" not in str(e.value)


def test_the_checkpoint_goes_with_the_in_flight_mark(sink, down, feed):
    assert sink.execute(ddl("ALTER TABLE t ADD COLUMN w INT"), False, CHECKPOINT) == "applied"
    state = metastore.get_feed(feed)
    assert (state.checkpoint_ts, state.checkpoint_pos, state.ddl_in_flight_ts) == (*CHECKPOINT, 100)
    assert ("w",) in down.query("SELECT COLUMN_NAME FROM information_schema.COLUMNS "
                                "WHERE TABLE_SCHEMA = 'ddlsink' AND TABLE_NAME = 't'")


def test_a_replay_takes_its_own_earlier_success(sink, feed):
    assert sink.execute(ddl("CREATE TABLE u (id INT PRIMARY KEY)"), False) == "applied"
    assert sink.execute(ddl("CREATE TABLE u (id INT PRIMARY KEY)"), True) == "already applied"


def test_a_refusal_fails_the_changefeed_and_clears_the_mark(sink, feed):
    metastore.mark_ddl_in_flight(feed, 90)
    with pytest.raises(CdcflowError) as e:
        sink.execute(ddl("CREATE TABLE t (id INT PRIMARY KEY)", ts=100), False, CHECKPOINT)
    err = e.value
    assert err.code == EXEC_DDL_FAILED and not err.retryable and err.ts == 100 and err.changefeed == feed
    assert "rejected DDL CREATE TABLE t" in err.message and "1050" in err.message
    assert "skip-ddl -c ds --commit-ts 100" in err.hint and err.statement.startswith("CREATE TABLE t")
    # it did not run: the rerun is no replay (the checkpoint the mark carried is written all the same)
    state = metastore.get_feed(feed)
    assert state.ddl_in_flight_ts is None and state.checkpoint_ts == CHECKPOINT[0]


def test_the_index_visibility_words_are_the_downstreams(sink, down):
    assert sink.execute(ddl("ALTER TABLE t ALTER INDEX iv INVISIBLE", type=T.ALTER_TABLE_INDEX_VISIBILITY), False) \
        == "applied"
    assert down.query("SELECT IGNORED FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'ddlsink' "
                      "AND TABLE_NAME = 't' AND INDEX_NAME = 'iv'") == [("YES",)]


def test_a_ddl_the_downstream_has_no_words_for_stops_before_it_is_marked(sink, feed):
    with pytest.raises(CdcflowError) as e:
        sink.execute(ddl("ALTER TABLE t REMOVE TTL", type=T.ALTER_TABLE_REMOVE_TTL), False, CHECKPOINT)
    assert e.value.code == DDL_UNSUPPORTED_DOWNSTREAM and not e.value.retryable and e.value.ts == 100
    assert metastore.get_feed(feed).ddl_in_flight_ts is None  # nothing marked, nothing ran


def test_replace_ddl_runs_the_operators_statements(sink, down):
    entry = ddl("ALTER TABLE t ADD COLUMN broken", replacement=["ALTER TABLE t ADD COLUMN a INT",
                                                                "ALTER TABLE t ADD COLUMN b INT"])
    assert sink.execute(entry, False) == "replaced by 2 statement(s) (replace-ddl)"
    assert down.query("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'ddlsink' "
                      "AND TABLE_NAME = 't' ORDER BY ORDINAL_POSITION")[-2:] == [("a",), ("b",)]


def test_a_lost_connection_is_retried_and_stays_marked(feed):
    def fail(sql, args):
        return None if sql.startswith(("SET ", "USE ")) else pymysql.err.OperationalError(2013, "Lost connection")
    with pytest.raises(CdcflowError) as e:
        on_fake(feed, FakeConn(fail=fail)).execute(ddl("ALTER TABLE t ADD COLUMN w INT"), False, CHECKPOINT)
    assert e.value.code == EXEC_DDL_INTERRUPTED and e.value.retryable and e.value.ts == 100
    assert "did not complete on the downstream" in e.value.message
    # it may have run before the connection went: the rerun takes "exists already" for a replay
    assert metastore.get_feed(feed).ddl_in_flight_ts == 100


def test_a_ddl_past_ddl_timeout_is_the_downstream_unreachable(feed):
    timed_out = pymysql.err.OperationalError(2013, "Lost connection to MySQL server during query (timed out)")
    conn = FakeConn(fail=lambda sql, args: None if sql.startswith(("SET ", "USE ")) else timed_out)
    with pytest.raises(CdcflowError) as e:
        on_fake(feed, conn).execute(ddl("ALTER TABLE t ADD COLUMN w INT"), False)
    assert e.value.code == DOWNSTREAM_UNREACHABLE and e.value.retryable
    assert "within ddl-timeout 1h" in e.value.message and metastore.get_feed(feed).ddl_in_flight_ts == 100


def test_an_online_schema_changes_alters_run_in_order(feed):
    conn = FakeConn(fail=failing([]))
    entry = ddl("ALTER TABLE t ADD a INT; ALTER TABLE t ADD b INT",
                statements=["ALTER TABLE t ADD a INT", "ALTER TABLE t ADD b INT"])
    assert on_fake(feed, conn).execute(entry, False) == "applied, applied"
    alters = [q for q in conn.sql if isinstance(q, str) and q.startswith("ALTER")]
    assert alters == ["ALTER TABLE t ADD a INT", "ALTER TABLE t ADD b INT"]
