"""Faults in the middle of a cycle: `cdcflow changefeed run` killed with SIGKILL (its whole
process group, the Spark JVM included) during pull and during apply, the downstream stopped
or killed during apply, two runs of one changefeed at once.  After each, the next run
converges to the upstream, and the checkpoint never passed what was applied.

The moment of each fault is found from what the process and the servers show, not from
the clock: the run's structured log lines on stderr (`window`, `ddl applied`), the
upstream's binlog dump thread (pull is reading), the downstream's process list (a row
statement is being written)."""

from __future__ import annotations

import logging
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pymysql
import pytest
from e2e_helpers import assert_consistent, backdate, cli_run, create_changefeed, query
from stall_proxy import StallProxy, query_containing

from cdcflow_devtools.mariadb import MariaDB
from cdcflow.core import log_line
from cdcflow.store import metastore
from cdcflow.stages import contracts
from cdcflow.stages.cycle import Cycle
from cdcflow.stages.pull import read_sequentially
from cdcflow.store.events import RunFolder

pytestmark = pytest.mark.e2e


# --- a `cdcflow changefeed run` in a process group of its own ------------------------------

class RunProcess:
    """`cdcflow changefeed run -c changefeed_id` as a child in its own session (so its process group is
    it and its Spark JVM); its stderr lines are collected by a thread as they come."""

    def __init__(self, changefeed_id: str):
        self.proc = subprocess.Popen([sys.executable, "-m", "cdcflow.cli", "changefeed", "run", "-c", changefeed_id],
                                     env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, start_new_session=True)
        self.lines: list[str] = []
        self._new: queue.Queue = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))
            self._new.put(line)
        self._new.put(None)

    def events(self, name: str) -> list[dict]:
        """The structured log lines (stages.cycle.Cycle.event) of one event."""
        events = (log_line.parse(line) for line in self.lines)
        return [e for e in events if e is not None and e["event"] == name]

    def wait_for(self, what, timeout: float = 300) -> bool:
        """Until `what()` is true (checked on each new stderr line and every 20 ms); False when
        the process ends first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if what():
                return True
            try:
                if self._new.get(timeout=0.02) is None:
                    return bool(what())
            except queue.Empty:
                pass
        raise AssertionError(f"gave up waiting after {timeout} s; stderr so far:\n" + "\n".join(self.lines[-30:]))

    def kill_group(self) -> None:
        """SIGKILL to the whole process group, then wait until none of it is left."""
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=60)
        self._reader.join(timeout=60)
        deadline = time.monotonic() + 60
        while _group_members(self.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _group_members(self.proc.pid), "the Spark JVM outlived its killed run"

    def finish(self, timeout: float = 600) -> int:
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            # what the run said last, and what of it is still there, before the test's cleanup kills it
            members = "\n".join(f"{pid} {_command(pid)}" for pid in _group_members(self.proc.pid))
            raise AssertionError(f"the run did not end within {timeout} s; its process group:\n{members}\n"
                                 "stderr so far:\n" + "\n".join(self.lines[-40:])) from None
        self._reader.join(timeout=60)
        return self.proc.returncode

    def stop_if_running(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=60)


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:200]
    except OSError:
        return "(gone)"


def _group_members(pgid: int) -> list[int]:
    """Live processes (not zombies) of a process group."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != b"Z":
            members.append(int(entry))
    return members


def _killed_run(changefeed_id: str) -> metastore.RunState:
    (run,) = [r for r in metastore.recent_runs(changefeed_id, 5) if r.status == "running"]
    return run


def _fresh(capsys, up, down, changefeed_id: str, schema: str, *create: str, **uris: str) -> None:
    """A changefeed of one schema, created anew upstream after the changefeed's start;
    `uris`: create_changefeed's other ways to reach the servers."""
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {schema}")
    create_changefeed(capsys, up, down, changefeed_id, f"[filter]\nrules = ['{schema}.*']\n", **uris)
    up.execute(f"CREATE DATABASE {schema}", *create)


# --- SIGKILL during pull ----------------------------------------------------------------

def test_sigkill_during_pull_then_run_again_converges(mariadb_pair, spark, cdcflow_home, capsys):
    """The changefeed reaches its upstream through a proxy that holds every binlog reader after
    its first 64 KiB, so the kill lands while pull is reading, however fast pull is."""
    up, down = mariadb_pair
    s = "fault_pull"
    proxy = StallProxy(up.port)
    try:
        _fresh(capsys, up, down, "fault-pull", s, source_uri=proxy.uri(up.uri))
        _sigkill_during_pull(capsys, up, down, s, proxy)
    finally:
        proxy.close()


