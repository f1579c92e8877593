"""Helpers for end-to-end tests: create a changefeed on the shared MariaDB pair, run cycles."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager

from cdcflow import cli
from cdcflow.changefeed import live_lag
from cdcflow_devtools.compare import compare
from cdcflow.store import metastore


# Statements of two rows from one writer: the type and charset windows are small, and only a
# full batch of max-txn-row rows goes as a prepared statement (row_writer.RowWriter._prepared),
# so with the default 256 rows spread over 4 writers their rows would all go as text. With 2 rows
# and one writer, most go prepared and an odd row of a table as text.
PREPARED_BATCHES = "[sink]\nmax-txn-row = 2\nworker-count = 1\n"


@contextmanager
def prepared_executions(down, at_least: int = 1):
    """Asserts the block's cycles had the downstream execute at least `at_least` prepared
    statements (the binary protocol: COM_STMT_EXECUTE)."""
    def executed() -> int:
        return int(down.query("SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'")[0][1])

    before = executed()
    yield
    assert executed() - before >= at_least, "no row went as a prepared statement"


@contextmanager
def own_pair(tmp_path_factory, name: str):
    """A MariaDB pair (upstream, downstream) of a test module's own, for tests that stop,
    freeze or purge what the session's shared pair must keep."""
    from cdcflow_devtools.mariadb import start_pair

    up, down = start_pair(tmp_path_factory.mktemp(name))
    try:
        yield up, down
    finally:
        up.stop()
        down.stop()


def next_second(after: float | None = None) -> None:
    """Wait until the clock is in a later whole second than `after` (now by default): binlog
    events and files carry whole seconds, so what happens next dates after what came before."""
    mark = int(time.time() if after is None else after)
    while time.time() < mark + 1:
        time.sleep(max(0.0, mark + 1.01 - time.time()))


def purge_binlogs_to(server, head: str, wait_s: float = 30) -> None:
    """PURGE BINARY LOGS TO `head`, again until it took: a binlog a dump thread still reads is
    not purged (only a warning), and the server ends the dump thread of a reader that closed
    its connection (an earlier cycle's) a moment later, later still on a loaded machine."""
    deadline = time.monotonic() + wait_s
    server.execute(f"PURGE BINARY LOGS TO '{head}'")
    while server.query("SHOW BINARY LOGS")[0][0] != head and time.monotonic() < deadline:
        time.sleep(0.2)
        server.execute(f"PURGE BINARY LOGS TO '{head}'")
    assert server.query("SHOW BINARY LOGS")[0][0] == head, f"binlogs before {head} still there after {wait_s} s"


def create_changefeed(capsys, up, down, changefeed_id: str, config: str = "", *extra: str,
                      source_uri: str | None = None, sink_uri: str | None = None) -> dict:
    """`cdcflow changefeed create` from `up` to `down` (or through `source_uri` / `sink_uri`,
    other ways to reach them)."""
    args = ["changefeed", "create", "-c", changefeed_id, "--source-uri", source_uri or up.uri,
            "--sink-uri", sink_uri or down.uri]
    if config:
        path = _write_config(changefeed_id, config)
        args += ["--config", str(path)]
    capsys.readouterr()
    rc = cli.main(args + list(extra))
    out = capsys.readouterr()
    assert rc == 0, out.err
    return json.loads(out.out.split("\n", 2)[2])


def schema_changefeed(capsys, up, down, changefeed_id: str, schema: str, *upstream: str) -> None:
    """A changefeed of one schema of its own (dropped first on both sides), then `upstream`'s
    statements run after its creation."""
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {schema}")
    create_changefeed(capsys, up, down, changefeed_id, f"[filter]\nrules = ['{schema}.*']\n")
    if upstream:
        up.execute(*upstream)


def fresh_schema(up, down, schema: str, *ddl: str) -> None:
    """`schema` dropped and created anew on both servers, `ddl` run in it on both: the tables a
    changefeed created afterwards finds on both sides."""
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {schema}", f"CREATE DATABASE {schema}")
        if ddl:
            s.execute(*ddl, database=schema)


def replicate_workload(capsys, up, down, changefeed_id: str, schema: str, workload, *before: str) -> None:
    """`schema` made anew on both servers (`before` run in it on both), a changefeed of it, then
    `workload` run upstream in it and one cycle, which must succeed."""
    fresh_schema(up, down, schema, *before)
    create_changefeed(capsys, up, down, changefeed_id, f"[filter]\nrules = ['{schema}.*']\n")
    up.execute(*workload, database=schema)
    rc, err = cli_run(capsys, changefeed_id)
    assert rc == 0, err


