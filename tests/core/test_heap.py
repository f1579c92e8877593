"""heap.settle: what a process holds goes to the collector's permanent generation once its
imports are done, and again only after more modules are loaded."""

from __future__ import annotations

import subprocess
import sys

# each case in an interpreter of its own: a freeze lasts the process's life
_CASE = """
import gc, sys
from cdcflow.core import heap
before = gc.get_freeze_count()
heap.settle()
first = gc.get_freeze_count()
kept = []
kept.extend([x] for x in range(5000))  # new objects, no new module
heap.settle()
again = gc.get_freeze_count()
import json.tool  # a module not loaded yet
heap.settle()
after_import = gc.get_freeze_count()
print(before, first, again, after_import)
"""


def test_settle_freezes_once_and_again_only_after_new_modules():
    out = subprocess.run([sys.executable, "-c", _CASE], capture_output=True, text=True, check=True)
    before, first, again, after_import = map(int, out.stdout.split())
    assert before == 0 and first > 5_000, "the loaded modules' objects are frozen"
    assert again == first, "nothing new loaded: the objects made since stay with the collector"
    assert after_import > first + 5_000, "a module loaded since: everything held then is frozen"


def test_a_full_collection_no_longer_walks_what_was_frozen():
    case = ("import gc; from cdcflow.core import heap; import cdcflow.sink.row_sink; "
            "gc.collect(); n = len(gc.get_objects()); heap.settle(); print(n, len(gc.get_objects()))")
    out = subprocess.run([sys.executable, "-c", case], capture_output=True, text=True, check=True)
    tracked, after = map(int, out.stdout.split())
    assert tracked > 20_000 and after < tracked // 10


# a process started as the `cdcflow` command (its orig_argv as the console script's), then its first stage
_HELD = """
import gc, sys
sys.orig_argv[:] = [sys.executable, "/venv/bin/cdcflow", "changefeed", "run", "-c", "x"] if sys.argv[1] == "command" else sys.orig_argv
import cdcflow
from cdcflow.core import heap
held = gc.get_threshold()[0]
heap.settle()
print(held, gc.get_threshold()[0])
"""


def test_the_commands_process_collects_young_objects_less_often_until_its_first_stage_settles():
    def thresholds(how: str) -> tuple[int, int]:
        out = subprocess.run([sys.executable, "-c", _HELD, how], capture_output=True, text=True, check=True)
        held, after = map(int, out.stdout.split())
        return held, after

    from cdcflow.core import heap

    default = 700  # CPython's own
    assert thresholds("command") == (heap.YOUNG_WHILE_LOADING, default)
    assert thresholds("library") == (default, default), "a process that only imports cdcflow keeps its collector"


def test_which_processes_are_the_command():
    from cdcflow.core.heap import started_as_command

    py = "/usr/bin/python3"
    assert started_as_command([py, "/opt/venv/bin/cdcflow", "changefeed", "list"])
    assert started_as_command([py, "-X", "importtime", "-m", "cdcflow.cli", "tso", "query"])
    assert not started_as_command([py, "-m", "pytest", "tests"])
    assert not started_as_command([py, "-m", "cdcflow_devtools.bench"])
    assert not started_as_command([py, "/opt/airflow/bin/airflow", "scheduler"])
    assert not started_as_command([py, "-c", "import cdcflow"])
    assert not started_as_command([py])
    # only the interpreter's own options count, not the program's arguments after it
    assert started_as_command([py, "/opt/venv/bin/cdcflow", "changefeed", "-m", "x"])
    assert not started_as_command([py, "-c", "import cdcflow", "-m", "cdcflow.cli"])
    assert not started_as_command([py, "tool.py", "-m", "cdcflow.cli"])
    assert started_as_command([py, "-W", "ignore", "/opt/venv/bin/cdcflow", "tso", "query"])
