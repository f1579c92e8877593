"""A DDL runs downstream in the upstream session's time, time zone and collations
(core.ddl_session), as TiCDC's MySQL sink sets `timestamp` for a DDL; the connection goes
back to its row-writing session afterwards (UTC, the connection's own collations)."""

from __future__ import annotations

import logging
from contextlib import contextmanager

import pymysql

from cdcflow.core.ddl_session import DdlSession
from cdcflow.core.errors import EXEC_DDL_FAILED, CdcflowError
from cdcflow.sink.connection import ROW_TIME_ZONE

log = logging.getLogger(__name__)

UNKNOWN_TIME_ZONE = 1298
UNKNOWN_COLLATION = 1273
COLLATIONS = ("collation_connection", "collation_server")


@contextmanager
def upstream_session(cur, session: DdlSession | None, query: str):
    """Run the body (the DDL) in `session`; restore the row-writing session after."""
    session = session or DdlSession()
    saved = _collations(cur, session)
    try:
        if session.timestamp() is not None:
            cur.execute(f"SET SESSION timestamp = {session.timestamp()}")
        if session.time_zone:
            _set_time_zone(cur, session.time_zone, query)
        for var in saved:
            _set_collation(cur, var, getattr(session, var))
        yield
    except BaseException:
        try:
            _restore(cur, saved)
        except pymysql.MySQLError:
            pass  # the connection the DDL failed on may be gone: its own error is the one to report
        raise
    _restore(cur, saved)


def _restore(cur, collations: dict[str, str]) -> None:
    cur.execute("SET SESSION timestamp = DEFAULT")
    cur.execute(f"SET SESSION time_zone = '{ROW_TIME_ZONE}'")
    for var, value in collations.items():
        cur.execute(f"SET SESSION {var} = %s", (value,))


def _collations(cur, session: DdlSession) -> dict[str, str]:
    """The connection's own values of the collations the DDL sets, to restore them."""
    wanted = [v for v in COLLATIONS if getattr(session, v)]
    if not wanted:
        return {}
    cur.execute("SELECT " + ", ".join(f"@@session.{v}" for v in wanted))
    return dict(zip(wanted, cur.fetchone()))


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
