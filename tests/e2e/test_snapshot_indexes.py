"""`create --snapshot` creates the downstream tables without their secondary indexes and builds
them once a cycle has replayed the binlog past the copy's last read
(cdcflow.snapshot.deferred_indexes), against the MariaDB pair:

- the interleaving the deferral must survive: a unique value moves from row A to row B between
  the reads of A's chunk and B's chunk, so the copy leaves both holding it; the replay moves
  it back where it belongs before the unique index is built, and the downstream ends equal;
- a duplicate the replay cannot remove (a row written downstream) fails the build naming the
  changefeed, the table and the index, the copy is not reported done, and after the fix a
  resumed changefeed builds the rest;
- a cycle killed before the build, and one killed during it, leave the build to the next
  cycle, which adds only the indexes missing;
- every kind of table and column the downstream gets ends with the upstream's definition:
  a keyless table and one whose handle is a unique key, foreign keys with cascades,
  FULLTEXT, SPATIAL, prefix and IGNORED indexes, indexes on generated columns and JSON,
  other charsets;
- on a TiDB downstream (the stand-in) each deferred index is an asynchronous ADD INDEX job."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest
from e2e_helpers import assert_consistent, cli_run, create_with_snapshot, fresh_upstream_schema, write_before_chunk
from tidb_standin_helpers import SCHEMA as T
from tidb_standin_helpers import tidb  # noqa: F401 - a fixture

from cdcflow import cli
from cdcflow.launch.in_process import run_cycle
from cdcflow.store import index_jobs, metastore, snapshots

pytestmark = pytest.mark.e2e

S = "snapix"
MOVING = (f"CREATE TABLE {S}.m (id INT PRIMARY KEY, u VARCHAR(20) NULL, w INT, UNIQUE KEY uq_u (u), KEY k_w (w))",
          f"INSERT INTO {S}.m SELECT seq, CONCAT('u', seq), seq % 5 FROM seq_1_to_60")


def _fresh(up, down, *ddl: str) -> None:
    fresh_upstream_schema(up, down, S, *ddl)


def _create(capsys, cdcflow_home, up, down, changefeed_id: str, chunk: int = 7, workers: int = 1):
    return create_with_snapshot(capsys, cdcflow_home, up, down, changefeed_id, S, chunk, workers)


def _indexes(server, table: str) -> list[str]:
    return sorted({r[0] for r in server.query(
        "SELECT INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s",
        (S, table))})


def _show_create(server, table: str) -> str:
    text = server.query(f"SHOW CREATE TABLE {S}.{table}")[0][1]
    return re.sub(r" AUTO_INCREMENT=\d+", "", text)


def _same_definitions(up, down) -> None:
    for (table,) in up.query("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s", (S,)):
        assert _show_create(down, table) == _show_create(up, table), table


def _cycle_builds(capsys, changefeed_id: str) -> None:
    """A cycle that replays and builds the deferred indexes: it succeeds and the snapshot is done."""
    rc, err = cli_run(capsys, changefeed_id)
    assert rc == 0, err
    assert snapshots.progress(changefeed_id)["status"] == "done"


def _equal_to_upstream(up, down) -> None:
    """Whole definitions and rows."""
    _same_definitions(up, down)
    assert_consistent(up, down, [S])


def _move_between_chunks(monkeypatch, up, before_chunk_of_table: str, index: int, *statements: str) -> list:
    """Run `statements` upstream right before chunk `index` of `before_chunk_of_table` is read (the
    copy runs one chunk at a time): the chunks before it were read before the change."""
    return write_before_chunk(monkeypatch, up, lambda task, _seen: task["table"] == f"{S}.{before_chunk_of_table}"
                              and task["chunk"]["index"] == index, *statements)


def test_a_unique_value_moved_between_two_chunks_is_set_right_before_its_index_is_built(
        mariadb_pair, spark, cdcflow_home, capsys, monkeypatch):
    up, down = mariadb_pair
    _fresh(up, down, *MOVING)
    # row 1 (first chunk) gives its value to row 50 (a later chunk) after the first chunk's read
    ran = _move_between_chunks(monkeypatch, up, "m", 3, f"UPDATE {S}.m SET u = 'tmp' WHERE id = 1",
                               f"UPDATE {S}.m SET u = 'u1' WHERE id = 50",
                               f"UPDATE {S}.m SET u = 'u50' WHERE id = 1")
    progress = _create(capsys, cdcflow_home, up, down, "ix1")
    assert ran, "the upstream change was to run between two chunks"
    assert progress["status"] == "indexing" and progress["tables_with_deferred_indexes"] == 1, progress
    # the interleaving happened: both rows hold u1 downstream, which only the missing index allows
    assert down.query(f"SELECT id FROM {S}.m WHERE u = 'u1' ORDER BY id") == [(1,), (50,)]
    assert _indexes(down, "m") == ["PRIMARY"]
    rc, err = cli_run(capsys, "ix1")  # the replay from the point, then the build
    assert rc == 0, err
    assert snapshots.progress("ix1")["status"] == "done"
    assert _indexes(down, "m") == ["PRIMARY", "k_w", "uq_u"]
    assert down.query(f"SELECT id, u FROM {S}.m WHERE id IN (1, 50) ORDER BY id") == [(1, "u50"), (50, "u1")]
    _equal_to_upstream(up, down)


def test_a_duplicate_the_replay_cannot_remove_fails_the_build_naming_it(
        mariadb_pair, spark, cdcflow_home, capsys, monkeypatch):
    up, down = mariadb_pair
    _fresh(up, down, *MOVING)
    _move_between_chunks(monkeypatch, up, "m", 2, f"UPDATE {S}.m SET w = 9 WHERE id = 60")  # the binlog moves
    assert _create(capsys, cdcflow_home, up, down, "ix2")["status"] == "indexing"
    down.execute(f"INSERT INTO {S}.m VALUES (1000, 'u7', 0)")  # written downstream: no upstream change removes it
    rc, err = cli_run(capsys, "ix2")
    assert rc == 1, err
    assert "changefeed ix2" in err and f"{S}.m" in err and "uq_u" in err and "Duplicate entry 'u7'" in err, err
    assert "cdcflow changefeed resume -c ix2" in err and "Traceback" not in err, err
    assert snapshots.progress("ix2")["status"] == "indexing"
    assert metastore.get_feed("ix2").state == "failed"
    assert _indexes(down, "m") == ["PRIMARY"]

    down.execute(f"DELETE FROM {S}.m WHERE id = 1000")
    capsys.readouterr()
    assert cli.main(["changefeed", "resume", "-c", "ix2"]) == 0, capsys.readouterr().err
    _cycle_builds(capsys, "ix2")
    _equal_to_upstream(up, down)


def test_a_build_as_the_copy_ends_that_fails_is_left_to_the_build_after_it(
        mariadb_pair, spark, cdcflow_home, capsys, monkeypatch, caplog):
    """A row written downstream while m is copied holds one of m's unique values: m's build as
    its copy ends fails and is left (logged); the build after the copy, the binlog still
    unmoved, fails the same way and names the changefeed, the table and the index."""
    up, down = mariadb_pair
    _fresh(up, down, *MOVING)
    # the downstream row lands before m's last chunk (60 rows, chunks of 7: the ninth) is copied
    ran = write_before_chunk(monkeypatch, down, lambda task, _seen: task["chunk"]["index"] == 8,
                             f"INSERT INTO {S}.m VALUES (1000, 'u7', 0)")
    with pytest.raises(AssertionError) as failed:
        _create(capsys, cdcflow_home, up, down, "ix7")
    err = str(failed.value)
    assert ran and "changefeed ix7" in err and f"{S}.m" in err and "uq_u" in err and "Duplicate entry 'u7'" in err, err
    assert "Traceback" not in err, err
    assert "are left to the build after the copy" in caplog.text, caplog.text
    assert _indexes(down, "m") == ["PRIMARY"]
    assert [t["status"] for t in snapshots.deferred("ix7")] == ["building"]


def _cycle_process(changefeed_id: str, cdcflow_home) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", "from cdcflow import cli; "
                             f"cli.main(['changefeed', 'run', '-c', {changefeed_id!r}], stop_spark=True)"],
                            env={**os.environ, "CDCFLOW_HOME": str(cdcflow_home)}, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _wait_for(what: str, child: subprocess.Popen, done, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert child.poll() is None, f"the cycle ended before {what}: {child.stderr.read().decode()[-3000:]}"
        if done():
            return
        time.sleep(0.2)
    raise AssertionError(f"no {what} within {seconds} s")


def _waiting(down, verb: str) -> bool:
    """A statement starting with `verb` on the schema's tables waits for a table lock downstream."""
    return any(info and info.upper().startswith(verb) and S in info and "lock" in (state or "").lower()
               for info, state in down.query("SELECT INFO, STATE FROM information_schema.PROCESSLIST"))


