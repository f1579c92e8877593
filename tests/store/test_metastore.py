import os
import socket
import sqlite3
import subprocess
import sys
import time

import pytest

from cdcflow.core.errors import CdcflowError
from cdcflow.config.spec_store import Spec, load_spec, save_spec, spec_exists
from cdcflow.store import ddl_replacements, engine, index_jobs, metastore, removal, schema_versions
from cdcflow.store.events import RunFolder

HOST = socket.gethostname()
POS = {"file": "mysql-bin.000001", "pos": 4, "gtid": None}


@pytest.fixture(autouse=True)
def home(store_backend, tmp_path, monkeypatch):
    """Every test runs on each store backend (tests/store/conftest.py); CDCFLOW_HOME is private
    on both, as it also holds the specs and the runs' event folders."""
    monkeypatch.setenv("CDCFLOW_HOME", str(tmp_path))
    return tmp_path


def owner(run: str, pid: int | None = None, host: str = HOST) -> str:
    return f"{host}:{os.getpid() if pid is None else pid}:{run}"


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


@pytest.mark.sqlite_only  # the SQLite store's file under CDCFLOW_HOME
def test_store_lives_under_cdcflow_home(home):
    metastore.create_feed("cf", 100, POS)
    assert (home / "metadata.db").is_file()


def test_the_store_is_the_backend_under_test(store_backend, home):
    """With CDCFLOW_METASTORE_URL set, the store is that database, and no file under
    CDCFLOW_HOME: the tests said to run on MariaDB do."""
    metastore.create_feed("cf", 100, POS)
    assert (home / "metadata.db").exists() == (store_backend.name == "sqlite")
    if store_backend.name == "mariadb":
        assert store_backend.server.query("SELECT id FROM cdcflow_changefeeds",
                                          database=store_backend.database) == [("cf",)]


def test_create_and_get_feed():
    before = time.time()
    metastore.create_feed("cf", 100, POS)
    f = metastore.get_feed("cf")
    assert (f.id, f.state, f.checkpoint_ts, f.checkpoint_pos, f.resolved_ts) == ("cf", "normal", 100, POS, 100)
    assert f.error is None and f.lease_owner is None and f.ddl_in_flight_ts is None
    assert before <= f.created_at <= f.updated_at <= time.time()
    assert [x.id for x in metastore.list_feeds()] == ["cf"]


def test_unknown_feed():
    with pytest.raises(CdcflowError) as e:
        metastore.get_feed("nope")
    assert e.value.code == "CDCFLOW:ErrChangeFeedNotExists"
    assert "nope" in str(e.value) and "cdcflow changefeed create" in str(e.value)


def test_create_again_starts_over():
    metastore.create_feed("cf", 100, POS)
    metastore.start_run("cf", "r1", 100, POS, 0, False)
    metastore.advance_checkpoint("cf", 500, {"pos": 9})
    metastore.create_feed("cf", 50, POS)
    assert metastore.get_feed("cf").checkpoint_ts == 50
    assert metastore.recent_runs("cf") == []


def test_update_feed_round_trips_json_fields():
    metastore.create_feed("cf", 100, POS)
    err = {"code": "CDCFLOW:ErrX", "message": "boom", "retryable": True}
    metastore.update_feed("cf", state="warning", error=err, error_since=12.5, checkpoint_pos={"a": [1, 2]})
    f = metastore.get_feed("cf")
    assert (f.state, f.error, f.error_since, f.checkpoint_pos) == ("warning", err, 12.5, {"a": [1, 2]})
    metastore.update_feed("cf", error=None)
    assert metastore.get_feed("cf").error is None


