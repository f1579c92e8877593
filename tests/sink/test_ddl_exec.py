"""sink.ddl_exec without a server: statements are recorded by a fake connection."""

import pymysql
import pytest
from fake_downstream import FakeConn

from cdcflow.sink.ddl_exec import REPLAYED_DDL_ERRORS, execute_ddl


# --- DDL replay ---------------------------------------------------------------------------

# What a DDL that already ran gets when it runs again (recorded from MariaDB 10.11; MySQL
# and TiDB use the same codes except DROP VIEW, which they answer with 1051).
REPLAY_ERRORS = [
    ("CREATE DATABASE r", 1007),
    ("DROP DATABASE r", 1008),
    ("CREATE TABLE u (id INT)", 1050),
    ("DROP TABLE w", 1051),
    ("RENAME TABLE u TO u2", 1146),
    ("ALTER TABLE t ADD COLUMN c INT", 1060),
    ("ALTER TABLE t DROP COLUMN c", 1091),
    ("ALTER TABLE t CHANGE a b INT", 1054),
    ("ALTER TABLE t RENAME COLUMN b TO a2", 1054),
    ("CREATE INDEX j ON t (a2)", 1061),
    ("DROP INDEX j ON t", 1091),
    ("ALTER TABLE t RENAME INDEX i TO i2", 1176),
    ("ALTER TABLE t ADD PRIMARY KEY (id)", 1068),
    ("ALTER TABLE t DROP PRIMARY KEY", 1091),
    ("ALTER TABLE t ADD PARTITION (PARTITION p2 VALUES LESS THAN (30))", 1517),
    ("ALTER TABLE t DROP PARTITION p2", 1507),
    ("ALTER TABLE t TRUNCATE PARTITION p9", 1735),
    ("CREATE VIEW v AS SELECT 1", 1050),
    ("DROP VIEW v", 4092),
    ("DROP VIEW v", 1051),
]


def ddl_conn(code, message="replayed"):
    def fail(sql, args):
        if sql.startswith(("SET ", "USE ")):
            return None
        return pymysql.err.OperationalError(code, message)
    return FakeConn(fail=fail)


@pytest.mark.parametrize("query, code", REPLAY_ERRORS)
def test_replayed_ddl_is_already_applied(query, code):
    assert code in REPLAYED_DDL_ERRORS
    assert execute_ddl(ddl_conn(code), query, "r", None, replay=True) == "already applied"
    # the same error outside a replay is a real failure
    with pytest.raises(pymysql.MySQLError):
        execute_ddl(ddl_conn(code), query, "r", None, replay=False)


@pytest.mark.parametrize("code", [1064, 1045, 1142, 2013, 4031, 1062, 1213])
def test_errors_that_do_not_mean_already_applied(code):
    # syntax, privileges, a lost connection, the MySQL 8 inactivity disconnect (4031):
    # the DDL did not run, so it must not be skipped
    assert code not in REPLAYED_DDL_ERRORS
    with pytest.raises(pymysql.MySQLError):
        execute_ddl(ddl_conn(code), "ALTER TABLE t ADD COLUMN c INT", "r", None, replay=True)


def test_execute_ddl_session():
    conn = FakeConn()
    assert execute_ddl(conn, "CREATE TABLE t (a INT)", "we`ird", "ANSI_QUOTES,STRICT_TRANS_TABLES", False) == "applied"
    assert conn.sql == [
        "USE `we``ird`",
        ("SET SESSION time_zone = %s, SESSION sql_mode = %s", ("+00:00", "ANSI_QUOTES,STRICT_TRANS_TABLES")),
        "CREATE TABLE t (a INT)",
        # the row session again (sink.upstream_session)
        "SET SESSION timestamp = DEFAULT, SESSION time_zone = '+00:00'",
    ]


def test_execute_ddl_keeps_the_sql_modes_the_server_knows():
    def fail(sql, args):
        if args and any("NO_AUTO_CREATE_USER" in a for a in args):
            return pymysql.err.OperationalError(1231, "Variable 'sql_mode' can't be set")
        if sql.startswith("USE "):
            return pymysql.err.OperationalError(1049, "Unknown database")
        return None
    conn = FakeConn(fail=fail)
    assert execute_ddl(conn, "CREATE DATABASE d", "d", "STRICT_TRANS_TABLES,NO_AUTO_CREATE_USER,ANSI_QUOTES",
                       False) == "applied"
    modes = [s[1][-1] for s in conn.sql if isinstance(s, tuple) and "sql_mode" in s[0]]
    assert modes[-1] == "STRICT_TRANS_TABLES,ANSI_QUOTES"
    assert "CREATE DATABASE d" in conn.sql

