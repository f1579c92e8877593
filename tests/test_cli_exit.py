"""The `cdcflow` command's process ends without the interpreter's teardown of its loaded modules
(cli._exit_now), yet does everything an exit does that anyone sees: its atexit handlers run,
its output is flushed, its status is the command's.  Where another thread still runs, it exits
as before, joining it."""

from __future__ import annotations

import os
import subprocess
import sys

# cli.entry() in a process of its own, as the console script runs it; `returned` shows that the
# interpreter's own exit (and teardown) followed
_ENTRY = """
import atexit, sys, threading
atexit.register(lambda: print("atexit handler ran", file=sys.stderr))
if sys.argv[1] == "thread":  # a thread that ends only as the interpreter's exit stops the main thread
    threading.Thread(target=threading.main_thread().join).start()
sys.argv = ["cdcflow", *sys.argv[2:]]
from cdcflow import cli
status = cli.entry()
print("returned", status, file=sys.stderr)
sys.exit(status)
"""


def _entry(home, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _ENTRY, *argv], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "CDCFLOW_HOME": str(home)})


def test_a_command_ends_without_teardown_with_its_output_handlers_and_status(tmp_path):
    proc = _entry(tmp_path, "alone", "tso", "query")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().isdigit(), "the output was flushed"
    assert "atexit handler ran" in proc.stderr
    assert "returned" not in proc.stderr, "the process ended inside entry(), without the interpreter's teardown"


def test_a_failing_command_keeps_its_status(tmp_path):
    proc = _entry(tmp_path, "alone", "changefeed", "query", "-c", "no-such-changefeed")
    assert proc.returncode == 1 and "no-such-changefeed" in proc.stderr
    assert "atexit handler ran" in proc.stderr and "returned" not in proc.stderr


def test_with_another_thread_running_the_interpreter_exits_as_before(tmp_path):
    proc = _entry(tmp_path, "thread", "tso", "query")
    assert proc.returncode == 0, proc.stderr
    assert "returned 0" in proc.stderr and "atexit handler ran" in proc.stderr