def test_advance_checkpoint_never_moves_back():
    metastore.create_feed("cf", 100, POS)
    metastore.update_feed("cf", ddl_in_flight_ts=300)
    metastore.advance_checkpoint("cf", 300, {"pos": 300})
    f = metastore.get_feed("cf")
    assert (f.checkpoint_ts, f.checkpoint_pos, f.ddl_in_flight_ts) == (300, {"pos": 300}, None)
    progress = f.last_progress_at
    metastore.advance_checkpoint("cf", 200, {"pos": 200})  # a replay re-reaching an older barrier
    metastore.advance_checkpoint("cf", 300, {"pos": "same ts again"})
    f = metastore.get_feed("cf")
    assert (f.checkpoint_ts, f.checkpoint_pos, f.last_progress_at) == (300, {"pos": 300}, progress)
    metastore.advance_checkpoint("cf", 301, {"pos": 301})
    assert metastore.get_feed("cf").checkpoint_ts == 301


def test_create_again_forgets_what_the_old_one_owned():
    metastore.create_feed("cf", 1, POS)
    schema_versions.save("cf", [("d", "t", 1, None)])
    ddl_replacements.store("cf", 5, ["SELECT 1"])
    metastore.create_feed("cf", 1, POS)
    assert schema_versions.load("cf").versions == {} and ddl_replacements.load("cf") == {}


def test_remove_changefeed_deletes_everything_it_owns(home):
    for changefeed_id in ("cf", "other"):
        save_spec(Spec(id=changefeed_id, source_uri="mysql://u@h:3306/", sink_uri="mysql://u@h:3306/"))
        metastore.create_feed(changefeed_id, 1, POS)
        metastore.start_run(changefeed_id, "r", 1, POS, 0, False)
        metastore.acquire_lease(changefeed_id, owner("r"), "r")
        index_jobs.record(changefeed_id, 7, commit_ts=3, schema="d", table="t", index_name="i", query="q",
                          tidb_state="running")
        schema_versions.save(changefeed_id, [("d", "t", 1, None)])
        ddl_replacements.store(changefeed_id, 5, ["SELECT 1"])
        RunFolder(None, changefeed_id, "r").write_json("window.json", {})
    removal.remove_changefeed(load_spec("cf"))
    assert [f.id for f in metastore.list_feeds()] == ["other"]
    with pytest.raises(CdcflowError):
        metastore.get_run("cf", "r")
    assert index_jobs.pending("cf") == [] and schema_versions.load("cf").versions == {} and ddl_replacements.load("cf") == {}
    assert not spec_exists("cf") and not (home / "events" / "cf").exists()
    assert spec_exists("other") and (home / "events" / "other" / "r" / "window.json").is_file()
    assert [j.job_id for j in index_jobs.pending("other")] == [7] and ddl_replacements.load("other") == {5: ["SELECT 1"]}


@pytest.mark.sqlite_only  # builds the older store's table through the sqlite3 module, in the file
def test_a_store_of_an_older_cdcflow_opens_and_migrates(home):
    """Columns added since (retry_count, next_retry_at, replay_until) and tables a store
    created on first use (schema versions, DDL replacements) are added when it is opened."""
    with sqlite3.connect(home / "metadata.db") as db:
        db.execute("CREATE TABLE cdcflow_changefeeds (id VARCHAR(128) NOT NULL PRIMARY KEY, state VARCHAR(16) NOT "
                   "NULL, checkpoint_ts BIGINT NOT NULL, checkpoint_pos TEXT NOT NULL, resolved_ts BIGINT NOT NULL, "
                   "error TEXT, error_since FLOAT, state_since FLOAT NOT NULL, last_progress_at FLOAT NOT NULL, "
                   "ddl_in_flight_ts BIGINT, skip_ddl TEXT NOT NULL, lease_owner VARCHAR(256), lease_until FLOAT, "
                   "created_at FLOAT NOT NULL, updated_at FLOAT NOT NULL)")
        db.execute("INSERT INTO cdcflow_changefeeds VALUES ('old', 'stopped', 100, '{}', 100, NULL, NULL, 1.0, 1.0, "
                   "NULL, '[7]', NULL, NULL, 1.0, 1.0)")
    f = metastore.get_feed("old")
    assert (f.state, f.checkpoint_ts, f.skip_ddl, f.retry_count, f.next_retry_at, f.replay_until) == (
        "stopped", 100, [7], 0, None, 0)
    ddl_replacements.store("old", 200, ["SELECT 1"])
    schema_versions.save("old", [("d", "t", 100, None)])
    assert ddl_replacements.load("old") == {200: ["SELECT 1"]} and list(schema_versions.load("old").versions) == [("d",
                                                                                                                   "t")]



