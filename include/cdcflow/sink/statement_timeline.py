"""When apply's downstream had nothing of this process's to work on: each row statement and DDL
this process sent, timed from its send to its answer while apply runs (`recording`), and the
time between them with none in flight, by where it fell.  A writer that reads each answer when
it sends its next statement (row_writer.RowWriter.defer) ends a statement's span then: the span
holds the next one's building, so the time between a writer's statements counts as in flight,
and what the downstream spent waiting on it shows in its busy share instead (the bench's
cores-apart line).

What apply takes beyond the downstream's own time on its statements (the bench's floor) is
either time with nothing in flight, which is this process's own (the first part made before the
first statement, the catalogue asked at each segment's start), or time with statements in flight
that the downstream spent waiting; this tells the first from the second.  Statements that Spark
tasks send run in other processes and are not seen: a summary is given only where every
statement of the apply was (stages.apply).  The changes written in commit order (keyless tables,
the tables foreign keys bind) count as one statement a run.  It also keeps what each segment cost
this process in CPU, which tells a segment where apply waited on this process's core (its CPU
about the segment's time) from one where the downstream was the slower.  Recording costs two
clock reads and a list append a statement, a read of the process's CPU clock a DDL, and outside
apply one look-up that finds nothing recording.  What is
recorded is the process's: two applies at once in one process would share it (a DAG task and a
CLI cycle each run one).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

# where a time with nothing in flight fell: before the first statement or DDL, right after a DDL
# (the next segment's catalogue and first statement), right before one (the segment's end),
# between two statements of a segment, or after the last (the end of apply)
GAP_KINDS = ("before the first", "after a DDL", "before a DDL", "between statements", "after the last")


# the most segments whose CPU the summary lists one by one (a DDL-heavy window's thousands would
# make its log line as long)
SEGMENTS_TOLD = 50


@dataclass
class Timeline:
    """The (start, end) of each row statement and DDL sent while recording (perf_counter seconds),
    and the process's CPU seconds (all its threads: the writers, the read-ahead, the walk) at the
    start and as each DDL ended: what each segment, with the DDL that ends it, cost this process,
    which the bench's cores-apart line sets beside the segment's time (where apply waited on this
    process's one core rather than on the downstream)."""

    started: float = field(default_factory=time.perf_counter)
    statements: list[tuple[float, float]] = field(default_factory=list)
    ddls: list[tuple[float, float]] = field(default_factory=list)
    cpu: list[float] = field(default_factory=lambda: [time.process_time()])

    def summary(self, ended: float | None = None, cpu_ended: float | None = None) -> dict:
        """The statements and DDLs seen, and the milliseconds with none of them in flight, in all and
        by GAP_KINDS, from the start of recording to `ended` (now, if not given); and, up to
        SEGMENTS_TOLD segments, each one's CPU seconds of the process up to `cpu_ended` (its CPU
        now, if not given) and each DDL's own milliseconds, from its send to its answer."""
        ended = time.perf_counter() if ended is None else ended
        marks = self.cpu + [time.process_time() if cpu_ended is None else cpu_ended]
        gaps = dict.fromkeys(GAP_KINDS, 0.0)
        spans = sorted([(a, b, False) for a, b in self.statements] + [(a, b, True) for a, b in self.ddls])
        covered, after_ddl, first = self.started, False, True
        for start, end, is_ddl in spans:
            if start > covered:
                kind = ("before the first" if first else "after a DDL" if after_ddl
                        else "before a DDL" if is_ddl else "between statements")
                gaps[kind] += start - covered
            if end >= covered:
                covered, after_ddl = end, is_ddl
            first = False
        if ended > covered:
            gaps["after the last" if spans else "before the first"] += ended - covered
        told = {"cpu_s_by_segment": [round(b - a, 4) for a, b in zip(marks, marks[1:])],
                "ddl_ms": [round((b - a) * 1000, 1) for a, b in self.ddls]} \
            if len(marks) <= SEGMENTS_TOLD + 1 else {}
        return {"statements": len(self.statements), "ddls": len(self.ddls),
                "seconds": round(ended - self.started, 4),
                "idle_ms": round(sum(gaps.values()) * 1000, 1),
                "idle_ms_by_kind": {k: round(v * 1000, 1) for k, v in gaps.items()}, **told}


_active: Timeline | None = None


@contextmanager
def recording() -> Iterator[Timeline]:
    """Record this process's statements and DDLs (row_writer.RowWriter, timed) for the body."""
    global _active
    _active, before = Timeline(), _active
    try:
        yield _active
    finally:
        _active = before


def active() -> Timeline | None:
    """The timeline being recorded, None outside `recording` (a Spark task's process)."""
    return _active


@contextmanager
def timed(ddl: bool = False) -> Iterator[None]:
    """The body's time as one statement (or a DDL) in flight: a DDL, or a run of statements sent
    one after the other on one session (the changes written in commit order)."""
    timeline, start = _active, time.perf_counter()
    try:
        yield
    finally:
        if timeline is not None:
            (timeline.ddls if ddl else timeline.statements).append((start, time.perf_counter()))
            if ddl:
                timeline.cpu.append(time.process_time())