def _kill(child: subprocess.Popen) -> None:
    os.killpg(child.pid, signal.SIGKILL)
    child.wait()


def test_a_cycle_killed_before_and_one_killed_during_the_build_leave_it_to_the_next(
        mariadb_pair, spark, cdcflow_home, capsys, monkeypatch):
    up, down = mariadb_pair
    _fresh(up, down, *MOVING, f"CREATE TABLE {S}.o (id INT PRIMARY KEY, v INT, KEY k_v (v))",
           f"INSERT INTO {S}.o SELECT seq, seq FROM seq_1_to_30")
    _move_between_chunks(monkeypatch, up, "m", 2, f"UPDATE {S}.m SET w = 9 WHERE id = 60")
    assert _create(capsys, cdcflow_home, up, down, "ix3")["status"] == "indexing"
    up.execute(f"UPDATE {S}.m SET u = 'moved' WHERE id = 3")

    # killed before the build: its apply waits for a table lock held downstream
    locker = down.connect()
    try:
        with locker.cursor() as cur:
            cur.execute(f"LOCK TABLES {S}.m WRITE")
        child = _cycle_process("ix3", cdcflow_home)
        _wait_for("an apply waiting for the lock", child,
                  lambda: any(_waiting(down, verb) for verb in ("REPLACE", "UPDATE", "INSERT", "DELETE")))
        _kill(child)
        with locker.cursor() as cur:
            cur.execute("UNLOCK TABLES")
    finally:
        locker.close()
    assert snapshots.progress("ix3")["status"] == "indexing"
    assert {t["status"] for t in snapshots.deferred("ix3")} == {"deferred"}
    assert _indexes(down, "m") == ["PRIMARY"]

    # killed during the build: its ALTER waits for a reading transaction to end
    reader = down.connect()
    try:
        with reader.cursor() as cur:
            cur.execute("START TRANSACTION")
            cur.execute(f"SELECT COUNT(*) FROM {S}.m")
            cur.execute(f"SELECT COUNT(*) FROM {S}.o")
        child = _cycle_process("ix3", cdcflow_home)
        _wait_for("an index build waiting for the lock", child,
                  lambda: _waiting(down, "ALTER") and "building" in {t["status"] for t in snapshots.deferred("ix3")})
        _kill(child)
        assert snapshots.progress("ix3")["status"] == "indexing"
        reader.rollback()  # the killed client's ALTER may go on now: the next build adds only what is missing
    finally:
        reader.close()
    _cycle_builds(capsys, "ix3")
    assert _indexes(down, "m") == ["PRIMARY", "k_w", "uq_u"] and _indexes(down, "o") == ["PRIMARY", "k_v"]
    _equal_to_upstream(up, down)


