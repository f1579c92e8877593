"""What an exception of a library cdcflow drives says happened: a MySQL error number a retry
may cure, a statement that outlasted its timeout, a value a column cannot hold, a downstream
error carried out of a Spark worker as text (SinkError), a Spark Connect server lost under a
stage.  core.errors.classify turns these facts into a code and a class.

Recognised without importing pymysql or pyspark (this module is on every import path, the DAG
files' included): an exception of a library's class can only have been raised once that
library is loaded, so its classes are looked up in sys.modules.
"""

from __future__ import annotations

import json
import sys

# MySQL errors a retry may cure: lock wait timeout, deadlock, the connection refused, lost or
# gone, too many connections, a server shutting down, TiDB's write conflicts
RETRYABLE_MYSQL_ERRORS = {1205, 1213, 2002, 2003, 2006, 2013, 1040, 1053, 8002, 9007}
# a value the column cannot hold (strict mode): too long, out of range, wrong for the type,
# NULL into NOT NULL; MySQL names the column and the statement's row ("at row N")
VALUE_ERRORS = {1048, 1101, 1264, 1265, 1292, 1366, 1406, 3140}
# the connection lost with the server still silent: with "timed out" in its text, a socket timeout
TIMEOUT_ERRORS = (2006, 2013)

# What a Spark Connect client raises when the server is gone or was restarted under a
# session: the stage did not finish and the next cycle can, once the server is back.
SPARK_CONNECT_LOST = ("StatusCode.UNAVAILABLE", "RETRIES_EXCEEDED", "INVALID_HANDLE.SESSION",
                      "SESSION_CHANGED", "SESSION_NOT_FOUND", "StatusCode.CANCELLED",
                      "stopped SparkContext", "SparkContext was shut down", "SparkContext has been shutdown",
                      "NO_ACTIVE_SESSION")


def _is_a(e: BaseException, module: str, name: str) -> bool:
    """Whether `e` is an instance of `module`.`name`; False while that module is not loaded."""
    loaded = sys.modules.get(module)
    cls = getattr(loaded, name, None) if loaded is not None else None
    return cls is not None and isinstance(e, cls)


def error_code(e: BaseException) -> int | None:
    """The MySQL error number of a pymysql error (its first argument), else None."""
    args = getattr(e, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


def is_retryable(e: BaseException) -> bool:
    return _is_a(e, "pymysql.err", "OperationalError") and error_code(e) in RETRYABLE_MYSQL_ERRORS \
        or isinstance(e, (ConnectionError, TimeoutError))


def is_timeout(e: BaseException) -> bool:
    """pymysql's report of a socket timeout: the server did not answer within read/write-timeout."""
    return _is_a(e, "pymysql.err", "OperationalError") and error_code(e) in TIMEOUT_ERRORS \
        and "timed out" in str(e)


def spark_connect_lost(e: BaseException) -> str | None:
    """One line saying the Spark Connect server was lost, if that is what `e` is."""
    if not _is_a(e, "pyspark.errors.exceptions.connect", "SparkConnectException"):
        return None
    text = str(e)
    if not any(mark in text for mark in SPARK_CONNECT_LOST):
        return None
    for line in text.splitlines():
        if "details" in line:
            return line.split("=", 1)[-1].strip().strip('"')
    return text.splitlines()[0] if text else type(e).__name__


class SinkError(Exception):
    """A downstream error, carried out of Spark workers as text the driver can parse."""

    MARK = "CDCFLOW_SINK_ERROR:"

    def __init__(self, what: str, cause: Exception, row: str | None = None, ts: int | None = None):
        self.what = what
        self.code = error_code(cause)
        self.text = str(cause.args[1]) if len(getattr(cause, "args", ())) > 1 else str(cause)
        self.retryable = is_retryable(cause)
        fields = {"what": what, "code": self.code, "text": self.text, "retryable": self.retryable}
        if is_timeout(cause):  # the downstream did not answer within read/write-timeout
            fields["timed_out"] = True
        if self.code in VALUE_ERRORS:
            fields.update(value_error=True, row=row, ts=ts)
        payload = json.dumps(fields)
        super().__init__(self.MARK + payload + ":END")

    @classmethod
    def parse(cls, text: str) -> dict | None:
        i = text.find(cls.MARK)
        if i < 0:
            return None
        try:
            # decode up to the object's own end: the error text (row values) may hold ':END'
            return json.JSONDecoder().raw_decode(text, i + len(cls.MARK))[0]
        except ValueError:
            return None
