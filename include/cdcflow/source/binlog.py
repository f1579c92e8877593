"""Reading a MySQL/MariaDB binlog (ROW format) into canonical change events.

One transaction becomes one commit ts, derived deterministically from the
previous one (tso.for_binlog_event), so a window re-read from the same
checkpoint yields the same ts for every event: that is what makes a replay
after a crash converge.  The checkpoint position is always a transaction
boundary: (file, pos) just after a COMMIT/XID or a DDL.
"""

from __future__ import annotations

import logging
import struct
from typing import Callable, TypeVar

from cdcflow.core import tls, ts_input, tso
from cdcflow.core.errors import (
    SNAPSHOT_LOST_BY_GC,
    UPSTREAM_BINLOG,
    UPSTREAM_UNREACHABLE,
    CdcflowError,
)
from cdcflow.core.event import Event
from cdcflow.core.sql_mode import from_bits
from cdcflow.core.uri import DbUri
from cdcflow.core.wording import CLI, Words
from cdcflow.source import binlog_events, event_types, patches, transaction_control
from cdcflow.source.gtid import GtidPosition, is_anonymous
from cdcflow.source.gtid_locate import gtid_at
from cdcflow.source.position import Position, available_logs
from cdcflow.source.session_vars import SessionVars

log = logging.getLogger(__name__)

NO_FOREIGN_KEY_CHECKS = 0x0002  # a rows event's flag: written with foreign_key_checks = 0
REQUIRED_VARIABLES = {"binlog_format": "ROW", "binlog_row_image": "FULL", "binlog_row_metadata": "FULL"}


def connect_upstream(uri: DbUri, changefeed: str | None = None):
    """A connection to the upstream, or ErrUpstreamUnreachable in words."""
    try:
        return uri.connect()
    except CdcflowError:
        raise  # a password reference that does not resolve says so itself
    except Exception as e:  # pymysql raises OperationalError with the server's text
        raise CdcflowError(
            f"cannot connect to the upstream {uri.redacted()}: {e}",
            changefeed=changefeed, code=UPSTREAM_UNREACHABLE,
            hint="check the source URI, that the server runs, and the user's password",
        ) from None


def check_upstream(uri: DbUri, changefeed: str | None = None) -> None:
    """Refuse an upstream whose binlog cannot give full row images with column names, or writes
    events pull refuses (source.event_types): MySQL 8's JSON diffs, MariaDB's compressed events.
    Variables a server lacks (MariaDB has neither of MySQL's, MySQL not MariaDB's) are not listed,
    so not checked."""
    conn = connect_upstream(uri, changefeed)
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW GLOBAL VARIABLES WHERE Variable_name IN ('log_bin','binlog_format',"
                        "'binlog_row_image','binlog_row_metadata'," + ",".join(f"'{v}'" for v in WRITES_REFUSED) + ")")
            got = {k.lower(): str(v).upper() for k, v in cur.fetchall()}
    finally:
        conn.close()
    check_binlog_variables(got, uri.redacted(), changefeed)


# variables (as SHOW GLOBAL VARIABLES names them) whose value makes the upstream write events pull
# refuses or cannot read -> (is that value refused?, what it writes, what to set)
WRITES_REFUSED = {
    "binlog_row_value_options": (
        lambda v: "PARTIAL_JSON" in v,
        "JSON columns' updates as diffs (PARTIAL_UPDATE_ROWS_EVENT), which cdcflow does not apply",
        "SET GLOBAL binlog_row_value_options=''"),
    "log_bin_compress": (
        lambda v: v in ("ON", "1"),
        "compressed events (QUERY_COMPRESSED_EVENT, *_ROWS_COMPRESSED_EVENT), which cdcflow does not read",
        "SET GLOBAL log_bin_compress=OFF"),
    "binlog_transaction_compression": (
        lambda v: v in ("ON", "1") and not _zstd_installed(),
        "zstd-compressed transactions (TRANSACTION_PAYLOAD_EVENT), which cdcflow reads with the zstandard "
        "package, not installed here (pip install -c constraints.txt zstandard)",
        "SET GLOBAL binlog_transaction_compression=OFF"),
}


