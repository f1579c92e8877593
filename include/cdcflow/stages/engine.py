"""Where a cycle's row steps run: in the stage's own process, over the window's Arrow data, or
inside Spark tasks.  One policy, built once per cycle from the changefeed's config, answers
every stage's question; no stage keeps a threshold of its own.

- `auto` (the default): a window of at most `local-max-events` events is read by filter and
  barrier in their process; apply writes a segment from its process where it holds at most
  `local-segment-rows` rows, up to `local-segments-rows` rows and `local-segments-bytes` bytes of
  images over the window's segments so written; everything larger runs in Spark tasks.  A
  small window then starts no JVM (docs/performance.md: a Spark job's planning cost more than
  the rows of a window of a few hundred thousand changes).
- `local`: every window and segment in the stage's process, whatever its row count; the bound
  left is memory: a segment whose images exceed `local-segments-bytes` is still written by Spark
  tasks (a segment is held whole while it is written, and one more is read ahead).
- `spark`: every row step in Spark tasks (on the embedded session, a Spark Connect server or a
  cluster, as spark-master / spark-remote say); the stage's process only plans and collects
  counts.

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
# a segment record older than image_bytes: the row bounds the process path had then
OLD_RECORD_ROWS, OLD_RECORD_TOTAL = 2_000, 50_000


@dataclass(frozen=True)
class Engine:
    mode: str = AUTO
    max_events: int = 2_000_000
    segment_rows: int = 100_000
    segments_rows: int = 400_000
    segments_bytes: int = 256 * 2**20

    @classmethod
    def of(cls, cfg) -> Engine:
        """The policy of a changefeed's config `cfg`, CDCFLOW_ENGINE overriding its `engine`."""
        mode = os.environ.get("CDCFLOW_ENGINE", "").strip().lower() or cfg.engine
        if mode not in ENGINES:
            raise CdcflowError(f"CDCFLOW_ENGINE={mode!r} names no engine",
                               hint=f"set it to one of {', '.join(ENGINES)}, or unset it to use each "
                                    f"changefeed's [cdcflow] engine")
        return cls(mode, cfg.local_max_events, cfg.local_segment_rows, cfg.local_segments_rows,
                   cfg.local_segments_bytes)

    def window_here(self, events: int) -> bool:
        """Whether filter and barrier read a window of `events` events in their own process."""
        return self.mode == LOCAL or (self.mode == AUTO and events <= self.max_events)

    def place(self, here: bool) -> str:
        return PROCESS if here else SPARK

    def segments_here(self, segments, checkpoint_ts: int) -> list[int]:
        """The indexes of the segments apply writes from its process (barrier.SmallSegments reads
        their rows): not applied yet, with rows, within the bounds, in window order."""
        if self.mode == SPARK:
            return []
        picked, total, held = [], 0, 0
        for i, seg in enumerate(segments):
            if not (seg.rows > 0 and seg.hi > checkpoint_ts):
                continue
            if self.mode == LOCAL:
                # read one at a time (and one ahead): the bound is each segment's images
                if seg.image_bytes <= self.segments_bytes:
                    picked.append(i)
                continue
            known = seg.image_bytes > 0
            most, most_total = (self.segment_rows, self.segments_rows) if known else (OLD_RECORD_ROWS,
                                                                                      OLD_RECORD_TOTAL)
            if seg.rows <= most and total + seg.rows <= most_total and held + seg.image_bytes <= self.segments_bytes:
                picked.append(i)
                total += seg.rows
                held += seg.image_bytes
        return picked
