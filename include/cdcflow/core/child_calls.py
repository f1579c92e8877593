"""Calls of module-level functions, each in a child Python process of its own.

For work that holds the GIL for seconds, such as decoding a binlog range: in threads of this
process it would run one call at a time, and would starve the thread starting the Spark
session.  A child is a fresh interpreter started with `python -m` (never a fork of this
process, whose other threads may hold locks), given its call as a pickle on stdin; it sends
back its result, or the exception it raised, as a pickle on stdout.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

from cdcflow.core import home
from cdcflow.core.errors import CdcflowError

# the folder holding the cdcflow package: a child imports it as this process did, whatever
# put it on this process's path (Airflow's plugins folder, PYTHONPATH, an installed package)
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])


def call_all(calls: list[tuple[Callable, tuple]], what: str) -> list:
    """fn(*args) for each (fn, args) in `calls`, all at once in child processes; their
    results in order.  The first call to raise has its exception raised here (after the other
    children are stopped); a child that dies without an answer is named by `what`."""
    # the running home's CDCFLOW_HOME: a launcher's home is not in this process's environment
    path = os.pathsep.join(filter(None, [_PACKAGE_ROOT, os.environ.get("PYTHONPATH")]))
    env = {**home.current().child_env(), "PYTHONPATH": path}
    children = []
    try:
        for fn, args in calls:
            child = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=env)
            children.append(child)
            child.stdin.write(pickle.dumps((fn, args)))
            child.stdin.close()
        results = []
        for i, child in enumerate(children):
            answer = child.stdout.read()  # a child blocked writing a large answer waits only for this
            code = child.wait()
            if not answer:
                raise CdcflowError(f"{what} {i} ended with exit code {code} before it answered",
                                   hint="its error output is in the log above; the checkpoint has not moved")
            ok, value = pickle.loads(answer)
            if not ok:
                raise value
            results.append(value)
        return results
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
            child.stdout.close()


def _serve() -> None:
    """A child's side: one call from stdin, its outcome to stdout.  Anything else written to
    stdout (a library's print) goes to stderr instead, so the answer stays a pickle."""
    answer = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    fn, args = pickle.loads(sys.stdin.buffer.read())
    try:
        outcome = (True, fn(*args))
    except BaseException as e:  # noqa: BLE001 - every failure goes back to the caller, which raises it
        outcome = (False, e)
    try:
        data = pickle.dumps(outcome)
    except Exception:  # noqa: BLE001 - an exception that does not pickle goes back as its text
        data = pickle.dumps((False, RuntimeError("".join(traceback.format_exception(outcome[1])))))
    answer.write(data)
    answer.close()


if __name__ == "__main__":
    _serve()