def _zstd_installed() -> bool:
    try:
        # lazy: only a MySQL 8 upstream's compressed transactions need it
        import zstandard  # noqa: F401
    except ImportError:
        return False
    return True


def check_binlog_variables(got: dict[str, str], upstream: str, changefeed: str | None = None) -> None:
    """check_upstream's verdict on the upstream's global variables (lower-case names, upper-case
    values; a variable the server lacks is absent).  Every setting to change is named in one error:
    an operator who fixes the one named and tries again should not meet the next."""
    if got.get("log_bin") not in ("ON", "1"):
        raise CdcflowError(
            f"the upstream {upstream} does not write a binlog (log_bin=OFF)",
            changefeed=changefeed, code=UPSTREAM_BINLOG,
            hint="start the server with --log-bin and --binlog-format=ROW --binlog-row-image=FULL "
                 "--binlog-row-metadata=FULL",
        )
    wrong = [(f"{var}={got.get(var, 'unset')}, cdcflow needs {var}={want}", f"SET GLOBAL {var}='{want}'",
              f"{var}={want}") for var, want in REQUIRED_VARIABLES.items() if got.get(var) != want]
    refused = [(f"{var}={got[var]}: its binlog would hold {writes}", fix, fix.removeprefix("SET GLOBAL "))
               for var, (is_refused, writes, fix) in WRITES_REFUSED.items() if var in got and is_refused(got[var])]
    if not wrong and not refused:
        return
    problems = wrong + refused
    hint = (f"run {'; '.join(fix for _, fix, _ in problems)} on the upstream and put "
            f"{', '.join(setting for _, _, setting in problems)} in its configuration file so "
            f"{'it survives' if len(problems) == 1 else 'they survive'} a restart")
    if refused:  # a session may set these itself
        hint += (f" (a session that sets {' or '.join(setting.split('=')[0] for _, _, setting in refused)} itself "
                 f"still writes such events: pull stops at them)")
    raise CdcflowError(f"the upstream {upstream} has {'; '.join(what for what, _, _ in problems)}",
                       changefeed=changefeed, code=UPSTREAM_BINLOG, hint=hint)


def head_position(conn, with_gtid: bool = False) -> Position:
    """The last committed binlog position right now; `with_gtid`: and its GTID position (read
    from the binlog, source.gtid_locate.gtid_at: a changefeed starts there)."""
    with conn.cursor() as cur:
        cur.execute("SHOW MASTER STATUS")
        row = cur.fetchone()
        if not row:
            raise CdcflowError("the upstream reports no binlog position (SHOW MASTER STATUS is empty)",
                               code=UPSTREAM_BINLOG, hint="enable log_bin on the upstream")
    head = Position(row[0], int(row[1]))
    return gtid_at(conn, head) if with_gtid else head


def check_checkpoint_held(logs: list[str], checkpoint_pos: dict | None, checkpoint_ts: int,
                          words: Words = CLI) -> None:
    """A changefeed's own checkpoint whose binlog the upstream purged: TiCDC's ErrSnapshotLostByGC,
    found by a cycle or at resume alike.  (A new start-ts too old is ErrStartTsBeforeGC: position_for_ts.)"""
    file = (checkpoint_pos or {}).get("file")
    if file and file not in logs:
        raise CdcflowError(
            f"checkpoint {checkpoint_ts} ({tso.to_text(checkpoint_ts)}) needs binlog {file}, which the upstream "
            f"no longer holds (oldest kept: {logs[0] if logs else 'none'})",
            code=SNAPSHOT_LOST_BY_GC,
            hint="the changes since the checkpoint are lost upstream: resume from a point it still holds with "
                 f"{words.field('overwrite_checkpoint_ts')} after re-copying the data, or re-create the changefeed; "
                 "keep binlogs longer (binlog_expire_logs_seconds)",
        )


def open_stream(uri: DbUri, server_id: int, start: Position, only_events: list):
    """A non-blocking binlog dump from a file and position (it ends at the current end of the log)."""
    from pymysqlreplication import BinLogStreamReader  # lazy: only binlog readers load mysql-replication

    patches.install()
    tls.install()  # the stream's two connections
    return BinLogStreamReader(
        connection_settings={**uri.connection_args(), "charset": "utf8mb4"},  # its socket times out too
        server_id=server_id, resume_stream=True, blocking=False, log_file=start.file, log_pos=start.pos,
        only_events=only_events,
        filter_non_implemented_events=False,  # NotImplementedEvent, where asked for: source.event_types
        is_mariadb=False,  # True ignores log_file/log_pos (a GTID-only dump); file+pos works on both
        enable_logging=False,
    )


