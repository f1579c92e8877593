"""Row-writing sessions on the downstream (MySQL, MariaDB, TiDB) with pymysql: opening one
(with retries, for Spark partitions), its settings, and the SQL mode and read timeout a
statement may change."""

from __future__ import annotations

import time
from contextlib import contextmanager

import pymysql

from cdcflow.core import tls
from cdcflow.core.errors import DOWNSTREAM_UNREACHABLE, CdcflowError
from cdcflow.sink.downstream_errors import SinkError

# Rows are written in UTC (TIMESTAMP literals are decoded in UTC); a DDL's zone is set and undone
ROW_TIME_ZONE = "+00:00"
# Sessions that write rows: UTC so TIMESTAMP literals (decoded in UTC) mean the same
# instant, and backslash escapes on because literals are escaped that way.  Strict, so a
# value the downstream column cannot hold fails instead of being cut; zero dates, zero
# parts and dates the upstream allowed (no NO_ZERO_DATE / NO_ZERO_IN_DATE,
# ALLOW_INVALID_DATES) still go through as they are.
DML_SQL_MODE = "STRICT_ALL_TABLES,ALLOW_INVALID_DATES,NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION"
DML_SESSION = (
    f"SET SESSION time_zone = '{ROW_TIME_ZONE}'",
    f"SET SESSION sql_mode = '{DML_SQL_MODE}'",
    "SET SESSION foreign_key_checks = 0",
    "SET SESSION unique_checks = 1",
)


def connect(sink: dict, **kw):
    """A DML session on the downstream described by plain parameters (picklable for Spark):
    DbUri.connection_args, with its connect/read/write timeouts; `kw` overrides them."""
    tls.install()
    conn = pymysql.connect(**{**sink, "charset": "utf8mb4", "autocommit": True, **kw})
    with conn.cursor() as cur:
        for stmt in DML_SESSION:
            cur.execute(stmt)
    return conn


def open_downstream(redacted: str, sink: dict):
    """A session on the downstream (`redacted`: its URI as errors may show it) for one stage; one
    that cannot be opened is DOWNSTREAM_UNREACHABLE: the next cycle retries."""
    try:
        return connect(sink)
    except Exception as e:  # noqa: BLE001 - whatever stops the connection, the next cycle retries
        raise CdcflowError(f"cannot connect to the downstream {redacted}: {e}", code=DOWNSTREAM_UNREACHABLE,
                           hint="the checkpoint has not moved; the next cycle retries") from None


def connect_with_retry(sink: dict, attempts: int = 3):
    for i in range(attempts):
        try:
            return connect(sink)
        except pymysql.MySQLError as e:
            if i == attempts - 1:
                raise SinkError(f"connect to downstream {sink['host']}:{sink['port']}", e) from None
            time.sleep(0.5 * (i + 1))


def set_sql_mode(cur, sql_mode: str) -> None:
    try:
        cur.execute("SET SESSION sql_mode = %s", (sql_mode,))
    except pymysql.MySQLError:
        # a mode this server does not know (MySQL 8 dropped NO_AUTO_CREATE_USER): keep the rest
        known = []
        for m in [m for m in sql_mode.split(",") if m]:
            try:
                cur.execute("SET SESSION sql_mode = %s", (",".join(known + [m]),))
                known.append(m)
            except pymysql.MySQLError:
                continue
        cur.execute("SET SESSION sql_mode = %s", (",".join(known),))


@contextmanager
def read_timeout(conn, seconds: float | None):
    """The connection's read timeout set to `seconds` for the body (None: unchanged).  pymysql
    applies `_read_timeout` before each packet it reads, so this holds for one statement."""
    if seconds is None:
        yield
        return
    saved, conn._read_timeout = conn._read_timeout, seconds
    try:
        yield
    finally:
        conn._read_timeout = saved
