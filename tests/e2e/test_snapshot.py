"""`cdcflow changefeed create … --snapshot` end to end through the CLI against the MariaDB pair:
an upstream that already holds rows (int, composite, case-insensitive string and no key,
NULLs, several types) and keeps writing during the copy (inserts, updates, deletes, key
changes) ends equal downstream after the cycles; a copy killed midway continues from the
chunks not done and converges."""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time

import pytest
from e2e_helpers import assert_consistent, cli_run, query
from type_matrix import LAX_ROWS, assert_same_values, create_types

from cdcflow import cli
from cdcflow.store import snapshots

pytestmark = pytest.mark.e2e

S = "snap"
TABLES = [
    f"CREATE TABLE {S}.t (id INT PRIMARY KEY, v VARCHAR(20) NULL, n DECIMAL(10,2) NULL, d DATETIME(3) NULL, "
    "b VARBINARY(8) NULL, f DOUBLE NULL)",
    f"CREATE TABLE {S}.c (a INT, b INT, v VARCHAR(10), PRIMARY KEY (a, b))",
    f"CREATE TABLE {S}.s (code VARCHAR(12) COLLATE utf8mb4_general_ci NOT NULL PRIMARY KEY, w INT)",
    f"CREATE TABLE {S}.k (a INT NULL, s VARCHAR(10) NULL)",
]


