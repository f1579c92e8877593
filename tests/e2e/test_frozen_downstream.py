"""A downstream that stops answering mid-apply (SIGSTOP: its sockets stay open, nothing is
refused) ends `cdcflow changefeed run` once the sink's read/write timeouts pass: the changefeed
goes to warning with a retryable error, the checkpoint stays below the rows not applied, and
a run after the downstream wakes up converges.  On a MariaDB pair of this module's own: the
session's shared downstream must never be frozen."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import e2e_helpers
import pytest
from e2e_helpers import assert_consistent, backdate, cli_ok, cli_run, query

pytestmark = pytest.mark.e2e

DB = "frozen_down"
ROWS = 20_000  # ~300 transactions of max-txn-row 64: the freeze lands with most of them still to write
TIMEOUT = "3s"  # read-timeout, write-timeout and (connect) timeout of the sink
RUN_LIMIT = 300  # seconds: far above what the timeouts allow, far below "forever"


@pytest.fixture(scope="module")
def own_pair(tmp_path_factory):
    with e2e_helpers.own_pair(tmp_path_factory, "frozen-mariadb") as pair:
        yield pair


def freeze_once_rows_arrive(down, stopped: threading.Event, give_up: threading.Event) -> threading.Thread:
    """SIGSTOP the downstream as soon as apply has written its first rows (the rest not yet)."""
    def watch():
        with down.connect() as conn, conn.cursor() as cur:
            while not give_up.is_set():
                cur.execute(f"SELECT COUNT(*) FROM {DB}.t")
                if cur.fetchone()[0] > 0:
                    os.kill(down.pid, signal.SIGSTOP)
                    stopped.set()
                    return
                time.sleep(0.01)

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    return t


def test_a_frozen_downstream_ends_the_run_in_warning(own_pair, spark, cdcflow_home, capsys):
    up, down = own_pair
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {DB}", f"CREATE DATABASE {DB}",
                  f"CREATE TABLE {DB}.t (id INT PRIMARY KEY, v VARCHAR(40))")
    sink = f"{down.uri}?read-timeout={TIMEOUT}&write-timeout={TIMEOUT}&timeout={TIMEOUT}&worker-count=2&max-txn-row=64"
    changefeed_id = "frozen-down"
    config = cdcflow_home / "frozen.toml"
    config.write_text(f"[filter]\nrules = ['{DB}.*']\n")
    cli_ok(capsys, "changefeed", "create", "-c", changefeed_id, "--source-uri", up.uri, "--sink-uri", sink,
           "--config", str(config))
    up.execute(f"INSERT INTO t SELECT seq, CONCAT('row ', seq) FROM seq_1_to_{ROWS}", database=DB)
    checkpoint = query(capsys, changefeed_id)["checkpoint_tso"]

    stopped, give_up = threading.Event(), threading.Event()
    proc = None
    try:
        watcher = freeze_once_rows_arrive(down, stopped, give_up)
        proc = subprocess.Popen([sys.executable, "-m", "cdcflow.cli", "changefeed", "run", "-c", changefeed_id],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
        try:
            _, err = proc.communicate(timeout=RUN_LIMIT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"`cdcflow changefeed run` still blocked {RUN_LIMIT} s after a downstream froze "
                        f"(timeouts of {TIMEOUT})")
        give_up.set()
        watcher.join(timeout=30)
        assert stopped.is_set(), f"the downstream was never frozen mid-apply: {err[-2000:]}"
        assert proc.returncode == 1, err[-3000:]
        last = [line for line in err.splitlines() if line.strip()][-1]
        assert last.startswith(f"Error: changefeed {changefeed_id}"), err[-3000:]
        assert "timed out" in last and "stage apply" in last, last
        assert "in the row changes committed in (" in last, last  # the commit ts range being written
        assert "read-timeout" in last, last  # the remedy names the knob

        status = query(capsys, changefeed_id)
        assert status["state"] == "warning", status  # retryable: warning and backoff, not failed
        assert status["checkpoint_tso"] == checkpoint  # the window's rows were not all applied
    finally:
        give_up.set()
        if down.pid:
            os.kill(down.pid, signal.SIGCONT)  # never leave a stopped server behind
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

    backdate(changefeed_id, 3600, "next_retry_at")  # the backoff has passed
    rc, err = cli_run(capsys, changefeed_id)
    assert rc == 0, err
    assert query(capsys, changefeed_id)["state"] == "normal"
    assert_consistent(up, down, [DB])
