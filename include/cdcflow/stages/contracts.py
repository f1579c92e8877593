"""What the stages of one cycle hand each other, and where it is kept.

    prepare ─ Window (window.json) ─► pull ─ Window.pulled ─► filter ─ DdlLog (ddl.json),
    TableKeys (keys.json) ─► barrier ─ Segment list (barrier.json) ─► apply ─ ApplyResult ─► wait_index

The records live in the cycle's run folder as JSON, read and written only through this
module.  Each stage's result is also what the run records under the stage's name in
`run.stats` (as a plain dict: `plain`); a field left UNSET is absent from it.
"""

from __future__ import annotations

from typing import Generic, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from cdcflow.core.ddl_session import DdlSession
from cdcflow.core.errors import CdcflowError
from cdcflow.source.binlog import Position
from cdcflow.store.events import RunFolder

T = TypeVar("T")


class Record(msgspec.Struct):
    """A record one stage hands another (or a stage's result)."""


def plain(value):
    """A record (or a dict of them) as JSON-ready builtins; UNSET fields are left out."""
    return msgspec.to_builtins(value)


def recorded(stats: dict, stage: str, kind: type[T]) -> T | None:
    """A stage's result as the run recorded it (None: the stage has not run)."""
    return msgspec.convert(stats[stage], kind) if stage in stats else None


# -- the window: prepare fixes its start and head, pull completes it with what it read


class Pulled(Record):
    """What pull read of the window."""

    end_ts: int  # the last transaction's commit ts
    end_pos: Position  # the boundary after it
    resolved_ts: int  # everything up to here is in the window
    stopped_at_target: bool
    aborted_ts: list[int]  # transactions rolled back after rows went out
    events: int
    transactions: int
    events_held: int = 0  # the most events a writer held at once (store.events.EventWriter)
    # rows a ROLLBACK TO SAVEPOINT undid: (commit ts, first seq, seq after the last)
    rolled_back: list[tuple[int, int, int]] = []


class Window(Record):
    """A cycle's window: the transactions starting at start_pos up to (not at or after) head."""

    start_ts: int  # the checkpoint the cycle starts from
    start_pos: Position
    head: Position  # the upstream's binlog head when prepare looked
    head_tso: int  # the moment it looked: the window is resolved up to here
    target_ts: int = 0  # 0: none
    # DDLs at or below this ts may already be downstream (a backfill or a moved checkpoint); 0: none
    replay_until: int = 0
    # the head above is max-window-bytes after the start, not the upstream's: the window is
    # resolved only up to its last transaction, and the next cycle reads on from there
    bounded: bool = False
    # the window's part of each binlog file (file, first byte, end byte), as prepare found the
    # files: what pull's writer projects the whole window's size from (store.events.Keeper);
    # None from a prepare before it
    spans: list[tuple[str, int, int]] | None = None
    pulled: Pulled | None = None  # set by pull

    @property
    def idle(self) -> bool:
        """Whether the upstream has written nothing since the checkpoint."""
        return (self.head.file, self.head.pos) == (self.start_pos.file, self.start_pos.pos)

    def resolved(self, last_ts: int) -> int:
        """The ts the window is resolved up to once read to its end, its last transaction at
        `last_ts`: the moment the head was taken, unless the window was bounded."""
        return last_ts if self.bounded else max(last_ts, self.head_tso)


# -- DDLs, as filter decided on them


class DdlError(Record):
    """A rule the DDL breaks: apply fails at its barrier with this."""

    message: str
    code: str
    retryable: bool
    hint: str | None = None


class DdlEntry(Record):
    commit_ts: int
    query: str  # as it runs downstream (filter may have rewritten it)
    default_schema: str | None  # the upstream session's current schema
    sql_mode: str | None  # the mode it ran under upstream
    start_pos: Position  # the binlog boundaries around it
    end_pos: Position
    type: str | None = None  # the DDL type (TiCDC's names), None if it could not be classified
    sub_types: list[str] = []
    name: str = "DDL"  # the statement's name, for logs
    tables: list[tuple[str, str]] = []
    keep: bool = False  # a barrier
    schema_only: bool = False  # a barrier not run downstream (it only splits the segments)
    why: str = ""
    notes: list[str] = []
    error: DdlError | None = None
    replacement: list[str] | None = None  # replace-ddl's statements, run instead of the query
    # an online schema change's cut-over (filter.online_ddl): the ALTERs run in order, `query` shows them
    statements: list[str] = []
    session: DdlSession | None = None  # the upstream session's time, time zone and collations

    def refusal(self) -> CdcflowError:
        """What apply fails with at this DDL's barrier where it breaks a rule (`error`, filter
        decided): its code says the class."""
        e = self.error
        return CdcflowError(e.message, ts=self.commit_ts, statement=self.query, code=e.code, hint=e.hint)


