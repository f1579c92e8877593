"""Where a cycle's row steps run: in the stage's own process, over the window's Arrow data, or
inside Spark tasks.  One policy, built once per cycle from the changefeed's config, answers
every stage's question; no stage keeps a threshold of its own.

- `auto` (the default): a window of at most `local-max-events` events is read by filter and
  barrier in their process (a batch at a time: the bound is not memory but one core's rate, which
  a cluster's parallel read passes); apply writes a segment from its process where it holds at
  most `local-segment-rows` row changes and `local-segment-bytes` bytes of images; everything
  larger runs in Spark tasks.  A window within them starts no JVM.  On one machine the stage's
  process is the faster place: `make bench PARTS=catchup` caught up 2.5M changes in process in
  half the time of Spark tasks on the same 2 cores, in less than half the memory
  (docs/performance.md).
- `local`: every window and segment in the stage's process, whatever its row count; the bound
  left is memory: a segment whose images exceed `local-segment-bytes` is still written by Spark
  tasks (a segment is held whole while it is written, and one more is read ahead).
- `spark`: every row step in Spark tasks (on the embedded session, a Spark Connect server or a
  cluster, as spark-master / spark-remote say); the stage's process only plans and collects
  counts.  Where a window outgrows one machine.

CDCFLOW_ENGINE, where set, overrides every changefeed's `engine` on this machine: an operator
(and the test suite's `--engine spark`) forces a place without editing each config.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from cdcflow.core.config import ENGINES
from cdcflow.core.errors import CdcflowError

AUTO, LOCAL, SPARK = ENGINES
PROCESS = "process"  # a step's place in the stage results: the stage's own process, or Spark tasks
# a segment record older than image_bytes: the row bound the process path had then
OLD_RECORD_ROWS = 2_000


@dataclass(frozen=True)
class Engine:
    mode: str = AUTO
    max_events: int = 20_000_000
    segment_rows: int = 1_000_000
    segment_bytes: int = 256 * 2**20

    @classmethod
    def of(cls, cfg) -> Engine:
        """The policy of a changefeed's config `cfg`, CDCFLOW_ENGINE overriding its `engine`."""
        mode = os.environ.get("CDCFLOW_ENGINE", "").strip().lower() or cfg.engine
        if mode not in ENGINES:
            raise CdcflowError(f"CDCFLOW_ENGINE={mode!r} names no engine",
                               hint=f"set it to one of {', '.join(ENGINES)}, or unset it to use each "
                                    f"changefeed's [cdcflow] engine")
        return cls(mode, cfg.local_max_events, cfg.local_segment_rows, cfg.local_segment_bytes)

    def window_here(self, events: int) -> bool:
        """Whether filter and barrier read a window of `events` events in their own process."""
        return self.mode == LOCAL or (self.mode == AUTO and events <= self.max_events)

    def place(self, here: bool) -> str:
        return PROCESS if here else SPARK

    def segments_here(self, segments, checkpoint_ts: int) -> list[int]:
        """The indexes of the segments apply writes from its process (barrier.SmallSegments reads
        their rows, one ahead of the one written): not applied yet, with rows, within the bounds,
        in window order."""
        if self.mode == SPARK:
            return []
        picked = []
        for i, seg in enumerate(segments):
            if not (seg.rows > 0 and seg.hi > checkpoint_ts) or seg.image_bytes > self.segment_bytes:
                continue
            most = self.segment_rows if seg.image_bytes > 0 else OLD_RECORD_ROWS
            if self.mode == LOCAL or seg.rows <= most:
                picked.append(i)
        return picked
