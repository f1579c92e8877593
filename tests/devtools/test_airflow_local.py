"""`make demo`, then `make airflow`, in one .local of this module's own (CDCFLOW_LOCAL), as a person
runs them in a checkout:

- the demo shows the run's progress, names its log and says the result;
- `make airflow` (on free ports, Airflow's and the Spark server's) stops within seconds of Ctrl-C,
  and every process it started has ended: Airflow's components, the Spark Connect server, the
  demo's MariaDB pair it started; make says nothing of an error after that clean stop.

The second finds the MariaDB pair installed and Airflow's database migrated by the first, as in a
checkout (each test run alone sets them up itself)."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cdcflow_devtools import process_tree
from cdcflow_devtools.checkout import PROJECT
from cdcflow_devtools.mariadb import MariaDB, free_port
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


@pytest.fixture(scope="module")
def local(tmp_path_factory) -> Path:
    """The module's .local: the demo installs its MariaDB pair and migrates Airflow's database
    there once, `make airflow` after it uses both."""
    return tmp_path_factory.mktemp("checkout") / "local"


def make_env(local: Path) -> dict[str, str]:
    """The environment of a `make` target run in a shell without Airflow's or cdcflow's variables,
    its .local moved to `local`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "CDCFLOW"))}
    env["CDCFLOW_LOCAL"] = str(local)
    return env


def test_make_demo_shows_progress_and_names_its_log(local):
    """The demo as `make demo` runs it."""
    try:
        done = subprocess.run([sys.executable, "-m", "cdcflow_devtools.demo"], cwd=PROJECT, env=make_env(local),
                              capture_output=True, text=True, timeout=900)
    finally:  # the demo leaves its servers running for the person who ran it
        for name in ("upstream", "downstream"):
            MariaDB(local / "mariadb", name=name).stop()
    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    lines = out.splitlines()
    assert len(lines) < 60, out  # was about 200 lines of Airflow's and Spark's logging
    assert not [line for line in lines if re.match(r"^\S+Z \[\w+\s*\]", line)], out  # no raw log line
    log = Path(re.search(r"the whole output in (\S+)", out).group(1))
    assert log.is_file() and "DagRun Finished" in log.read_text()
    assert "    pulled: events " in out and "  DAG run success" in out
    # the table the filter leaves out is said to be left out, and the result agrees
    assert "crm.audit_log  left out by the changefeed's filter (not compared)" in out
    assert "RESULT: every replicated table is consistent" in out and '{"demo_ok": true}' in out
    assert not done.stderr.strip() or "Error" not in done.stderr, done.stderr[-2000:]


def test_ctrl_c_stops_every_process_make_airflow_started(local):
    env = make_env(local)
    port, spark_port = free_port(), free_port()
    # `make airflow` itself (its set-up taken as done: -o setup; this interpreter's venv), in a
    # session of its own as a terminal's foreground job is
    proc = subprocess.Popen(["make", "--no-print-directory", "-o", "setup", "airflow", f"PY={sys.executable}",
                             f"AIRFLOW_PORT={port}", f"SPARK_PORT={spark_port}"], cwd=PROJECT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
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
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in the terminal sends: make and its command (Airflow's
        proc.wait(timeout=STOPS_WITHIN_S)   # own groups get none)
        while _running(started) and time.monotonic() - t0 < STOPS_WITHIN_S:
            time.sleep(0.1)
        took = time.monotonic() - t0
        assert not _running(started), _running(started)
        # make ends by the Ctrl-C as a shell's foreground job does, without "make: *** [...] Error 130"
        # after a stop that went as asked
        assert took < STOPS_WITHIN_S and proc.returncode == -signal.SIGINT, (took, proc.returncode)
        assert not port_taken(port) and not port_taken(spark_port)
        said = time.monotonic() + 5  # its last line, read by the thread from a pipe that has closed
        while "stopped in" not in "".join(list(lines.queue)) and time.monotonic() < said:
            time.sleep(0.05)
        said = "".join(list(lines.queue))
        assert "stopped in" in said and "make: ***" not in said and "Error 130" not in said, said[-3000:]
    finally:  # a failing test leaves nothing behind
        for pid in _running(started):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("left, said", [([], 0), ([4242], 1)])
def test_a_clean_ctrl_c_is_a_success(monkeypatch, left, said):
    """Ctrl-C is how `make airflow` ends: a stop that ended every process returns 0 (it returned 130,
    and make printed "Error 130" under the clean stop), one that left a process running 1."""
    from cdcflow_devtools import airflow_local

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(airflow_local, "_standalone", interrupted)
    monkeypatch.setattr(process_tree, "become_subreaper", lambda: True)
    monkeypatch.setattr(process_tree, "stop_all", lambda groups, grace: left)
    monkeypatch.setattr(signal, "signal", lambda *args: None)  # the test's process keeps its handlers
    assert airflow_local.standalone({}, free_port()) == said
