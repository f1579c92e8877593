"""A DDL's upstream session set around it on the downstream, and the row session restored."""

from __future__ import annotations

import pymysql
import pytest

from cdcflow.core.ddl_session import DdlSession
from cdcflow.core.errors import EXEC_DDL_FAILED, CdcflowError
from cdcflow.sink.upstream_session import upstream_session


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

    def fetchone(self):
        return ("utf8mb4_general_ci", "latin1_swedish_ci")


SESSION = DdlSession(time_us=1_700_000_000_000_042, time_zone="+05:00",
                     collation_connection="latin1_bin", collation_server="utf8mb4_bin")


def test_the_ddl_runs_in_the_upstream_session_then_the_row_session_returns():
    cur = Cursor()
    with upstream_session(cur, SESSION, "ALTER TABLE t ADD c INT"):
        cur.execute("ALTER TABLE t ADD c INT")
    assert cur.sql == [
        "SELECT @@session.collation_connection, @@session.collation_server",
        "SET SESSION timestamp = 1700000000.000042",
        "SET SESSION time_zone = '+05:00'",
        "SET SESSION collation_connection = 'latin1_bin'",
        "SET SESSION collation_server = 'utf8mb4_bin'",
        "ALTER TABLE t ADD c INT",
        "SET SESSION timestamp = DEFAULT",
        "SET SESSION time_zone = '+00:00'",
        "SET SESSION collation_connection = 'utf8mb4_general_ci'",
        "SET SESSION collation_server = 'latin1_swedish_ci'",
    ]


def test_nothing_recorded_sets_nothing_but_the_reset():
    cur = Cursor()
    with upstream_session(cur, None, "CREATE TABLE t (a INT)"):
        pass
    assert cur.sql == ["SET SESSION timestamp = DEFAULT", "SET SESSION time_zone = '+00:00'"]


def test_a_zone_the_downstream_lacks_stops_with_the_remedy():
    cur = Cursor(refuse={"time_zone = 'Asia/Karachi'": 1298})
    with pytest.raises(CdcflowError) as e:
        with upstream_session(cur, DdlSession(time_zone="Asia/Karachi"), "ALTER TABLE t ADD z TIMESTAMP"):
            raise AssertionError("the DDL must not run")
    assert e.value.code == EXEC_DDL_FAILED and not e.value.retryable
    assert "'Asia/Karachi'" in e.value.message and "mysql_tzinfo_to_sql" in e.value.hint
    assert e.value.statement == "ALTER TABLE t ADD z TIMESTAMP"
    assert cur.sql[-2:] == ["SET SESSION timestamp = DEFAULT", "SET SESSION time_zone = '+00:00'"]


def test_a_collation_the_downstream_lacks_is_kept_its_own(caplog):
    cur = Cursor(refuse={"= 'latin1_bin'": 1273})
    with upstream_session(cur, SESSION, "CREATE DATABASE d"):
        cur.execute("CREATE DATABASE d")
    assert "CREATE DATABASE d" in cur.sql and "latin1_bin" in caplog.text


def test_the_ddls_own_error_survives_a_lost_connection():
    cur = Cursor(refuse={"DEFAULT": 2013})
    with pytest.raises(pymysql.err.OperationalError) as e:
        with upstream_session(cur, SESSION, "ALTER TABLE t ADD INDEX i (a)"):
            raise pymysql.err.OperationalError(2013, "lost during query")
    assert e.value.args[1] == "lost during query"