def _set_stamp(sql: str, *params) -> None:
    with engine.engine().begin() as c:
        c.execute(sql, *params)
    engine.close_all()


def test_a_store_at_the_declared_tables_opens_without_reading_them_back(home, monkeypatch):
    """A store records the stamp of the tables it was brought to (cdcflow_store_stamp); opened
    again at that stamp, no table's columns are read back; at another stamp (a store of another
    cdcflow), or without the stamp's table (one from before it), the checks run and the stamp is
    recorded."""
    metastore.create_feed("f", 1, POS)
    checked = []
    real = engine._bring_columns
    monkeypatch.setattr(engine, "_bring_columns", lambda store: (checked.append(store), real(store)))
    with engine.engine().connect() as c:
        assert engine._stamp_of(c) == engine.schema_stamp() > 0
    engine.close_all()
    assert metastore.get_feed("f").checkpoint_ts == 1 and checked == []
    _set_stamp("UPDATE cdcflow_store_stamp SET stamp = ?", engine.schema_stamp() - 1)
    assert metastore.get_feed("f").checkpoint_ts == 1 and len(checked) == 1
    _set_stamp("DROP TABLE cdcflow_store_stamp")
    assert metastore.get_feed("f").checkpoint_ts == 1 and len(checked) == 2
    engine.close_all()
    assert metastore.get_feed("f").checkpoint_ts == 1 and len(checked) == 2
    with engine.engine().connect() as c:
        assert engine._stamp_of(c) == engine.schema_stamp()
        assert c.execute("SELECT COUNT(*) FROM cdcflow_store_stamp").scalar() == 1


def test_a_changefeed_created_again_leaves_the_store_stamp(home):
    """delete_owned reaches every table a changefeed owns rows of, and not the store's own."""
    metastore.create_feed("f", 1, POS)
    metastore.create_feed("f", 2, POS)  # its old rows deleted in every table first
    with engine.engine().connect() as c:
        assert engine._stamp_of(c) == engine.schema_stamp()


# --- lease ---------------------------------------------------------------------------------

def test_lease_acquired_then_refused_to_another_run():
    metastore.create_feed("cf", 1, POS)
    assert metastore.acquire_lease("cf", owner("runA"), "runA")
    assert metastore.lease_holder("cf") == owner("runA")
    assert not metastore.acquire_lease("cf", owner("runB"), "runB")
    assert metastore.lease_holder("cf") == owner("runA")
    # a holder on another machine is not presumed dead
    metastore.update_feed("cf", lease_owner=owner("runA", 1, host="elsewhere.example"))
    assert not metastore.acquire_lease("cf", owner("runB"), "runB")


def test_lease_renewed_by_same_run_key_from_another_process():
    metastore.create_feed("cf", 1, POS)
    assert metastore.acquire_lease("cf", owner("run:2026-11-22T04:00:00+00:00", 1111), "run:2026-11-22T04:00:00+00:00",
                                   ttl=10)
    until = metastore.get_feed("cf").lease_until
    assert metastore.acquire_lease("cf", owner("run:2026-11-22T04:00:00+00:00"), "run:2026-11-22T04:00:00+00:00",
                                   ttl=100)
    f = metastore.get_feed("cf")
    assert f.lease_owner == owner("run:2026-11-22T04:00:00+00:00")
    assert f.lease_until > until


