"""A changefeed's lag, computed when asked against the upstream's head: what `changefeed
query`, the HTTP API, the Changefeeds page and its plot show.

TiCDC's lag grows while a changefeed stalls; a lag read from the last cycle's record would stay
where that cycle left it (a DAG paused, a scheduler down, a changefeed that never ran).  Here:

- caught up (nothing the changefeed replicates between its checkpoint and the upstream's
  head): 0;
- behind: now - the commit time of the first change after the checkpoint that the changefeed
  would replicate (its table filter; the commit ts derived as a cycle derives it);
- the read is bounded (SCAN_EVENTS events, SCAN_SECONDS): when no replicated change shows up
  within the bound, the first one is later than the last event read, so the lag is *at most*
  now - that event's commit time, and says so;
- the upstream cannot be read: no number, and why.

The binlog is read with a server id of its own (a dump with the changefeed's id would end the
dump of a cycle running at the same time).  The upstream keeps one dump per server id: a new one
ends the one before it (MariaDB's error 4052, MySQL's 1236), and reads of one changefeed's lag
come at once (the Changefeeds page asks for the list's lags and the open changefeed's own
together; two people look at once). So:

- in one process, reads of one changefeed against the same checkpoint and head share one read
  (`_shared`): the answer is the same and the upstream is asked once; other reads of it at
  once each take a lag id of their own (`lag_server_id`, one of LAG_IDS);
- a read another process ends that way (`source.binlog.ended_by_same_id`: the API server's other
  workers, `changefeed query`) goes again with the next lag id; when none is left the lag is
  unknown and says to ask again.

The list of many changefeeds (`live_lags`) reads the head once per upstream (server and login)
and reads the binlog only for a changefeed behind that head, those reads at once in a bounded
pool of threads: 20 changefeeds on one upstream are one head read when they are caught up.  The
threads overlap the waits on the upstream, not the decoding (it holds Python's lock), so on few
cores the reads of many changefeeds behind take less than one after another, not one read's time.
A source URI that no longer parses is that changefeed's unknown lag, not the list's error.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from cdcflow.changefeed import states
from cdcflow.core import tso
from cdcflow.core.errors import CdcflowError
from cdcflow.config.spec_store import Spec
from cdcflow.core.uri import default_server_id, parse_source_uri
from cdcflow.ddl.classify import classify
from cdcflow.filter.assembled import Filter, ddl_decision
from cdcflow.source.binlog import BinlogReader, Position, ended_by_same_id, head_position
from cdcflow.store import metastore

SCAN_EVENTS = 20_000  # row events and DDLs read past the checkpoint at most
SCAN_SECONDS = 5.0
CONNECT_TIMEOUT = 5  # seconds: an upstream that does not answer is said so quickly
READERS = 8  # binlog reads at once for the list of changefeeds (each mostly waits on its upstream)
LAG_IDS = 4  # server ids one changefeed's lag reads may use at once (module docstring)

CAUGHT_UP, BEHIND, AT_MOST, UNKNOWN = "caught-up", "behind", "at-most", "unknown"


@dataclass(frozen=True)
class Lag:
    """`seconds` is None when `status` is unknown; `pending_ts` is the commit ts of the first
    change not applied (behind), or of the last event read (at-most)."""

    status: str
    seconds: float | None
    as_of: float
    pending_ts: int | None = None
    note: str | None = None

    def to_dict(self) -> dict:
        return {"status": self.status, "seconds": self.seconds, "pending_ts": self.pending_ts,
                "pending_time": tso.to_text(self.pending_ts), "note": self.note,
                "as_of": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.as_of))}


class _Found(Exception):
    """Ends the read at the first replicated change (or at the bound)."""

    def __init__(self, ts: int, replicated: bool):
        super().__init__(ts)
        self.ts, self.replicated = ts, replicated


def lag_server_id(changefeed_id: str, nth: int = 0) -> int:
    """The server id of a lag read of the changefeed: the first, or the `nth` other when reads
    from other processes hold the ones before it."""
    return default_server_id(changefeed_id + "#lag" + (str(nth) if nth else ""))


def live_lag(spec: Spec, feed: metastore.FeedState) -> Lag:
    """The changefeed's lag now (module docstring)."""
    now = time.time()
    settled = _settled(feed, now)
    if settled is not None:
        return settled
    source = parse_source_uri(spec.source_uri)
    return _behind_head(spec, feed, source, _head(source), now)