def _write_config(changefeed_id: str, text: str):
    from cdcflow.config.spec_store import home

    path = home() / f"{changefeed_id}.toml"
    path.write_text(text)
    return path


def query(capsys, changefeed_id: str) -> dict:
    return cli_json(capsys, "changefeed", "query", "-c", changefeed_id)


def cli_json(capsys, *args: str) -> dict:
    """A command that must succeed: the JSON it prints."""
    capsys.readouterr()
    rc = cli.main(list(args))
    out = capsys.readouterr()
    assert rc == 0, out.err
    return json.loads(out.out)


def assert_consistent(up, down, schemas: list[str], allow: dict[str, set[str]] | None = None) -> None:
    """The downstream holds what the upstream does, definitions included; `allow` as compare's:
    the aspects of tables' definitions a test sets up to differ."""
    with up.connect() as u, down.connect() as d:
        diffs = compare(u, d, schemas=schemas, allow=allow)
    assert not diffs, "\n".join(str(x) for x in diffs)


def cli_run(capsys, changefeed_id: str) -> tuple[int, str]:
    """`cdcflow changefeed run -c changefeed_id` (reusing the test's Spark session): (exit code, stderr)."""
    capsys.readouterr()
    rc = cli.main(["changefeed", "run", "-c", changefeed_id])
    return rc, capsys.readouterr().err


def run_in_own_process(changefeed_id: str, *extra: str, timeout: float = 600,
                       env: dict | None = None) -> subprocess.CompletedProcess:
    """`cdcflow changefeed run` in a process of its own, as a user runs it (no test session up in it)."""
    return subprocess.run([sys.executable, "-m", "cdcflow.cli", "changefeed", "run", "-c", changefeed_id, *extra],
                          capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})


def cycle_result(proc: subprocess.CompletedProcess) -> dict:
    """The cycle's result a run_in_own_process printed (it must have succeeded)."""
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout[proc.stdout.index("{"):])


def cli_ok(capsys, *args: str) -> None:
    capsys.readouterr()
    rc = cli.main(list(args))
    assert rc == 0, capsys.readouterr().err


def run_fails(capsys, changefeed_id: str, state: str = "failed") -> tuple[dict, str, int | None]:
    """Run one cycle that must fail, leaving the changefeed in `state` (failed, or warning for a
    retryable error): (status, error message, its commit ts)."""
    import re

    rc, err = cli_run(capsys, changefeed_id)
    status = query(capsys, changefeed_id)
    assert rc == 1 and status["state"] == state, err
    message = status["error"]["message"]
    assert message in err
    at = re.search(r"commit ts (\d+)", message)  # a value error names its row's; others name a range
    return status, message, int(at.group(1)) if at else None


def dead_pid() -> int:
    """The pid of a process that has ended: a lease owner naming it is free to take over."""
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                           text=True, check=True)
    return int(child.stdout)


def orphan_lease(changefeed_id: str) -> None:
    """Make the changefeed's lease look held by a process of this host that is gone, as a DAG
    task's lease is once the task's process has ended."""
    owner = metastore.lease_holder(changefeed_id)
    run_key = owner.split(":", 2)[2]
    metastore.update_feed(changefeed_id, lease_owner=f"{socket.gethostname()}:{dead_pid()}:{run_key}")


def backdate(changefeed_id: str, seconds: float, *fields: str) -> None:
    """Move a changefeed's clock fields into the past, so a time-based rule (backoff, stuck
    duration, gc-ttl) comes due without the test sleeping."""
    feed = metastore.get_feed(changefeed_id)
    metastore.update_feed(changefeed_id, **{f: getattr(feed, f) - seconds for f in fields})


def tables(db, schema: str) -> list[str]:
    """The tables of `schema` on a server, sorted."""
    return sorted(r[0] for r in db.query(f"SHOW TABLES FROM `{schema}`"))


def index_jobs_of(changefeed_id: str) -> list:
    """Every index job recorded for the changefeed, finished ones too (cdcflow reads only the pending)."""
    from cdcflow.store.engine import engine
    from cdcflow.store.index_jobs import IndexJob
    from cdcflow.store.tables import index_jobs

    with engine().connect() as c:
        return [IndexJob(**r) for r in c.select(index_jobs, "changefeed_id = ?", changefeed_id,
                                                order="job_id").mappings()]


