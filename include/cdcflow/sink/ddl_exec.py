"""Running one replicated DDL on the downstream, in the upstream session it ran in, and
telling a replay of a DDL that already ran before a crash from a real failure."""

from __future__ import annotations

import pymysql

from cdcflow.core.ddl_session import DdlSession
from cdcflow.core.row_codec import quote_ident
from cdcflow.sink.connection import read_timeout
from cdcflow.sink.downstream_errors import error_code
from cdcflow.sink.upstream_session import upstream_session

# Errors a DDL gets when it already ran before a crash and runs again: tolerated only
# for the DDL the metadata store marks as sent but not yet checkpointed.
REPLAYED_DDL_ERRORS = {
    1007: "database exists", 1008: "database doesn't exist", 1050: "table exists",
    1051: "unknown table", 1054: "unknown column", 1060: "duplicate column", 1061: "duplicate key name",
    1068: "multiple primary key defined", 1091: "can't drop; check that it exists", 1146: "table doesn't exist",
    1176: "key doesn't exist", 1507: "partition to drop doesn't exist", 1517: "duplicate partition name",
    1735: "unknown partition", 1826: "duplicate foreign key", 4092: "unknown view (MariaDB)",
}


def execute_ddl(conn, query: str, default_schema: str | None, sql_mode: str | None, replay: bool,
                session: DdlSession | None = None, timeout: float | None = None) -> str:
    """Run one DDL as the upstream session ran it: same default schema, SQL mode, time, time zone
    and collations (sink.upstream_session).  `timeout`: how long the statement itself may take to
    answer (the sink's ddl-timeout) instead of the connection's read-timeout.

    Returns 'applied', or 'already applied' when this is the replay of a DDL that the
    downstream had executed before a crash (the error says so, and only then).
    """
    with conn.cursor() as cur:
        if default_schema:
            try:
                cur.execute(f"USE {quote_ident(default_schema)}")
            except pymysql.MySQLError:
                pass  # the schema may be the one this DDL creates or was dropped; the DDL names its targets
        try:
            with upstream_session(cur, session, query, sql_mode), read_timeout(conn, timeout):
                cur.execute(query)
            return "applied"
        except pymysql.MySQLError as e:
            if replay and error_code(e) in REPLAYED_DDL_ERRORS:
                return "already applied"
            raise
