"""A window of the binlog cut at transaction boundaries into ranges that are read apart, each
on its own connection (pull's parallel path), and the commit ts chain put back together.

A range starts where a transaction's GTID event starts, right after the previous
transaction's last event: every row event is preceded by its table map inside the same
transaction, and the table map carries the columns' names and types
(binlog_row_metadata=FULL), so a range needs nothing that came before it; the server sends
each new connection the format description event itself.  Starting only where one
transaction ends and the next begins in the same file also gives every event the
transaction start position a sequential read gives it.

A range's reader numbers its transactions 0, 1, 2, ... in place of a commit ts and keeps
each one's time; `chain` then computes the ts a sequential read gives
(tso.for_binlog_event over every transaction in order), so a re-read window gets the same
ts however it was cut.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from cdcflow.core import tso
from cdcflow.core.uri import DbUri
from cdcflow.source.binlog import BinlogReader, Position, available_logs

# Range readers' server ids: above every default id (core.uri.default_server_id stays below
# 1_001_000_000), one block of MAX_RANGES per changefeed server id
RANGE_SERVER_ID_BASE = 2**31
MAX_RANGES = 1024
_BLOCKS = (2**32 - 1 - RANGE_SERVER_ID_BASE) // MAX_RANGES

TRANSACTION_STARTS = {"Gtid", "Anonymous_Gtid"}  # MariaDB and MySQL name their GTID events so
TRANSACTION_ENDS = {"Xid", "Query"}  # a COMMIT, a ROLLBACK or a DDL (a BEGIN never precedes a GTID)
SCAN_PAGE = 10_000  # SHOW BINLOG EVENTS rows fetched at a time


def range_server_id(server_id: int, index: int) -> int:
    """The binlog server id of range `index` of a changefeed whose own id is `server_id`:
    the ranges of one pull never share one, nor take the sequential reader's id."""
    if not 0 <= index < MAX_RANGES:
        raise ValueError(f"range index {index} outside 0..{MAX_RANGES - 1}")
    block = zlib.crc32(str(server_id).encode()) % _BLOCKS
    return RANGE_SERVER_ID_BASE + block * MAX_RANGES + index


def window_bytes(conn, start: Position, head: Position) -> int:
    """How many binlog bytes lie between two positions (the files' sizes between them)."""
    if start.file == head.file:
        return max(0, head.pos - start.pos)
    with conn.cursor() as cur:
        cur.execute("SHOW BINARY LOGS")
        sizes = {r[0]: int(r[1]) for r in cur.fetchall()}
    total = 0
    for name in sorted(sizes):
        if start.file <= name <= head.file:
            lo = start.pos if name == start.file else 0
            hi = head.pos if name == head.file else sizes[name]
            total += max(0, hi - lo)
    return total


def boundaries(conn, start: Position, head: Position) -> list[tuple[Position, int]]:
    """Every position strictly inside the window where a range may start, with its byte
    offset from `start`: a GTID event that directly follows a transaction's end in the same
    file.  Found from the events' headers, which the server reads for us (SHOW BINLOG EVENTS),
    a page at a time."""
    logs = [f for f in available_logs(conn) if start.file <= f <= head.file]
    out: list[tuple[Position, int]] = []
    offset_of_file = 0
    with conn.cursor() as cur:
        for name in logs:
            pos = start.pos if name == start.file else 4
            prev_type, prev_end, file_end = None, None, pos
            while True:
                cur.execute(f"SHOW BINLOG EVENTS IN %s FROM {int(pos)} LIMIT {SCAN_PAGE}", (name,))
                rows = cur.fetchall()
                for _log, at, kind, _sid, end, _info in rows:
                    at, end = int(at), int(end)
                    if name == head.file and at >= head.pos:
                        break
                    if kind in TRANSACTION_STARTS and prev_type in TRANSACTION_ENDS and prev_end == at \
                            and (name, at) > (start.file, start.pos):
                        out.append((Position(name, at), offset_of_file + at - (start.pos if name == start.file else 0)))
                    prev_type, prev_end, file_end = kind, end, end
                else:
                    if len(rows) == SCAN_PAGE:
                        pos = int(rows[-1][4])
                        continue
                break
            offset_of_file += file_end - (start.pos if name == start.file else 0)
    return out


def cut(candidates: list[tuple[Position, int]], total_bytes: int, ranges: int) -> list[Position]:
    """At most ranges-1 cut positions, each the candidate nearest an even share of the bytes."""
    cuts: list[Position] = []
    i = 0
    for k in range(1, ranges):
        goal = total_bytes * k // ranges
        while i + 1 < len(candidates) and abs(candidates[i + 1][1] - goal) <= abs(candidates[i][1] - goal):
            i += 1
        if i < len(candidates) and (not cuts or candidates[i][0] != cuts[-1]):
            cuts.append(candidates[i][0])
    return cuts


class RangeReader(BinlogReader):
    """Reads one range; its events carry the transaction's number within the range as
    commit_ts, and `times` holds each transaction's time (for `chain`)."""

    def __init__(self, uri: DbUri, server_id: int, start: Position, end: Position):
        super().__init__(uri, server_id, start, end, prev_ts=-1)
        self.times: list[int] = []

    def _next_ts(self, ev_time: int) -> int:
        self.times.append(ev_time)
        return len(self.times) - 1


@dataclass
class RangeResult:
    """What the driver needs of one read range (plain values: it comes back from a Spark task)."""

    times: list[int]  # each transaction's time, in order
    aborted: list[int]  # numbers of the transactions rolled back (or cut off at the window's end)
    ended: int  # transactions read to their end
    events: int
    last_pos: dict

    @classmethod
    def of(cls, reader: RangeReader, events: int) -> "RangeResult":
        return cls(list(reader.times), sorted(reader.aborted_ts), reader.transactions, events,
                   reader.last_pos.to_dict())


def chain(prev_ts: int, results: list[RangeResult]) -> list[list[int]]:
    """Each range's transactions' commit ts, as one sequential read from `prev_ts` gives them."""
    out, ts = [], prev_ts
    for r in results:
        mine = []
        for t in r.times:
            ts = tso.for_binlog_event(ts, t)
            mine.append(ts)
        out.append(mine)
    return out
