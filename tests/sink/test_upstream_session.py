"""A DDL's upstream session set around it on the downstream, and the row session restored.

The statements sent, and the refusals they meet, stand on a fake cursor; what a server makes of
them is asked of a real MariaDB (the last tests), TiDB's SET refused part way played on it."""

from __future__ import annotations

import itertools
import logging

import pymysql
import pytest

from cdcflow.core.ddl_session import DdlSession
from cdcflow.core.errors import EXEC_DDL_FAILED, CdcflowError
from cdcflow.sink import connection
from cdcflow.sink import upstream_session as us
from cdcflow.sink.upstream_session import upstream_session
from cdcflow_devtools.mariadb import HOST, ROOT_PASSWORD, ROOT_USER


class Cursor:
    def __init__(self, refuse: dict[str, int] | None = None):
        self.sql: list[str] = []
        self.refuse = refuse or {}

    def execute(self, sql, args=None):
        text = sql % tuple(repr(a) for a in args) if args else sql
        self.sql.append(text)
        for word, code in self.refuse.items():
            if word in text:
                raise pymysql.err.OperationalError(code, "refused")


@pytest.fixture(autouse=True)
def token(monkeypatch):
    monkeypatch.setattr(us, "TOKENS", itertools.count(7))


SESSION = DdlSession(time_us=1_700_000_000_000_042, time_zone="+05:00",
                     collation_connection="latin1_bin", collation_server="utf8mb4_bin")
SAVE = ("@cdcflow_saving = 7, @cdcflow_saved_collation_connection = @@session.collation_connection, "
        "@cdcflow_saved_collation_server = @@session.collation_server")
RESTORE = ("SET SESSION timestamp = DEFAULT, SESSION time_zone = '+00:00', "
           "SESSION collation_connection = @cdcflow_saved_collation_connection, "
           "SESSION collation_server = @cdcflow_saved_collation_server")


def test_the_ddl_runs_in_the_upstream_session_then_the_row_session_returns():
    cur = Cursor()
    with upstream_session(cur, SESSION, "ALTER TABLE t ADD c INT", "ANSI_QUOTES"):
        cur.execute("ALTER TABLE t ADD c INT")
    # a round trip before the DDL and one after it
    assert cur.sql == [
        f"SET {SAVE}, SESSION time_zone = '+05:00', SESSION sql_mode = 'ANSI_QUOTES', "
        "SESSION timestamp = 1700000000.000042, SESSION collation_connection = 'latin1_bin', "
        "SESSION collation_server = 'utf8mb4_bin'",
        "ALTER TABLE t ADD c INT",
        RESTORE,
    ]


def test_nothing_recorded_sets_the_row_zone_and_resets_after():
    cur = Cursor()
    with upstream_session(cur, None, "CREATE TABLE t (a INT)"):
        pass
    assert cur.sql == ["SET SESSION time_zone = '+00:00'",
                       "SET SESSION timestamp = DEFAULT, SESSION time_zone = '+00:00'"]


def test_a_zone_the_downstream_lacks_stops_with_the_remedy():
    cur = Cursor(refuse={"time_zone = 'Asia/Karachi'": 1298})
    with pytest.raises(CdcflowError) as e:
        with upstream_session(cur, DdlSession(time_zone="Asia/Karachi"), "ALTER TABLE t ADD z TIMESTAMP"):
            raise AssertionError("the DDL must not run")
    assert e.value.code == EXEC_DDL_FAILED and not e.value.retryable
    assert "'Asia/Karachi'" in e.value.message and "mysql_tzinfo_to_sql" in e.value.hint
    assert e.value.statement == "ALTER TABLE t ADD z TIMESTAMP"
    # the whole SET refused, then each variable alone up to the zone; the row session after
    assert cur.sql == ["SET SESSION time_zone = 'Asia/Karachi'", "SET SESSION time_zone = '+00:00'",
                       "SET SESSION time_zone = 'Asia/Karachi'",
                       "SET SESSION timestamp = DEFAULT, SESSION time_zone = '+00:00'"]


def test_a_collation_the_downstream_lacks_is_kept_its_own(caplog):
    cur = Cursor(refuse={"= 'latin1_bin'": 1273})
    with upstream_session(cur, SESSION, "CREATE DATABASE d"):
        cur.execute("CREATE DATABASE d")
    assert "CREATE DATABASE d" in cur.sql and "latin1_bin" in caplog.text
    # the collations saved by the step-by-step path where the whole SET did not save them
    assert cur.sql[1] == ("SET @cdcflow_saved_collation_connection = IF(@cdcflow_saving <=> 7, "
                          "@cdcflow_saved_collation_connection, @@session.collation_connection), "
                          "@cdcflow_saved_collation_server = IF(@cdcflow_saving <=> 7, "
                          "@cdcflow_saved_collation_server, @@session.collation_server)")
    assert cur.sql[-1] == RESTORE
    assert "SET SESSION collation_server = 'utf8mb4_bin'" in cur.sql


