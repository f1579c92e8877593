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
from cdcflow.source.binlog import BinlogReader, Position
from cdcflow.source.gtid import GtidPosition
from cdcflow.source.gtid_locate import show_binlog_events
from cdcflow.source.position import binlog_sizes

# Range readers' server ids: above every default id (core.uri.default_server_id stays below
# 1_001_000_000), one block of MAX_RANGES per changefeed server id
RANGE_SERVER_ID_BASE = 2**31
MAX_RANGES = 1024
_BLOCKS = (2**32 - 1 - RANGE_SERVER_ID_BASE) // MAX_RANGES

TRANSACTION_STARTS = {"Gtid", "Anonymous_Gtid"}  # MariaDB and MySQL name their GTID events so
TRANSACTION_ENDS = {"Xid", "Query"}  # a COMMIT, a ROLLBACK or a DDL (a BEGIN never precedes a GTID)
PROBE_ROWS = 256  # SHOW BINLOG EVENTS rows fetched by one probe
CLOSE_ENOUGH = 20  # a probe landing within 1/CLOSE_ENOUGH of a share from its goal is kept


def range_server_id(server_id: int, index: int) -> int:
    """The binlog server id of range `index` of a changefeed whose own id is `server_id`:
    the ranges of one pull never share one, nor take the sequential reader's id."""
    if not 0 <= index < MAX_RANGES:
        raise ValueError(f"range index {index} outside 0..{MAX_RANGES - 1}")
    block = zlib.crc32(str(server_id).encode()) % _BLOCKS
    return RANGE_SERVER_ID_BASE + block * MAX_RANGES + index


def spans_of(sizes: dict[str, int], start: Position, head: Position) -> list[tuple[str, int, int]] | None:
    """The window's part of each binlog file, in order: (file, first byte, end byte), the files
    from its start's to its head's as `sizes` (binlog_sizes) lists them; a window in one file
    needs none.  None where a position lacks its file or byte.  A start in a file the server no
    longer holds is left out (the window cannot be read: prepare's check of the checkpoint says
    so next)."""
    if not start.file or not head.file or start.pos is None or head.pos is None:
        return None
    if start.file == head.file:
        return [(start.file, start.pos, max(start.pos, head.pos))]
    files = sorted(name for name in {*sizes, head.file} if start.file <= name <= head.file)
    return [(name, lo, max(lo, head.pos if name == head.file else sizes[name]))
            for name in files for lo in [start.pos if name == start.file else 4]]


def _spans(conn, start: Position, head: Position) -> list[tuple[str, int, int]]:
    """The window's part of each binlog file, the server asked for the files' sizes only where
    the window spans several."""
    return spans_of({} if start.file == head.file else binlog_sizes(conn), start, head) or []


def span_bytes(spans: list[tuple[str, int, int]]) -> int:
    """The binlog bytes of a window's spans (spans_of)."""
    return sum(hi - lo for _f, lo, hi in spans)


def window_bytes(conn, start: Position, head: Position) -> int:
    """How many binlog bytes lie between two positions (the files' sizes between them)."""
    return span_bytes(_spans(conn, start, head))


def bounded_head(conn, start: Position, head: Position, max_bytes: int) -> Position | None:
    """Where a window from `start` ends when it may hold about `max_bytes` of binlog: the byte
    `max_bytes` after `start` (None when the window up to `head` holds no more).  It need not
    be an event's start: a reader reads every transaction that starts before it, whole, so
    the window still ends at a commit boundary, and a transaction larger than the bound goes
    through whole."""
    left = max_bytes
    for file, lo, hi in _spans(conn, start, head):
        if hi - lo > left:
            return Position(file, lo + max(1, left))
        left -= hi - lo
    return None