def probe_server_id(server_id: int) -> int:
    """The binlog server id of a short read beside a changefeed's own reader (a trigger's check while
    a cycle pulls; a server ends the older of two dumps with one id): between the default ids (below
    1_001_000_000) and the range readers' (from 2**31)."""
    return 1_100_000_000 + server_id % 1_000_000_000


# the errors that end a dump because another came with its server id: the server keeps one dump
# per id and ends the older (MariaDB's own code; MySQL's fatal read error, 1236, with these words)
_ENDED_BY_SAME_ID = {4052: None, 1236: "same server_uuid/server_id"}
PROBE_ATTEMPTS = 3  # a probe ended so goes again: the other probe it met lasts milliseconds
T = TypeVar("T")


def ended_by_same_id(e: Exception) -> bool:
    """Whether `e` ended a binlog dump because another dump came with its server id."""
    args = e.args
    if not args or args[0] not in _ENDED_BY_SAME_ID:
        return False
    words = _ENDED_BY_SAME_ID[args[0]]
    return words is None or (len(args) > 1 and words in str(args[1]))


def probed(server_id: int, read: Callable[[int], T]) -> T:
    """`read(id)` with the probe id of the changefeed whose reader's id is `server_id`
    (probe_server_id), never that id itself, so that it ends no dump of a cycle still pulling;
    again, up to PROBE_ATTEMPTS, where another read with the probe id ended it (the page's look
    and a cycle's prepare may probe at once: the newer dump wins, the older goes again)."""
    probe_id = probe_server_id(server_id)
    for _ in range(PROBE_ATTEMPTS - 1):
        try:
            return read(probe_id)
        except Exception as e:
            if not ended_by_same_id(e):
                raise
    return read(probe_id)  # the last attempt: what ends it is the caller's error


def oldest_held(uri: DbUri, server_id: int, changefeed: str | None = None) -> tuple[str, int]:
    """The oldest binlog the upstream holds and the TSO of its start: its format description
    event is dated when the file was opened, the oldest time it holds (position_for_ts reads the
    same event), read with the changefeed's probe id (`probed`)."""
    # lazy: only binlog readers load mysql-replication
    from pymysqlreplication.event import FormatDescriptionEvent, RotateEvent

    conn = connect_upstream(uri, changefeed)
    try:
        oldest = available_logs(conn)[0]
    finally:
        conn.close()

    def first_dated(probe_id: int) -> int:
        stream = open_stream(uri, probe_id, Position(oldest, 4), [FormatDescriptionEvent, RotateEvent])
        try:
            return next((ev.timestamp for ev in stream if ev.timestamp), 0)  # 0: nothing dated, nothing purged
        finally:
            stream.close()

    return oldest, tso.compose(probed(server_id, first_dated) * 1000)


def check_ts_held(uri: DbUri, server_id: int, ts: int, name: str, changefeed: str | None = None) -> int:
    """`ts`, unless the upstream purged the binlog it needs (core.ts_input.not_before_gc)."""
    return ts_input.not_before_gc(ts, name, changefeed, *oldest_held(uri, server_id, changefeed))