KINDS = (
    # a unique key is the handle of a table without a primary key: kept, the other unique deferred
    f"CREATE TABLE {S}.h (a INT NOT NULL, b VARCHAR(10) NOT NULL, c INT NULL, UNIQUE KEY a_a (a), "
    "UNIQUE KEY z_b (b), KEY k_c (c))",
    f"INSERT INTO {S}.h SELECT seq, CONCAT('b', seq), seq % 3 FROM seq_1_to_40",
    # foreign keys with cascades: the child's and the parent's referenced indexes stay
    f"CREATE TABLE {S}.p (id INT PRIMARY KEY, code VARCHAR(10) NOT NULL, v INT, UNIQUE KEY uq_code (code), "
    "KEY k_v (v))",
    f"CREATE TABLE {S}.c (id INT PRIMARY KEY, pcode VARCHAR(10), n INT, KEY fk_pcode (pcode), KEY k_n (n), "
    f"CONSTRAINT c_p FOREIGN KEY (pcode) REFERENCES {S}.p (code) ON DELETE CASCADE ON UPDATE CASCADE)",
    f"INSERT INTO {S}.p SELECT seq, CONCAT('p', seq), seq FROM seq_1_to_20",
    f"INSERT INTO {S}.c SELECT seq, CONCAT('p', 1 + seq % 20), seq FROM seq_1_to_60",
    # FULLTEXT and SPATIAL stay; prefix, composite, IGNORED and commented ones are deferred
    f"CREATE TABLE {S}.f (id INT PRIMARY KEY, t TEXT, g POINT NOT NULL, s VARCHAR(40), SPATIAL KEY sp_g (g), "
    "KEY k_prefix (s(5)), KEY k_two (s, id) COMMENT 'two columns', KEY k_ignored (id, s) IGNORED, "
    "FULLTEXT KEY ft_t (t))",
    f"INSERT INTO {S}.f SELECT seq, CONCAT('word', seq, ' other'), POINT(seq, seq), REPEAT('s', seq % 30) "
    "FROM seq_1_to_30",
    # generated columns (virtual and stored) with indexes, a unique one among them, and JSON
    f"CREATE TABLE {S}.g (id INT PRIMARY KEY, j JSON, a INT, twice INT AS (a * 2) VIRTUAL, "
    "name VARCHAR(20) AS (JSON_VALUE(j, '$.name')) STORED, UNIQUE KEY uq_twice (twice), KEY k_name (name))",
    f"INSERT INTO {S}.g (id, j, a) SELECT seq, JSON_OBJECT('name', CONCAT('n', seq), 'n', seq), seq "
    "FROM seq_1_to_30",
    # other charsets and collations
    f"CREATE TABLE {S}.l (id INT PRIMARY KEY, v VARCHAR(20) CHARACTER SET latin1 COLLATE latin1_swedish_ci, "
    "w VARCHAR(20) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, UNIQUE KEY uq_w (w), KEY k_v (v)) "
    "DEFAULT CHARSET=latin1",
    f"INSERT INTO {S}.l SELECT seq, CONCAT('caf', CHAR(233 USING latin1), seq), CONCAT('w', seq) FROM seq_1_to_30",
    # a keyless table keeps its indexes (it is read at the point and replayed once)
    f"CREATE TABLE {S}.k (a INT NULL, b INT NULL, KEY k_a (a), UNIQUE KEY uq_b (b))",
    f"INSERT INTO {S}.k SELECT seq % 4, seq FROM seq_1_to_10",
)
WRITES = (
    f"UPDATE {S}.h SET b = 'moved' WHERE a = 3", f"DELETE FROM {S}.h WHERE a = 4",
    f"UPDATE {S}.p SET code = 'px' WHERE id = 2", f"DELETE FROM {S}.p WHERE id = 3",
    f"UPDATE {S}.f SET t = 'changed', s = 'zz' WHERE id = 4",
    f"ALTER TABLE {S}.p DROP INDEX k_v",  # dropped while deferred: the replay's DROP finds none, the build skips it
    f"UPDATE {S}.g SET a = 100, j = JSON_OBJECT('name', 'moved') WHERE id = 5",
    f"UPDATE {S}.l SET v = 'na\u00efve', w = 'w-moved' WHERE id = 6",
    f"INSERT INTO {S}.k VALUES (1, 100)",
)


