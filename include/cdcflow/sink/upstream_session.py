"""A DDL runs downstream in the upstream session's time, time zone, collations and SQL mode
(core.ddl_session), as TiCDC's MySQL sink sets `timestamp` for a DDL; the connection goes
back to its row-writing session afterwards (UTC, the connection's own collations).

The session goes in one SET, and comes back in another: a round trip each, where setting each
variable alone, reading the collations to restore and restoring them took ten a DDL (1-1.5 ms
of each DDL's edge on the bench, a tenth of a small DDL's own time).  Where the server refuses
that SET, each variable is set alone, and the one refused gets its own answer (a zone the
downstream lacks stops with the remedy, a collation it lacks keeps its own, a SQL mode it lacks
is left out)."""

from __future__ import annotations

import itertools
import logging
from contextlib import contextmanager

import pymysql

from cdcflow.core.ddl_session import DdlSession
from cdcflow.core.errors import EXEC_DDL_FAILED, CdcflowError
from cdcflow.sink.connection import ROW_TIME_ZONE, set_sql_mode
from cdcflow.sink.downstream_errors import error_code

log = logging.getLogger(__name__)

UNKNOWN_TIME_ZONE = 1298
UNKNOWN_COLLATION = 1273
COLLATIONS = ("collation_connection", "collation_server")
# the user variable that holds the connection's own value of a collation while a DDL runs in another
SAVED = "@cdcflow_saved_{}"
# set with the saved values by the SET that saves them, to this DDL's number (TOKENS): where the
# server refused a later assignment of that SET, it tells whether the values were saved
SAVING = "@cdcflow_saving"
TOKENS = itertools.count(1)
# the client's own errors (a lost connection, a timeout) start here; below: the server refused
CLIENT_ERRORS = 2000


@contextmanager
def upstream_session(cur, session: DdlSession | None, query: str, sql_mode: str | None = None):
    """Run the body (the DDL) in `session` and `sql_mode` (None: the connection's own); restore the
    row-writing session after (the SQL mode stays: each DDL sets its own)."""
    session = session or DdlSession()
    saved, token = [v for v in COLLATIONS if getattr(session, v)], next(TOKENS)
    try:
        if not _set_whole(cur, session, sql_mode, saved, token):
            _set_one_by_one(cur, session, sql_mode, saved, token, query)
        yield
    except BaseException:
        try:
            _restore(cur, saved)
        except pymysql.MySQLError:
            pass  # the connection the DDL failed on may be gone: its own error is the one to report
        raise
    _restore(cur, saved)


def _assignments(session: DdlSession, sql_mode: str | None, saved: list[str], token: int) -> tuple[list[str], list]:
    """The session's assignments in the order the step-by-step path makes them, the collations
    saved first, and their arguments."""
    sql = [f"{SAVING} = {token}", *(f"{SAVED.format(v)} = @@session.{v}" for v in saved)] if saved else []
    sql.append("SESSION time_zone = %s")
    args: list = [session.time_zone or ROW_TIME_ZONE]
    if sql_mode is not None:
        sql.append("SESSION sql_mode = %s")
        args.append(sql_mode)
    if session.timestamp() is not None:
        sql.append(f"SESSION timestamp = {session.timestamp()}")
    for var in saved:
        sql.append(f"SESSION {var} = %s")
        args.append(getattr(session, var))
    return sql, args


def _set_whole(cur, session: DdlSession, sql_mode: str | None, saved: list[str], token: int) -> bool:
    """The session in one SET; False where the server refused it."""
    sql, args = _assignments(session, sql_mode, saved, token)
    try:
        cur.execute("SET " + ", ".join(sql), tuple(args))
    except pymysql.MySQLError as e:
        code = error_code(e)
        if code is None or code >= CLIENT_ERRORS:
            raise  # not the server's refusal: the connection's own error
        return False
    return True


def _set_one_by_one(cur, session: DdlSession, sql_mode: str | None, saved: list[str], token: int,
                    query: str) -> None:
    """The session a variable at a time, each refusal answered as its variable needs, after the
    whole SET with `token` was refused (`query`: the DDL)."""
    if saved:
        # MariaDB and MySQL refuse a SET whole; TiDB makes its assignments in order up to the one
        # it refuses, so the collations may be saved already and one of them changed since
        cur.execute("SET " + ", ".join(f"{SAVED.format(v)} = IF({SAVING} <=> {token}, {SAVED.format(v)}, "
                                       f"@@session.{v})" for v in saved))
    cur.execute(f"SET SESSION time_zone = '{ROW_TIME_ZONE}'")
    if sql_mode is not None:
        set_sql_mode(cur, sql_mode)
    if session.timestamp() is not None:
        cur.execute(f"SET SESSION timestamp = {session.timestamp()}")
    if session.time_zone:
        _set_time_zone(cur, session.time_zone, query)
    for var in saved:
        _set_collation(cur, var, getattr(session, var))


def _restore(cur, saved: list[str]) -> None:
    cur.execute(", ".join(["SET SESSION timestamp = DEFAULT", f"SESSION time_zone = '{ROW_TIME_ZONE}'",
                           *(f"SESSION {v} = {SAVED.format(v)}" for v in saved)]))


def _set_time_zone(cur, zone: str, query: str) -> None:
    try:
        cur.execute("SET SESSION time_zone = %s", (zone,))
    except pymysql.MySQLError as e:
        if e.args and e.args[0] == UNKNOWN_TIME_ZONE:
            raise CdcflowError(
                f"the DDL ran upstream in time zone {zone!r}, which the downstream does not know; running it "
                f"in another zone would shift the TIMESTAMP values it reads or fills",
                statement=query, code=EXEC_DDL_FAILED,
                hint="load the time zone tables into the downstream (mysql_tzinfo_to_sql /usr/share/zoneinfo | "
                     "mysql -u root mysql; TiDB knows named zones already), then resume the changefeed",
            ) from None
        raise


def _set_collation(cur, var: str, name: str) -> None:
    try:
        cur.execute(f"SET SESSION {var} = %s", (name,))
    except pymysql.MySQLError as e:
        if not (e.args and e.args[0] == UNKNOWN_COLLATION):
            raise
        # a collation this downstream lacks: the DDL's own clauses name any it depends on
        log.warning("the downstream does not know collation %s (the DDL's %s upstream); keeping its own", name, var)