class BinlogReader:
    """Reads committed transactions from `start` up to `head` (inclusive of transactions ending there)."""

    def __init__(self, uri: DbUri, server_id: int, start: Position, head: Position, prev_ts: int,
                 target_ts: int = 0, exact_head: bool = False):
        self.uri = uri
        self.server_id = server_id
        self.start = start
        self.head = head
        # the head is where an event starts (the upstream's head as SHOW MASTER STATUS gives it),
        # not a byte bound (max-window-bytes'), so the boundary may move to it (_up_to_the_head)
        self.exact_head = exact_head
        self.prev_ts = prev_ts
        self.target_ts = target_ts
        self._file, self._pos = start.file, start.pos  # boundary after the last complete transaction read
        # the GTID position there: the start's (None: unknown, as at a range's start) followed by
        # the GTIDs of the transactions read since (`read_gtids`: a range returns them)
        self.start_gtids = None if start.gtid is None else GtidPosition.parse(start.gtid)
        self.read_gtids = GtidPosition()
        self.last_ts = prev_ts
        self.transactions = 0
        self.stopped_at_target = False
        self.aborted_ts: set[int] = set()
        # rows a ROLLBACK TO undid: (commit ts, first seq, seq after the last), in reading order
        self.rolled_back: list[tuple[int, int, int]] = []
        self._savepoints = transaction_control.Savepoints()

    @property
    def last_pos(self) -> Position:
        """The boundary after the last complete transaction read, with its GTID position."""
        return Position(self._file, self._pos, self.gtid_position())

    def gtid_position(self) -> str | None:
        if self.start_gtids is None:
            return None
        return str(self.start_gtids.then(self.read_gtids))

    def event_gtid_position(self) -> str | None:
        """A DDL event's gtid_position: the GTID position before its transaction."""
        return self.gtid_position()

    def read(self, emit: Callable[[Event], None], columns=None, keys=None) -> None:
        """Stream events to `emit`; rows of a large transaction go out as they are read.

        A transaction whose commit ts would pass target-ts, or that starts at or past the
        head fixed for this cycle, is not read: the window ends before it.  The ts of a
        transaction rolled back after rows went out is added to `self.aborted_ts`; the rows a
        ROLLBACK TO undid, to `self.rolled_back`.

        `columns`: the event writer's compiled columns (store.events.EventWriter.columns), where
        the compiled reader writes the rows it decodes itself, keyed as `keys` (the stages.pull_keys
        stamper, or None) says, instead of an Event each to `emit` (source/compiled_window.pxi:
        this loop's twin for the frequent events; every other record comes here).  Without them,
        or with the Python reader, every event goes to `emit`.
        """
        stream = self._open_stream(read_event_classes())
        # the transaction being read: its ts (None: between transactions), next seq, GTID and
        # where it starts; the file read now (attributes: the compiled loop takes and hands them back)
        self._trx_ts, self._seq, self._trx_gtid = None, 0, None
        self._trx_start = Position(self._file, self._pos)
        self._cur_file = self.start.file
        head = self.head.key()
        session = self._session()
        try:
            for rec in binlog_events.records(stream, self._window(columns, keys)):
                kind, ev_start, ev_time = rec[0], rec[1], rec[2]
                if kind == binlog_events.ROTATE:
                    self._cur_file = rec[3]
                    if self._trx_ts is None and rec[4] == 4 and self._file != self._cur_file:
                        self._file, self._pos = self._cur_file, 4
                        self._trx_start = Position(self._cur_file, 4)
                    continue
                if self._trx_ts is None and (self._cur_file, ev_start) >= head:
                    self._up_to_the_head()
                    break  # later transactions belong to the next cycle
                if kind == binlog_events.REFUSED:
                    raise event_types.refusal(rec[3], self._cur_file, rec[5], rec[6], rec[4], rec[7])
                if kind == binlog_events.GTID:
                    if not self._begin(ev_time):
                        break
                    self._trx_gtid = rec[3]
                    continue
                if kind == binlog_events.XID:
                    if self._trx_ts is not None:
                        self._end(rec[3])
                    continue
                if kind == binlog_events.QUERY:
                    if not self._query(rec, ev_time, emit, session):
                        break
                    continue
                if kind == binlog_events.ROWS and not self._rows(rec, ev_time, emit):
                    break
            else:
                self._up_to_the_head()
        finally:
            stream.close()
            session.close()
        if self._trx_ts is not None:
            # the stream ended inside a transaction: its rows must not be applied yet
            self.aborted_ts.add(self._trx_ts)

    def _up_to_the_head(self) -> None:
        """read's loop reached the head between transactions (the first event at or past it, or
        the end of the log, which the dump read to, at or past the head taken before it began):
        what lies between the last transaction's end and the head in the head's file holds no
        data (a new binlog's format description, GTID list and binlog checkpoint, after a
        restart or FLUSH LOGS).  The boundary moves to the head, so that the next window does
        not read those again: a window that moved the ts and not the position stayed behind the
        head until a transaction came, and every run read it again (a cron's; @binlog's every
        REASK_AFTER_S).  Only to an exact head: a byte bound may fall inside an event.  Not where
        the window stopped at target-ts: the transactions up to the head are the next window's
        (the compiled loop ends its records there as at the head)."""
        if not self.exact_head or self.stopped_at_target or self._trx_ts is not None:
            return
        if self._cur_file == self.head.file and (self._file, self._pos) < self.head.key():
            self._file, self._pos = self.head.file, self.head.pos

    def _query(self, rec, ev_time: int, emit: Callable[[Event], None], session) -> bool:
        """A query event of read's loop: a transaction's BEGIN, COMMIT or ROLLBACK, a savepoint's
        statement, or a DDL (a transaction of its own).  False: the window ends before it."""
        end_pos, ev = rec[3], rec[5]
        q = rec[4].strip().rstrip(";").strip()
        what = transaction_control.kind(q)
        if what == "begin":
            return self._trx_ts is not None or self._begin(ev_time)
        if what in ("commit", "rollback"):
            if self._trx_ts is not None:
                if what == "rollback":
                    self.aborted_ts.add(self._trx_ts)
                self._end(end_pos)
            return True
        if what is not None:  # a savepoint's statement, an XA END or PREPARE: inside the transaction
            if self._trx_ts is not None:
                self._savepoint(what, transaction_control.savepoint_name(q), self._trx_ts, self._seq)
            return True
        if self._trx_ts is None and not self._begin(ev_time):
            return False
        schema = ev.schema.decode() if isinstance(ev.schema, bytes) else (ev.schema or "")
        emit(Event(
            commit_ts=self._trx_ts, seq=self._seq, schema=schema, table="", op="ddl", ddl_query=q,
            ddl_schema=schema or None, sql_mode=from_bits(getattr(ev, "sql_mode", None)),
            gtid=self._trx_gtid, start_file=self._trx_start.file, start_pos=self._trx_start.pos,
            end_file=self._cur_file, end_pos=end_pos, event_time=ev_time,
            gtid_position=self.event_gtid_position(),
            **session.fields(ev),
        ))
        self._end(end_pos)  # DDL commits implicitly
        return True

    def _rows(self, rec, ev_time: int, emit: Callable[[Event], None]) -> bool:
        """A rows event of read's loop: an Event per row image.  False: the window ends before it."""
        if self._trx_ts is None and not self._begin(ev_time):
            return False
        table, op, images = rec[3], rec[5], rec[6]
        if table.system:
            return True
        if type(images) is not list:  # mysql-replication's event, decoded here
            cur_file = self._cur_file
            images = binlog_events.row_images(images, op, lambda ev: _decoded_rows(ev, cur_file))
        fk_checks_off = 1 if rec[4] & NO_FOREIGN_KEY_CHECKS else None
        for before, after in images:
            emit(Event(
                commit_ts=self._trx_ts, seq=self._seq, schema=table.schema, table=table.table, op=op,
                before=before, after=after, pk=table.pk, fk_checks_off=fk_checks_off,
                gtid=self._trx_gtid, start_file=self._trx_start.file, start_pos=self._trx_start.pos,
                event_time=ev_time,
            ))
            self._seq += 1
        return True

    def _window(self, columns, keys):
        """The compiled loop over the frequent events (read's `columns`), or None."""
        fast = None if columns is None else binlog_events.compiled_module()
        if fast is None:
            return None
        own_ts = type(self)._next_ts is not BinlogReader._next_ts  # a range numbers its transactions
        return fast.Window(self, columns, keys, self._next_ts if own_ts else None)

    def _begin(self, ev_time: int) -> bool:
        """A transaction begins (False: it would pass target-ts, the window ends before it)."""
        ts = self._next_ts(ev_time)
        if self.target_ts and ts > self.target_ts:
            self.stopped_at_target = True
            return False
        self._trx_ts, self._seq = ts, 0
        self._savepoints.clear()
        return True

    def _end(self, end_pos: int) -> None:
        """The transaction read ends at `end_pos` of the file read now."""
        self.last_ts = self._trx_ts
        self._file, self._pos = self._cur_file, end_pos
        if not is_anonymous(self._trx_gtid):
            self.read_gtids.add(self._trx_gtid)
        self.transactions += 1
        self._trx_ts, self._trx_gtid, self._trx_start = None, None, Position(self._cur_file, end_pos)

    def _open_stream(self, only_events: list):
        """The binlog dump read (source.binlog_file reads a file instead)."""
        return open_stream(self.uri, self.server_id, self.start, only_events)

    def _session(self) -> SessionVars:
        return SessionVars(self.uri)

    def _savepoint(self, what: str, name: str, trx_ts: int, seq: int) -> None:
        """A SAVEPOINT, ROLLBACK TO or RELEASE SAVEPOINT of the transaction at `trx_ts`, whose
        next row is `seq` (source.transaction_control says why the rows undone are all a
        replica undoes)."""
        if what == "savepoint":
            self._savepoints.set(name, seq)
        elif what == "release":
            self._savepoints.release(name)
        elif what == "rollback_to":
            undone = self._savepoints.rollback_to(name, seq)
            if undone:
                self.rolled_back.append((trx_ts, *undone))

    def _next_ts(self, ev_time: int) -> int:
        """The ts of the transaction beginning now (source.binlog_ranges numbers them instead)."""
        return tso.for_binlog_event(self.last_ts, ev_time)