def test_a_lost_connection_is_not_taken_for_a_refusal():
    cur = Cursor(refuse={"SET ": 2013})
    with pytest.raises(pymysql.err.OperationalError) as e:
        with upstream_session(cur, SESSION, "ALTER TABLE t ADD INDEX i (a)"):
            raise AssertionError("the DDL must not run")
    assert e.value.args[0] == 2013
    assert not any(s.startswith("SET SESSION time_zone") for s in cur.sql)  # no variable alone


def test_the_ddls_own_error_survives_a_lost_connection():
    cur = Cursor(refuse={"DEFAULT": 2013})
    with pytest.raises(pymysql.err.OperationalError) as e:
        with upstream_session(cur, SESSION, "ALTER TABLE t ADD INDEX i (a)"):
            raise pymysql.err.OperationalError(2013, "lost during query")
    assert e.value.args[1] == "lost during query"


# --- on a real MariaDB ------------------------------------------------------------------------

ROW_SESSION = "SELECT @@session.time_zone, @@session.collation_connection, @@session.collation_server"
IN_DDL = ("SELECT @@session.time_zone, @@session.collation_connection, @@session.collation_server, "
          "@@session.sql_mode, UNIX_TIMESTAMP(NOW(6))")


@pytest.fixture
def conn(mariadb_pair):
    # a row session as the DDL sink opens it
    c = connection.connect({"host": HOST, "port": mariadb_pair[1].port, "user": ROOT_USER, "password": ROOT_PASSWORD})
    yield c
    c.close()


def _one(cur, sql):
    cur.execute(sql)
    return cur.fetchone()


def test_on_mariadb_the_ddl_sees_its_session_and_the_row_session_returns(conn):
    with conn.cursor() as cur:
        own = _one(cur, ROW_SESSION)
        assert own[1:] != ("latin1_bin", "utf8mb4_bin")
        with upstream_session(cur, SESSION, "ALTER TABLE t ADD c INT", "ANSI_QUOTES,STRICT_TRANS_TABLES"):
            seen = _one(cur, IN_DDL)
        assert seen[:3] == ("+05:00", "latin1_bin", "utf8mb4_bin")
        assert set(seen[3].split(",")) == {"ANSI_QUOTES", "STRICT_TRANS_TABLES"}
        assert str(seen[4]) == "1700000000.000042"
        assert _one(cur, ROW_SESSION) == own
        assert abs(float(_one(cur, "SELECT UNIX_TIMESTAMP(NOW(6))")[0]) - 1_700_000_000) > 1e6  # the clock again


def test_on_mariadb_a_refused_set_sets_nothing_so_each_variable_goes_alone(conn, caplog):
    # what the whole SET relies on where MariaDB refuses it: no assignment of it made
    with conn.cursor() as cur:
        with pytest.raises(pymysql.MySQLError):
            cur.execute("SET @cdcflow_probe = 1, SESSION time_zone = '+03:00', SESSION collation_server = 'no_such'")
        assert _one(cur, "SELECT @cdcflow_probe, @@session.time_zone") == (None, "+00:00")
        own = _one(cur, ROW_SESSION)
        lacking = DdlSession(time_us=1_700_000_000_000_042, time_zone="+05:00",
                             collation_connection="latin1_bin", collation_server="no_such_collation")
        with caplog.at_level(logging.WARNING), \
                upstream_session(cur, lacking, "CREATE DATABASE d", "STRICT_TRANS_TABLES,NO_SUCH_MODE"):
            seen = _one(cur, IN_DDL)
        # the rest of the session set; the collation the server lacks stays its own; the mode it lacks left out
        assert seen[:4] == ("+05:00", "latin1_bin", own[2], "STRICT_TRANS_TABLES")
        assert "no_such_collation" in caplog.text
        assert _one(cur, ROW_SESSION) == own


def test_collations_saved_by_a_set_refused_part_way_are_kept(conn):
    # TiDB makes a SET's assignments in order up to the one it refuses: played here by making
    # the whole SET's first assignments, up to a changed collation_connection, before the step by step
    with conn.cursor() as cur:
        own = _one(cur, ROW_SESSION)
        sql, args = us._assignments(SESSION, None, list(us.COLLATIONS), 41)
        made = [a for a in sql if not a.startswith(("SESSION collation_server", "SESSION timestamp"))]
        cur.execute("SET " + ", ".join(made), tuple(args[:2]))  # the zone, collation_connection
        assert _one(cur, "SELECT @@session.collation_connection")[0] == "latin1_bin"
        us._set_one_by_one(cur, SESSION, None, list(us.COLLATIONS), 41, "ALTER TABLE t ADD c INT")
        assert _one(cur, IN_DDL)[:3] == ("+05:00", "latin1_bin", "utf8mb4_bin")
        us._restore(cur, list(us.COLLATIONS))
        assert _one(cur, ROW_SESSION) == own
        # and a later DDL, whose SET MariaDB refuses whole, saves the collations it finds
        with upstream_session(cur, DdlSession(collation_connection="latin1_bin", collation_server="nope"), "X"):
            pass
        assert _one(cur, ROW_SESSION) == own