def live_lags(pairs: Iterable[tuple[Spec, metastore.FeedState]], readers: int = READERS) -> dict[str, Lag]:
    """The lag now of each changefeed (by id), as live_lag computes it, with one head read per
    distinct upstream (its server and login) and the binlog reads of the changefeeds behind
    their head at once, at most `readers` at a time."""
    now = time.time()
    out: dict[str, Lag] = {}
    todo: list[tuple[Spec, metastore.FeedState, object]] = []
    for spec, feed in pairs:
        settled = _settled(feed, now)
        if settled is not None:
            out[feed.id] = settled
            continue
        try:
            source = parse_source_uri(spec.source_uri)
        except CdcflowError as e:  # a spec edited by hand: this changefeed alone says so
            out[feed.id] = Lag(UNKNOWN, None, now, note=f"the source URI cannot be read: {_reason(e)}")
            continue
        todo.append((spec, feed, source))
    if not todo:
        return out
    servers = list(dict.fromkeys(source for _, _, source in todo))  # DbUri: host, port, login, parameters
    with ThreadPoolExecutor(max_workers=max(1, min(readers, len(todo))), thread_name_prefix="live-lag") as pool:
        heads = dict(zip(servers, pool.map(_head, servers)))
        lags = pool.map(lambda job: _behind_head(*job, heads[job[2]], now), todo)
        out.update({feed.id: lag for (_, feed, _), lag in zip(todo, lags)})
    return out


def _settled(feed: metastore.FeedState, now: float) -> Lag | None:
    """The lag of a changefeed whose state alone says it (finished, removed): no upstream read."""
    if feed.state == states.FINISHED:
        return Lag(CAUGHT_UP, 0.0, now, note="finished at its target-ts: nothing more to replicate")
    if feed.state == states.REMOVED:
        return Lag(UNKNOWN, None, now, note="removed")
    return None


def _head(source) -> Position | Lag:
    """The upstream's head now, or the unknown lag that says why it cannot be read."""
    try:
        conn = source.connect(connect_timeout=CONNECT_TIMEOUT)
        try:
            return head_position(conn)
        finally:
            conn.close()
    except Exception as e:  # noqa: BLE001 - any failure to read the head means the same: no number
        return Lag(UNKNOWN, None, time.time(), note=f"the upstream {source.redacted()} cannot be read: {_reason(e)}")


def _behind_head(spec: Spec, feed: metastore.FeedState, source, head: Position | Lag, now: float) -> Lag:
    """The lag of a changefeed against its upstream's `head` (a Lag: the head could not be read)."""
    if isinstance(head, Lag):
        return Lag(head.status, head.seconds, now, note=head.note)
    start = Position.from_dict(feed.checkpoint_pos)
    if start.file is None:
        return Lag(UNKNOWN, None, now, note="the checkpoint moved to a new upstream (update --source-uri) is "
                                            "located in its binlog by GTID at the next cycle")
    if start.key() >= head.key():
        return Lag(CAUGHT_UP, 0.0, now)
    return _shared((spec.id, feed.checkpoint_ts, start.key(), head.key()),
                   lambda: _read_after(spec, feed, source, start, head, now))


_lock = threading.Lock()
_running: dict[tuple, Future] = {}  # reads in flight in this process, by changefeed, checkpoint and head
_held: dict[str, set[int]] = {}  # the lag ids (nth) those reads hold, by changefeed