def read_event_classes() -> list:
    """The mysql-replication event classes BinlogReader reads: those it makes records of, and
    those mysql-replication would drop unread, which source.event_types passes over or refuses."""
    from pymysqlreplication.event import (  # lazy: only binlog readers load mysql-replication
        ExecuteLoadQueryEvent,
        GtidEvent,
        MariadbGtidEvent,
        NotImplementedEvent,
        QueryEvent,
        RotateEvent,
        XidEvent,
    )
    from pymysqlreplication.row_event import (  # lazy: as above
        DeleteRowsEvent,
        PartialUpdateRowsEvent,
        UpdateRowsEvent,
        WriteRowsEvent,
    )

    return [QueryEvent, XidEvent, WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent, MariadbGtidEvent, GtidEvent,
            RotateEvent, ExecuteLoadQueryEvent, NotImplementedEvent, PartialUpdateRowsEvent]


def _decoded_rows(ev, file: str) -> list:
    """A rows event's rows, or an error naming the table and the binlog position of the event
    whose values the decoder cannot read (a column's own error names it: column_types), or
    whose table map names no columns (mysql-replication would call them UNKNOWN_COL0, ...)."""
    if not all(c.name for c in ev.columns):
        at = ev.packet.log_pos - ev.packet.event_size
        raise CdcflowError(
            f"a rows event of {ev.schema}.{ev.table} at {file}:{at} has no column names: the upstream wrote its "
            "table map with binlog_row_metadata=MINIMAL, and cdcflow matches values to columns by name",
            code=UPSTREAM_BINLOG,
            hint="run SET GLOBAL binlog_row_metadata='FULL' on the upstream (and set it in its configuration "
                 "file), then re-copy the table and start the changefeed after this event")
    try:
        return ev.rows
    except CdcflowError as e:
        raise CdcflowError(f"{e.message} (a rows event of {ev.schema}.{ev.table} at {file}:"
                           f"{ev.packet.log_pos - ev.event_size})", code=UPSTREAM_BINLOG, hint=e.hint) from None
    except (ValueError, OverflowError, struct.error, AssertionError, IndexError) as e:
        raise CdcflowError(
            f"cannot decode a rows event of {ev.schema}.{ev.table} at {file}:{ev.packet.log_pos - ev.event_size}: "
            f"{type(e).__name__}: {e}", code=UPSTREAM_BINLOG,
            hint="the table's definition in the binlog and its values disagree: report it with the event "
                 "(mariadb-binlog -v at that position), or start the changefeed after it") from None