def _rows(n: int) -> list[str]:
    return [
        f"INSERT INTO {S}.t VALUES " + ", ".join(
            f"({i}, {'NULL' if i % 7 == 0 else repr('v' + str(i))}, {'NULL' if i % 5 == 0 else f'{i}.25'}, "
            f"'2024-01-{1 + i % 28:02d} 10:00:00.{i % 1000:03d}', {'NULL' if i % 3 == 0 else f'X{chr(39)}{i:04x}{chr(39)}'}, "
            f"{i / 7})" for i in range(1, n + 1)),
        f"INSERT INTO {S}.c VALUES " + ", ".join(f"({i % 10}, {i}, 'c{i}')" for i in range(1, n // 3 + 1)),
        f"INSERT INTO {S}.s VALUES " + ", ".join(f"('Key{i:04d}', {i})" for i in range(1, n // 4 + 1)),
        f"INSERT INTO {S}.k VALUES (1, 'x'), (1, 'x'), (2, NULL), (NULL, NULL), (3, 'y')",
    ]


def _fresh(up, down, n: int) -> None:
    for db in (up, down):
        db.execute(f"DROP DATABASE IF EXISTS {S}")
    up.execute(f"CREATE DATABASE {S}", *TABLES, *_rows(n))


class Writer(threading.Thread):
    """Keeps changing every table upstream until stopped: inserts, updates, deletes, key changes."""

    def __init__(self, up, seed: int):
        super().__init__(daemon=True)
        self.up, self.rnd, self.stop, self.done = up, random.Random(seed), threading.Event(), 0
        self.next_id = 100000

    def statements(self) -> list[str]:
        r, i = self.rnd, self.rnd.randint(1, 700)
        self.next_id += 1
        return r.choice([
            [f"INSERT INTO {S}.t (id, v, n) VALUES ({self.next_id}, 'new', 1.5)"],
            [f"UPDATE {S}.t SET v = 'upd{i}', n = NULL WHERE id = {i}"],
            [f"DELETE FROM {S}.t WHERE id = {i}"],
            [f"UPDATE {S}.t SET id = {self.next_id} WHERE id = {i}"],  # a key change
            [f"UPDATE {S}.c SET b = b + 1000 WHERE a = {i % 10} AND b = {i % 200}"],
            [f"DELETE FROM {S}.c WHERE a = {i % 10} AND b = {i % 200 + 1}"],
            [f"REPLACE INTO {S}.s VALUES ('KEY{i % 150:04d}', {i})"],  # same key, other case: replaces it
            [f"UPDATE {S}.s SET code = 'new{self.next_id}' WHERE code = 'key{i % 150:04d}'"],
            [f"INSERT INTO {S}.k VALUES ({i % 4}, 'w')"],
            [f"DELETE FROM {S}.k WHERE a = {i % 4} LIMIT 1"],
        ])

    def run(self) -> None:
        conn = self.up.connect()
        try:
            with conn.cursor() as cur:
                while not self.stop.is_set():
                    for q in self.statements():
                        cur.execute(q)
                    self.done += 1
                    time.sleep(0.005)
        finally:
            conn.close()


def _create_args(up, down, changefeed_id: str, cfg) -> list[str]:
    return ["changefeed", "create", "-c", changefeed_id, "--source-uri", up.uri, "--sink-uri", down.uri, "--config",
            str(cfg),
            "--snapshot", "--snapshot-chunk-size", "7", "--snapshot-workers", "2"]


def _config(home, changefeed_id: str, cdcflow: str = ""):
    path = home / f"{changefeed_id}.toml"
    path.write_text(f"force-replicate = true\n[filter]\nrules = ['{S}.*']\n"  # the keyless table too
                    + (f"[cdcflow]\n{cdcflow}\n" if cdcflow else ""))
    return path


@contextlib.contextmanager
def writing(up, seed: int):
    """The upstream keeps writing (Writer) while the block runs."""
    writer = Writer(up, seed=seed)
    writer.start()
    try:
        yield writer
    finally:
        writer.stop.set()
        writer.join()


def _cli(capsys, args: list[str]):
    """The cdcflow command in this process: (exit code, its output)."""
    capsys.readouterr()
    rc = cli.main(args)
    return rc, capsys.readouterr()


def _catch_up(capsys, up, down, changefeed_id: str) -> None:
    for _ in range(2):  # the second cycle finds nothing new: the first one took everything
        rc, err = cli_run(capsys, changefeed_id)
        assert rc == 0, err
    assert_consistent(up, down, [S])


class Jobs(list):
    """The chunks each Spark job of the copy copied, and the way the copy was to run."""

    def __init__(self, way: str):
        super().__init__()
        self.way = way


@pytest.fixture(params=["spark jobs", "threads here"])
def copy_jobs(request, monkeypatch) -> Jobs:
    """The two ways chunks are copied, and the Spark jobs run (the chunks each copied): jobs
    of runs of chunks in the session up, or threads of this process where the copy would
    have had to start an embedded session of its own (none is opened then: no job)."""
    from cdcflow.launch import sessions
    from cdcflow.snapshot import chunk_copies

    jobs, real = Jobs(request.param), chunk_copies.copy_in_spark

    def counted(spark, tasks, *args):
        jobs.append(len(tasks))
        return real(spark, tasks, *args)

    monkeypatch.setattr(chunk_copies, "copy_in_spark", counted)
    if request.param == "threads here":
        monkeypatch.setattr(sessions, "would_start_locally", lambda master: True)
    return jobs


def _copied_by(jobs, chunks: int) -> None:
    """Every chunk copied by the way `jobs` names: Spark jobs of several chunks, or no job."""
    if jobs.way == "threads here":
        assert jobs == []
    else:
        assert sum(jobs) == chunks and max(jobs) > 1, jobs


def test_snapshot_under_concurrent_writes_converges(mariadb_pair, spark, cdcflow_home, capsys, copy_jobs):
    up, down = mariadb_pair
    _fresh(up, down, 700)
    with writing(up, seed=14) as writer:
        rc, out = _cli(capsys, _create_args(up, down, "snap1", _config(cdcflow_home, "snap1")))
    assert rc == 0, out.err
    info = json.loads(out.out.split("\n", 2)[2])
    progress = info["snapshot"]
    assert progress["status"] == "done" and progress["chunks_done"] == progress["chunks_total"] > 100
    _copied_by(copy_jobs, progress["chunks_total"] - 1)  # the keyless table's chunk is read at the point
    assert "chunks" in out.err and "rows/s" in out.err  # the progress a person follows
    assert writer.done > 20, "the upstream was to keep writing during the copy"
    assert query(capsys, "snap1")["cdcflow"]["snapshot"]["chunks_total"] == progress["chunks_total"]
    _catch_up(capsys, up, down, "snap1")


def test_cycles_wait_for_an_unfinished_copy_and_a_killed_copy_continues(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    _fresh(up, down, 700)
    args = _create_args(up, down, "snap2", _config(cdcflow_home, "snap2"))
    child = subprocess.Popen([sys.executable, "-c", f"from cdcflow import cli; cli.main({args!r}, stop_spark=True)"],
                             env={**os.environ, "CDCFLOW_HOME": str(cdcflow_home)}, start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    with writing(up, seed=15):
        deadline = time.monotonic() + 300
        done = 0
        while time.monotonic() < deadline and child.poll() is None:
            p = snapshots.progress("snap2")
            done = p["chunks_done"] if p else 0
            if done >= 10:
                break
            time.sleep(0.2)
        assert child.poll() is None, f"the copy ended before it could be killed: {child.stderr.read().decode()[-2000:]}"
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        killed = snapshots.progress("snap2")
        assert 10 <= killed["chunks_done"] < killed["chunks_total"], killed
        point = snapshots.get("snap2")["position"]

        rc, ran = _cli(capsys, ["changefeed", "run", "-c", "snap2"])  # no cycle before the copy is complete
        assert rc == 0 and "initial copy (create --snapshot) has not finished" in json.loads(ran.out)["reason"], ran
        assert query(capsys, "snap2")["cdcflow"]["last_runs"] == []

        rc, out = _cli(capsys, args)
    assert rc == 0, out.err
    info = json.loads(out.out.split("\n", 2)[2])
    assert info["continued"] is True and info["snapshot"]["chunks_done"] == info["snapshot"]["chunks_total"]
    assert (info["start_position"]["file"], info["start_position"]["pos"]) == (point["file"], point["pos"])
    # the CLI's progress lines (the log's own lines may reach stderr too, in another shape)
    progress = [m for m in map(PROGRESS.match, out.err.splitlines()) if m]
    resumed_from = int(progress[0].group(1))
    assert resumed_from > killed["chunks_done"] - 1  # the second run did not copy the chunks done again
    _catch_up(capsys, up, down, "snap2")


PROGRESS = re.compile(r"^snapshot snap2: (\d+)/(\d+) chunks, \d+ rows, ")


def test_snapshot_refuses_a_start_ts(mariadb_pair, cdcflow_home, capsys):
    up, down = mariadb_pair
    capsys.readouterr()
    rc = cli.main(_create_args(up, down, "snap3", _config(cdcflow_home, "snap3")) + ["--start-ts",
                                                                                     "2026-01-01 00:00:00"])
    err = capsys.readouterr().err
    assert rc == 1 and "changefeed snap3" in err and "--snapshot starts the changefeed at the copy's consistent point" in err
    assert "Traceback" not in err


def test_a_paused_snapshot_copies_then_waits_stopped_at_its_point(mariadb_pair, spark, cdcflow_home, capsys):
    """create --snapshot --pause: the copy runs; the changefeed is left stopped at the copy's
    consistent point, and the writes after it are replicated once it is resumed."""
    up, down = mariadb_pair
    _fresh(up, down, 60)
    rc, out = _cli(capsys, _create_args(up, down, "snap-paused", _config(cdcflow_home, "snap-paused")) + ["--pause"])
    assert rc == 0, out.err
    info = json.loads(out.out.split("\n", 2)[2])
    assert info["state"] == "stopped" and info["tracked_tables"] == len(TABLES)
    assert info["snapshot"]["chunks_done"] == info["snapshot"]["chunks_total"]
    assert_consistent(up, down, [S])  # the copy ran
    up.execute(f"INSERT INTO {S}.t (id, v) VALUES (100001, 'after')", f"DELETE FROM {S}.c WHERE b = 3")
    rc, ran = _cli(capsys, ["changefeed", "run", "-c", "snap-paused"])
    assert rc == 0 and "paused" in json.loads(ran.out)["reason"], ran
    assert query(capsys, "snap-paused")["state"] == "stopped"
    rc, resumed = _cli(capsys, ["changefeed", "resume", "-c", "snap-paused"])
    assert rc == 0 and "stopped -> normal" in resumed.out, resumed
    _catch_up(capsys, up, down, "snap-paused")


FTWRL = 'snapshot-point = "ftwrl"'


def test_the_read_lock_point_under_concurrent_writes_converges(mariadb_pair, spark, cdcflow_home, capsys):
    """MySQL's method (FLUSH TABLES WITH READ LOCK, the position, the snapshot, UNLOCK), forced
    on the MariaDB upstream, with the keyless table read in the snapshot opened under the lock."""
    up, down = mariadb_pair
    _fresh(up, down, 300)
    with writing(up, seed=16) as writer:
        rc, out = _cli(capsys, _create_args(up, down, "snap4", _config(cdcflow_home, "snap4", FTWRL)))
    assert rc == 0, out.err
    progress = json.loads(out.out.split("\n", 2)[2])["snapshot"]
    assert progress["status"] == "done" and progress["position"]["method"] == "ftwrl"
    assert writer.done > 10, "the upstream was to keep writing during the copy"
    _catch_up(capsys, up, down, "snap4")


def test_the_read_lock_point_is_refused_without_reload_naming_the_privileges(mariadb_pair, spark, cdcflow_home,
                                                                            capsys):
    """A real user with SELECT and the replication privileges but no RELOAD: the lock method is
    refused in one line naming RELOAD and REPLICATION CLIENT, nothing is recorded; MariaDB's own
    method needs no more than that user has."""
    up, down = mariadb_pair
    _fresh(up, down, 30)
    up.execute("DROP USER IF EXISTS 'snap_noreload'@'%'", "CREATE USER 'snap_noreload'@'%' IDENTIFIED BY 'pw'",
               "GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO 'snap_noreload'@'%'")
    source = up.uri.replace(up.uri.split("//", 1)[1].split("@", 1)[0], "snap_noreload:pw")
    try:
        args = _create_args(up, down, "snap5", _config(cdcflow_home, "snap5", FTWRL))
        args[args.index("--source-uri") + 1] = source
        rc, out = _cli(capsys, args)
        assert rc == 1 and "changefeed snap5" in out.err and "FLUSH TABLES WITH READ LOCK" in out.err, out.err
        assert "RELOAD" in out.err and "REPLICATION CLIENT" in out.err and "Traceback" not in out.err
        assert snapshots.get("snap5") is None
        assert _cli(capsys, ["changefeed", "query", "-c", "snap5"])[0] == 1  # no changefeed was left behind

        args[args.index("--config") + 1] = str(_config(cdcflow_home, "snap5", 'snapshot-point = "consistent-snapshot"'))
        rc, out = _cli(capsys, args)
        assert rc == 0, out.err
        assert json.loads(out.out.split("\n", 2)[2])["snapshot"]["position"]["method"] == "consistent-snapshot"
        _catch_up(capsys, up, down, "snap5")
    finally:
        up.execute("DROP USER IF EXISTS 'snap_noreload'@'%'")


def test_a_failure_recording_the_copy_leaves_no_half_created_changefeed(mariadb_pair, spark, cdcflow_home, capsys,
                                                                       monkeypatch):
    """The changefeed's start and the copy's chunks are one metadata-store transaction, and its
    spec is written after it: a failure while the chunks are recorded (injected right after
    their rows are written) leaves neither; the same create then succeeds."""
    from cdcflow.config.spec_store import spec_exists
    from cdcflow.store import metastore, schema_versions

    up, down = mariadb_pair
    _fresh(up, down, 40)
    real_begin = snapshots.begin

    def failing_begin(*args, **kwargs):
        real_begin(*args, **kwargs)
        raise RuntimeError("injected: the process dies while recording the chunks")

    monkeypatch.setattr(snapshots, "begin", failing_begin)
    args = _create_args(up, down, "snap6", _config(cdcflow_home, "snap6"))
    rc, out = _cli(capsys, args)
    assert rc == 1 and "injected" in out.err, out.err
    assert not spec_exists("snap6")
    with pytest.raises(Exception, match="no state in the metadata store"):
        metastore.get_feed("snap6")
    assert snapshots.get("snap6") is None and snapshots.pending("snap6") == []
    assert schema_versions.load("snap6").versions == {}
    assert "snap6" not in _cli(capsys, ["changefeed", "list"])[1].out

    monkeypatch.setattr(snapshots, "begin", real_begin)
    rc, out = _cli(capsys, args)
    assert rc == 0, out.err
    assert snapshots.progress("snap6")["status"] == "done"
    _catch_up(capsys, up, down, "snap6")


def test_snapshot_copies_every_column_type_exactly(mariadb_pair, spark, cdcflow_home, capsys, copy_jobs):
    """The upstream prints the rows as SQL text for the copy: every type of the type matrix lands
    exactly (FLOAT and DOUBLE text, UTC TIMESTAMPs, BIT, bytes, JSON, zero dates, NULLs, latin1),
    and so do the values a lax upstream session stored (clipped numbers such as FLT_MAX, the ENUM
    error value strict mode refuses, in a keyless table too, invalid dates); a generated column is left to the
    downstream, an invisible one copied; a batch longer than one joined text goes row by row,
    and a row longer than the upstream's max_allowed_packet as text is copied decoded."""
    up, down = mariadb_pair
    db = "snaptypes"
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {db}")
    create_types(up, db)
    up.execute(f"CREATE TABLE {db}.ke (e ENUM('a','b') NOT NULL, v INT)", database=db)  # keyless
    with up.connect() as c, c.cursor() as cur:
        cur.execute("SET SESSION sql_mode = ''")
        for row in LAX_ROWS:
            cur.execute(f"INSERT INTO {db}.t VALUES {row}")
        cur.execute(f"INSERT INTO {db}.ke VALUES ('c', 1), ('a', 2), ('c', 2)")  # 'c': the ENUM error value
    up.execute(f"CREATE TABLE {db}.g (id INT PRIMARY KEY, a INT, twice INT AS (a * 2) VIRTUAL, "
               "hidden VARCHAR(10) INVISIBLE, b LONGBLOB)",
               f"INSERT INTO {db}.g (id, a, hidden, b) SELECT seq, seq, CONCAT('h', seq), REPEAT(x'a5', 150000) "
               "FROM seq_1_to_40",  # 40 rows of 300 KB as hex: more than one statement's 4 MB
               f"CREATE TABLE {db}.h (id INT PRIMARY KEY, b LONGBLOB)",
               f"INSERT INTO {db}.h VALUES (1, x'01'), (2, REPEAT(x'5a', 3000000)), (3, NULL)", database=db)
    cfg = cdcflow_home / "snaptypes.toml"
    cfg.write_text(f"force-replicate = true\n[filter]\nrules = ['{db}.*']\n")  # ke has no key
    (packet,), = up.query("SELECT @@global.max_allowed_packet")
    up.execute("SET GLOBAL max_allowed_packet = 4194304")  # the 3 MB row is 6 MB as hex
    try:
        rc, out = _cli(capsys, ["changefeed", "create", "-c", "snaptypes", "--source-uri", up.uri, "--sink-uri",
                                down.uri, "--config", str(cfg), "--snapshot", "--snapshot-chunk-size", "2"])
    finally:
        up.execute(f"SET GLOBAL max_allowed_packet = {packet}")
    assert rc == 0, out.err
    # ke, keyless, is copied at the point, in the point's transaction: no job of chunks
    _copied_by(copy_jobs, json.loads(out.out.split("\n", 2)[2])["snapshot"]["chunks_total"] - 1)
    assert_same_values(up, down, db)
    assert_consistent(up, down, [db])
    assert down.query(f"SELECT COUNT(*), SUM(twice = 2 * a), SUM(hidden = CONCAT('h', id)) FROM {db}.g") == \
        [(40, 40, 40)]
    assert down.query(f"SELECT e + 0, v FROM {db}.ke ORDER BY v, e") == [(0, 1), (0, 2), (1, 2)]


def test_a_chunk_copied_again_converges_through_the_enum_error_value(mariadb_pair):
    """A chunk copied again (a resumed copy) finds its rows downstream: the batch's INSERT is
    refused for a duplicate and the batch written again by REPLACE, which overwrites a row
    changed since.  Also where the batch holds the ENUM error value a lax upstream stored:
    strict mode refuses it first, its non-strict run is then refused for the duplicate, and
    that duplicate is what leads to the REPLACE."""
    from cdcflow.sink import connection
    from cdcflow.sink.row_writer import RowWriter
    from cdcflow.snapshot.copy import copy_chunk
    from cdcflow.verify.chunks import Chunk
    from cdcflow.verify.comparison import reading_session

    up, down = mariadb_pair
    db = "snapagain"
    table = f"CREATE TABLE {db}.e (id INT PRIMARY KEY, e ENUM('a','b') NOT NULL, v INT)"
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}", table)
    with up.connect() as c, c.cursor() as cur:
        cur.execute("SET SESSION sql_mode = ''")  # 'c' is stored as the ENUM error value ''
        cur.execute(f"INSERT INTO {db}.e VALUES (1, 'c', 1), (2, 'a', 2), (3, 'c', 3), (4, 'b', 4)")
    args = {s: {"host": "127.0.0.1", "port": s.port, "user": "root", "password": "cdcflow"} for s in (up, down)}
    task = {"table": f"{db}.e", "schema": db, "name": "e", "key": ["id"], "chunk": Chunk(0).__dict__}
    reading, writer = reading_session(args[up]), RowWriter(connection.connect(args[down]), batch_rows=1000)
    try:
        assert copy_chunk(reading, writer, task)["rows"] == 4 and writer.fallbacks == 0
        down.execute(f"UPDATE {db}.e SET v = 99 WHERE id = 2", f"DELETE FROM {db}.e WHERE id = 4")
        assert copy_chunk(reading, writer, task)["rows"] == 4
        assert writer.fallbacks == 1 and writer.rows_written == 8
    finally:
        reading.close()
        writer.conn.close()
    rows = f"SELECT id, e + 0, v FROM {db}.e ORDER BY id"
    assert down.query(rows) == up.query(rows) == [(1, 0, 1), (2, 1, 2), (3, 0, 3), (4, 2, 4)]


def test_the_enum_error_value_is_copied_row_by_row_and_in_a_keyless_table(mariadb_pair):
    """The rows copied as text row by row (a keyless table; a keyed batch too long to join)
    carry the ENUM error value a lax upstream stored: strict mode refuses it, and the upstream's
    flags of which rows hold it let the non-strict run stand only where the downstream's ''
    is the upstream's. A member the downstream's list lacks still stops the copy, naming it."""
    from cdcflow.sink import connection
    from cdcflow.sink.downstream_errors import SinkError
    from cdcflow.sink.row_writer import RowWriter
    from cdcflow.snapshot.copy import copy_chunk
    from cdcflow.verify.chunks import Chunk
    from cdcflow.verify.comparison import reading_session

    up, down = mariadb_pair
    db = "snapenum"
    tables = {"k": "(e ENUM('a','b') NOT NULL, v INT, f ENUM('x','y'))",
              "w": "(id INT PRIMARY KEY, e ENUM('a','b') NOT NULL, t VARCHAR(100))"}
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}",
                  *(f"CREATE TABLE {db}.{t} {cols}" for t, cols in tables.items()))
    with up.connect() as c, c.cursor() as cur:
        cur.execute("SET SESSION sql_mode = ''")  # 'c' and 'z' are stored as the ENUM error value ''
        cur.execute(f"INSERT INTO {db}.k VALUES ('c', 1, 'x'), ('a', 2, 'z'), ('c', 3, NULL), ('b', 4, 'y')")
        cur.execute(f"INSERT INTO {db}.w VALUES (1, 'c', REPEAT('p', 90)), (2, 'a', REPEAT('q', 90)), "
                    "(3, 'c', REPEAT('r', 90))")
    args = {s: {"host": "127.0.0.1", "port": s.port, "user": "root", "password": "cdcflow"} for s in (up, down)}

    def copy(name: str, key: list[str]) -> int:
        task = {"table": f"{db}.{name}", "schema": db, "name": name, "key": key, "chunk": Chunk(0).__dict__}
        # a 200-byte statement limit: the keyed batch's joined list is cut, so it goes row by row
        reading, writer = reading_session(args[up]), RowWriter(connection.connect(args[down]), 1000, max_bytes=200)
        try:
            return copy_chunk(reading, writer, task)["rows"]
        finally:
            reading.close()
            writer.conn.close()

    assert copy("k", []) == 4 and copy("w", ["id"]) == 3
    for name, order in (("k", "v"), ("w", "id")):
        rows = f"SELECT *, e + 0 FROM {db}.{name} ORDER BY {order}"
        assert down.query(rows) == up.query(rows)
    assert down.query(f"SELECT v, f + 0 FROM {db}.k ORDER BY v") == [(1, 1), (2, 0), (3, None), (4, 2)]

    # a member the downstream's list lacks: its '' would not be the upstream's value
    up.execute(f"ALTER TABLE {db}.k MODIFY e ENUM('a','b','c') NOT NULL", f"DELETE FROM {db}.k",
               f"INSERT INTO {db}.k VALUES ('a', 1, 'x'), ('c', 2, 'y')")
    down.execute(f"DELETE FROM {db}.k")
    with pytest.raises(SinkError) as refused:
        copy("k", [])
    assert refused.value.code == 1265 and "'e'" in refused.value.text
    assert down.query(f"SELECT COUNT(*) FROM {db}.k WHERE e = ''") == [(0,)]


def test_a_row_the_downstream_refuses_stops_the_copy_naming_it(mariadb_pair, spark, cdcflow_home, capsys):
    """A downstream table kept from before whose ENUM lacks a member the upstream's rows hold:
    the copy stops with an error that names the changefeed, the table, the refusal and what to
    do, whether the table is keyless (copied at the point) or keyed (copied in chunks)."""
    up, down = mariadb_pair
    db = "snaprefused"
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}")
    for name, key in (("bare", ""), ("keyed", "id INT PRIMARY KEY, ")):
        up.execute(f"CREATE TABLE {db}.{name} ({key}e ENUM('a','b','c') NOT NULL)",
                   f"INSERT INTO {db}.{name} VALUES ({'1, ' if key else ''}'c')")
        down.execute(f"CREATE TABLE {db}.{name} ({key}e ENUM('a','b') NOT NULL)")  # kept by create
        cfg = _config(cdcflow_home, f"refused-{name}")
        cfg.write_text(f"force-replicate = true\n[filter]\nrules = ['{db}.{name}']\n")
        rc, out = _cli(capsys, _create_args(up, down, f"refused-{name}", cfg))
        assert rc == 1, out
        assert f"changefeed refused-{name}" in out.err and f"a chunk of {db}.{name}" in out.err, out.err
        assert "Data truncated for column 'e'" in out.err and "widen or change the downstream column" in out.err
        assert "CDCFLOW_SINK_ERROR" not in out.err and "Traceback" not in out.err, out.err
        assert down.query(f"SELECT COUNT(*) FROM {db}.{name}") == [(0,)]


def test_batches_grow_and_shrink_to_the_bytes_they_aim_at(mariadb_pair, monkeypatch):
    """A chunk's batches after the first hold as many rows as the byte aim fits at the rows'
    width so far: narrow rows go in few statements; rows too wide for the first batch's list
    (cut at the statement's limit: that batch goes row by row) make the next batches small
    enough to be joined whole again; an integer key's spans that find no row double."""
    from cdcflow.sink import connection
    from cdcflow.sink.row_writer import RowWriter
    from cdcflow.snapshot import copy
    from cdcflow.verify.chunks import Chunk
    from cdcflow.verify.comparison import reading_session

    up, down = mariadb_pair
    db = "snapgrow"
    tables = (f"CREATE TABLE {db}.narrow (id INT PRIMARY KEY, v INT)",
              f"CREATE TABLE {db}.wide (id INT PRIMARY KEY, t MEDIUMTEXT)",
              f"CREATE TABLE {db}.gappy (id BIGINT PRIMARY KEY, v INT)")
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}", *tables)
    up.execute(f"INSERT INTO {db}.narrow SELECT seq, seq * 7 FROM {db}.seq_1_to_5000",
               f"INSERT INTO {db}.wide SELECT seq, REPEAT(CHAR(65 + seq % 26), 15000 + seq) FROM {db}.seq_1_to_300",
               # two runs of keys far apart: the spans of keys between them hold no row, and double
               f"INSERT INTO {db}.gappy SELECT seq + IF(seq > 50, 1000000, 0), seq FROM {db}.seq_1_to_100")
    by_text, batches = [], []
    real_text, real_values = copy._copy_text, copy._write_values
    monkeypatch.setattr(copy, "_write_values", lambda up_, cur, w, batch, *rest: batches.append(batch["name"])
                        or real_values(up_, cur, w, batch, *rest))
    monkeypatch.setattr(copy, "_copy_text", lambda up_, w, batch, verb: by_text.append(batch["name"])
                        or real_text(up_, w, batch, verb))
    args = {s: {"host": "127.0.0.1", "port": s.port, "user": "root", "password": "cdcflow"} for s in (up, down)}
    reading, statements = reading_session(args[up]), {}
    try:
        for name, rows, aim in (("narrow", 5000, 8_000), ("wide", 300, 200_000), ("gappy", 100, 400)):
            writer = RowWriter(connection.connect(args[down]), batch_rows=100, max_bytes=1 << 20)
            task = {"table": f"{db}.{name}", "schema": db, "name": name, "key": ["id"], "chunk": Chunk(0).__dict__}
            try:
                assert copy.copy_chunk(reading, writer, task, batch_bytes=aim)["rows"] == rows
                statements[name] = writer.statements
            finally:
                writer.conn.close()
    finally:
        reading.close()
    # narrow: 100 rows first, then statements of about 8,000 bytes (not 49 more of 100 rows)
    text = sum(len(f"({i},{i * 7})") + 1 for i in range(1, 5001))
    assert 1 + text // 8_000 <= statements["narrow"] <= 3 + text // 8_000, statements
    # wide: 100 rows of ~15 KB are cut at 1 MiB (row by row), then batches of ~20 rows join whole
    assert by_text == ["wide"]
    # gappy: about 20 rows a batch, and the million keys between the runs crossed in about 16 doublings
    assert batches.count("gappy") < 40, batches.count("gappy")
    for name in ("narrow", "wide", "gappy"):
        q = f"SELECT id, MD5({'t' if name == 'wide' else 'v'}) FROM {db}.{name} ORDER BY id"
        assert down.query(q) == up.query(q)


def test_batches_within_chunks_copy_every_row_of_every_key_kind(mariadb_pair, spark, cdcflow_home, capsys,
                                                               monkeypatch, copy_jobs):
    """Chunks of 7 rows copied 3 rows the first batch and one row each next one (a byte aim
    smaller than any row), each batch ending at the key its own query finds (an integer key, a
    composite one, a string in a case-insensitive collation): with the upstream quiet, the copy
    alone leaves the downstream equal."""
    import dataclasses

    from cdcflow.snapshot.chunk_copies import SnapshotOptions

    up, down = mariadb_pair
    _fresh(up, down, 700)
    given = SnapshotOptions.of.__func__
    monkeypatch.setattr(SnapshotOptions, "of",
                        classmethod(lambda cls, cfg, **kw: dataclasses.replace(given(cls, cfg, **kw), batch_rows=3,
                                                                                batch_bytes=1)))
    rc, out = _cli(capsys, _create_args(up, down, "snapb", _config(cdcflow_home, "snapb")))
    assert rc == 0, out.err
    assert json.loads(out.out.split("\n", 2)[2])["snapshot"]["status"] == "done"
    assert_consistent(up, down, [S])
