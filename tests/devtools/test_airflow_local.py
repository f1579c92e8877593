"""`make airflow` stops within seconds of Ctrl-C, and every process it started has ended: Airflow's
components, the Spark Connect server, the demo's MariaDB pair it started.  Run as `make airflow`
runs it, in a .local of its own (CDCFLOW_LOCAL) on free ports (Airflow's and the Spark server's)."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cdcflow_devtools import process_tree
from cdcflow_devtools.checkout import PROJECT
from cdcflow_devtools.mariadb import free_port
from cdcflow_devtools.spark_connect import port_taken

pytestmark = [pytest.mark.e2e, pytest.mark.airflow]

SERVES_WITHIN_S = 600
STOPS_WITHIN_S = 15  # it took about three minutes


def _cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _running(started: dict[int, str | None]) -> dict[int, str]:
    """Those of `started` still running as the same process (pid and start time)."""
    return {pid: _cmdline(pid) for pid, since in started.items()
            if process_tree.alive(pid) and process_tree.start_time(pid) == since}


def test_ctrl_c_stops_every_process_make_airflow_started(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "CDCFLOW"))}
    env["CDCFLOW_LOCAL"] = str(tmp_path / "local")
    port, spark_port = free_port(), free_port()
    proc = subprocess.Popen([sys.executable, "-m", "cdcflow_devtools.airflow_local", "standalone", "--port", str(port),
                             "--spark-port", str(spark_port)], cwd=PROJECT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()
    started: dict[int, str | None] = {}
    output = []
    try:
        deadline = time.monotonic() + SERVES_WITHIN_S
        while not any("Ctrl-C stops it." in line for line in output):
            assert proc.poll() is None and time.monotonic() < deadline, "".join(output)[-5000:]
            try:
                output.append(lines.get(timeout=1))
            except queue.Empty:
                pass
        assert f"Spark:        sc://127.0.0.1:{spark_port}" in "".join(output)
        started = {pid: process_tree.start_time(pid) for pid in process_tree.descendants(proc.pid)}
        commands = " | ".join(map(_cmdline, started))
        for part in ("airflow standalone", "airflow scheduler", "java", "mariadbd"):
            assert part in commands, commands

        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)  # what Ctrl-C in the terminal sends it (Airflow's own groups get none)
        proc.wait(timeout=STOPS_WITHIN_S)
        while _running(started) and time.monotonic() - t0 < STOPS_WITHIN_S:
            time.sleep(0.1)
        took = time.monotonic() - t0
        assert not _running(started), _running(started)
        assert took < STOPS_WITHIN_S and proc.returncode == 130, (took, proc.returncode)
        assert not port_taken(port) and not port_taken(spark_port)
        said = time.monotonic() + 5  # its last line, read by the thread from a pipe that has closed
        while "stopped in" not in "".join(list(lines.queue)) and time.monotonic() < said:
            time.sleep(0.05)
        assert "stopped in" in "".join(list(lines.queue))
    finally:  # a failing test leaves nothing behind
        for pid in _running(started):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