# what a stage measured, and where it ran (stages.engine), not what it decided
_TIMINGS = ("seconds", "per_second", "ran_in", "segments_in_")
# how apply's rows were cut among its writers: Spark's partitions and the driver's threads cut them
# differently (the same rows, in other statements)
_SPREAD = ("statements", "rows_held", "workers",
           # whether pull kept the window for stages reading it in its process (none do in Spark)
           "kept_in_process")


def decisions(changefeed_id: str, places_differ: bool = False) -> dict:
    """What the last cycle's Spark stages decided (counts, segments, DDL), without their timings:
    equal for the same window however the stages were launched (`places_differ`: and wherever
    their rows were written, without how the writers' shares were cut)."""
    stats = metastore.recent_runs(changefeed_id, limit=1)[0].stats
    left_out = _TIMINGS + (_SPREAD if places_differ else ())
    return {stage: {k: v for k, v in (stats.get(stage) or {}).items() if not any(t in k for t in left_out)}
            for stage in ("pull", "filter", "barrier", "apply")}


def mixed_window(s: str) -> tuple[str, list[str]]:
    """A changefeed config and a window for comparing launchers: two tables (a primary key and
    a NOT NULL unique key), key updates, NULLs, a value filter, DDL between the rows."""
    config = (f"[filter]\nrules = ['{s}.*']\n[[filter.event-filters]]\nmatcher = ['{s}.t']\n"
              "ignore-insert-value-expr = \"v = 'skip'\"\n")
    return config, [
        f"CREATE TABLE {s}.t (id INT PRIMARY KEY, v VARCHAR(20), n INT)",
        f"CREATE TABLE {s}.u (id INT NOT NULL, code VARCHAR(10) NOT NULL, UNIQUE KEY (code), w INT)",
        f"INSERT INTO {s}.t VALUES (1, 'one', 1), (2, 'two', 2), (3, 'skip', 3), (4, NULL, NULL)",
        f"INSERT INTO {s}.u VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30)",
        f"UPDATE {s}.t SET id = 40 WHERE id = 4",
        f"UPDATE {s}.u SET code = 'z' WHERE code = 'a'",
        f"ALTER TABLE {s}.t ADD COLUMN x INT DEFAULT 7",
        f"UPDATE {s}.t SET x = id * 2 WHERE id < 3",
        f"DELETE FROM {s}.u WHERE code = 'b'",
        f"INSERT INTO {s}.t VALUES (5, 'five', 5, 5)",
    ]


def twin_changefeeds(capsys, up, down, other, schema: str, cids: tuple[str, str]) -> None:
    """Two changefeeds of one mixed window (mixed_window) from the same position, into `down`
    and `other`; the first is run here with the embedded Spark, the second is the caller's to
    run with another launcher, then compare_twins."""
    config, workload = mixed_window(schema)
    for s in (up, down, other):
        s.execute(f"DROP DATABASE IF EXISTS {schema}")
    create_changefeed(capsys, up, down, cids[0], config)
    create_changefeed(capsys, up, other, cids[1], config)
    up.execute(f"CREATE DATABASE {schema}", *workload)
    rc, err = cli_run(capsys, cids[0])
    assert rc == 0, err


def compare_twins(up, down, other, schema: str, cids: tuple[str, str], places_differ: bool = False) -> None:
    """Both launchers took the same decisions and left downstreams equal to each other and
    each to the upstream (`places_differ`: one wrote its rows in Spark tasks, the other here)."""
    assert decisions(cids[1], places_differ) == decisions(cids[0], places_differ)
    assert decisions(cids[1])["apply"]["ddl_applied"] == 4
    filtered = {f"{schema}.t": {"rows"}}  # mixed_window's value filter leaves a row of t out downstream
    for a_server, b_server, allow in ((up, down, filtered), (up, other, filtered), (down, other, None)):
        with a_server.connect() as a, b_server.connect() as b:
            assert compare(a, b, schemas=[schema], allow=allow) == []
    assert metastore.get_feed(cids[0]).state == metastore.get_feed(cids[1]).state == "normal"


