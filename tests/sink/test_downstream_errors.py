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