def _sigkill_during_pull(capsys, up, down, s: str, proxy: StallProxy) -> None:
    up.execute(f"CREATE TABLE {s}.t (id INT PRIMARY KEY, v INT, pad VARCHAR(40))",
               f"INSERT INTO {s}.t SELECT seq, seq, MD5(seq) FROM seq_1_to_30000",
               f"UPDATE {s}.t SET v = v + 1, pad = CONCAT('u', pad)",
               f"DELETE FROM {s}.t WHERE id % 3 = 0", database=s)
    before = metastore.get_feed("fault-pull")
    run = RunProcess("fault-pull")
    try:
        # prepare is done (the window is fixed, the lease taken) and the reader is held mid-stream:
        # the proxy holds the rest of the binlog pull asked for.  Not the server's dump thread: the
        # server may have sent the whole window into the sockets' buffers already, and a dump to a
        # stop position then ends (the window is about 4 MB, the buffers grow to about as much)
        assert run.wait_for(lambda: run.events("window") and proxy.stalled.is_set()), \
            "\n".join(run.lines)
        run.kill_group()
    finally:
        run.stop_if_running()
    proxy.release()
    assert not run.events("pulled"), "the kill came after pull had ended"
    killed = _killed_run("fault-pull")
    assert "pull" not in killed.stats  # pull had not recorded a result
    window = RunFolder(None, "fault-pull", killed.run_id).read_json("window.json")
    assert window.get("pulled") is None
    feed = metastore.get_feed("fault-pull")
    assert (feed.checkpoint_ts, feed.state) == (before.checkpoint_ts, "normal")
    assert feed.lease_owner and f":{run.proc.pid}:" in feed.lease_owner  # the dead run holds the lease ...

    rc, err = cli_run(capsys, "fault-pull")  # ... which the next run on this host takes over
    assert rc == 0, err
    assert_consistent(up, down, [s])
    status = query(capsys, "fault-pull")
    assert status["state"] == "normal" and status["checkpoint_tso"] > before.checkpoint_ts
    assert metastore.get_feed("fault-pull").lease_owner is None
    up.execute(f"DROP DATABASE {s}")
    down.execute(f"DROP DATABASE IF EXISTS {s}")


# --- SIGKILL during apply ---------------------------------------------------------------

SEGMENTS = 5


def test_sigkill_during_apply_then_run_again_converges(mariadb_pair, spark, cdcflow_home, capsys, tmp_path):
    """The kill lands while apply writes the segments between DDLs: the changefeed reaches its
    downstream through a proxy that holds the answer to the third ADD COLUMN, so apply cannot
    end before the kill however fast it is.  The checkpoint then is at most what reached the
    downstream: every DDL at or below it ran there, and every row of the insert-only `log`
    table committed at or below it is there."""
    up, down = mariadb_pair
    s = "fault_apply"
    proxy = StallProxy(down.port, hold=query_containing("ADD COLUMN", "c2"), pass_bytes=0)
    try:
        _fresh(capsys, up, down, "fault-apply", s, f"CREATE TABLE {s}.t (id INT PRIMARY KEY, v INT, s VARCHAR(20))",
               f"CREATE TABLE {s}.log (id INT PRIMARY KEY, segment INT)", sink_uri=proxy.uri(down.uri))
        _sigkill_during_apply(capsys, up, down, s, proxy, tmp_path)
    finally:
        proxy.close()


