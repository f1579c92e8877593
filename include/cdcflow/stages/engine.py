"""Where a cycle's row steps run: in the stage's own process, over the window's Arrow data, or
inside Spark tasks.  One policy, built once per cycle from the changefeed's config, answers
every stage's question; no stage keeps a threshold of its own.

- `auto` (the default): a window of at most `local-max-events` events is read by filter and
  barrier in their process (a batch at a time: the bound is not memory but one core's rate, which
  a cluster's parallel read passes); apply writes a segment from its process where it holds at
  most `local-segment-rows` row changes and `local-segment-bytes` bytes of images, and a larger
  segment of such a window in slices that do (runs of whole transactions, `slices`), so the
  process holds no more than the bounds whatever the window; a segment that cannot be cut (one
  transaction over the bounds) and the segments of a larger window run in Spark tasks.  A window within them starts no JVM.  On one machine the stage's
  process is the faster place: `make bench PARTS=catchup` caught up 2.5M changes in process in
  half the time of Spark tasks on the same 2 cores, in less than half the memory
  (docs/performance.md).
- `local`: every window and segment in the stage's process, whatever its row count; the bound
  left is memory: a segment (or slice) whose images exceed `local-segment-bytes` is still written
  by Spark tasks (a slice is held whole while it is written, and one more is read ahead).
- `spark`: every row step in Spark tasks (on the embedded session, a Spark Connect server or a
  cluster, as spark-master / spark-remote say); the stage's process only plans and collects
  counts.  Where a window outgrows one machine.

CDCFLOW_ENGINE, where set, overrides every changefeed's `engine` on this machine: an operator
(and the test suite's `--engine spark`) forces a place without editing each config.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from cdcflow.config.keys import ENGINES
from cdcflow.core.errors import CdcflowError
from cdcflow.stages.contracts import Slice

AUTO, LOCAL, SPARK = ENGINES
PROCESS = "process"  # a step's place in the stage results: the stage's own process, or Spark tasks
# a segment record older than image_bytes: the row bound the process path had then
OLD_RECORD_ROWS = 2_000


@dataclass(frozen=True)
class Engine:
    """The policy; its bounds are the config's keys (config.keys: local-max-events,
    local-segment-rows, local-segment-bytes), declared there with their defaults."""

    mode: str
    max_events: int
    segment_rows: int
    segment_bytes: int

    @classmethod
    def of(cls, cfg) -> Engine:
        """The policy of a changefeed's config `cfg`, CDCFLOW_ENGINE overriding its `engine`."""
        mode = os.environ.get("CDCFLOW_ENGINE", "").strip().lower() or cfg.engine
        if mode not in ENGINES:
            raise CdcflowError(f"CDCFLOW_ENGINE={mode!r} names no engine",
                               hint=f"set it to one of {', '.join(ENGINES)}, or unset it to use each "
                                    f"changefeed's [cdcflow] engine")
        return cls(mode, cfg.local_max_events, cfg.local_segment_rows, cfg.local_segment_bytes)

    def window_in_process(self, events: int) -> bool:
        """Whether filter and barrier read a window of `events` events in their own process."""
        return self.mode == LOCAL or (self.mode == AUTO and events <= self.max_events)

    def window_kept(self) -> tuple[int, int] | None:
        """The bounds (events, bytes of images) of a window pull keeps in memory as it writes it,
        for the stages after it in its process (store.events.RunFolder.writer's `keep`): a
        segment's, so that the process holds no more of it than apply would; none where those
        stages read the window in Spark tasks."""
        return None if self.mode == SPARK else (self.segment_rows, self.segment_bytes)

    def place(self, in_process: bool) -> str:
        return PROCESS if in_process else SPARK

    def slices(self, seg, points) -> list[Slice]:
        """Where a segment too large for the process bounds is written in slices that fit them
        (contracts.Slice): `points`, (upto, rows, image bytes) of runs of its rows, sorted by upto
        (barrier.batch_counts: each run's rows committed at or below upto), cut greedily at run
        ends.  A slice is a run of whole transactions, so writing the slices in order, each
        compacted on its own, leaves the downstream as the segment whole would (each slice's final
        images are the upstream's state at its end; only the checkpoint waits for the segment's).
        Empty where the segment fits, where Spark writes it, or where it cannot be cut (one
        transaction): apply then writes it whole, as parts_in_process says."""
        if self.mode == SPARK or self._fits(seg.rows, seg.image_bytes):
            return []
        out, lo, rows, size, last = [], seg.lo, 0, 0, seg.lo
        for upto, n, b in points:
            if rows and upto > last > lo and not self._fits(rows + n, size + b):
                out.append(Slice(lo, last, rows, size))
                lo, rows, size = last, 0, 0
            rows, size, last = rows + n, size + b, max(last, upto)
        out.append(Slice(lo, seg.hi, rows, size))
        return out if len(out) > 1 else []

    def run_rows(self) -> int:
        """The rows of barrier's runs (batch_counts), where a slice may end: a sixteenth of a
        slice's rows (a slice then holds at least 15/16 of its bound where transactions allow),
        at most 16,384 (a run is a row of counts: 610 for 10,000,000 rows)."""
        return max(1, min(16_384, self.segment_rows // 16))

    def _fits(self, rows: int, image_bytes: int) -> bool:
        return rows <= self.segment_rows and image_bytes <= self.segment_bytes

    def parts_in_process(self, segments, checkpoint_ts: int) -> list[tuple[int, int]]:
        """The parts (segment index, index in its parts()) apply writes from its process
        (stages.read_ahead reads their rows, one ahead of the one written): not applied yet, with
        rows, within the bounds, in window order."""
        if self.mode == SPARK:
            return []
        picked = []
        for i, seg in enumerate(segments):
            for j, part in enumerate(seg.parts()):
                if not (part.rows > 0 and part.hi > checkpoint_ts) or part.image_bytes > self.segment_bytes:
                    continue
                if self.mode == LOCAL or self.part_fits(part):
                    picked.append((i, j))
        return picked

    def part_fits(self, part: Slice) -> bool:
        """Whether a part (a segment whole, or a slice: contracts.Slice) is within the bounds one
        process holds: the stage's, or one Spark task's where Spark writes it.  Spark writes such a
        part in a single task, keyed, compacted and spread there by the stage's own functions and
        written by its writer threads (sink.row_sink): a larger part is keyed in parallel tasks and
        spread by Spark's shuffle, a task per writer, whose two jobs cost more than they save below
        the bounds."""
        most = self.segment_rows if part.image_bytes > 0 else OLD_RECORD_ROWS
        return part.rows <= most and part.image_bytes <= self.segment_bytes
