"""A changefeed's `upstream_id`: which server it replicates from, as a number.

TiCDC's upstream id is the upstream PD cluster's id, a uint64 that names the cluster whatever
address reaches it.  Here the upstream is one MySQL or MariaDB server, named by what the server
says of itself:
- `@@server_uuid` where it has one (MySQL: generated at its first start, kept in auto.cnf);
- else (MariaDB has none) `@@server_id` with the server's own `@@hostname` and `@@port`, which
  stay the same whether the changefeed reaches it as 127.0.0.1, a DNS name or through a proxy.
The identity's SHA-256, first 64 bits with the top one cleared, is the id: a uint64 as TiCDC
shows it that also fits a signed 64-bit column, never 0 (0 is "not known": a changefeed created
before cdcflow derived it).  A failover to another server (`update --source-uri`) gives another id.
"""

from __future__ import annotations

import hashlib

UNKNOWN = 0
IDENTITY_SQL = ("SHOW GLOBAL VARIABLES WHERE Variable_name IN "
                "('server_uuid', 'server_id', 'hostname', 'port')")


def identity(variables: dict[str, str]) -> str:
    """The text naming the server, from its variables (IDENTITY_SQL's rows, names in lower case)."""
    uuid = (variables.get("server_uuid") or "").strip()
    if uuid:
        return f"server_uuid:{uuid.lower()}"
    return f"server_id:{variables.get('server_id')}@{variables.get('hostname')}:{variables.get('port')}"


def number(text: str) -> int:
    """The id of an identity text: 63 bits of its SHA-256, never UNKNOWN."""
    n = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1
    return n or 1


def read(conn) -> int:
    """The upstream id of the server `conn` is connected to."""
    with conn.cursor() as cur:
        cur.execute(IDENTITY_SQL)
        variables = {str(name).lower(): str(value) for name, value in cur.fetchall()}
    return number(identity(variables))


def of_source(source) -> int:
    """The upstream id of a source URI's server (one short connection)."""
    conn = source.connect()
    try:
        return read(conn)
    finally:
        conn.close()