def runs_ending_in_a_failure(spark, up, down, capsys, changefeed_id: str) -> None:
    """A changefeed `changefeed_id` (database `changefeed_id` with '_' for '-') with three runs of the CLI's cycle: a
    dry run, a catch-up that writes 3 rows and 2 DDLs, and one that fails at a DDL the downstream
    refuses (CREATE TABLE t2, which the downstream already has): an error with its remedy, the
    checkpoint left below it."""
    from cdcflow.core.errors import CdcflowError
    from cdcflow.launch.in_process import run_cycle

    db = changefeed_id.replace("-", "_")
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {db}")
    create_changefeed(capsys, up, down, changefeed_id, f"[filter]\nrules = ['{db}.*']\n")
    up.execute(f"CREATE DATABASE {db}", f"CREATE TABLE {db}.t (id INT PRIMARY KEY)",
               f"INSERT INTO {db}.t VALUES (1), (2), (3)")
    run_cycle(changefeed_id, spark=spark, dry_run=True)
    run_cycle(changefeed_id, spark=spark)
    down.execute(f"CREATE TABLE {db}.t2 (id INT PRIMARY KEY)")
    up.execute(f"CREATE TABLE {db}.t2 (id INT PRIMARY KEY)", f"INSERT INTO {db}.t VALUES (4)")
    try:
        run_cycle(changefeed_id, spark=spark)
    except CdcflowError:
        return
    raise AssertionError(f"changefeed {changefeed_id}: the cycle at CREATE TABLE {db}.t2 did not fail")


class CountedReads:
    """Counts the real head reads and binlog reads live_lag makes (wrapping them, not faking them),
    and how many binlog reads were under way at once; the first read waits (up to 10 s) for a
    second one to start, so a list that reads one changefeed after another shows 1."""

    def __init__(self, monkeypatch):
        self.heads, self.reads, self.active, self.most = 0, 0, 0, 0
        self._lock, self._two = threading.Lock(), threading.Event()
        head, read = live_lag.head_position, live_lag.BinlogReader.read

        def counted_head(conn):
            with self._lock:
                self.heads += 1
            return head(conn)

        def counted_read(reader, emit):
            with self._lock:
                self.reads += 1
                first = self.reads == 1
                self.active += 1
                self.most = max(self.most, self.active)
                if self.active >= 2:
                    self._two.set()
            try:
                if first:
                    self._two.wait(10)
                return read(reader, emit)
            finally:
                with self._lock:
                    self.active -= 1

        monkeypatch.setattr(live_lag, "head_position", counted_head)
        monkeypatch.setattr(live_lag.BinlogReader, "read", counted_read)


def other_dump(up, server_id: int, ended: list) -> threading.Event:
    """A non-blocking binlog dump with `server_id` from the upstream's head, in a thread of its own,
    as another process's read with the same id would come: the upstream ends the older dump with
    that id (MariaDB's 4052). The event is set once the upstream started it; `ended` gets how many
    events it read, or the error it ended with."""
    from pymysqlreplication import BinLogStreamReader

    from cdcflow.core.uri import parse_source_uri

    started = threading.Event()
    file, pos = up.binlog_head()

    def dump():
        stream = BinLogStreamReader(connection_settings=parse_source_uri(up.uri).connection_args(),
                                    server_id=server_id, blocking=False, resume_stream=True,
                                    log_file=file, log_pos=pos)
        try:
            n = 0
            while stream.fetchone() is not None:
                n += 1
                started.set()
            ended.append(n)
        except Exception as e:  # noqa: BLE001 - reported to the test
            ended.append(e)
        finally:
            started.set()
            stream.close()

    threading.Thread(target=dump, daemon=True).start()
    return started


def fresh_upstream_schema(up, down, schema: str, *ddl: str) -> None:
    """`schema` dropped on both servers and created anew upstream only, `ddl` run in it there: the
    tables a snapshot then creates downstream."""
    for db in (up, down):
        db.execute(f"DROP DATABASE IF EXISTS {schema}")
    up.execute(f"CREATE DATABASE {schema}")
    up.execute(*ddl, database=schema)  # the sequence engine's tables live in the current database


