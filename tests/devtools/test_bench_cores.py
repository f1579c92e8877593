"""bench_cores.apart: a process's every thread on one half of the cores, this thread on the
other, and both put back after."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from cdcflow_devtools import bench_cores

THREADS = ("import threading, time\n"
           "for _ in range(2):\n"
           "    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
           "time.sleep(60)\n")


def _masks(pid: int) -> list[set[int]]:
    return [os.sched_getaffinity(int(tid)) for tid in os.listdir(f"/proc/{pid}/task")]


def test_apart_binds_every_thread_of_a_process_and_this_thread_to_halves_and_puts_them_back():
    cores = sorted(os.sched_getaffinity(0))
    child = subprocess.Popen([sys.executable, "-c", THREADS])
    try:
        deadline = time.monotonic() + 10
        while len(os.listdir(f"/proc/{child.pid}/task")) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(os.listdir(f"/proc/{child.pid}/task")) >= 3
        with bench_cores.apart(child.pid) as halves:
            if len(cores) < 2:
                assert halves is None
                return
            theirs, mine = halves
            assert set(theirs).isdisjoint(mine) and sorted(theirs + mine) == cores
            assert all(mask == set(theirs) for mask in _masks(child.pid))
            assert os.sched_getaffinity(0) == set(mine)
        assert all(mask == set(cores) for mask in _masks(child.pid))
        assert os.sched_getaffinity(0) == set(cores)
    finally:
        child.kill()
        child.wait()
