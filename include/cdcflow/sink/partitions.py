"""The bodies of the Spark partitions that write a segment's rows (mapInArrow): each writes
its compacted changes (one final change per key: compaction.compacted in Spark SQL, or
compacted_arrow for a segment in the driver's hands; per transaction, final_changes here) on a
downstream connection of its own (row_writer), returning how many rows and statements it wrote."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import suppress
from itertools import groupby

import pyarrow as pa
import pyarrow.compute as pc

from cdcflow.core import heap
from cdcflow.core.failures import SinkError
from cdcflow.sink.compaction import final_changes
from cdcflow.sink.connection import connect_with_retry
from cdcflow.sink.row_literals import texts
from cdcflow.sink.row_writer import (STATEMENT_ATTEMPTS, RowWriter, StreamingWriter, TransactionRolledBack,
                                     conflict_wait, raw_form)

# safe-mode = false writes a segment in two passes (Spark jobs): first the keys whose row
# existed before the segment (DELETE; UPSERT where the downstream indexes the key, else
# REPLACE), then the new keys with INSERT.  After the first pass every old row holds its
# final image or is gone, so an INSERT can only meet a row the upstream never had: a real
# conflict, reported as TiCDC's non-safe mode does.
PHASE_KINDS = {None: ("D", "U", "I"), "existing": ("D", "U"), "new": ("I",)}


def apply_partition(batches, sink: dict, batch_rows: int, keys: dict[str, list[str]], phase: str | None = None,
                    generated: dict[str, frozenset[str]] | None = None, key_indexed: frozenset[str] = frozenset(),
                    sessions: Sessions | None = None, prepared: bool = True,
                    in_place: dict[str, frozenset[str]] | None = None, images: pa.ChunkedArray | None = None):
    """Spark mapInArrow body: the final change of each key in (compacted, in DELETES_FIRST
    order: compaction), written (only the kinds of `phase`, see PHASE_KINDS); one batch of
    counts (COUNTS_SCHEMA) out.  `generated`: per table, the columns the downstream
    computes, left out of every written row; `key_indexed`: the tables whose REPLACEs need no
    DELETE first and whose rows of kind U the "existing" phase writes with UPSERT
    (row_writer.StreamingWriter).  `sessions`: where this process keeps its downstream sessions
    between partitions (None: a session of its own, closed at the end: a Spark task's).
    `prepared`: the sink's cache-prep-stmts (full batches as prepared statements, else text).
    `in_place`: in safe mode, the tables written with UPSERT where a row sets every column of the
    downstream's given (row_writer.StreamingWriter).  `images`: where the batches number their
    rows' images (`source`, row_sink.Share) instead of holding them.

    Why this converges even when rows exchange unique-key values across partitions:
    every key touched in the segment is written with its final image, and those images
    are one consistent snapshot of the upstream at the segment's end, so no two of them
    share a unique value, and none clashes with a row the segment did not touch (that row
    already holds its end-of-segment value downstream).  A REPLACE therefore only ever
    removes stale rows of touched keys, whose own final image another partition writes
    (before or after) or whose DELETE is due anyway; a DELETE only removes a key that has
    no final image.  Nothing removes a final image once written, so in whatever order the
    partitions run (and after a replay of a half-applied segment) each key ends with its
    final image or absent: the upstream's state.  Concurrent REPLACEs on the same unique
    values may deadlock; the statement is retried (RowWriter._run).
    Deletes go first inside a part (compaction.DELETES_FIRST says why).
    """
    kinds, written = PHASE_KINDS[phase], WRITTEN if images is None else SOURCED

    def write(w: StreamingWriter, conn) -> None:
        w.insert_new = phase == "new"
        w.key_indexed, w.upsert, w.in_place = key_indexed, phase == "existing", in_place or {}
        add, read = w.add_run, w.writer.form.read
        for schema, table, (kinds_, texts, stamps) in _table_runs(_of_kinds(batches, kinds, written), written, images):
            add(schema, table, kinds_, map(read, texts), stamps)
        w.close()

    yield _run_partition(sink, batch_rows, keys, write, generated, sessions, prepared)


def apply_partition_txns(batches, sink: dict, batch_rows: int, keys: dict[str, list[str]],
                         generated: dict[str, frozenset[str]] | None = None, sessions: Sessions | None = None,
                         prepared: bool = True):
    """transaction-atomicity = table: changes sorted by (schema, table, commit_ts, key,
    commit order) in; each upstream transaction's changes to one table become one
    downstream transaction.  Inside it the changes compact to their final image per key
    (the state at that commit, which is all a transaction shows), never across
    transactions.  A table's transactions all run in one partition, in commit order, so
    partitions never touch the same rows and cannot deadlock each other; a lock conflict with
    another writer (the downstream's own traffic, the tables foreign keys bind) rolls the
    transaction back, and it runs again whole (write_transaction)."""
    def write(w: StreamingWriter, conn) -> None:
        w.writer.in_transaction = True
        rows = _columns(batches, CHANGE)
        for _txn, changes in groupby(rows, key=lambda r: (r[0], r[1], r[6])):
            write_transaction(w, conn, final_changes(changes))

    yield _run_partition(sink, batch_rows, keys, write, generated, sessions, prepared)


RETAINED_CHANGES = 100_000  # a transaction's final changes kept to run it again after a lock conflict


def write_transaction(w: StreamingWriter, conn, finals) -> None:
    """One upstream transaction's final changes to a table in one downstream transaction, run
    again whole when a lock conflict rolls it back (a deadlock undoes every statement before the
    one refused: running that one alone would commit the transaction in part).  One larger than
    RETAINED_CHANGES is not kept: its conflict fails the partition (retryable; the cycle's
    replay writes it again)."""
    source, kept = iter(finals), []  # kept: the changes taken from `finals` so far
    read = w.writer.form.read

    def add(change) -> None:
        schema, table, _part, _key, kind, image, ts = change
        w.add(schema, table, kind, read(image), ts)

    for attempt in range(STATEMENT_ATTEMPTS):
        counts = w.writer.counts()
        conn.begin()
        try:
            for change in kept:  # an attempt after the first: what the first took, again
                add(change)
            for change in source:
                if kept is not None:
                    kept.append(change)
                    if len(kept) > RETAINED_CHANGES:
                        kept = None
                add(change)
            w.close()
            conn.commit()
            return
        except TransactionRolledBack as e:
            conn.rollback()
            w.discard()
            w.writer.restore(counts)
            if kept is None or attempt == STATEMENT_ATTEMPTS - 1:
                raise SinkError(e.what, e.cause) from None
            time.sleep(conflict_wait(attempt))


def _of_kinds(batches, kinds: tuple[str, ...], written: tuple[str, ...] = ()):
    """The batches' rows of `kinds` (a pass's), taken in Arrow: each pass reads every row.  Only
    the columns the writer reads (`written`, WRITTEN's or SOURCED's) are taken (a part carries its
    keys and parts too)."""
    if len(kinds) == len(PHASE_KINDS[None]):
        yield from batches
        return
    wanted = pa.array(kinds, pa.string())
    for b in batches:
        b = b.select(list(TABLE_RUN + written))
        yield b.filter(pc.is_in(b.column(b.schema.get_field_index("kind")), value_set=wanted))


# the columns of a compacted change the writer reads beside its table's name (a run of one
# table's rows: _table_runs); and a change as compaction.final_changes takes it, with its commit
# ts (transaction-atomicity = table groups by it)
TABLE_RUN = ("schema", "table")
WRITTEN = ("kind", "image", "commit_ts")
SOURCED = ("kind", "source", "commit_ts")  # WRITTEN where the image is a number into the part's (row_sink.Share)
CHANGE = ("schema", "table", "part", "key", "kind", "image", "commit_ts")


def _table_runs(batches, names: tuple[str, ...], images: pa.ChunkedArray | None = None):
    """The rows of `batches` a table at a time, as they come: (schema, table, a list per column
    of `names`) for each run of rows of one table (a compacted part's rows are sorted by table).
    With `images`, the column "source" gives the texts of `images` it numbers (row_sink.Share)."""
    for b in batches:
        n = b.num_rows
        if not n:
            continue
        schema, table = (b.column(b.schema.get_field_index(c)) for c in TABLE_RUN)
        starts = [0]
        if n > 1:
            other = pc.or_(pc.not_equal(schema.slice(1), schema.slice(0, n - 1)),
                           pc.not_equal(table.slice(1), table.slice(0, n - 1)))
            starts += [i + 1 for i in pc.indices_nonzero(other).to_pylist()]
        columns = [texts(images, b.column(b.schema.get_field_index(c))) if c == "source" and images is not None
                   else b.column(b.schema.get_field_index(c)).to_pylist() for c in names]
        for lo, hi in zip(starts, starts[1:] + [n]):
            yield schema[lo].as_py(), table[lo].as_py(), [c[lo:hi] for c in columns]


def _columns(batches, names: tuple[str, ...]):
    """The rows of `batches` as tuples of the columns `names` (no others are made Python objects)."""
    for b in batches:
        yield from zip(*(b.column(b.schema.get_field_index(c)).to_pylist() for c in names))


# what a partition body returns: rows and statements written, the most row images held at
# once, the UPSERT statements written again as DELETE + REPLACE
COUNTS_SCHEMA = "rows long, statements long, held long, fallbacks long"


class Sessions:
    """Downstream sessions kept open between the partitions one process writes in turn (the
    driver's small segments: a session per pass, per thread and per segment was 20 sessions
    opened on the bench's oltp window, 0.2 s of apply); one that a partition left with an error
    is closed, not kept.  `close()` at the end of apply."""

    def __init__(self, sink: dict):
        self.sink, self._idle, self._lock = sink, [], threading.Lock()
        self._opening: list[Future] = []  # sessions open_ahead is opening, oldest first

    def open_ahead(self, n: int) -> None:
        """Up to `n` sessions in all opened by threads of their own while the caller goes on;
        `take` waits for one of them before it opens another (a failed opening raises there, as
        opening it there would)."""
        with self._lock:
            want = n - len(self._idle) - len(self._opening)
            if want <= 0:
                return
            pool = ThreadPoolExecutor(want, thread_name_prefix="session-ahead")
            self._opening += [pool.submit(connect_with_retry, self.sink) for _ in range(want)]
        pool.shutdown(wait=False)

    def take(self):
        with self._lock:
            if self._idle:
                return self._idle.pop()
            opening = self._opening.pop(0) if self._opening else None
        return connect_with_retry(self.sink) if opening is None else opening.result()

    def give(self, conn) -> None:
        with self._lock:
            self._idle.append(conn)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
            opening, self._opening = self._opening, []
        for future in opening:  # opened ahead and never taken (a failed one has nothing to close)
            with suppress(Exception):
                idle.append(future.result())
        for conn in idle:
            conn.close()


def _run_partition(sink: dict, batch_rows: int, keys: dict[str, list[str]], write, generated=None,
                   sessions: Sessions | None = None, prepared: bool = True):
    """One downstream session for a partition's writes (kept in `sessions` after it, if given);
    its counts (COUNTS_SCHEMA)."""
    heap.settle()  # a Spark task's body: the worker has imported what it writes with
    conn, done = None, False
    try:
        conn = connect_with_retry(sink) if sessions is None else sessions.take()
        w = StreamingWriter(RowWriter(conn, batch_rows, form=raw_form(prepared)), keys, generated=generated)
        w.writer.defer = True  # settled by w.close(); a write that raises closes the session below
        write(w, conn)
        written, statements = w.writer.rows_written, w.writer.statements
        done = True
    finally:
        if conn is not None:
            if done and sessions is not None:
                sessions.give(conn)
            else:
                conn.close()
    return pa.RecordBatch.from_pydict({"rows": [written], "statements": [statements], "held": [w.most_held],
                                       "fallbacks": [w.writer.fallbacks]})