class DdlLog(Record):
    kept: list[DdlEntry]
    skipped: list[DdlEntry]


class TableKeys(Record):
    """A table's valid key over the window: [from_ts, key or None, known, {key column: collation}]
    (SchemaTracker.key_ranges)."""

    schema: str
    table: str
    ranges: list[tuple[int, list[str] | None, bool, dict[str, str | None]]]


class KeySpan(Record):
    """Row changes of one table, committed in [first_ts, last_ts], whose key texts pull wrote
    (Event.before_key / after_key) by `key` with its string columns compared by `collations`
    (as sink.row_sink.table_key resolves them); `key` None: pull wrote none for them.  Apply
    compacts a segment by those texts only where every span of the table in the segment has
    the key it writes the segment by (stages.pull_keys)."""

    schema: str
    table: str
    first_ts: int
    last_ts: int
    key: list[str] | None
    collations: dict[str, str | None] = {}
    # its keys that share another unique key's value with another key's change in the window
    # (sink.conflict_keys: apply writes them on one connection); all_tangled: all its changes do
    tangled: list[str] = []
    all_tangled: bool = False


# -- segments: (lo, hi] of rows, then the DDL at hi, then the checkpoint moves to hi


class Slice(Record):
    """A run of a segment's transactions whose rows apply writes on their own, before the next:
    those committed in (lo, hi]; `rows` and `image_bytes` as barrier counted them (about: a
    count of whole batches of the scan, stages.engine.Engine.slices)."""

    lo: int
    hi: int
    rows: int
    image_bytes: int


class Segment(Record):
    lo: int
    hi: int
    ddl: DdlEntry | None
    pos_before: Position | None  # where the checkpoint stands while the DDL runs
    pos_after: Position
    rows: int = 0
    tables: list[tuple[str, str]] = []
    image_bytes: int = 0  # its rows' images' bytes (barrier.segment_counts; 0 in a record older than it)
    # where its rows are written in runs of transactions, to hold no more than the engine's bounds
    # at once in the stage's process (stages.engine); empty: whole
    slices: list[Slice] = []

    def parts(self) -> list[Slice]:
        """What apply writes of the segment's rows, in order: its slices, or the whole of it."""
        return self.slices or [Slice(self.lo, self.hi, self.rows, self.image_bytes)]

    def planned(self, lo: int) -> PlannedSegment:
        """What a dry run reports of the segment, its rows above `lo`: its rows and tables, then
        the DDL that closes it."""
        ddl = self.ddl
        return PlannedSegment(
            rows=self.rows if lo < self.hi else 0, tables=[".".join(t) for t in self.tables],
            ddl=None if ddl is None else PlannedDdl(commit_ts=ddl.commit_ts, query=ddl.query,
                                                    error=ddl.error.message if ddl.error else None))


# -- each stage's result (run.stats[stage])


class Prepared(Record):
    run_id: str
    skip: bool
    reason: str | None
    state: str
    checkpoint_ts: int | UnsetType = UNSET


class PullResult(Record):
    pulled: int = 0
    transactions: int = 0
    ranges: int = 1  # how many parts the window was read in (stages.pull_ranges); 1: sequentially
    # the parallel path's time: finding the cuts, the decoding round (each range's events and
    # its reader's seconds), the round stamping the commit ts
    plan_seconds: float = 0.0
    decode_seconds: float = 0.0
    stamp_seconds: float = 0.0
    range_events: list[int] = []
    range_seconds: list[float] = []
    # where the ranges were read: Spark tasks (spark.session.tasks_run_in), "" child processes
    spark: str = ""
    events_held: int = 0  # the most events one writer held at once: at most pull-batch-rows
    # the window's events kept in this process as they were written, for the stages after pull
    # here to read (engine.Engine.window_kept), not decoded again from the files
    kept_in_process: bool = False


class SkippedDdl(Record):
    """A DDL the cycle did not run downstream, kept on the run's record for a person to find."""
    commit_ts: int
    statement: str
    why: str


SKIPPED_DDL_KEPT = 50  # on a run's record; the count covers them all


class FilterResult(Record):
    kept_ddl: int = 0
    skipped_ddl: int = 0
    tables: int = 0
    kept_tables: int = 0
    skipped: list[SkippedDdl] = []  # the first SKIPPED_DDL_KEPT of them
    rows_copied: bool = False  # filter dropped row events, so it wrote the rows kept (stages.rows)
    ran_in: str = "process"  # where its row steps ran: the stage's process or Spark tasks (stages.engine)


