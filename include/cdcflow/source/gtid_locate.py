"""Binlog positions and GTID positions translated into each other on one server.

`gtid_at` gives the GTID position of a binlog position (the file's GTID_LIST / Previous_gtids
event, then every transaction's GTID up to it).  `locate` finds, on a server that may be
another than the one a checkpoint was read from (a replica promoted after a failover: its
binlog files and offsets differ), where a changefeed whose checkpoint stands after the GTID
position `checkpoint` reads on, or refuses a server that does not hold it, as DM and a
MariaDB/MySQL replica do when they reconnect by GTID.  Both read `SHOW BINLOG EVENTS` pages,
never a binlog dump (no server id, nothing decoded).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from cdcflow.core import tso
from cdcflow.core.errors import CHECKPOINT_GTID_NOT_IN_SOURCE, SOURCE_BEHIND_CHECKPOINT, CdcflowError
from cdcflow.source.gtid import MARIADB, MYSQL, PREVIOUS_GTIDS, GtidPosition, gtid_of_event
from cdcflow.source.position import Position, available_logs

PAGE = 10_000  # SHOW BINLOG EVENTS rows per query


def show_binlog_events(conn, sql: str, args) -> list[tuple[str, int, int, str]]:
    """(kind, position, end position, info) of the rows of a SHOW BINLOG EVENTS.  Its Info holds a
    statement's bytes as its session sent them (a latin1 or gbk DDL, MariaDB's Annotate_rows of
    a row event), which are not UTF-8: the rows come undecoded (character_set_results binary, set
    back after) and only the names and GTID texts read here are decoded, the rest replaced."""
    with conn.cursor() as cur:
        cur.execute("SELECT @@SESSION.character_set_results")
        was = cur.fetchone()[0]
        cur.execute("SET SESSION character_set_results = binary")
        try:
            cur.execute(sql, args)
            rows = cur.fetchall()
        finally:
            cur.execute("SET SESSION character_set_results = %s", (was,))  # None: NULL, as it was
    return [(_text(kind), int(pos), int(end), _text(info)) for _log, pos, kind, _sid, end, info in rows]


def _text(value) -> str:
    if value is None:
        return ""
    return value.decode("utf-8", "replace") if isinstance(value, (bytes, bytearray)) else str(value)


def events(conn, file: str, start: int = 4) -> Iterator[tuple[str, int, int, str]]:
    """(kind, position, end position, info) of each event of `file` from `start` on."""
    while True:
        rows = show_binlog_events(conn, f"SHOW BINLOG EVENTS IN %s FROM {int(start)} LIMIT {PAGE}", (file,))
        yield from rows
        if len(rows) < PAGE:
            return
        start = rows[-1][2]


def starting_gtids(conn, file: str) -> str:
    """The text of a binlog file's GTID_LIST / Previous_gtids event (its first events)."""
    rows = show_binlog_events(conn, "SHOW BINLOG EVENTS IN %s LIMIT 4", (file,))
    return next((info for kind, _p, _e, info in rows if kind in PREVIOUS_GTIDS), "")


def gtid_at(conn, pos: Position) -> Position:
    """`pos` with the GTID position of the transactions before it.  MariaDB computes it itself
    (BINLOG_GTID_POS: its own read of the file, 0.15 s for 4.5 MB where a read of its events
    over the protocol took 4 s); otherwise, as DM's GetGTIDsForPos: the file's starting position
    (Gtid_list / Previous_gtids, which belongs to every position of the file), then the GTID of
    each transaction that starts before `pos`."""
    with conn.cursor() as cur:
        cur.execute("SELECT @@version")
        if "mariadb" in cur.fetchone()[0].lower():
            cur.execute("SELECT BINLOG_GTID_POS(%s, %s)", (pos.file, pos.pos))
            found = cur.fetchone()[0]
            if found is not None:  # None: not an event's start, or a file the server lacks
                return dataclasses.replace(pos, gtid=str(GtidPosition.parse(found)))
    g = GtidPosition()
    for kind, at, _end, info in events(conn, pos.file):
        if kind in PREVIOUS_GTIDS:
            g = GtidPosition.parse(info)
        elif (gtid := gtid_of_event(kind, info)) is not None:
            if at >= pos.pos:
                break
            g.add(gtid)
    return dataclasses.replace(pos, gtid=str(g.from_first()))


def server_gtids(conn) -> tuple[str, GtidPosition, str]:
    """The server's flavour, the GTID position its binlog holds up to, and its GTID state in words."""
    with conn.cursor() as cur:
        cur.execute("SELECT @@version")
        if "mariadb" in cur.fetchone()[0].lower():
            cur.execute("SELECT @@GLOBAL.gtid_binlog_pos, @@GLOBAL.gtid_current_pos")
            binlog_pos, current = cur.fetchone()
            return MARIADB, GtidPosition.parse(binlog_pos), f"gtid_binlog_pos '{binlog_pos}', " \
                                                            f"gtid_current_pos '{current}'"
        cur.execute("SELECT @@GLOBAL.gtid_executed, @@GLOBAL.gtid_purged, @@GLOBAL.gtid_mode")
        executed, purged, mode = cur.fetchone()
        executed = (executed or "").replace("\n", "")
        return MYSQL, GtidPosition.parse(executed), \
            f"gtid_mode {mode}, gtid_executed '{executed}', gtid_purged '{(purged or '').replace(chr(10), '')}'"


