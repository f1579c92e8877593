"""The processes a development tool started, found by its own ids and stopped together.

`make airflow` starts `airflow standalone` (its scheduler, API server, DAG processor,
triggerer and their workers), a Spark Connect server (a launcher script, a JVM, Python
workers) and possibly the demo's MariaDB pair.  Stopping them one after another, each with a
polite wait, took minutes; here every one of them gets SIGTERM at once, and SIGKILL after a
short grace.  Which processes: the tool's own descendants, by parent pid, and the process
groups it recorded.  The tool becomes a child subreaper (Linux), so a process whose parent
died first is re-parented to it instead of to init and is still found as its descendant.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>


def become_subreaper() -> bool:
    """Orphaned descendants are re-parented to this process (Linux 3.4+); False where not possible."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _stat(pid: int) -> list[str] | None:
    """/proc/<pid>/stat's fields after the command name: state, ppid, pgrp, ... (None: gone)."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def alive(pid: int) -> bool:
    """Running (a zombie, which only waits to be reaped, is not)."""
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def start_time(pid: int) -> str | None:
    """The process's start time (clock ticks since boot): with the pid, an identity no reuse fakes."""
    fields = _stat(pid)
    return fields[19] if fields else None


def group_members(pgid: int) -> list[int]:
    """The live processes of process group `pgid`."""
    members = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            fields = _stat(int(p.name))
            if fields and fields[0] != "Z" and int(fields[2]) == pgid:
                members.append(int(p.name))
    return members


def sampled(root: int) -> list[int]:
    """`root` (if live) and its descendants, cheaply: from the kernel's per-thread children files,
    a read per thread of the tree instead of one per process of the machine (descendants), for a
    sampler that runs every 100 ms beside what it measures (bench_census).  A process forked or
    gone during the walk may be missed (the files' documented race): the sampler's next look
    finds it.  Where the kernel keeps no children files, descendants' scan."""
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue  # gone
        out.append(pid)
        for tid in tids:
            try:
                todo += map(int, Path(f"/proc/{pid}/task/{tid}/children").read_text().split())
            except FileNotFoundError:
                if Path(f"/proc/{pid}/task/{tid}").exists():  # the kernel keeps no children files
                    return [root, *descendants(root)] if alive(root) else []
            except (OSError, ValueError):
                continue  # a thread gone since the listing
    return out


def descendants(root: int) -> list[int]:
    """Every live process below `root`, by parent pid."""
    children: dict[int, list[int]] = {}
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            fields = _stat(int(p.name))
            if fields and fields[0] != "Z":
                children.setdefault(int(fields[1]), []).append(int(p.name))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _reap() -> None:
    """Collect the exit status of this process's ended children (orphans it adopted included)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _signal_all(pids: Iterable[int], groups: Iterable[int], sig: int) -> None:
    for pgid in groups:
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            pass
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _stop(running: Callable[[], list[int]], groups: list[int], grace: float, poll: float) -> list[int]:
    """SIGTERM to the processes `running()` names and to `groups`, SIGKILL to whatever still runs
    after `grace` seconds; returns once `running()` is empty (or 10 s after the SIGKILL): what
    it names then, normally nothing."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
        left = running()
        if not left:
            return []
        _signal_all(left, groups, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and running():
            time.sleep(poll)
    return running()


def stop_all(groups: Iterable[int] = (), grace: float = 5.0) -> list[int]:
    """SIGTERM to the process groups `groups` and to every descendant of this process at once;
    SIGKILL to whatever is still running after `grace` seconds.  Returns once all are gone (or
    10 s after the SIGKILL): the pids still running then, normally none."""
    groups = list(groups)
    me = os.getpid()

    def running() -> list[int]:
        _reap()
        return sorted({*descendants(me), *(p for g in groups for p in group_members(g))} - {me})

    return _stop(running, groups, grace, 0.1)


def stop_group(leader: subprocess.Popen, grace: float) -> list[int]:
    """Stop what `leader` started in a session of its own (`start_new_session=True`): its process
    group and its descendants as they were when asked (one that left the group included), as
    stop_all does.  The leader is reaped as it goes, so its zombie does not count."""
    tree = set(descendants(leader.pid))

    def running() -> list[int]:
        leader.poll()
        return sorted({*group_members(leader.pid), *(p for p in tree if alive(p))})

    return _stop(running, [leader.pid], grace, 0.2)
