"""`cdcflow changefeed run --follow`: cycles back to back in one process, each as soon as the
upstream's binlog moves, until the time is up or the changefeed stops."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager

import pymysql
import pytest
from e2e_helpers import assert_consistent, schema_changefeed

from cdcflow import cli
from cdcflow.store import metastore

pytestmark = pytest.mark.e2e

S = "e2e_follow"


def _follow(changefeed_id: str, *extra: str, preexec_fn=None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "cdcflow.cli", "changefeed", "run", "-c", changefeed_id,
                             "--follow", *extra], env=dict(os.environ), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=preexec_fn)


@contextmanager
def _following(changefeed_id: str, *extra: str, preexec_fn=None):
    """A follower (_follow) for the block, killed at its end if it is still running then."""
    proc = _follow(changefeed_id, *extra, preexec_fn=preexec_fn)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()


def _arrives(down, row_id: int, proc: subprocess.Popen, timeout: float = 120, table: str = f"{S}.t") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"following ended early: {proc.stderr.read()[-3000:]}"
        try:
            if down.query(f"SELECT COUNT(*) FROM {table} WHERE id = {row_id}")[0][0]:
                return
        except pymysql.err.ProgrammingError:
            pass  # the table is not there yet: the first cycle creates it
        time.sleep(0.05)
    raise AssertionError(f"row {row_id} did not arrive within {timeout} s")


def test_follow_applies_each_change_in_one_process_and_ends_when_paused(mariadb_pair, cdcflow_home, capsys):
    up, down = mariadb_pair
    schema_changefeed(capsys, up, down, "follow", S, f"CREATE DATABASE {S}",
                      f"CREATE TABLE {S}.t (id INT PRIMARY KEY, v INT, s VARCHAR(20))")
    with _following("follow", "600") as proc:
        for i in range(1, 6):  # each change written only once the one before it is downstream
            up.execute(f"INSERT INTO {S}.t VALUES ({i}, {i}, 'r{i}')", f"UPDATE {S}.t SET v = v + 1 WHERE id < {i}")
            _arrives(down, i, proc)
        assert cli.main(["changefeed", "pause", "-c", "follow"]) == 0
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    cycles = [json.loads(line) for line in out.splitlines()]
    # one cycle per change at least (each waited for), all of this one process, none idle
    assert len(cycles) >= 5 and len({c["run_id"] for c in cycles}) == len(cycles)
    assert all(c["pull"]["pulled"] > 0 for c in cycles)
    assert {r.run_id for r in metastore.recent_runs("follow", 100)} >= {c["run_id"] for c in cycles}
    assert err.splitlines()[-1] == f"Changefeed follow: {len(cycles)} cycle(s), 0 error(s); " \
                                   f"changefeed follow is stopped; state stopped"
    assert_consistent(up, down, [S])
    up.execute(f"DROP DATABASE {S}")
    down.execute(f"DROP DATABASE IF EXISTS {S}")


def test_follow_for_a_time_runs_nothing_while_nothing_is_written(mariadb_pair, cdcflow_home, capsys):
    up, down = mariadb_pair
    schema_changefeed(capsys, up, down, "follow-idle", "e2e_follow_idle")
    assert cli.main(["changefeed", "run", "-c", "follow-idle"]) == 0  # up to the head: nothing left behind
    capsys.readouterr()
    started = time.monotonic()
    proc = _follow("follow-idle", "3")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert time.monotonic() - started >= 3
    assert out == "" and err.splitlines()[-1] == ("Changefeed follow-idle: 0 cycle(s), 0 error(s); followed for 3 s; "
                                                  "state normal")


def test_a_new_binlog_with_no_transaction_in_it_is_read_once_not_again_and_again(mariadb_pair, cdcflow_home, capsys):
    """FLUSH BINARY LOGS (as a restart does) starts a binlog whose header events put the head past
    the checkpoint's position with no transaction to read: one cycle reads them and moves the
    checkpoint's position to the head, and the follower waits for the next change (it had run
    about 30 cycles a second over them, each recorded, the position never reaching the head),
    which it applies as usual."""
    up, down = mariadb_pair
    schema_changefeed(capsys, up, down, "follow-flush", "e2e_follow_flush", "CREATE DATABASE e2e_follow_flush",
                      "CREATE TABLE e2e_follow_flush.t (id INT PRIMARY KEY)")
    assert cli.main(["changefeed", "run", "-c", "follow-flush"]) == 0  # up to the head: nothing left behind
    capsys.readouterr()
    head = up.new_binlog()
    with _following("follow-flush", "600") as proc:
        time.sleep(4)
        runs = metastore.recent_runs("follow-flush", 100)[:-1]
        assert len(runs) == 1, (f"{len(runs)} cycles over a new binlog's header alone: "
                                f"{[(r.start_pos, r.status, r.error) for r in runs]}")
        at = metastore.get_feed("follow-flush").checkpoint_pos
        assert (at["file"], at["pos"]) == head
        up.execute("INSERT INTO e2e_follow_flush.t VALUES (1)")
        _arrives(down, 1, proc, 60, "e2e_follow_flush.t")
        assert cli.main(["changefeed", "pause", "-c", "follow-flush"]) == 0
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert_consistent(up, down, ["e2e_follow_flush"])


def test_follow_and_dry_run_together_are_refused_in_one_line(mariadb_pair, cdcflow_home, capsys):
    up, down = mariadb_pair
    schema_changefeed(capsys, up, down, "follow-dry", "e2e_follow_dry")
    capsys.readouterr()
    assert cli.main(["changefeed", "run", "-c", "follow-dry", "--follow", "--dry-run"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "changefeed follow-dry" in err and "without --follow" in err
    assert metastore.recent_runs("follow-dry") == []  # nothing ran


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_a_stopped_follower_ends_between_or_after_its_cycles_and_leaves_no_lease(mariadb_pair, cdcflow_home,
                                                                                  capsys, stop):
    """Started as a shell starts a background job (SIGINT ignored), a follower still ends on
    SIGINT, and on SIGTERM as a service manager stops it: after the cycle under way, whose
    record ends as any cycle's (none failed), the lease let go, exit status 0."""
    up, down = mariadb_pair
    cid = f"follow-{stop.name.lower()}"
    schema_changefeed(capsys, up, down, cid, S + "_stop", f"CREATE DATABASE {S}_stop",
                      f"CREATE TABLE {S}_stop.t (id INT PRIMARY KEY, v INT, s VARCHAR(20))")
    with _following(cid, "600", preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) as proc:
        up.execute(f"INSERT INTO {S}_stop.t VALUES (1, 1, 'one')")
        deadline = time.monotonic() + 120
        while not metastore.recent_runs(cid, 1) and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(stop)
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert f"Changefeed {cid}: {stop.name}: stopping after the cycle under way" in err
    assert err.splitlines()[-1].endswith(" 0 error(s); stopped as asked; state normal"), err
    feed = metastore.get_feed(cid)
    assert feed.lease_owner is None and feed.state == "normal" and feed.error is None
    assert [r.status for r in metastore.recent_runs(cid, 100)] == ["done"] * len(out.splitlines())
    up.execute(f"DROP DATABASE {S}_stop")
    down.execute(f"DROP DATABASE IF EXISTS {S}_stop")