def cuts(conn, start: Position, head: Position, ranges: int) -> list[Position]:
    """At most ranges-1 positions strictly inside the window where a range may start, each the
    first transaction start (a GTID event right after a transaction's end, in the same file)
    at or after an even share of the window's bytes.

    The events are not read here: `SHOW BINLOG EVENTS … LIMIT offset, n` makes the server
    skip `offset` events itself and send `n` headers, so a cut costs a few probes of
    PROBE_ROWS rows, whatever the window's size (reading every header took a quarter of a
    sequential decode).  The offset is estimated from the bytes per event seen so far and
    corrected once by the probe's own position."""
    spans = _spans(conn, start, head)
    total = sum(hi - lo for _f, lo, hi in spans)
    out: list[Position] = []

    def probe(file: str, at: int, skip: int) -> list[tuple[str, int, int]]:
        rows = show_binlog_events(conn, f"SHOW BINLOG EVENTS IN %s FROM {int(at)} LIMIT {int(skip)}, {PROBE_ROWS}",
                                  (file,))
        return [(kind, pos, end) for kind, pos, end, _info in rows]

    done, carried = 0, False
    for file, lo, hi in spans:
        goals = [total * k // ranges - done + lo for k in range(1, ranges)]
        done += hi - lo
        if carried:  # a goal of an earlier file found no start before that file's end
            goals.insert(0, lo)
        base = lo  # an event start at or before the next goal, in this file
        per_event = None
        for goal in (g for g in goals if lo <= g < hi):
            if out and out[-1].file == file and out[-1].pos >= goal:
                continue  # a large transaction took the previous cut past this goal
            if per_event is None:
                first = probe(file, base, 0)
                per_event = max(1.0, (first[-1][2] - base) / len(first)) if first else 1.0
            skip = int((goal - base) / per_event)
            rows = probe(file, base, skip)
            if skip and (not rows or abs(rows[0][1] - goal) * CLOSE_ENOUGH > total / ranges):
                # the mix of event sizes differs further on: correct by what the probe saw
                # (no rows: fewer events than guessed lie before the file's end)
                per_event = max(1.0, ((rows[0][1] if rows else hi) - base) / skip)
                skip = int((goal - base) / per_event)
                rows = probe(file, base, skip)
            found = _first_start(rows, lambda at: probe(file, at, 0), hi)
            carried = found is None
            if found is not None and found > _after(out, file, start):
                out.append(Position(file, found))
                base = found
    return out


def _after(out: list[Position], file: str, start: Position) -> int:
    """The position a new cut in `file` must lie after: the last cut's, the window start's."""
    if out and out[-1].file == file:
        return out[-1].pos
    return start.pos if file == start.file else 0


def _first_start(rows, more, hi: int) -> int | None:
    """The first transaction start among `rows` (kind, pos, end) and the pages `more(at)`
    gives after them, before byte `hi`; None when none is."""
    while rows:
        for (kind0, _p0, end0), (kind, pos, _end) in zip(rows, rows[1:]):
            if pos >= hi:
                return None
            if kind in TRANSACTION_STARTS and kind0 in TRANSACTION_ENDS and end0 == pos:
                return pos
        if len(rows) < PROBE_ROWS or rows[-1][2] >= hi:
            return None
        rows = [rows[-1], *more(rows[-1][2])]
    return None


READ_SINCE_START = "+"  # a range's DDL events' gtid_position: the GTIDs read since the range's start


class RangeReader(BinlogReader):
    """Reads one range; its events carry the transaction's number within the range as
    commit_ts, and `times` holds each transaction's time (for `chain`); a DDL's gtid_position
    is READ_SINCE_START and the GTIDs read before it in the range (gtid_in_range completes it)."""

    def __init__(self, uri: DbUri, server_id: int, start: Position, end: Position, exact_end: bool = False):
        super().__init__(uri, server_id, start, end, prev_ts=-1, exact_head=exact_end)
        self.times: list[int] = []

    def _next_ts(self, ev_time: int) -> int:
        self.times.append(ev_time)
        return len(self.times) - 1

    def event_gtid_position(self) -> str | None:
        return READ_SINCE_START + str(self.read_gtids)


@dataclass
class RangeResult:
    """What the driver needs of one read range (plain values: it comes back from a Spark task)."""

    times: list[int]  # each transaction's time, in order
    aborted: list[int]  # numbers of the transactions rolled back (or cut off at the window's end)
    ended: int  # transactions read to their end
    events: int
    last_pos: dict
    seconds: float  # the task's own time: connecting, decoding, writing
    gtids: str = ""  # the GTIDs of the transactions read to their end (a GtidPosition's text)
    held: int = 0  # the most events its writer held at once
    rolled_back: list = ()  # [number, first seq, seq after the last]: rows a ROLLBACK TO undid

    @classmethod
    def of(cls, reader: RangeReader, writer, seconds: float) -> "RangeResult":
        """`writer`: the store.events.EventWriter the range was read into."""
        return cls(list(reader.times), sorted(reader.aborted_ts), reader.transactions, writer.count,
                   reader.last_pos.to_dict(), seconds, str(reader.read_gtids), writer.held_rows,
                   [list(r) for r in reader.rolled_back])


def gtids_at_starts(start_gtid: str | None, results: list[RangeResult]) -> list[str | None]:
    """The GTID position at the start of each of the ranges read one after another from a start
    whose GTID position is `start_gtid` (None: unknown), and at the end of the last.  A range's
    reader knows the GTIDs it read, not the position at its start: that is the driver's to put
    together."""
    if start_gtid is None:
        return [None] * (len(results) + 1)
    out, at = [start_gtid], GtidPosition.parse(start_gtid)
    for r in results:
        at = at.then(GtidPosition.parse(r.gtids))
        out.append(str(at))
    return out


def gtid_in_range(range_start: str | None, value: str) -> str | None:
    """A DDL event's gtid_position as a range read it (RangeReader.event_gtid_position) made
    whole with the GTID position at the range's start."""
    if not value.startswith(READ_SINCE_START):
        return value
    if range_start is None:
        return None
    return str(GtidPosition.parse(range_start).then(GtidPosition.parse(value[len(READ_SINCE_START):])))


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