class KeptRows(Record):
    """Where the row events filter kept are (stages.rows): its copy, or pull's events."""

    copied: bool


class BarrierResult(Record):
    segments: int
    barriers: int = 0
    ran_in: str = "process"  # where the segment counts ran: the stage's process or Spark tasks (stages.engine)


class IndexWait(Record):
    """The barrier apply stopped at for index builds still running downstream."""

    commit_ts: int
    jobs: list[int]


class PlannedDdl(Record):
    commit_ts: int
    query: str
    error: str | None


class PlannedSegment(Record):
    """What a dry run reports of one segment."""

    rows: int
    tables: list[str]
    ddl: PlannedDdl | None


class ApplyResult(Record):
    safe_mode: bool  # whether rows were (or would be) written in safe mode
    rows_in: int = 0
    rows_written: int = 0
    statements: int = 0
    ddl_applied: int = 0
    skipped_tables: list[str] = []
    # 'schema.table' of every downstream table that got rows or a DDL (the DAG's asset events, lineage)
    changed_tables: list[str] = []
    workers: int | UnsetType = UNSET  # Spark partitions that wrote rows
    index_wait: IndexWait | UnsetType = UNSET
    would_apply: list[PlannedSegment] | UnsetType = UNSET  # a dry run's plan
    apply_seconds: float = 0.0
    rows_per_second: float | None = None
    rows_held: int = 0  # the most row images one writer held at once (sink.row_writer.StreamingWriter)
    # UPSERT statements the downstream refused for a duplicate unique value, written as DELETE + REPLACE
    upsert_fallbacks: int = 0
    # (segment, table) pairs Spark keyed by the texts pull wrote (stages.pull_keys), and those keyed
    # by apply itself (in Python: a window pulled without texts, a key pull did not know)
    keyed_by_pull: int = 0
    keyed_here: int = 0
    # the segments (or slices of one: contracts.Slice) with rows written from the stage's process
    # and by Spark tasks (stages.engine)
    segments_in_process: int = 0
    segments_in_spark: int = 0

    def add(self, w, in_process: bool) -> None:
        """One write's figures (sink.row_sink.Written: a segment's rows, or a slice's), written from
        the stage's process or by Spark tasks, into the result."""
        if in_process:
            self.segments_in_process += 1
        else:
            self.segments_in_spark += 1
        self.rows_written += w.rows
        self.statements += w.statements
        self.upsert_fallbacks += w.upsert_fallbacks
        self.keyed_by_pull += w.keyed_by_pull
        self.keyed_here += w.keyed_here
        if w.workers is not None:
            self.workers = max(self.workers or 0, w.workers)
        self.rows_held = max(self.rows_held, w.rows_held)
        self.skipped_tables.extend(w.skipped_tables)

    def changed(self, tables) -> None:
        """Add the tables that got rows or a DDL to changed_tables (a skipped table got nothing)."""
        names = {f"{s}.{t}" for s, t in tables} - set(self.skipped_tables)
        self.changed_tables = sorted(set(self.changed_tables) | names)

    def took(self, seconds: float) -> None:
        """The stage's time, and its rows per second."""
        self.apply_seconds = round(seconds, 3)
        self.rows_per_second = round(self.rows_in / seconds, 1) if seconds > 0 else None


class WaitIndexResult(Record):
    done: bool
    pending: list[int]
    waiting_at: int | None
    waiting_for: list[str] | UnsetType = UNSET


class FinishResult(Record):
    state: str
    skipped: bool | UnsetType = UNSET  # prepare skipped this cycle, or another cycle replaced it
    superseded_by: str | UnsetType = UNSET  # the cycle that replaced this one
    checkpoint_before: int | UnsetType = UNSET
    checkpoint_ts: int | UnsetType = UNSET
    checkpoint_time: str | UnsetType = UNSET
    error: str | None = None


# -- the run folder

class _File(Generic[T]):
    def __init__(self, name: str, kind: type[T]):
        self.name, self.kind = name, kind

    def write(self, folder: RunFolder, record: T) -> None:
        folder.write_json(self.name, plain(record))

    def read(self, folder: RunFolder) -> T:
        return msgspec.convert(folder.read_json(self.name), self.kind)


WINDOW = _File("window.json", Window)
DDLS = _File("ddl.json", DdlLog)
KEYS = _File("keys.json", list[TableKeys])
SEGMENTS = _File("barrier.json", list[Segment])
ROWS = _File("rows.json", KeptRows)
# absent: pull wrote no key texts (a window pulled before they were written)
KEY_SPANS = _File("pull_keys.json", list[KeySpan])