def _sigkill_during_apply(capsys, up, down, s: str, proxy: StallProxy, tmp: Path) -> None:
    n = 0
    for i in range(SEGMENTS):
        up.execute(f"INSERT INTO {s}.t (id, v, s) SELECT seq + {i * 3000}, seq, 'r{i}' FROM seq_1_to_3000",
                   f"UPDATE {s}.t SET v = v + 1 WHERE id % 3 = {i % 3}",
                   f"UPDATE {s}.t SET id = id + 100000 WHERE id % 17 = {i}",  # key changes
                   database=s)
        for _ in range(20):  # one transaction each, ids rising with commit ts
            n += 1
            up.execute(f"INSERT INTO {s}.log VALUES ({n}, {i})")
        up.execute(f"ALTER TABLE {s}.t ADD COLUMN c{i} INT DEFAULT {i}",
                   f"DELETE FROM {s}.t WHERE id % 11 = {i}")
    run = RunProcess("fault-apply")
    try:
        # two ADD COLUMNs have run and apply waits for the third's answer: it is in the middle
        # of its segments
        assert run.wait_for(lambda: len(_added_columns(run)) >= 2 and proxy.stalled.is_set()), \
            "the run ended before its third ADD COLUMN"
        run.kill_group()
    finally:
        run.stop_if_running()
    proxy.release()
    assert not run.events("applied"), "the kill came after apply had ended"
    killed = _killed_run("fault-apply")
    assert "apply" not in killed.stats
    checkpoint = metastore.get_feed("fault-apply").checkpoint_ts
    _assert_applied_up_to(down, s, killed.run_id, checkpoint, tmp)

    rc, err = cli_run(capsys, "fault-apply")
    assert rc == 0, err
    assert_consistent(up, down, [s])
    assert query(capsys, "fault-apply")["state"] == "normal"
    up.execute(f"DROP DATABASE {s}")
    down.execute(f"DROP DATABASE IF EXISTS {s}")


def _added_columns(run: RunProcess) -> list[dict]:
    return [e for e in run.events("ddl applied") if "column" in e["name"].lower()]


def _window_read_again(changefeed_id: str, run_id: str, tmp: Path) -> list[dict]:
    """The events of a run's window, read again from the upstream as its pull read them (the
    window it recorded, the same reader): the killed process kept a window this small in memory
    without writing it (store.events.Keeper), so the run folder holds no events to look at."""
    import pyarrow.parquet as pq

    cycle = Cycle.load(changefeed_id, run_id)
    window = contracts.WINDOW.read(cycle.folder)
    again = SimpleNamespace(source=cycle.source, config=cycle.config, engine=SimpleNamespace(window_kept=lambda: None),
                            changefeed_id=changefeed_id, folder=RunFolder(str(tmp), changefeed_id, run_id))
    read_sequentially(again, window, 4547)
    return pq.read_table(again.folder.path("raw")).to_pylist()


def _assert_applied_up_to(down, s: str, run_id: str, checkpoint: int, tmp: Path) -> None:
    raw = _window_read_again("fault-apply", run_id, tmp)
    ddls = [e for e in raw if e["op"] == "ddl" and e["commit_ts"] <= checkpoint and "ADD COLUMN" in e["ddl_query"]]
    assert ddls, "the checkpoint did not pass a single DDL before the kill"
    columns = {r[0] for r in down.query(f"SELECT COLUMN_NAME FROM information_schema.COLUMNS "
                                        f"WHERE TABLE_SCHEMA = '{s}' AND TABLE_NAME = 't'")}
    for e in ddls:
        column = e["ddl_query"].split("ADD COLUMN ")[1].split()[0]
        assert column in columns, f"checkpoint {checkpoint} is past {e['ddl_query']!r}, which never ran downstream"
    logged = sum(1 for e in raw if e["table"] == "log" and e["op"] == "insert" and e["commit_ts"] <= checkpoint)
    (present,) = down.query(f"SELECT COUNT(*) FROM {s}.log WHERE id <= {logged}")[0]
    assert present == logged, f"checkpoint {checkpoint} is past rows of {s}.log the downstream lacks"


# --- Ctrl-C in the middle of apply ------------------------------------------------------

