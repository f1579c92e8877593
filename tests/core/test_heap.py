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
