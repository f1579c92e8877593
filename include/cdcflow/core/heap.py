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

Before the first settle() the `cdcflow` command's own process loads about 1,000 modules
(SQLAlchemy, pyarrow with numpy, pymysql, cdcflow), whose objects the collector walks again and
again as they are made: 0.05-0.06 s of a cycle's 0.5 s start-up went to its young and middle
generations and one full collection.  hold_off() has the collector look at the young objects
only every YOUNG_WHILE_LOADING allocations until then (their garbage is still collected, less
often), and settle() gives the process its thresholds back.
"""

from __future__ import annotations

import gc
import os
import sys

_frozen_at = 0  # how many modules were loaded at the last freeze
_held: tuple[int, ...] | None = None  # the thresholds hold_off() replaced, until settle()

# young objects made between two collections while the command loads its modules: about the
# size of SQLAlchemy's or pyarrow's objects, so a module's objects are walked about once
YOUNG_WHILE_LOADING = 100_000
COMMAND = "cdcflow"  # the console script (pyproject.toml)
COMMAND_MODULE = "cdcflow.cli"  # python -m cdcflow.cli
INTERPRETER_OPTIONS_WITH_VALUE = ("-X", "-W", "--check-hash-based-pycs")  # python [option value]... program


def settle() -> None:
    """Freeze what the process holds now, where more modules are loaded than at the last call."""
    global _frozen_at, _held
    loaded = len(sys.modules)
    if loaded > _frozen_at:
        gc.freeze()
        _frozen_at = loaded
    if _held is not None:
        gc.set_threshold(*_held)
        _held = None


def hold_off() -> None:
    """Collect young objects only every YOUNG_WHILE_LOADING allocations until settle()."""
    global _held
    if _held is None:
        _held = gc.get_threshold()
        gc.set_threshold(YOUNG_WHILE_LOADING, *_held[1:])


def started_as_command(argv: list[str] | None = None) -> bool:
    """Whether this process is the `cdcflow` command (its console script, or `python -m
    cdcflow.cli`), as the interpreter was started: the package's __init__ runs before either
    names itself, and only that process holds the collector off (Airflow's, Spark's and a test's
    processes import cdcflow too, and may never settle())."""
    args = iter(sys.orig_argv[1:] if argv is None else argv[1:])
    for arg in args:  # the interpreter's own options, up to the program it runs
        if arg == "-m":
            return next(args, None) == COMMAND_MODULE
        if arg == "-c":
            return False
        if not arg.startswith("-"):  # a script: the console script's path
            return os.path.basename(arg) == COMMAND
        if arg in INTERPRETER_OPTIONS_WITH_VALUE:
            next(args, None)
    return False