def test_lease_taken_over_after_expiry():
    metastore.create_feed("cf", 1, POS)
    assert metastore.acquire_lease("cf", owner("runA"), "runA", ttl=0.05)
    assert not metastore.acquire_lease("cf", owner("runB"), "runB")
    time.sleep(0.1)
    assert metastore.acquire_lease("cf", owner("runB"), "runB")
    assert metastore.lease_holder("cf") == owner("runB")


def test_lease_taken_over_when_holder_process_is_dead():
    metastore.create_feed("cf", 1, POS)
    pid = dead_pid()
    assert metastore.acquire_lease("cf", owner("runA", pid), "runA", ttl=3600)
    assert metastore.acquire_lease("cf", owner("runB"), "runB")
    assert metastore.lease_holder("cf") == owner("runB")


def test_lease_released_only_by_its_run():
    metastore.create_feed("cf", 1, POS)
    assert metastore.acquire_lease("cf", owner("manualXX2026"), "manualXX2026")
    # '_' and '%' in a run key are plain characters, not LIKE wildcards
    metastore.release_lease("cf", "manual__2026")
    metastore.release_lease("cf", "%")
    metastore.release_lease("cf", "runB")
    assert metastore.lease_holder("cf") == owner("manualXX2026")
    metastore.release_lease("cf", "manualXX2026")
    f = metastore.get_feed("cf")
    assert f.lease_owner is None and f.lease_until is None
    assert metastore.acquire_lease("cf", owner("runB"), "runB")


def test_lease_of_unknown_feed():
    assert metastore.acquire_lease("nope", owner("r"), "r") is False


def test_lease_owner_for_this_process():
    assert metastore.lease_owner_for("manual__2026-11-22T04:00:00+00:00") == \
        f"{HOST}:{os.getpid()}:manual__2026-11-22T04:00:00+00:00"


# --- runs ----------------------------------------------------------------------------------

def test_runs_start_get_update_merges_stats():
    metastore.create_feed("cf", 1, POS)
    before = time.time()
    r = metastore.start_run("cf", "r1", 100, POS, 900, True)
    assert (r.changefeed_id, r.run_id, r.status, r.start_ts, r.start_pos, r.target_ts, r.dry_run, r.stats) == (
        "cf", "r1", "running", 100, POS, 900, True, {})
    assert r.started_at >= before and r.ended_at is None and r.error is None
    metastore.update_run("cf", "r1", stats={"pull": {"events": 10}})
    metastore.update_run("cf", "r1", stats={"filter": {"kept": 7}, "pull": {"events": 11}})
    metastore.update_run("cf", "r1", status="done", ended_at=123.0)
    r = metastore.get_run("cf", "r1")
    assert r.stats == {"pull": {"events": 11}, "filter": {"kept": 7}}
    assert (r.status, r.ended_at) == ("done", 123.0)


def test_start_run_again_resets_it():
    metastore.create_feed("cf", 1, POS)
    metastore.start_run("cf", "r1", 100, POS, 0, False)
    metastore.update_run("cf", "r1", stats={"pull": 1}, status="failed", error="x")
    r = metastore.start_run("cf", "r1", 200, POS, 0, False)
    assert (r.status, r.start_ts, r.stats, r.error) == ("running", 200, {}, None)


def test_prune_runs_keeps_the_newest_and_every_open_one():
    metastore.create_feed("cf", 1, POS)
    metastore.create_feed("other", 1, POS)
    for i in range(6):
        metastore.start_run("cf", f"r{i}", i, POS, 0, False)
        metastore.update_run("cf", f"r{i}", started_at=1000.0 + i, status="running" if i == 0 else "done")
    metastore.start_run("other", "o0", 0, POS, 0, False)
    metastore.update_run("other", "o0", started_at=900.0, status="done")
    assert metastore.prune_runs("cf", keep=3) == 2  # r1 and r2; r0 is still open
    assert [r.run_id for r in metastore.recent_runs("cf")] == ["r5", "r4", "r3", "r0"]
    assert [r.run_id for r in metastore.recent_runs("other")] == ["o0"]  # another changefeed's runs stay
    assert metastore.prune_runs("cf", keep=10) == 0


