"""Which kind of server the downstream is: TiDB, or MySQL/MariaDB.

TiDB says so in `SELECT VERSION()` (`8.0.11-TiDB-v8.5.1`).  A TiDB whose
`server-version` setting hides that is declared by the sink URI's `tidb://`
scheme instead, so either one makes it TiDB.
"""

from __future__ import annotations

TIDB, MYSQL = "tidb", "mysql"


def server_version(conn) -> str:
    with conn.cursor() as cur:
        cur.execute("SELECT VERSION()")
        row = cur.fetchone()
    return str(row[0]) if row else ""


def kind_of(version: str, scheme: str) -> str:
    return TIDB if scheme == "tidb" or "tidb" in version.lower() else MYSQL


def detect(conn, scheme: str) -> tuple[str, str]:
    """(kind, the server's version text)."""
    version = server_version(conn)
    return kind_of(version, scheme), version