def test_every_table_and_column_kind_ends_with_the_upstreams_definition(
        mariadb_pair, spark, cdcflow_home, capsys, monkeypatch):
    up, down = mariadb_pair
    _fresh(up, down, *KINDS)
    ran = _move_between_chunks(monkeypatch, up, "p", 1, *WRITES)
    # one worker: the chunks are read in order, the tables with indexes to build first (f, g, h,
    # l, then p; c waits for its parent p), so p's first chunk before the writes; with several,
    # a parent's chunk read after a cascading change and a child's before it would leave the
    # child rows the cascade changed upstream (the binlog does not hold them)
    progress = _create(capsys, cdcflow_home, up, down, "ix4")
    assert ran and progress["status"] == "indexing"
    # the tables whose every chunk was read before the binlog moved have their indexes already
    # (each built as its copy ended); p and c, read after the writes, wait for the replay
    deferred = {t["table"]: t["clauses"] for t in snapshots.deferred("ix4")}
    assert deferred == {f"{S}.c": ["KEY `k_n` (`n`)"], f"{S}.p": ["KEY `k_v` (`v`)"]}, deferred
    assert _indexes(down, "f") == ["PRIMARY", "ft_t", "k_ignored", "k_prefix", "k_two", "sp_g"]
    assert _indexes(down, "l") == ["PRIMARY", "k_v", "uq_w"]
    assert "k_v" not in _indexes(down, "p")
    for _ in range(2):
        rc, err = cli_run(capsys, "ix4")
        assert rc == 0, err
    assert snapshots.progress("ix4")["status"] == "done"
    assert "k_v" not in _indexes(down, "p")  # dropped by the replay before its build, which skipped it
    _equal_to_upstream(up, down)


