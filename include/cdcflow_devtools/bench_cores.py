"""Cores of their own: the downstream on one half of this machine's cores, cdcflow on the other,
as where the downstream is another host.

On the bench's machine cdcflow and its downstream share every core.  In apply the downstream
spends about the CPU it spends in the floor's replay, and cdcflow's own work (reading the
segments, compacting them, the statements' text) takes cores from it, so apply / floor there
measures the machine as much as the writers (bench.apply_bound prints the least it could be).
`apart` binds every thread of the downstream's server, and so every thread it starts, to the
first half of the cores, and the calling thread of this process, which starts the cycle's process
and the floor's connections, to the other half; the bench runs the floor and a CLI cycle so
(bench_apart).  A machine of one core has no halves: nothing is bound, `apart` gives None.
"""

from __future__ import annotations

import os
from contextlib import contextmanager, suppress
from typing import Iterator


def _bind(pid: int, cores: set[int]) -> None:
    # twice: a thread started while the first pass ran was started by one not bound yet
    for _ in range(2):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with suppress(ProcessLookupError):  # a thread that ended in between
                os.sched_setaffinity(int(tid), cores)


@contextmanager
def apart(pid: int) -> Iterator[tuple[list[int], list[int]] | None]:
    """Process `pid`'s threads on the first half of the cores this thread may use, this thread
    (and what it starts) on the other half, until the block ends: (theirs, mine), or None with
    fewer than two cores."""
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        yield None
        return
    theirs, mine = cores[:len(cores) // 2], cores[len(cores) // 2:]
    before = os.sched_getaffinity(pid)
    _bind(pid, set(theirs))
    os.sched_setaffinity(0, set(mine))
    try:
        yield theirs, mine
    finally:
        os.sched_setaffinity(0, set(cores))
        _bind(pid, before)
