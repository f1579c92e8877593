"""sink.downstream_errors: which errors a retry may cure, and SinkError's text form."""

import json

import pymysql
import pytest

from cdcflow.sink.downstream_errors import SinkError, is_retryable


@pytest.mark.parametrize("exc, retryable", [
    (pymysql.err.OperationalError(2013, "Lost connection"), True),
    (pymysql.err.OperationalError(2006, "MySQL server has gone away"), True),
    (pymysql.err.OperationalError(1213, "Deadlock"), True),
    (pymysql.err.OperationalError(1045, "Access denied"), False),
    (pymysql.err.ProgrammingError(1064, "You have an error in your SQL syntax"), False),
    (pymysql.err.IntegrityError(1062, "Duplicate entry"), False),
    (ConnectionResetError("reset"), True),
    (TimeoutError("slow"), True),
    (ValueError("x"), False),
])
def test_is_retryable(exc, retryable):
    assert is_retryable(exc) is retryable

# --- SinkError: carried out of Spark workers as text --------------------------------------

def test_sink_error_round_trip_inside_a_traceback():
    e = SinkError("REPLACE into db.t", pymysql.err.OperationalError(2013, "Lost connection to server"))
    spark_text = ("org.apache.spark.api.python.PythonException: Traceback (most recent call last):\n"
                  '  File "partitions.py", line 1, in apply_partition\n'
                  f"cdcflow.sink.downstream_errors.SinkError: {e}\n\tat org.apache.spark.X(X.scala:1)")
    assert SinkError.parse(spark_text) == {"what": "REPLACE into db.t", "code": 2013,
                                           "text": "Lost connection to server", "retryable": True}


@pytest.mark.parametrize("message", [
    "Duplicate entry 'a:END' for key 'PRIMARY'",  # error texts quote row values, which may hold anything
    "quote \" backslash \\ newline \n unicode 中文 😀 CDCFLOW_SINK_ERROR:",
])
def test_sink_error_round_trip_of_any_message(message):
    e = SinkError("DELETE from db.t", pymysql.err.IntegrityError(1062, message))
    parsed = SinkError.parse("prefix " + str(e) + " suffix :END more")
    assert parsed == {"what": "DELETE from db.t", "code": 1062, "text": message, "retryable": False}


def test_sink_error_parse_of_foreign_text():
    assert SinkError.parse("java.lang.OutOfMemoryError") is None
    assert SinkError.parse(SinkError.MARK + "{not json") is None


def test_sink_error_without_a_mysql_code():
    e = SinkError("connect", ConnectionRefusedError("refused"))
    assert SinkError.parse(str(e)) == {"what": "connect", "code": None, "text": "refused", "retryable": True}


def test_sink_error_payload_is_json():
    e = SinkError("x", pymysql.err.OperationalError(1205, "Lock wait timeout"))
    body = str(e)[len(SinkError.MARK):-len(":END")]
    assert json.loads(body)["retryable"] is True


# --- the classes against the real server: each code as MariaDB raises it --------------------

REAL_ERRORS = [
    # (statement on db_errs.t, code, a value error naming "at row N", retried in place)
    ("INSERT INTO t (id, s) VALUES (1, 'dup')", 1062, False, False),
    ("INSERT INTO t (id, s) VALUES (2, 'far too long for the column')", 1406, True, False),
    ("INSERT INTO t (id, n) VALUES (3, 1000)", 1264, True, False),
    ("INSERT INTO t (id, e) VALUES (4, 'zz')", 1265, True, False),
    ("INSERT INTO t (id, n) VALUES (5, 'abc')", 1366, True, False),
    ("INSERT INTO t (id, d) VALUES (6, '2024-13-45')", 1292, True, False),
    ("INSERT INTO t (id, nn) VALUES (7, NULL)", 1048, False, False),  # MariaDB names no row for it
    ("INSERT INTO t (id, missing) VALUES (8, 1)", 1054, False, False),
    ("INSERT INTO absent (id) VALUES (9)", 1146, False, False),
]


def _args(down) -> dict:
    from cdcflow_devtools.mariadb import HOST, ROOT_PASSWORD, ROOT_USER

    return {"host": HOST, "port": down.port, "user": ROOT_USER, "password": ROOT_PASSWORD, "database": "db_errs"}


@pytest.fixture(scope="module")
def strict_downstream(mariadb_pair):
    """A row session (sink.connection: strict mode, as apply writes) on the session's downstream."""
    from cdcflow.sink.connection import connect

    _, down = mariadb_pair
    down.execute("DROP DATABASE IF EXISTS db_errs", "CREATE DATABASE db_errs",
                 "CREATE TABLE db_errs.t (id INT PRIMARY KEY, s VARCHAR(5), n TINYINT, e ENUM('a','b'), d DATE, "
                 "nn INT NOT NULL DEFAULT 0, UNIQUE KEY (s))", "INSERT INTO db_errs.t (id, s) VALUES (100, 'dup')")
    conn = connect(_args(down))
    yield conn
    conn.close()


@pytest.mark.e2e
@pytest.mark.parametrize("sql, code, value_error, in_place", REAL_ERRORS)
def test_each_code_as_the_real_server_raises_it(strict_downstream, sql, code, value_error, in_place):
    from cdcflow.sink.downstream_errors import VALUE_ERRORS, error_code, offending_row

    with pytest.raises(pymysql.MySQLError) as raised:
        with strict_downstream.cursor() as cur:
            cur.execute(sql)
    e = raised.value
    assert error_code(e) == code, e
    assert (code in VALUE_ERRORS) is (value_error or code == 1048)
    assert is_retryable(e) is in_place
    row, _ = offending_row(e, [({"id": 1}, 42)], ["id"])
    assert (row == "id = 1") is value_error, e
    parsed = SinkError.parse(str(SinkError("INSERT into db_errs.t", e)))
    assert parsed["code"] == code and parsed.get("value_error", False) is (code in VALUE_ERRORS)


@pytest.mark.e2e
def test_a_lock_wait_timeout_and_a_lost_connection_are_retried_in_place(strict_downstream, mariadb_pair):
    from cdcflow.sink.connection import connect
    from cdcflow.sink.downstream_errors import error_code

    holder, waiter = connect(_args(mariadb_pair[1])), connect(_args(mariadb_pair[1]))
    try:
        holder.begin()
        holder.cursor().execute("UPDATE t SET n = 1 WHERE id = 100")
        waiter.cursor().execute("SET SESSION innodb_lock_wait_timeout = 1")
        with pytest.raises(pymysql.MySQLError) as raised:
            waiter.cursor().execute("UPDATE t SET n = 2 WHERE id = 100")
        assert error_code(raised.value) == 1205 and is_retryable(raised.value)
        holder.rollback()
        with waiter.cursor() as cur:
            cur.execute("SELECT CONNECTION_ID()")
            holder.cursor().execute(f"KILL CONNECTION {cur.fetchone()[0]}")
        with pytest.raises(pymysql.MySQLError) as raised:
            waiter.cursor().execute("SELECT 1")
        assert error_code(raised.value) in (2006, 2013) and is_retryable(raised.value)
    finally:
        holder.close()
        waiter.close()