def replay_horizon(ts: int, replay_until: int = 0, checkpoint_ts: int = 0) -> int:
    """How far a changefeed whose checkpoint moves to `ts` reads changes that may already be
    downstream: the rest of ts's second (see position_for_ts), up to the checkpoint it moves
    back from, and any horizon it had already."""
    return max(replay_until, checkpoint_ts, tso.second_end(ts))


def position_for_ts(uri: DbUri, server_id: int, ts: int, changefeed: str | None = None,
                    name: str = "start-ts") -> Position:
    """The transaction boundary at which a changefeed starting at `ts` begins reading
    (_boundary_for_ts), with its GTID position.  `server_id`: the changefeed's reader's; the
    read goes with its probe id (`probed`): a resume that moves the checkpoint, or a backfill's
    dry run, may come while a cycle from before still pulls with the changefeed's own id."""
    pos = _boundary_for_ts(uri, server_id, ts, changefeed, name)
    conn = uri.connect()
    try:
        return gtid_at(conn, pos)
    finally:
        conn.close()


def _logs_and_head(uri: DbUri) -> tuple[list[str], Position]:
    """The binlogs the upstream holds and its head, on one connection."""
    conn = uri.connect()
    try:
        return available_logs(conn), head_position(conn)
    finally:
        conn.close()


