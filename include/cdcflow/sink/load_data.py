"""`LOAD DATA LOCAL INFILE … REPLACE` from memory: rows already in LOAD DATA's text form
(tab-separated, backslash-escaped, `\\N` for NULL, one line a row) sent as the "file" the
statement names.  The snapshot's copy writes its batches this way on a MySQL or MariaDB
downstream: the server parses no SQL per value (docs/performance.md, "LOAD DATA for the copy").

pymysql answers a server's request for a local file by opening whatever name the server asks
for.  Installed here, it sends only the bytes of the load this session started, under the name
it gave, and refuses any other request: no file of the client's is ever read."""

from __future__ import annotations

import re

from pymysql import connections, err
from pymysql.constants import ER

from cdcflow.core.row_codec import quote_ident

NAME = "cdcflow-rows"  # the name the statement gives; no such file is opened
_PACKET = 64 * 1024  # bytes a packet: under any server's max_allowed_packet in use
# the server does not take LOAD DATA LOCAL (MySQL's and MariaDB's codes for it)
REFUSED = frozenset({1148, 3948, 4166})
_ANSWER = re.compile(rb"Records: (\d+)\s+Deleted: \d+\s+Skipped: (\d+)\s+Warnings: (\d+)")


def _send(filename: bytes, conn) -> None:
    """pymysql's _send_local_file, from the bytes the session staged for this statement."""
    staged = getattr(conn, "_cdcflow_rows", None)
    if staged is None or filename != NAME.encode():
        raise err.OperationalError(ER.FILE_NOT_FOUND, f"the server asked for the local file {filename!r}: "
                                                      "this client sends only the rows of its own LOAD DATA")
    for at in range(0, len(staged), _PACKET):
        conn.write_packet(staged[at:at + _PACKET])


def install() -> None:
    connections._send_local_file = _send


def statement(schema: str, table: str, columns: list[str], converted: dict[str, str]) -> str:
    """The LOAD DATA of `columns` in order; `converted`: column -> the expression of its field
    `{v}` (bytes given in hex: `UNHEX({v})`), read into a variable first."""
    targets, sets = [], []
    for i, c in enumerate(columns):
        if c in converted:
            targets.append(f"@v{i}")
            sets.append(f"{quote_ident(c)} = {converted[c].format(v=f'@v{i}')}")
        else:
            targets.append(quote_ident(c))
    table = f"{quote_ident(schema)}.{quote_ident(table)}"
    return (f"LOAD DATA LOCAL INFILE '{NAME}' REPLACE INTO TABLE {table} CHARACTER SET utf8mb4 "
            "FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' "
            f"({', '.join(targets)})" + (f" SET {', '.join(sets)}" if sets else ""))


def load(conn, sql: str, rows_text: bytes, rows: int) -> str:
    """Run `sql` (statement()) with `rows_text` as its file on `conn` (connected with
    local_infile): "loaded" when the server took exactly `rows` rows with no warning,
    "refused" when it takes no LOAD DATA LOCAL, else "inexact" (a value it refused or took
    with a warning).  Unless
    loaded, the caller writes those rows another way (REPLACE: whatever the load left converges)."""
    conn._cdcflow_rows = rows_text
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
        answer = _ANSWER.search(conn._result.message or b"")
    except err.MySQLError as e:
        return "refused" if e.args and e.args[0] in REFUSED else "inexact"
    finally:
        conn._cdcflow_rows = None
    exact = answer is not None and (int(answer[1]), int(answer[2]), int(answer[3])) == (rows, 0, 0)
    return "loaded" if exact else "inexact"
