"""The cyclic collector kept off what a process has loaded.

What a stage's process or a Spark Python worker imports (pyspark, pyarrow, pymysql, cdcflow:
100,000-110,000 objects the collector tracks in a worker) lives as long as the process, yet
each full collection walks all of it again, and in a worker forked from Spark's worker daemon
the walk also writes into pages the worker still shares with the daemon, which the kernel then
copies. A bulk window's cycle forced to Spark had each of its two Python workers spend 0.44-0.59 s
of 1.7-1.9 s of CPU in 9-10 full collections (docs/performance.md).

settle() moves everything the process holds at that moment to the collector's permanent
generation (gc.freeze), which later collections leave alone. It is called where a process's
imports are done and its row work starts (a stage, a Spark task's body, the workers' warm-up),
and freezes again only where more modules were loaded since, so a long-lived process (a
follower, a reused worker) freezes a few times in its life, not once per cycle or task. What is
frozen is never collected: garbage in a cycle of references at that moment stays, at most what
the young generations held (a collection of them runs at every 700 allocations).
"""

from __future__ import annotations

import gc
import sys

_frozen_at = 0  # how many modules were loaded at the last freeze


def settle() -> None:
    """Freeze what the process holds now, where more modules are loaded than at the last call."""
    global _frozen_at
    loaded = len(sys.modules)
    if loaded > _frozen_at:
        gc.freeze()
        _frozen_at = loaded