def test_recent_runs_newest_first_and_unknown_run():
    metastore.create_feed("cf", 1, POS)
    for i in range(3):
        metastore.start_run("cf", f"r{i}", i, POS, 0, False)
        metastore.update_run("cf", f"r{i}", started_at=1000.0 + i)
    assert [r.run_id for r in metastore.recent_runs("cf")] == ["r2", "r1", "r0"]
    assert [r.run_id for r in metastore.recent_runs("cf", limit=1)] == ["r2"]
    with pytest.raises(CdcflowError, match="no cycle 'r9'"):
        metastore.get_run("cf", "r9")


@pytest.mark.sqlite_only  # SQLite's journal mode and synchronous level
def test_the_sqlite_store_writes_ahead_and_syncs_every_commit(home):
    """Write-ahead log, synchronous FULL: one sync per commit, none lost in a crash."""
    metastore.list_feeds()  # opens (creates) the store
    with sqlite3.connect(home / "metadata.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with engine.engine().connect() as c:
        assert c.execute("PRAGMA synchronous").scalar() == 2  # FULL


# on both backends: whatever the store, a commit made after another process's is the one seen
def test_a_write_after_another_process_closed_the_store_is_kept(home):
    """Another process (a cycle's task) opens the store, writes and exits while this one (the
    scheduler, the page) keeps its connection: this process's next commit must reach the file.
    Any descriptor of the database this process closes drops SQLite's locks on it, and the
    other process then deletes the log this one still writes into."""
    metastore.create_feed("cf", 100, POS)
    metastore.get_feed("cf")  # every call opens the store again, as the page's requests do
    other = "from cdcflow.store import metastore; metastore.update_feed('cf', retry_count=1)"
    subprocess.run([sys.executable, "-c", other], check=True, env=dict(os.environ))
    metastore.update_feed("cf", retry_count=2)
    read = "from cdcflow.store import metastore; print(metastore.get_feed('cf').retry_count)"
    seen = subprocess.run([sys.executable, "-c", read], check=True, env=dict(os.environ),
                          capture_output=True, text=True).stdout.strip()
    assert seen == "2"


def test_a_lease_this_process_renewed_moments_ago_is_fresh_and_no_other():
    metastore.create_feed("cf", 1, POS)
    assert not metastore.holds_fresh_lease("cf", owner("runA"), 30)  # no lease at all
    assert metastore.acquire_lease("cf", owner("runA"), "runA")
    assert metastore.holds_fresh_lease("cf", owner("runA"), 30)
    # the same run in another process (a DAG run's next task) holds no lease of its own yet
    assert not metastore.holds_fresh_lease("cf", owner("runA", 1111), 30)
    assert not metastore.holds_fresh_lease("cf", owner("runB"), 30)
    # renewed a minute ago: an hour's lease then ends 59 minutes from now, which is not fresh
    assert metastore.acquire_lease("cf", owner("runA"), "runA", ttl=metastore.LEASE_SECONDS - 60)
    assert not metastore.holds_fresh_lease("cf", owner("runA"), 30)
    assert metastore.holds_fresh_lease("cf", owner("runA"), 90)
    assert not metastore.holds_fresh_lease("nope", owner("runA"), 30)


# --- times: their precision and their order ------------------------------------------------
# The store keeps times as epoch seconds (about 1.8e9), compared to time.time() and to each
# other: a lease's freshness is judged within seconds, and runs started milliseconds apart (a
# `run --follow` ends several cycles a second) are listed and pruned in their order.  They must
# read back as written to well under that.  A single-precision FLOAT column keeps 24 bits, which
# rounds such a time to a multiple of 128 s, and MariaDB sends a FLOAT to its clients to 6
# significant digits: a multiple of 10,000 s.

WITHIN = 0.01  # seconds a stored time may differ from the time.time() it was written from


def assert_written_between(value: float | None, low: float, high: float, what: str) -> None:
    """`value` is a time written from a time.time() read between `low` and `high`."""
    assert value is not None and low - WITHIN <= value <= high + WITHIN, \
        f"{what} read back as {value!r}, written between {low!r} and {high!r}"


def test_a_changefeeds_times_read_back_as_written():
    before = time.time()
    metastore.create_feed("cf", 1, POS)
    after = time.time()
    f = metastore.get_feed("cf")
    for what in ("created_at", "updated_at", "state_since", "last_progress_at"):
        assert_written_between(getattr(f, what), before, after, what)
    time.sleep(0.005)
    before = time.time()
    metastore.advance_checkpoint("cf", 2, {"pos": 2})
    after = time.time()
    f = metastore.get_feed("cf")
    assert_written_between(f.last_progress_at, before, after, "last_progress_at")
    assert f.last_progress_at > f.created_at  # progress a few milliseconds after the creation
    now = time.time()
    metastore.update_feed("cf", error_since=now, next_retry_at=now + 0.25)
    f = metastore.get_feed("cf")
    assert_written_between(f.error_since, now, now, "error_since")
    assert_written_between(f.next_retry_at, now + 0.25, now + 0.25, "next_retry_at")


def test_a_lease_reads_back_as_written_and_is_fresh_at_once():
    metastore.create_feed("cf", 1, POS)
    before = time.time()
    assert metastore.acquire_lease("cf", owner("runA"), "runA")
    after = time.time()
    until = metastore.get_feed("cf").lease_until
    assert_written_between(until, before + metastore.LEASE_SECONDS, after + metastore.LEASE_SECONDS, "lease_until")
    # taken this instant: fresh however short the window asked
    assert metastore.holds_fresh_lease("cf", owner("runA"), within=5)
    # a short lease ends when it says, neither a minute early nor a minute late
    # (a second: a loaded machine may take a few hundred milliseconds between two statements)
    assert metastore.acquire_lease("cf", owner("runA"), "runA", ttl=1.0)
    assert not metastore.acquire_lease("cf", owner("runB"), "runB")
    time.sleep(1.1)
    assert metastore.acquire_lease("cf", owner("runB"), "runB")


def test_a_runs_times_read_back_as_written():
    metastore.create_feed("cf", 1, POS)
    before = time.time()
    metastore.start_run("cf", "r1", 1, POS, 0, False)
    after = time.time()
    ended = time.time()
    metastore.update_run("cf", "r1", status="done", ended_at=ended)
    r = metastore.get_run("cf", "r1")
    assert_written_between(r.started_at, before, after, "started_at")
    assert_written_between(r.ended_at, ended, ended, "ended_at")


# Run ids whose order is neither the order they start in nor its reverse: runs listed in
# their key's order (or its reverse), as a tie on started_at may leave them, do not pass.
RUN_IDS = ("run-2", "run-4", "run-1", "run-3", "run-5")


def start_runs_milliseconds_apart(changefeed_id: str) -> None:
    for run_id in RUN_IDS:
        metastore.start_run(changefeed_id, run_id, 1, POS, 0, False)
        time.sleep(0.005)


def test_runs_started_milliseconds_apart_are_listed_newest_first():
    metastore.create_feed("cf", 1, POS)
    start_runs_milliseconds_apart("cf")
    assert [r.run_id for r in metastore.recent_runs("cf")] == list(reversed(RUN_IDS))
    assert [r.run_id for r in metastore.recent_runs("cf", limit=2)] == ["run-5", "run-3"]


def test_prune_runs_tells_apart_runs_started_milliseconds_apart():
    metastore.create_feed("cf", 1, POS)
    start_runs_milliseconds_apart("cf")
    for run_id in RUN_IDS:
        metastore.update_run("cf", run_id, status="done")
    assert metastore.prune_runs("cf", keep=2) == 3
    assert [r.run_id for r in metastore.recent_runs("cf")] == ["run-5", "run-3"]
