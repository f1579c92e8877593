"""The consistent point a snapshot starts the changefeed at, and the downstream tables created
from the upstream's definitions."""

from __future__ import annotations

from types import SimpleNamespace

import pymysql

from cdcflow.core.errors import SNAPSHOT_UNSUPPORTED, CdcflowError
from cdcflow.core.row_codec import quote_ident
from cdcflow.ddl.classify import classify
from cdcflow.ddl.tidb_only import flavour, for_downstream
from cdcflow.sink.downstream import detect
from cdcflow.source.binlog import Position

NEEDS = ("the source user needs SELECT on the tables copied (MariaDB reports the snapshot's binlog position (Binlog_snapshot_file/_position) "
         "without further privileges)")


def open_point(conn) -> Position:
    """Start a consistent-snapshot transaction on `conn` (left open: the rows read in it are the
    upstream at the position returned).  MariaDB reports the binlog position of exactly that
    snapshot; MySQL needs FLUSH TABLES WITH READ LOCK for it, which cdcflow does not take yet."""
    with conn.cursor() as cur:
        cur.execute("SELECT VERSION()")
        version = cur.fetchone()[0]
        if "mariadb" not in version.lower():
            raise CdcflowError(
                f"--snapshot needs a MariaDB upstream for now (this one is {version}): a consistent point on MySQL "
                "takes FLUSH TABLES WITH READ LOCK (RELOAD and REPLICATION CLIENT privileges), not built yet",
                code=SNAPSHOT_UNSUPPORTED,
                hint="copy the tables with a dump taken at a binlog position (mysqldump --single-transaction "
                     "--master-data), then create the changefeed with --start-ts at that point")
        try:
            cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            # the session's status variables Binlog_snapshot_file / _position: the snapshot's own position
            cur.execute("SHOW SESSION STATUS LIKE 'binlog_snapshot_%'")
            status = {k.lower(): v for k, v in cur.fetchall()}
            file, pos = status.get("binlog_snapshot_file"), status.get("binlog_snapshot_position")
        except pymysql.MySQLError as e:
            raise CdcflowError(f"cannot take a consistent snapshot of the upstream: {e}", code=SNAPSHOT_UNSUPPORTED,
                               hint=NEEDS) from None
    if not file:
        raise CdcflowError("the upstream reports no binlog position for its snapshot (log_bin is off)",
                           code=SNAPSHOT_UNSUPPORTED, hint="enable log_bin on the upstream")
    return Position(file, int(pos))


def create_downstream(up, down, scheme: str, schema: str, table: str, cid: str) -> None:
    """Create `schema`.`table` downstream from SHOW CREATE TABLE upstream, through the rules a
    replicated DDL goes through (tidb_only.for_downstream); an existing table is kept."""
    with up.cursor() as cur:
        cur.execute(f"SHOW CREATE TABLE {quote_ident(schema)}.{quote_ident(table)}")
        text = cur.fetchone()[1]
    query = "CREATE TABLE IF NOT EXISTS " + text.split(" ", 2)[2]
    info = classify(query, schema)
    entry = SimpleNamespace(type=info.type, sub_types=list(info.sub_types), query=query, sql_mode=None,
                            name=info.statement_name, commit_ts=None)
    with down.cursor() as cur:
        statement = for_downstream(entry, flavour(*detect(down, scheme)), cid)
        cur.execute(f"CREATE DATABASE IF NOT EXISTS {quote_ident(schema)}")
        cur.execute(f"USE {quote_ident(schema)}")
        cur.execute(statement)
