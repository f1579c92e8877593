"""Errors the downstream returns: which ones a retry may cure, which mean a value the column
cannot hold, and SinkError, the form in which they leave Spark workers for the driver."""

from __future__ import annotations

import json
import re

import pymysql

from cdcflow.core.row_codec import sql_literal

RETRYABLE_MYSQL_ERRORS = {1205, 1213, 2002, 2003, 2006, 2013, 1040, 1053, 8002, 9007}
# a value the column cannot hold (strict mode): too long, out of range, wrong for the type,
# NULL into NOT NULL; MySQL names the column and the statement's row ("at row N")
VALUE_ERRORS = {1048, 1101, 1264, 1265, 1292, 1366, 1406, 3140}


def error_code(e: Exception) -> int | None:
    args = getattr(e, "args", ())
    return args[0] if args and isinstance(args[0], int) else None


def is_retryable(e: Exception) -> bool:
    return isinstance(e, pymysql.err.OperationalError) and error_code(e) in RETRYABLE_MYSQL_ERRORS \
        or isinstance(e, (ConnectionError, TimeoutError))


def is_timeout(e: BaseException) -> bool:
    """pymysql's report of a socket timeout: the server did not answer within read/write-timeout."""
    return isinstance(e, pymysql.err.OperationalError) and error_code(e) in (2006, 2013) and "timed out" in str(e)


def offending_row(e: Exception, rows: list | None, key: list[str] | None) -> tuple[str | None, int | None]:
    """(the refused row named by its key, its commit ts) for a value error, else (None, None)."""
    m = re.search(r"at row (\d+)", str(e))
    if error_code(e) not in VALUE_ERRORS or not rows or not key or not m or int(m.group(1)) > len(rows):
        return None, None
    image, ts = rows[int(m.group(1)) - 1]
    return " AND ".join(f"{k} = {sql_literal(image.get(k))}" for k in key), ts


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
