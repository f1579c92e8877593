"""The rows apply writes from its own process, read ahead of their write.

The cycle's engine names the parts of the window's segments (a segment whole, or one of its
slices: contracts.Slice) that the stage's process writes (Engine.parts_in_process).  Their rows
are read here with pyarrow (rows.kept_rows_table), a part at a time, in order, by a thread of
their own, and made ready for the writers by `ahead` (sink.row_sink.RowSink.writer_input_ahead):
the next part's rows are read and compacted while apply writes this one's, not all before the
first is written (a read that held up every write: 0.4 s of the bench's 2.4 s apply, and the
compaction 0.3 s more).  A part's writers' shares are made here one after the other, each
handed over as the Future of its making, so that a writer starts on its share while the next is
made.  One part is read beyond the one being written, no more: what the process holds is two
parts, each within the engine's bounds, whatever the window's size.
While the first part is read, apply opens the writers' sessions (RowSink.open_sessions) and
each write asks the downstream's catalogue before it asks for its rows (RowSink._write).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

import pyarrow as pa

from cdcflow.sink.row_sink import PART_COLUMNS, PartRows
from cdcflow.stages import rows
from cdcflow.stages.contracts import Segment, Slice
from cdcflow.stages.cycle import Cycle


def let_go() -> None:
    """Hand back to the system what the Arrow buffers of a written part held: pyarrow's allocator
    (mimalloc) keeps freed pages for reuse, and over a window of many parts what it kept, not
    the two parts held, set the process's peak."""
    pa.default_memory_pool().release_unused()


class ReadAhead:
    """`get((i, j))`: the rows (row_sink.PartRows) of part j of segment i, None where the process
    does not write it; `close()` ends the reads not needed."""

    def __init__(self, cycle: Cycle, segments: list[Segment], checkpoint_ts: int,
                 ahead: Callable[[Segment, Slice, pa.Table], object] | None = None):
        self.cycle, self.segments, self.ahead = cycle, segments, ahead
        self._waiting = cycle.engine.parts_in_process(segments, checkpoint_ts)  # not submitted yet, in order
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="read-ahead") if self._waiting else None
        self._rows: dict[tuple[int, int], Future] = {}
        self._read_next()

    def _read_next(self) -> None:
        if self._waiting:
            i, j = self._waiting.pop(0)
            seg = self.segments[i]
            self._rows[i, j] = self._pool.submit(self._read, seg, seg.parts()[j])

    def _read(self, seg: Segment, part: Slice) -> PartRows | None:
        rows_here = rows.kept_rows_table(self.cycle, [(part.lo, part.hi)], PART_COLUMNS)
        if not rows_here.num_rows:
            return None
        ahead = self.ahead(seg, part, rows_here) if self.ahead is not None else None
        if ahead is not None:
            # each writer's share made here in turn, after this read: a writer starts on its share
            # while the next is made (row_sink._writer_shares), before the part's next read
            ahead = dataclasses.replace(ahead, parts=[self._pool.submit(make) for make in ahead.parts])
        return PartRows(rows_here, ahead)

    def let_go(self) -> None:
        """let_go on the read-ahead's thread, after the part it is making: the written parts were
        made there, and the allocator collects the pages freed into a thread's own heap when that
        thread asks.  The stage's thread goes on to the DDL or the next part meanwhile: done on
        it, 2-5 ms of each DDL's edge had no statement in flight (docs/performance.md)."""
        if self._pool is not None:
            self._pool.submit(let_go)

    @property
    def reading(self) -> bool:
        """Whether any part is read here (the stage's process writes it)."""
        return self._pool is not None

    def get(self, part: tuple[int, int]) -> PartRows | None:
        future = self._rows.pop(part, None)
        if future is None:
            return None
        try:
            return future.result()
        finally:
            # after it: the writers' shares of this part, which its read asked for, come first
            self._read_next()

    def close(self) -> None:
        """Ends the reads not needed; a let_go already asked for still runs (the last part's, at
        the end of an apply: a process that runs cycle after cycle would keep its pages)."""
        if self._pool is not None:
            for future in self._rows.values():
                future.cancel()
            self._pool.shutdown(wait=True)