def create_with_snapshot(capsys, cdcflow_home, up, down, changefeed_id: str, schema: str, chunk: int = 7,
                         workers: int = 1) -> dict:
    """`changefeed create --snapshot` of `schema`'s tables (keyless ones too): the snapshot's
    progress as `create` prints it."""
    cfg = cdcflow_home / f"{changefeed_id}.toml"
    cfg.write_text(f"force-replicate = true\n[filter]\nrules = ['{schema}.*']\n")
    args = ["changefeed", "create", "-c", changefeed_id, "--source-uri", up.uri, "--sink-uri", down.uri, "--config",
            str(cfg), "--snapshot", "--snapshot-chunk-size", str(chunk), "--snapshot-workers", str(workers)]
    capsys.readouterr()
    rc = cli.main(args)
    out = capsys.readouterr()
    assert rc == 0, out.err
    return json.loads(out.out.split("\n", 2)[2])["snapshot"]


def write_before_chunk(monkeypatch, up, when, *statements: str) -> list:
    """Run `statements` upstream right before the first snapshot chunk read in its own transaction
    (after the point) for which `when(task, tables read so far)` says so.  Returns the list the
    table of that chunk is added to once they ran.  Each Spark job then copies one chunk, so
    the statements can fall between any two chunks' reads."""
    from cdcflow.snapshot import chunk_copies

    real, ran, seen = chunk_copies.copy_in_spark, [], []

    def paused(spark, tasks, *args, **kwargs):
        (task,) = tasks
        if not ran and when(task, seen):
            up.execute(*statements)
            ran.append(task["table"])
        seen.append(task["table"])
        return real(spark, tasks, *args, **kwargs)

    monkeypatch.setattr(chunk_copies, "MOST_CHUNKS_PER_JOB", 1)
    monkeypatch.setattr(chunk_copies, "copy_in_spark", paused)
    return ran


# The forking process of forked_runs: it imports once what `cdcflow changefeed run` on a Spark
# Connect server imports (cdcflow's CLI and stages, mysql-replication, pyspark's Connect client
# with pandas, pyarrow and grpc: 2-3 s a process), opens nothing (no session, no channel, no store), and forks a child per
# request that runs the request's code as `python -c` does, its output in the request's files.
_FORKER = r"""
import json, os, sys, traceback
from cdcflow import cli  # noqa: F401
import cdcflow.launch.cycle_runner, cdcflow.stages.cycle, pymysqlreplication  # noqa: F401
import pyspark.sql.connect.session  # noqa: F401

for line in sys.stdin:
    code, argv, out, err = json.loads(line)
    pid = os.fork()
    if pid == 0:
        for fd, path in ((1, out), (2, err)):
            os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
        sys.argv = ["-c", *argv]
        try:
            exec(compile(code, "<string>", "exec"), {"__name__": "__main__"})
            status = 0
        except SystemExit as e:  # sys.exit(code), as the interpreter ends on it
            if isinstance(e.code, str):
                print(e.code, file=sys.stderr)
            status = e.code if isinstance(e.code, int) else int(e.code is not None)
        except BaseException:
            traceback.print_exc()
            status = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)  # the forking process's exit handlers are not the child's
    print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
"""


@contextmanager
def forked_runs(folder, env: dict[str, str]):
    """run(code, *argv, timeout=600) -> CompletedProcess: `python -c code *argv` with `env`, as a
    process of its own that ends as any does (an os._exit in it is a process dying), forked from
    one that imported what a Spark Connect cycle imports once, instead of importing it again for
    each of a crash test's dozen runs."""
    forker = subprocess.Popen([sys.executable, "-c", _FORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env=env, start_new_session=True)  # its children in its group
    runs = [0]

    def run(code: str, *argv: str, timeout: float = 600) -> subprocess.CompletedProcess:
        runs[0] += 1
        out, err = (folder / f"forked-run-{runs[0]}.{kind}" for kind in ("out", "err"))
        forker.stdin.write(json.dumps([code, list(argv), str(out), str(err)]) + "\n")
        forker.stdin.flush()
        if not select.select([forker.stdout], [], [], timeout)[0]:
            raise subprocess.TimeoutExpired(["python", "-c", code, *argv], timeout)
        status = forker.stdout.readline().strip()
        assert status, f"the forking process ended (exit {forker.wait()})"
        return subprocess.CompletedProcess(argv, int(status), out.read_text(), err.read_text())

    try:
        yield run
    finally:
        forker.stdin.close()
        try:
            forker.wait(timeout=30)
        except subprocess.TimeoutExpired:  # a run that timed out still runs: the group goes with it
            os.killpg(forker.pid, signal.SIGKILL)
            forker.wait()