def test_a_copy_while_the_upstream_is_quiet_builds_its_indexes_itself(mariadb_pair, spark, cdcflow_home, capsys):
    """No change after the point: nothing to replay, so `create --snapshot` ends with the indexes built."""
    up, down = mariadb_pair
    _fresh(up, down, *MOVING)
    progress = _create(capsys, cdcflow_home, up, down, "ix5", workers=2)
    assert progress["status"] == "done" and progress["tables_indexed"] == 1, progress
    _equal_to_upstream(up, down)


def test_a_quiet_copy_builds_the_tables_indexes_at_once_each_as_the_upstream_has_it(
        mariadb_pair, spark, cdcflow_home, capsys):
    """`create` itself builds the indexes of the six tables that have deferred ones, three
    tables at once in sessions of their own, each recorded built."""
    up, down = mariadb_pair
    _fresh(up, down, *KINDS)
    progress = _create(capsys, cdcflow_home, up, down, "ix6", workers=3)
    assert progress["status"] == "done" and progress["tables_indexed"] == 6, progress
    assert snapshots.deferred("ix6") == []  # none left unbuilt
    _equal_to_upstream(up, down)


def test_on_a_tidb_downstream_each_deferred_index_is_an_add_index_job_the_next_cycles_await(
        tidb, mariadb_pair, spark, cdcflow_home, capsys, monkeypatch):
    """The TiDB stand-in (tidb_standin_helpers): the build sends ADD INDEX once, as an asynchronous
    job; while TiDB shows it running the copy stays `indexing`; once it is synced the next cycle
    finds the index and the copy is done, nothing sent twice."""
    up, down = mariadb_pair
    standin = tidb.new()
    up.execute(f"CREATE DATABASE {T}", f"CREATE TABLE {T}.t (id INT PRIMARY KEY, v INT, KEY iv (v))")
    up.execute(f"INSERT INTO {T}.t SELECT seq, seq * 10 FROM seq_1_to_30", database=T)
    ran = write_before_chunk(monkeypatch, up, lambda task, _seen: task["chunk"]["index"] == 2,
                             f"UPDATE {T}.t SET v = -1 WHERE id = 1")
    cfg = cdcflow_home / "ixt.toml"
    cfg.write_text(f"[filter]\nrules = ['{T}.*']\n")
    capsys.readouterr()
    rc = cli.main(["changefeed", "create", "-c", "ixt", "--source-uri", up.uri, "--sink-uri",
                   down.uri.replace("mysql://", "tidb://"), "--config", str(cfg), "--snapshot",
                   "--snapshot-chunk-size", "7", "--snapshot-workers", "1"])
    assert rc == 0, capsys.readouterr().err
    assert ran and snapshots.progress("ixt")["status"] == "indexing"
    assert [r[0] for r in down.query("SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS "
                                     "WHERE TABLE_SCHEMA = %s", (T,))] == ["PRIMARY"]

    standin.on_submit = "running"  # TiDB accepts the job and is still building after the submit wait
    run_cycle("ixt", spark=spark)
    assert standin.async_submissions == [f"ALTER TABLE `{T}`.`t` ADD KEY `iv` (`v`)"]
    assert [j.index_name for j in index_jobs.pending("ixt")] == ["iv"]
    assert snapshots.progress("ixt")["status"] == "indexing"

    standin.show("synced")
    run_cycle("ixt", spark=spark)
    assert index_jobs.pending("ixt") == [] and snapshots.progress("ixt")["status"] == "done"
    assert len(standin.async_submissions) == 1 and standin.queued_behind == []
    assert_consistent(up, down, [T])