def test_ctrl_c_during_apply_leaves_the_changefeed_as_it_was(mariadb_pair, spark, cdcflow_home, capsys):
    """An operator's Ctrl-C (SIGINT to the run's process group, as a terminal sends it) while
    apply waits for the downstream's answer to the second ADD COLUMN, which a proxy holds: the
    command says where the changefeed stands and exits 130; the run is recorded as interrupted
    in apply; the changefeed stays normal, with no error and no backoff (an interruption is not
    the changefeed's failure); the next run converges."""
    up, down = mariadb_pair
    s = "fault_int"
    proxy = StallProxy(down.port, hold=query_containing("ADD COLUMN", "c1"), pass_bytes=0)
    try:
        _fresh(capsys, up, down, "fault-int", s, f"CREATE TABLE {s}.t (id INT PRIMARY KEY, v INT)",
               sink_uri=proxy.uri(down.uri))
        for i in range(3):
            up.execute(f"INSERT INTO {s}.t (id, v) SELECT seq + {i * 1000}, seq FROM seq_1_to_1000",
                       f"UPDATE {s}.t SET v = -v WHERE id % 3 = {i}",
                       f"ALTER TABLE {s}.t ADD COLUMN c{i} INT DEFAULT {i}", database=s)
        run = RunProcess("fault-int")
        try:
            assert run.wait_for(proxy.stalled.is_set), "the run ended before its second ADD COLUMN"
            os.killpg(run.proc.pid, signal.SIGINT)
            rc = run.finish(timeout=120)
        finally:
            run.stop_if_running()
        proxy.release()
        assert rc == 130, run.lines[-20:]
        assert "changefeed fault-int: the cycle was interrupted; the changefeed is normal at checkpoint" \
            in run.lines[-1] and "nothing is lost" in run.lines[-1], run.lines[-5:]
        (interrupted,) = [r for r in metastore.recent_runs("fault-int", 5) if r.error]
        assert interrupted.status == "failed" and interrupted.stats["failed_stage"] == "apply"
        assert "CDCFLOW:ErrCycleInterrupted" in interrupted.error
        feed = query(capsys, "fault-int")
        assert feed["state"] == "normal" and not feed.get("error"), feed
        rc, err = cli_run(capsys, "fault-int")
        assert rc == 0, err
        assert_consistent(up, down, [s])
    finally:
        proxy.close()
        for server in (up, down):
            server.execute(f"DROP DATABASE IF EXISTS {s}")


# --- the downstream stopped or killed in the middle of apply ----------------------------

@pytest.fixture(scope="module")
def own_downstream(tmp_path_factory):
    """A downstream of this module's own, which its tests stop and start again."""
    server = MariaDB(tmp_path_factory.mktemp("fault-down"), name="downstream", server_id=3).start()
    try:
        yield server
    finally:
        server.stop()


class _RowsArriving:
    """True once the first rows of `table` are downstream (apply writes its first segment),
    polled on one connection; False while the server does not answer."""

    def __init__(self, down, table: str):
        self.down, self.table, self.conn = down, table, None

    def __call__(self) -> bool:
        try:
            self.conn = self.conn or self.down.connect()
            with self.conn.cursor() as cur:
                cur.execute(f"SELECT EXISTS (SELECT 1 FROM {self.table})")
                return bool(cur.fetchone()[0])
        except pymysql.MySQLError:
            return False

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


@pytest.mark.parametrize("how", ["shutdown", "sigkill"])
def test_downstream_down_during_apply_warns_and_the_next_cycle_converges(mariadb_pair, own_downstream, how,
                                                                         spark, cdcflow_home, capsys):
    """`shutdown`: a clean shutdown once the first DDL (CREATE DATABASE) has run, so the next
    DDL finds its connection gone; `sigkill`: mariadbd killed once the first segment's rows
    are there and apply waits for the answer to the first ADD COLUMN, which a proxy holds (so
    apply cannot end before the kill however fast it is).  The cycle ends in warning (a
    retryable error, the checkpoint where apply got to); the server comes back on its datadir
    and port, and the next cycle converges."""
    proxy = StallProxy(own_downstream.port, hold=query_containing("ADD COLUMN", "c0"), pass_bytes=0) \
        if how == "sigkill" else None
    try:
        _downstream_down_during_apply(capsys, mariadb_pair[0], own_downstream, how, proxy)
    finally:
        if proxy:
            proxy.close()