def _boundary_for_ts(uri: DbUri, server_id: int, ts: int, changefeed: str | None, name: str) -> Position:
    """The transaction boundary at which a changefeed starting at `ts` begins reading.

    A binlog records no TSO, only each event's time in seconds, so the boundary is the one
    before the first transaction that may have committed after `ts`: the first one dated in
    `ts`'s own second or later.  The transactions of that second that came before `ts` are
    read again; the caller marks them as replays up to replay_horizon(ts) (rows are written
    idempotently, a DDL that already ran is tolerated), which loses nothing, where starting
    after that second would skip what committed in its remaining milliseconds.  A ts older
    than the oldest binlog the upstream still holds cannot be served (ErrStartTsBeforeGC).
    """
    logs, head = _logs_and_head(uri)
    return probed(server_id, lambda probe_id: _boundary_read(uri, probe_id, logs[0], head, ts, changefeed, name))


def _boundary_read(uri: DbUri, probe_id: int, oldest: str, head: Position, ts: int, changefeed: str | None,
                   name: str) -> Position:
    """_boundary_for_ts's read from the start of the `oldest` binlog, with `probe_id`."""
    from pymysqlreplication.event import (  # lazy: only binlog readers load mysql-replication
        FormatDescriptionEvent,
        GtidEvent,
        MariadbGtidEvent,
        QueryEvent,
        RotateEvent,
        XidEvent,
    )

    # the oldest binlog's format description event carries the time the file was opened:
    # the oldest time it holds, even when no transaction has been written to it since
    stream = open_stream(uri, probe_id, Position(oldest, 4),
                         [QueryEvent, XidEvent, MariadbGtidEvent, GtidEvent, RotateEvent, FormatDescriptionEvent])
    cur_file, boundary, first_time = oldest, Position(oldest, 4), None
    first_second = tso.physical_ms(ts) // 1000  # transactions dated from here on may follow ts
    in_trx = False
    try:
        for ev in stream:
            if isinstance(ev, RotateEvent):
                cur_file = ev.next_binlog
                if not in_trx and ev.position == 4:
                    boundary = Position(cur_file, 4)
                continue
            if ev.timestamp and first_time is None:
                first_time = ev.timestamp
                ts_input.not_before_gc(ts, name, changefeed, oldest, tso.compose(first_time * 1000))
            if isinstance(ev, FormatDescriptionEvent):
                continue
            if (cur_file, ev.packet.log_pos - ev.event_size) >= head.key() and not in_trx:
                break
            if isinstance(ev, QueryEvent) and transaction_control.kind(ev.query) in transaction_control.SAVEPOINT_KINDS:
                continue  # inside its transaction
            if isinstance(ev, (MariadbGtidEvent, GtidEvent)) or (
                    isinstance(ev, QueryEvent) and ev.query.strip().upper() == "BEGIN"):
                if not in_trx and ev.timestamp >= first_second:
                    return boundary
                in_trx = True
                continue
            if isinstance(ev, XidEvent) or (isinstance(ev, QueryEvent) and ev.query.strip().upper() != "BEGIN"):
                if not in_trx and ev.timestamp >= first_second:
                    return boundary
                in_trx = False
                boundary = Position(cur_file, ev.packet.log_pos)
    finally:
        stream.close()
    return head