OTHER = (f"CREATE TABLE {S}.o (id INT PRIMARY KEY, v INT, KEY k_v (v))",
         f"INSERT INTO {S}.o SELECT seq, seq FROM seq_1_to_30")


def _after_m_is_read(monkeypatch, up, *statements: str) -> list:
    """The binlog moves before m's last chunk (so m's indexes wait for the replay), and
    `statements` run once m is read whole, before o's first chunk: during the copy."""
    _move_between_chunks(monkeypatch, up, "m", 2, f"UPDATE {S}.o SET v = -1 WHERE id = 30")
    return write_before_chunk(monkeypatch, up, lambda task, _seen: task["table"] == f"{S}.o"
                              and task["chunk"]["index"] == 0, *statements)


def test_an_alter_that_drops_a_deferred_index_during_the_copy_runs_its_other_parts(
        mariadb_pair, spark, cdcflow_home, capsys, monkeypatch):
    """`DROP INDEX k_w, ADD COLUMN x` during the copy: the first cycle's DDLs up to the copy's end
    are replays, and a 1091 (k_w is not downstream) would be taken for the whole ALTER applied,
    x never added.  Its DROP part is taken out (k_w's clause with it), ADD COLUMN runs, and rows
    with x replicate."""
    up, down = mariadb_pair
    _fresh(up, down, *MOVING, *OTHER)
    ran = _after_m_is_read(monkeypatch, up, f"ALTER TABLE {S}.m DROP INDEX k_w, ADD COLUMN x INT",
                           f"INSERT INTO {S}.m VALUES (1000, 'new', 1, 42)", f"UPDATE {S}.m SET x = 7 WHERE id = 5")
    assert _create(capsys, cdcflow_home, up, down, "ix8")["status"] == "indexing" and ran
    up.execute(f"UPDATE {S}.m SET x = 8 WHERE id = 6")
    _cycle_builds(capsys, "ix8")
    assert down.query(f"SELECT id, x FROM {S}.m WHERE x IS NOT NULL ORDER BY id") == [(5, 7), (6, 8), (1000, 42)]
    _equal_to_upstream(up, down)


def test_a_drop_of_a_deferred_index_in_the_cycle_that_builds_is_not_run(
        mariadb_pair, spark, cdcflow_home, capsys, monkeypatch):
    """After the copy's last read (and its replay horizon) a DDL is no replay: a DROP INDEX of an
    index not built yet would fail downstream with 1091 and stop the changefeed.  In the cycle
    that builds, it removes the clause; a RENAME INDEX / ALTER INDEX IGNORED edits it."""
    up, down = mariadb_pair
    _fresh(up, down, f"CREATE TABLE {S}.r (id INT PRIMARY KEY, a INT, b INT, c INT, UNIQUE KEY ua (a), KEY kb (b), "
           "KEY kc (c) COMMENT 'c')", f"INSERT INTO {S}.r SELECT seq, seq, seq % 4, seq % 7 FROM seq_1_to_40")
    _move_between_chunks(monkeypatch, up, "r", 2, f"UPDATE {S}.r SET b = 9 WHERE id = 40")
    assert _create(capsys, cdcflow_home, up, down, "ix9")["status"] == "indexing"
    time.sleep(1.1)  # past the replay horizon: the rest of the second the copy ended in
    up.execute(f"DROP INDEX kb ON {S}.r", f"ALTER TABLE {S}.r RENAME INDEX ua TO ua2, ALTER INDEX kc IGNORED")
    _cycle_builds(capsys, "ix9")
    assert _indexes(down, "r") == ["PRIMARY", "kc", "ua2"]
    _equal_to_upstream(up, down)


def test_a_table_renamed_during_the_copy_gets_its_deferred_indexes_under_its_new_name(
        mariadb_pair, spark, cdcflow_home, capsys, monkeypatch):
    up, down = mariadb_pair
    _fresh(up, down, *MOVING, *OTHER)
    ran = _after_m_is_read(monkeypatch, up, f"RENAME TABLE {S}.m TO {S}.m2")
    assert _create(capsys, cdcflow_home, up, down, "ix10")["status"] == "indexing" and ran
    _cycle_builds(capsys, "ix10")
    assert _indexes(down, "m2") == ["PRIMARY", "k_w", "uq_u"]
    _equal_to_upstream(up, down)