def _shared(key: tuple, read) -> Lag:
    """`read()`, or the result of the same read already in flight in this process."""
    with _lock:
        theirs = _running.get(key)
        if theirs is None:
            mine = _running[key] = Future()
    if theirs is not None:
        return theirs.result()
    try:
        lag = read()
        mine.set_result(lag)
        return lag
    except BaseException as e:  # an interrupt: whoever waits on this read is told too
        mine.set_exception(e)
        raise
    finally:
        with _lock:
            del _running[key]


def _read_after(spec: Spec, feed: metastore.FeedState, source, start: Position, head: Position,
                now: float) -> Lag:
    """The binlog read from the checkpoint to the head, with a lag id no other read of this
    process holds, and the next one while other processes' reads end it."""
    nth = -1
    while (nth := _take_id(spec.id, nth)) is not None:
        try:
            return _scan(spec, feed, source, start, head, now, lag_server_id(spec.id, nth))
        except Exception as e:  # noqa: BLE001 - a purged binlog, a lost connection: no number, and why
            if not ended_by_same_id(e):
                return Lag(UNKNOWN, None, now, note=f"the upstream's binlog after the checkpoint cannot be read: "
                                                    f"{_reason(e)}")
        finally:
            _give_id(spec.id, nth)
    return Lag(UNKNOWN, None, now, note=f"other reads of this changefeed's lag held each of its {LAG_IDS} server "
                                        f"ids for the upstream's binlog at the same time: ask again")


def _take_id(changefeed_id: str, after: int) -> int | None:
    """The first lag id past `after` that no read of this process holds, now held; None: none left."""
    with _lock:
        held = _held.get(changefeed_id, ())
        nth = next((n for n in range(after + 1, LAG_IDS) if n not in held), None)
        if nth is not None:
            _held.setdefault(changefeed_id, set()).add(nth)
        return nth


def _give_id(changefeed_id: str, nth: int) -> None:
    with _lock:
        _held[changefeed_id].discard(nth)
        if not _held[changefeed_id]:
            del _held[changefeed_id]


def _scan(spec: Spec, feed: metastore.FeedState, source, start: Position, head: Position, now: float,
          server_id: int) -> Lag:
    """The read itself: the first change the changefeed replicates after its checkpoint, within
    the bound; a failure to read raises."""
    flt = Filter.build(spec.config())
    seen = 0
    deadline = time.monotonic() + SCAN_SECONDS

    def emit(event) -> None:
        nonlocal seen
        seen += 1
        if _replicated(flt, event):
            raise _Found(event.commit_ts, True)
        if seen >= SCAN_EVENTS or time.monotonic() > deadline:
            raise _Found(event.commit_ts, False)

    reader = BinlogReader(source, server_id, start, head, feed.checkpoint_ts, spec.target_ts)
    try:
        reader.read(emit)
    except _Found as found:
        seconds = round(max(0.0, now - tso.physical_ms(found.ts) / 1000), 3)
        if found.replicated:
            return Lag(BEHIND, seconds, now, found.ts)
        return Lag(AT_MOST, seconds, now, found.ts,
                   note=f"no change of its tables in the first {seen} events after the checkpoint "
                        f"(read at most {SCAN_EVENTS} events or {SCAN_SECONDS:g} s)")
    return Lag(CAUGHT_UP, 0.0, now)


def _replicated(flt: Filter, event) -> bool:
    """A row change of a table the filter keeps, or a DDL the filter's table rules keep (as
    filter.assembled.ddl_decision decides; one cdcflow cannot classify stops the cycle: pending)."""
    if event.op != "ddl":
        return flt.match_table(event.schema, event.table)
    try:
        return ddl_decision(classify(event.ddl_query, event.ddl_schema, event.sql_mode or ""), flt.tables)[0]
    except CdcflowError:
        return True


def _reason(e: Exception) -> str:
    return e.message if isinstance(e, CdcflowError) else f"{type(e).__name__}: {e}"
