"""The consistent point a snapshot starts the changefeed at, and the downstream tables created
from the upstream's definitions.

Two ways to take the point (the config's `[cdcflow] snapshot-point`):

* `consistent-snapshot` (MariaDB; what `auto` picks there): `START TRANSACTION WITH CONSISTENT
  SNAPSHOT` and the session's `Binlog_snapshot_file` / `_position`, the binlog position of
  exactly that snapshot.  No lock, no privilege beyond SELECT.
* `ftwrl` (MySQL's only way; what `auto` picks there; it works on MariaDB too): as mysqldump
  --single-transaction --master-data does, `FLUSH TABLES WITH READ LOCK` (RELOAD), then
  `START TRANSACTION WITH CONSISTENT SNAPSHOT` and the binlog position (`SHOW BINARY LOG STATUS`
  on MySQL 8.2+, else `SHOW MASTER STATUS`: REPLICATION CLIENT) while the lock holds, then
  `UNLOCK TABLES`.  The lock waits for the commits in flight and blocks new ones, so at the
  position read every transaction before it is committed in the engine and none after it is:
  the snapshot opened under the lock is exactly the position.

Which readers need a snapshot opened under the lock?  Only the point's own connection: it reads
the keyless tables, whose binlog replay must apply each change exactly once.  The keyed chunks
are read later by Spark tasks in snapshot transactions of their own, opened after the lock was
released: each sees every transaction before the position (all were committed before the lock
was even granted) and possibly some after it, and the changefeed's first cycle replays the
binlog from the position in safe mode (REPLACE / DELETE by key, full row images), so a change a
chunk already saw is applied again over the same key and converges.  That argument needs only
"every chunk's snapshot includes the point", which holds for both methods; holding the global
lock until every chunk has opened a snapshot would block the upstream's writes for the whole
copy (chunks run in waves), which is what the short lock avoids."""

from __future__ import annotations

import re

import pymysql

from cdcflow.core.errors import SNAPSHOT_UNSUPPORTED, CdcflowError
from cdcflow.core.row_codec import quote_ident
from cdcflow.ddl.tidb_only import flavour
from cdcflow.sink.downstream import detect
from cdcflow.snapshot.deferred_indexes import downstream_statement, split
from cdcflow.source.binlog import Position
from cdcflow.source.gtid_locate import gtid_at

AUTO, CONSISTENT_SNAPSHOT, FTWRL = "auto", "consistent-snapshot", "ftwrl"
NEEDS = {
    CONSISTENT_SNAPSHOT: "the source user needs SELECT on the tables copied (MariaDB reports the snapshot's binlog "
                         "position, Binlog_snapshot_file/_position, without further privileges)",
    FTWRL: "the source user needs RELOAD (for FLUSH TABLES WITH READ LOCK) and REPLICATION CLIENT (for the binlog "
           "position), besides SELECT: GRANT RELOAD, REPLICATION CLIENT ON *.* TO the user; on MariaDB, "
           "snapshot-point = \"consistent-snapshot\" needs neither",
}
ACCESS_DENIED = (1044, 1045, 1142, 1227)  # the server's "access denied" / "you need the X privilege" errors


def open_point(conn, method: str = AUTO) -> tuple[Position, str]:
    """Start a consistent-snapshot transaction on `conn` (left open: the rows read in it are the
    upstream at the position returned) by `method`; returns the position and the method used."""
    with conn.cursor() as cur:
        cur.execute("SELECT VERSION()")
        version = cur.fetchone()[0]
    mariadb = "mariadb" in version.lower()
    if method == AUTO:
        method = CONSISTENT_SNAPSHOT if mariadb else FTWRL
    if method == CONSISTENT_SNAPSHOT and not mariadb:
        raise CdcflowError(f"snapshot-point = \"consistent-snapshot\" needs a MariaDB upstream (this one is {version}): "
                           "MySQL does not report the binlog position of a snapshot", code=SNAPSHOT_UNSUPPORTED,
                           hint="set [cdcflow] snapshot-point = \"ftwrl\" (or \"auto\") in the config")
    try:
        with conn.cursor() as cur:
            cur.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")  # a snapshot needs it
            file, pos = (_under_read_lock if method == FTWRL else _snapshot_status)(cur, version)
    except pymysql.MySQLError as e:
        denied = e.args and e.args[0] in ACCESS_DENIED
        raise CdcflowError(f"cannot take a consistent point of the upstream by {method}: {e.args[-1] if e.args else e}",
                           code=SNAPSHOT_UNSUPPORTED,
                           hint=NEEDS[method] if denied else "check the upstream is reachable, then run again") from None
    if not file:
        raise CdcflowError("the upstream reports no binlog position for its snapshot (log_bin is off)",
                           code=SNAPSHOT_UNSUPPORTED, hint="enable log_bin on the upstream")
    return gtid_at(conn, Position(file, int(pos))), method  # its GTID position too: a failover needs it


def _snapshot_status(cur, version: str) -> tuple[str | None, str | None]:
    cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
    # the session's status variables Binlog_snapshot_file / _position: the snapshot's own position
    cur.execute("SHOW SESSION STATUS LIKE 'binlog_snapshot_%'")
    status = {k.lower(): v for k, v in cur.fetchall()}
    return status.get("binlog_snapshot_file"), status.get("binlog_snapshot_position")


def _binlog_status_statement(version: str) -> str:
    """MySQL 8.2 renamed SHOW MASTER STATUS (8.4 removed it); MariaDB keeps it."""
    m = re.match(r"(\d+)\.(\d+)", version)
    new = "mariadb" not in version.lower() and m and (int(m.group(1)), int(m.group(2))) >= (8, 2)
    return "SHOW BINARY LOG STATUS" if new else "SHOW MASTER STATUS"


def _under_read_lock(cur, version: str) -> tuple[str | None, str | None]:
    cur.execute("FLUSH TABLES WITH READ LOCK")
    try:
        cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        cur.execute(_binlog_status_statement(version))
        row = cur.fetchone()
    finally:
        cur.execute("UNLOCK TABLES")  # a global read lock's release does not end the transaction
    return (row[0], row[1]) if row else (None, None)


def create_downstream(up, down, scheme: str, schema: str, table: str, changefeed_id: str,
                      keep: set[str] | None = None, sequence: bool = False) -> list[str]:
    """Create `schema`.`table` downstream from SHOW CREATE TABLE upstream, through the rules a
    replicated DDL goes through (tidb_only.for_downstream); an existing table is kept.  With
    `keep` (the index names that stay), without the secondary indexes deferred_indexes.split
    defers: their clauses are returned, for the build after the replay.  A `sequence` is created
    from SHOW CREATE SEQUENCE: its SHOW CREATE TABLE (a table with SEQUENCE=1) is MariaDB's alone,
    and makes a sequence of the default definition until its row is written."""
    kind = "SEQUENCE" if sequence else "TABLE"
    with up.cursor() as cur:
        cur.execute(f"SHOW CREATE {kind} {quote_ident(schema)}.{quote_ident(table)}")
        text = cur.fetchone()[1]
    deferred: list[str] = []
    if keep is not None:
        text, deferred = split(text, keep)
    query = f"CREATE {kind} IF NOT EXISTS " + text.split(" ", 2)[2]
    with down.cursor() as cur:
        statement = downstream_statement(flavour(*detect(down, scheme)), schema, query, changefeed_id)
        cur.execute(f"CREATE DATABASE IF NOT EXISTS {quote_ident(schema)}")
        cur.execute(f"USE {quote_ident(schema)}")
        cur.execute(statement)
    return deferred