def _downstream_down_during_apply(capsys, up, down, how: str, proxy: StallProxy | None) -> None:
    s = f"fault_down_{how}"
    changefeed_id = f"fault-down-{how}"
    _fresh(capsys, up, down, changefeed_id, s, f"CREATE TABLE {s}.t (id INT PRIMARY KEY, v INT, pad VARCHAR(40))",
           **({"sink_uri": proxy.uri(down.uri)} if proxy else {}))
    for i in range(4):
        up.execute(f"INSERT INTO {s}.t (id, v, pad) SELECT seq + {i * 4000}, seq, MD5(seq) FROM seq_1_to_4000",
                   f"UPDATE {s}.t SET v = -v WHERE id % 5 = {i}",
                   f"ALTER TABLE {s}.t ADD COLUMN c{i} VARCHAR(10) DEFAULT 'd{i}'", database=s)
    port = down.port
    stopped = threading.Event()

    rows_arriving = _RowsArriving(down, f"{s}.t")

    def stop_downstream():
        rows_arriving.close()
        if how == "shutdown":
            down.stop()
        else:
            down.kill()
            proxy.release()  # what the dead server had sent, then the end of its connection
        stopped.set()

    if how == "shutdown":
        trigger = _OnEvent("ddl applied", stop_downstream)
    else:
        trigger = _Watcher(lambda: proxy.stalled.is_set() and rows_arriving(), stop_downstream)
    with trigger:
        rc, err = cli_run(capsys, changefeed_id)
    assert stopped.is_set(), "the downstream was not stopped during apply"
    assert rc == 1, err
    status = query(capsys, changefeed_id)
    assert status["state"] == "warning", status
    message = status["error"]["message"]
    # no advice to skip anything: nothing was refused, the next cycle retries
    assert "skip-ddl" not in message and "next cycle" in message, message
    assert status["error"]["message"] in err

    down.start()
    assert down.port == port
    backdate(changefeed_id, 3600, "next_retry_at")  # the backoff is over
    rc, err = cli_run(capsys, changefeed_id)
    assert rc == 0, err
    assert_consistent(up, down, [s])
    assert query(capsys, changefeed_id)["state"] == "normal"
    up.execute(f"DROP DATABASE {s}")
    down.execute(f"DROP DATABASE IF EXISTS {s}")


class _OnEvent:
    """Calls `action` (in the cycle's own thread) at the first structured log line of an event."""

    def __init__(self, event: str, action):
        self.event, self.action = event, action
        self.handler = logging.Handler()
        self.handler.emit = self._emit
        self.fired = False

    def _emit(self, record) -> None:
        event = log_line.parse(record.getMessage())
        if not self.fired and event is not None and event["event"] == self.event:
            self.fired = True
            self.action()

    def __enter__(self):
        logger = logging.getLogger("cdcflow")
        self.level = logger.level
        logger.setLevel(logging.INFO)  # the events are INFO lines
        logger.addHandler(self.handler)
        return self

    def __exit__(self, *exc):
        logger = logging.getLogger("cdcflow")
        logger.removeHandler(self.handler)
        logger.setLevel(self.level)


class _Watcher:
    """Polls `condition` in a thread while the block runs; calls `action` once it holds."""

    def __init__(self, condition, action):
        self.condition, self.action = condition, action
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self.done.is_set():
            if self.condition():
                self.action()
                return
            time.sleep(0.01)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join(timeout=120)


# --- two runs of one changefeed at once -------------------------------------------------

def test_two_runs_at_once_one_works_the_other_refuses_in_one_line(mariadb_pair, cdcflow_home, capsys):
    up, down = mariadb_pair
    s = "fault_twice"
    _fresh(capsys, up, down, "fault-twice", s, f"CREATE TABLE {s}.t (id INT PRIMARY KEY, v INT)",
           f"INSERT INTO {s}.t SELECT seq, seq FROM {s}.seq_1_to_2000")
    assert cli_run(capsys, "fault-twice")[0] == 0  # the table exists downstream, to be locked below
    up.execute(f"UPDATE {s}.t SET v = v * 2", f"INSERT INTO {s}.t VALUES (5000, 5000)")
    # The run that takes the lease must still hold it when the other asks: a cycle of this window
    # can end in a second, before the other process has started.  A row lock downstream holds
    # the winner's apply (every row changes) until one of the two has ended: the one refused.
    blocker = down.connect(s)
    blocker.begin()
    blocker.cursor().execute("SELECT * FROM t WHERE id = 1 FOR UPDATE")
    runs = [RunProcess("fault-twice"), RunProcess("fault-twice")]
    try:
        deadline = time.monotonic() + 300
        while all(r.proc.poll() is None for r in runs) and time.monotonic() < deadline:
            time.sleep(0.05)
        blocker.rollback()
        codes = [r.finish() for r in runs]
    finally:
        blocker.close()
        for r in runs:
            r.stop_if_running()
    assert sorted(codes) == [0, 1], [r.lines[-5:] for r in runs]
    winner, loser = runs if codes[0] == 0 else runs[::-1]
    lines = [line for line in loser.lines if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "another cycle holds the lease" in lines[0], lines
    assert loser.proc.stdout.read() == ""
    assert winner.events("applied") and not loser.events("window")
    assert_consistent(up, down, [s])
    feed = metastore.get_feed("fault-twice")
    assert feed.state == "normal" and feed.lease_owner is None and feed.error is None
    up.execute(f"DROP DATABASE {s}")
    down.execute(f"DROP DATABASE IF EXISTS {s}")