def locate(conn, checkpoint_gtid: str | None, changefeed: str, checkpoint_ts: int, server: str) -> Position:
    """Where a changefeed whose checkpoint stands after `checkpoint_gtid` reads on in this
    server's binlog: the start of its first transaction the checkpoint does not hold (the
    server's end of binlog when it has none yet), carrying the checkpoint's GTID position.

    Refused (CdcflowError, not retryable): a checkpoint that records no GTID position; a server
    of the other flavour; a server *behind* the checkpoint (its binlog lacks a transaction the
    checkpoint holds: the downstream has rows the server has not); a server whose binlog no
    longer holds the transactions right after the checkpoint (purged); a MariaDB server whose
    binlog has another transaction under the checkpoint's GTID (a different history)."""
    at = f"checkpoint {checkpoint_ts} ({tso.to_text(checkpoint_ts)}) at GTID '{checkpoint_gtid or ''}'"
    flavor, held, state = server_gtids(conn)

    def lost(why: str) -> CdcflowError:
        return CdcflowError(
            f"the upstream {server} cannot continue the {at}: {why} (server: {state})",
            changefeed=changefeed, code=CHECKPOINT_GTID_NOT_IN_SOURCE,
            hint="point --source-uri at a server whose binlog holds every transaction after the checkpoint (the "
                 "promoted replica of the changefeed's upstream, with log_slave_updates and binlogs not purged), "
                 "or re-create the changefeed on this server with --snapshot")

    checkpoint = GtidPosition.parse(checkpoint_gtid)
    if not checkpoint:
        raise lost("the checkpoint records no GTID position (a cdcflow older than GTID checkpoints wrote it, "
                   "and no cycle has run since)")
    if checkpoint.flavor != flavor:
        raise lost(f"the checkpoint's GTIDs are {checkpoint.flavor}'s, the server is {flavor}")
    behind = held.lacks(checkpoint)
    if behind:
        raise CdcflowError(
            f"the upstream {server} is behind the {at}: its binlog lacks transactions the downstream already has "
            f"({'; '.join(behind)}; server: {state})",
            changefeed=changefeed, code=SOURCE_BEHIND_CHECKPOINT,
            hint="promote the replica that received everything (or let this one catch up with the old primary's "
                 "binlog first); a replica's binlog holds what it replicated only with log_slave_updates. "
                 "Otherwise re-create the changefeed on this server with --snapshot")
    logs = available_logs(conn)
    first = None
    for i in range(len(logs) - 1, -1, -1):
        at_start = starting_gtids(conn, logs[i])
        if checkpoint.covers(GtidPosition.parse(at_start)):
            first, entries = i, [g.strip() for g in at_start.strip("[]").replace("\n", "").split(",")]
            break
    if first is None:
        raise lost(f"its oldest binlog {logs[0] if logs else 'none'} starts after the checkpoint: the transactions "
                   "right after it were purged")
    return _scan(conn, checkpoint, logs[first:], entries, lost)


def _scan(conn, checkpoint: GtidPosition, logs: list[str], entries: list[str], lost) -> Position:
    """The start of the first transaction of `logs` that `checkpoint` does not hold.  On MariaDB
    every domain's last GTID must also be met, as itself, at the first file's start (`entries`)
    or in the scan, before the domain moves past it: otherwise the server's history differs."""
    mine = {d: f"{d}-{s}-{n}" for d, (s, n) in checkpoint.domains.items()}
    met = {d for d, g in mine.items() if g in entries}
    start, end = None, None
    for file in logs:
        for kind, pos, stop, info in events(conn, file):
            end = Position(file, stop)
            gtid = gtid_of_event(kind, info)
            if gtid is None:
                continue
            if checkpoint.domains:
                d, _s, n = (int(x) for x in gtid.split("-"))
                if gtid == mine.get(d):
                    met.add(d)
                elif d in mine and d not in met and n >= checkpoint.domains[d][1]:
                    raise lost(f"its binlog has {gtid} where the checkpoint's transaction {mine[d]} was expected: "
                               "the server never had the changefeed's transactions (another history)")
            if start is None and not checkpoint.has(gtid):
                start = Position(file, pos, str(checkpoint))
            if start is not None and met >= mine.keys():
                return start
    if not met >= mine.keys():
        raise lost(f"its binlog does not hold {', '.join(g for d, g in mine.items() if d not in met)}")
    return start or dataclasses.replace(end, gtid=str(checkpoint))
