"""TiCDC's Changefeed Overview's states end to end: each numbered transition and each error class, driven through
the CLI and real cycles against a MariaDB pair of this module's own (its tests stop the
downstream and purge the upstream's binlogs, which the session's shared pair must not see).

Time-based rules (backoff, changefeed-error-stuck-duration, gc-ttl) are tested by moving the
stored times back, not by waiting."""

from __future__ import annotations

import io
import json
import time

import pytest
import e2e_helpers
from e2e_helpers import assert_consistent, backdate, create_changefeed

from cdcflow import cli
from cdcflow.changefeed import commands, upstream_id
from cdcflow.core import tso
from cdcflow.core.errors import CdcflowError
from cdcflow.core.uri import parse_source_uri
from cdcflow_devtools.mariadb import free_port
from cdcflow.launch.in_process import run_cycle
from cdcflow.store import metastore
from cdcflow.store.events import RunFolder

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def own_pair(tmp_path_factory):
    with e2e_helpers.own_pair(tmp_path_factory, "lifecycle-mariadb") as pair:
        yield pair


def cli_ok(capsys, *args: str) -> str:
    capsys.readouterr()
    rc = cli.main(list(args))
    out = capsys.readouterr()
    assert rc == 0, out.err
    return out.out


def updated(out: str) -> dict:
    """What `changefeed update` printed after its diff: the changes applied, as JSON."""
    head, done, report = out.partition(" successfully!\n")
    assert done, out
    return json.loads(report)


def cli_fails(capsys, *args: str) -> str:
    """A refused command: exit 1 and one line on stderr, no traceback."""
    capsys.readouterr()
    rc = cli.main(list(args))
    out = capsys.readouterr()
    assert rc == 1, out.out
    assert "Traceback" not in out.err and len(out.err.strip().splitlines()) == 1, out.err
    return out.err


def simple(capsys, changefeed_id: str) -> dict:
    return json.loads(cli_ok(capsys, "changefeed", "query", "-s", "-c", changefeed_id))


def event_folders(changefeed_id: str) -> list[str]:
    from pathlib import Path

    parent = Path(RunFolder(None, changefeed_id, "_").root).parent
    return sorted(p.name for p in parent.iterdir()) if parent.exists() else []


def test_pause_and_resume_1_2(own_pair, spark, cdcflow_home, capsys):
    up, down = own_pair
    create_changefeed(capsys, up, down, "lc-pause", "[filter]\nrules = ['lc_pause.*']\n")
    up.execute("CREATE DATABASE lc_pause", "CREATE TABLE lc_pause.t (id INT PRIMARY KEY, v INT)",
               "INSERT INTO lc_pause.t VALUES (1, 1)")
    run_cycle("lc-pause", spark=spark)
    assert_consistent(up, down, ["lc_pause"])
    checkpoint = simple(capsys, "lc-pause")["checkpoint_tso"]

    assert "normal -> stopped" in cli_ok(capsys, "changefeed", "pause", "-c", "lc-pause")  # ①
    assert simple(capsys, "lc-pause")["state"] == "stopped"
    up.execute("INSERT INTO lc_pause.t VALUES (2, 2)")
    skipped = run_cycle("lc-pause", spark=spark)
    assert skipped["skipped"] and "paused (stopped)" in skipped["reason"]
    assert down.query("SELECT COUNT(*) FROM lc_pause.t") == [(1,)]
    assert simple(capsys, "lc-pause")["checkpoint_tso"] == checkpoint
    assert "a stopped changefeed cannot take 'pause'" in cli_fails(capsys, "changefeed", "pause", "-c", "lc-pause")

    assert "stopped -> normal" in cli_ok(capsys, "changefeed", "resume", "-c", "lc-pause")  # ②
    run_cycle("lc-pause", spark=spark)
    assert_consistent(up, down, ["lc_pause"])
    status = simple(capsys, "lc-pause")
    assert status["state"] == "normal" and status["checkpoint_tso"] > checkpoint and status["error"] is None
    assert abs(tso.physical_ms(status["checkpoint_tso"]) / 1000 - time.time()) < 120
    assert "a normal changefeed cannot take 'resume'" in cli_fails(capsys, "changefeed", "resume", "-c", "lc-pause")


def test_unreachable_downstream_warning_backoff_and_back_to_normal_3_4(own_pair, spark, cdcflow_home, capsys):
    up, down = own_pair
    create_changefeed(capsys, up, down, "lc-retry", "[filter]\nrules = ['lc_retry.*']\n")
    up.execute("CREATE DATABASE lc_retry", "CREATE TABLE lc_retry.t (id INT PRIMARY KEY, v INT)",
               "INSERT INTO lc_retry.t VALUES (1, 1), (2, 2)")
    checkpoint = simple(capsys, "lc-retry")["checkpoint_tso"]
    down.stop()
    try:
        with pytest.raises(CdcflowError) as failure:  # ③
            run_cycle("lc-retry", spark=spark)
        assert failure.value.retryable
        feed = metastore.get_feed("lc-retry")
        assert feed.state == "warning" and feed.retry_count == 1 and feed.checkpoint_ts == checkpoint
        assert 8 <= feed.next_retry_at - time.time() <= 10  # TiCDC's first backoff: 10 s
        status = simple(capsys, "lc-retry")
        assert status["state"] == "warning" and status["error"]["code"] == "CDCFLOW:ErrDownstreamUnreachable"
        assert f"127.0.0.1:{down.port}" in status["error"]["message"] and "root:***@" in status["error"]["message"]
        failed_folders = event_folders("lc-retry")
        assert len(failed_folders) == 1  # the failed cycle's events stay until a later cycle ends

        # before the next retry time a cycle does nothing and says why
        waiting = run_cycle("lc-retry", spark=spark)
        assert waiting["skipped"] and "next retry" in waiting["reason"] and "1 failed attempt" in waiting["reason"]

        backdate("lc-retry", 11, "next_retry_at")
        with pytest.raises(CdcflowError):
            run_cycle("lc-retry", spark=spark)
        feed = metastore.get_feed("lc-retry")
        assert feed.state == "warning" and feed.retry_count == 2
        assert 18 <= feed.next_retry_at - time.time() <= 20  # doubled
        assert event_folders("lc-retry") != failed_folders and len(event_folders("lc-retry")) == 1
    finally:
        down.start()
    backdate("lc-retry", 21, "next_retry_at")
    result = run_cycle("lc-retry", spark=spark)  # ④
    assert not result.get("skipped")
    assert_consistent(up, down, ["lc_retry"])
    feed = metastore.get_feed("lc-retry")
    assert feed.state == "normal" and feed.checkpoint_ts > checkpoint and feed.error is None
    assert feed.retry_count == 0 and feed.next_retry_at is None
    assert event_folders("lc-retry") == []  # event store GC: nothing left below the checkpoint


def test_lock_wait_timeout_is_retryable(own_pair, spark, cdcflow_home, capsys):
    up, down = own_pair
    create_changefeed(capsys, up, down, "lc-lock", "[filter]\nrules = ['lc_lock.*']\n")
    up.execute("CREATE DATABASE lc_lock", "CREATE TABLE lc_lock.t (id INT PRIMARY KEY, v INT)",
               "INSERT INTO lc_lock.t VALUES (1, 1)")
    run_cycle("lc-lock", spark=spark)
    up.execute("UPDATE lc_lock.t SET v = 2 WHERE id = 1")
    down.execute("SET GLOBAL innodb_lock_wait_timeout = 1")
    holder = down.connect()
    try:
        with holder.cursor() as cur:
            cur.execute("BEGIN")
            cur.execute("SELECT * FROM lc_lock.t WHERE id = 1 FOR UPDATE")
        with pytest.raises(CdcflowError) as failure:
            run_cycle("lc-lock", spark=spark)
        assert failure.value.retryable and "1205" in str(failure.value)
        assert simple(capsys, "lc-lock")["state"] == "warning"
    finally:
        holder.rollback()
        holder.close()
        down.execute("SET GLOBAL innodb_lock_wait_timeout = 50")
    backdate("lc-lock", 11, "next_retry_at")
    run_cycle("lc-lock", spark=spark)
    assert_consistent(up, down, ["lc_lock"])
    assert simple(capsys, "lc-lock")["state"] == "normal"


def test_stuck_longer_than_error_stuck_duration_fails_then_resumes_5_9(own_pair, spark, cdcflow_home, capsys):
    up, down = own_pair
    create_changefeed(capsys, up, down, "lc-stuck", "changefeed-error-stuck-duration = '40m'\n"
                      "[filter]\nrules = ['lc_stuck.*']\n")
    up.execute("CREATE DATABASE lc_stuck", "CREATE TABLE lc_stuck.t (id INT PRIMARY KEY)",
               "INSERT INTO lc_stuck.t VALUES (1)")
    down.stop()
    try:
        with pytest.raises(CdcflowError):
            run_cycle("lc-stuck", spark=spark)
        assert simple(capsys, "lc-stuck")["state"] == "warning"
        # 39 minutes without progress: still warning, retried
        backdate("lc-stuck", 39 * 60, "last_progress_at", "error_since", "next_retry_at")
        with pytest.raises(CdcflowError):
            run_cycle("lc-stuck", spark=spark)
        assert simple(capsys, "lc-stuck")["state"] == "warning"
        backdate("lc-stuck", 2 * 60, "last_progress_at", "error_since", "next_retry_at")  # 41 minutes
        with pytest.raises(CdcflowError):
            run_cycle("lc-stuck", spark=spark)  # ⑤
        status = simple(capsys, "lc-stuck")
        assert status["state"] == "failed" and "changefeed-error-stuck-duration 2400 s" in status["error"]["message"]
        assert run_cycle("lc-stuck", spark=spark)["skipped"]  # failed: no more automatic retries
    finally:
        down.start()
    assert "failed -> normal" in cli_ok(capsys, "changefeed", "resume", "-c", "lc-stuck")  # ⑨
    run_cycle("lc-stuck", spark=spark)
    assert_consistent(up, down, ["lc_stuck"])
    assert simple(capsys, "lc-stuck")["state"] == "normal"


def test_unrecoverable_error_fails_directly_6(own_pair, spark, cdcflow_home, capsys):
    up, down = own_pair
    create_changefeed(capsys, up, down, "lc-fatal", "[filter]\nrules = ['lc_fatal.*']\n")
    # a RENAME the filter forbids (an unselected table moved into the selection): no retry fixes it
    up.execute("CREATE DATABASE lc_fatal", "CREATE DATABASE lc_fatal_out",
               "CREATE TABLE lc_fatal_out.t (id INT PRIMARY KEY)", "RENAME TABLE lc_fatal_out.t TO lc_fatal.t")
    with pytest.raises(CdcflowError) as failure:
        run_cycle("lc-fatal", spark=spark)
    assert not failure.value.retryable and failure.value.code == "CDCFLOW:ErrSyncRenameTableFailed"
    feed = metastore.get_feed("lc-fatal")
    assert feed.state == "failed" and feed.retry_count == 0 and feed.next_retry_at is None
    assert "lc_fatal.t" in feed.error["message"]
    skipped = run_cycle("lc-fatal", spark=spark)
    assert skipped["skipped"] and "has failed" in skipped["reason"] and "lc_fatal.t" in skipped["reason"]


def test_target_ts_reached_finishes_with_only_the_earlier_write_7(own_pair, spark, cdcflow_home, capsys):
    up, down = own_pair
    up.execute("CREATE DATABASE lc_target", "CREATE TABLE lc_target.t (id INT PRIMARY KEY, v VARCHAR(10))")
    create_changefeed(capsys, up, down, "lc-target", "[filter]\nrules = ['lc_target.*']\n")
    down.execute("CREATE DATABASE lc_target", "CREATE TABLE lc_target.t (id INT PRIMARY KEY, v VARCHAR(10))")
    up.execute("INSERT INTO lc_target.t VALUES (1, 'before')")
    e2e_helpers.next_second()  # binlog times have one-second precision
    between = tso.now()
    e2e_helpers.next_second(tso.physical_ms(between) / 1000)
    up.execute("INSERT INTO lc_target.t VALUES (2, 'after')")
    assert "can only be updated while stopped or failed" in cli_fails(
        capsys, "changefeed", "update", "-c", "lc-target", "--target-ts", str(between))
    cli_ok(capsys, "changefeed", "pause", "-c", "lc-target")
    when = tso.to_text(between)  # the date-time form of the same ts (millisecond precision)
    out = cli_ok(capsys, "changefeed", "update", "-c", "lc-target", "--target-ts", when, "--no-confirm")
    assert updated(out)["target_ts"] == {"old": 0, "new": tso.parse(when)}
    cli_ok(capsys, "changefeed", "resume", "-c", "lc-target")
    run_cycle("lc-target", spark=spark)
    status = simple(capsys, "lc-target")
    assert status["state"] == "finished"  # ⑦
    assert down.query("SELECT id, v FROM lc_target.t") == [(1, "before")]
    assert status["checkpoint_tso"] >= tso.parse(when)
    assert run_cycle("lc-target", spark=spark)["skipped"]
    assert "lc-target" not in [x["id"] for x in json.loads(cli_ok(capsys, "changefeed", "list"))]
    listed = json.loads(cli_ok(capsys, "changefeed", "list", "-a"))
    assert [x["summary"]["state"] for x in listed if x["id"] == "lc-target"] == ["finished"]


def test_stopped_longer_than_gc_ttl_fails_and_cannot_resume_8(own_pair, spark, cdcflow_home, capsys, monkeypatch):
    up, down = own_pair
    create_changefeed(capsys, up, down, "lc-ttl", "gc-ttl = 3600\n[filter]\nrules = ['lc_ttl.*']\n")
    up.execute("CREATE DATABASE lc_ttl", "CREATE TABLE lc_ttl.t (id INT PRIMARY KEY)",
               "INSERT INTO lc_ttl.t VALUES (1)")
    cli_ok(capsys, "changefeed", "pause", "-c", "lc-ttl")
    backdate("lc-ttl", 3500, "state_since")
    assert run_cycle("lc-ttl", spark=spark)["skipped"]
    assert simple(capsys, "lc-ttl")["state"] == "stopped"  # within gc-ttl
    backdate("lc-ttl", 200, "state_since")  # 3700 s > gc-ttl 3600 s
    skipped = run_cycle("lc-ttl", spark=spark)  # ⑧
    assert skipped["skipped"] and "ErrGCTTLExceeded" not in skipped["reason"] and "gc-ttl" in skipped["reason"]
    status = simple(capsys, "lc-ttl")
    assert status["state"] == "failed" and status["error"]["code"] == "CDCFLOW:ErrGCTTLExceeded"
    err = cli_fails(capsys, "changefeed", "resume", "-c", "lc-ttl")
    assert "cannot be resumed" in err and "ErrGCTTLExceeded" in err and "--overwrite-checkpoint-ts" in err
    assert simple(capsys, "lc-ttl")["state"] == "failed"
    # the way back: a new checkpoint the upstream still holds (the rows before it are not replicated)
    for answer in ("n\n", "\n"):  # the operator answers no, or just presses Enter: the safe answer, no
        monkeypatch.setattr("sys.stdin", io.StringIO(answer))
        capsys.readouterr()
        assert cli.main(["changefeed", "resume", "-c", "lc-ttl", "--overwrite-checkpoint-ts", "now"]) == 1
        out = capsys.readouterr()
        assert "You are overwriting the checkpoint of changefeed lc-ttl" in out.out and "[y/N]" in out.out
        assert "cancelled" in out.err
        assert simple(capsys, "lc-ttl")["state"] == "failed"
    e2e_helpers.next_second()  # a ts reads its whole binlog second again: let "now" be a second after row 1
    cli_ok(capsys, "changefeed", "resume", "-c", "lc-ttl", "--overwrite-checkpoint-ts", "now", "--no-confirm")
    up.execute("INSERT INTO lc_ttl.t VALUES (2)")
    down.execute("CREATE DATABASE lc_ttl", "CREATE TABLE lc_ttl.t (id INT PRIMARY KEY)")
    run_cycle("lc-ttl", spark=spark)
    assert simple(capsys, "lc-ttl")["state"] == "normal"
    assert down.query("SELECT id FROM lc_ttl.t") == [(2,)]


def test_gc_ttl_also_expires_a_failed_changefeed(own_pair, cdcflow_home, capsys):
    up, down = own_pair
    create_changefeed(capsys, up, down, "lc-ttl-failed", "gc-ttl = 3600\n")
    metastore.update_feed("lc-ttl-failed", state="failed", state_since=time.time() - 4000,
                          error={"code": "CDCFLOW:ErrExecDDLFailed", "message": "x", "retryable": False})
    err = cli_fails(capsys, "changefeed", "resume", "-c", "lc-ttl-failed")
    assert "ErrGCTTLExceeded" in err
    assert simple(capsys, "lc-ttl-failed")["error"]["code"] == "CDCFLOW:ErrGCTTLExceeded"


def test_purged_binlog_snapshot_lost_and_start_ts_before_gc(own_pair, spark, cdcflow_home, capsys):
    up, down = own_pair
    create_changefeed(capsys, up, down, "lc-purge", "[filter]\nrules = ['lc_purge.*']\n")
    create_changefeed(capsys, up, down, "lc-purge-paused", "[filter]\nrules = ['lc_purge.*']\n")
    cli_ok(capsys, "changefeed", "pause", "-c", "lc-purge-paused")
    up.execute("CREATE DATABASE lc_purge", "CREATE TABLE lc_purge.t (id INT PRIMARY KEY)",
               "INSERT INTO lc_purge.t VALUES (1)")
    long_ago = tso.now()
    e2e_helpers.next_second()  # binlog files carry their opening time in whole seconds
    up.execute("FLUSH BINARY LOGS")
    e2e_helpers.next_second()
    up.execute("FLUSH BINARY LOGS")
    head = up.query("SHOW MASTER STATUS")[0][0]
    e2e_helpers.purge_binlogs_to(up, head)
    with pytest.raises(CdcflowError) as failure:
        run_cycle("lc-purge", spark=spark)
    assert failure.value.code == "CDCFLOW:ErrSnapshotLostByGC" and not failure.value.retryable
    status = simple(capsys, "lc-purge")
    assert status["state"] == "failed" and status["error"]["code"] == "CDCFLOW:ErrSnapshotLostByGC"
    assert "cannot be resumed" in cli_fails(capsys, "changefeed", "resume", "-c", "lc-purge")
    # the same situation found by resume rather than by a cycle: the same code
    with pytest.raises(CdcflowError) as paused:
        commands.resume("lc-purge-paused")
    assert paused.value.code == "CDCFLOW:ErrSnapshotLostByGC" and "lc-purge-paused" in str(paused.value)
    assert simple(capsys, "lc-purge-paused")["state"] == "stopped"
    # a start-ts the upstream no longer holds is refused, at create and at resume
    err = cli_fails(capsys, "changefeed", "create", "-c", "lc-purge-2", "--source-uri", up.uri,
                    "--sink-uri", down.uri, "--start-ts", str(long_ago))
    assert "lc-purge-2" in err and "older than the oldest change the upstream still holds" in err
    err = cli_fails(capsys, "changefeed", "resume", "-c", "lc-purge", "--no-confirm",
                    "--overwrite-checkpoint-ts", tso.to_text(long_ago))
    assert "older than the oldest change" in err
    cli_ok(capsys, "changefeed", "resume", "-c", "lc-purge", "--no-confirm", "--overwrite-checkpoint-ts", "now")
    run_cycle("lc-purge", spark=spark)
    assert simple(capsys, "lc-purge")["state"] == "normal"


def test_a_start_ts_reads_its_whole_binlog_second_again(mariadb_pair):
    """A binlog dates a transaction to the second: a ts inside that second cannot tell whether
    the transaction came before it, so the start position is before the transaction (a replay,
    written idempotently) rather than after it (a loss)."""
    from cdcflow.core.uri import parse_source_uri
    from cdcflow.source.binlog import position_for_ts

    up, _ = mariadb_pair
    second = int(time.time()) + 5  # a second no other transaction of this test run is dated to
    up.execute("CREATE DATABASE IF NOT EXISTS lc_second", "CREATE TABLE IF NOT EXISTS lc_second.t (id INT)")
    before = up.binlog_head()
    up.execute(f"SET timestamp = {second}", "INSERT INTO lc_second.t VALUES (1)")
    after = up.binlog_head()
    source = parse_source_uri(up.uri)
    assert position_for_ts(source, 4242, tso.compose(second * 1000 + 999)).key() == before
    assert position_for_ts(source, 4242, tso.compose((second + 1) * 1000)).key() == after
    assert tso.second_end(tso.compose(second * 1000 + 1, 7)) == tso.compose((second + 1) * 1000) - 1


def test_cli_errors_and_field_names(own_pair, cdcflow_home, capsys):
    up, down = own_pair
    assert "no-such" in cli_fails(capsys, "changefeed", "query", "-c", "no-such")
    for command in ("pause", "resume", "update", "remove"):
        assert "no-such" in cli_fails(capsys, "changefeed", command, "-c", "no-such")
    with pytest.raises(SystemExit) as usage:  # argparse: a ts that is neither a TSO nor a date-time
        cli.main(["changefeed", "resume", "-c", "no-such", "--overwrite-checkpoint-ts", "yesterday"])
    err = capsys.readouterr().err
    assert usage.value.code == 2 and "neither a TSO" in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith("Error: cdcflow changefeed resume: argument --overwrite-checkpoint-ts")
    create_changefeed(capsys, up, down, "lc-cli", "")
    simple_out = simple(capsys, "lc-cli")
    assert list(simple_out) == ["upstream_id", "namespace", "id", "state", "checkpoint_tso", "checkpoint_time",
                                "error"]
    full = json.loads(cli_ok(capsys, "changefeed", "query", "-c", "lc-cli"))
    for key in ("id", "state", "checkpoint_tso", "checkpoint_time", "error", "sink_uri", "config", "create_time",
                "start_ts", "target_ts", "resolved_ts", "creator_version"):
        assert key in full, key
    assert "password" not in full["sink_uri"] and up.uri.split("@")[0].split(":")[-1] not in full["sink_uri"]
    listed = json.loads(cli_ok(capsys, "changefeed", "list"))
    assert listed == [{"id": "lc-cli", "namespace": "default",
                       "summary": {"state": "normal", "tso": full["checkpoint_tso"],
                                   "checkpoint": full["checkpoint_time"], "error": None}}]
    assert "pause it first" in cli_fails(capsys, "changefeed", "update", "-c", "lc-cli", "--sink-uri", down.uri)
    cli_ok(capsys, "changefeed", "pause", "-c", "lc-cli")
    assert "nothing to update" in cli_fails(capsys, "changefeed", "update", "-c", "lc-cli")
    # a new config is reported as the keys it changes, not as two TOML texts
    new_config = cdcflow_home / "lc-cli-new.toml"
    new_config.write_text("[filter]\nrules = ['lc_cli.*']\n[sink]\nworker-count = 2\n")
    out = cli_ok(capsys, "changefeed", "update", "-c", "lc-cli", "--config", str(new_config), "--no-confirm")
    assert updated(out) == {"config": {
        "filter.rules": {"old": ["*.*"], "new": ["lc_cli.*"]}, "sink.worker-count": {"old": 4, "new": 2}}}
    assert "is later than the current TSO" in cli_fails(capsys, "changefeed", "resume", "-c", "lc-cli",
                                                        "--no-confirm", "--overwrite-checkpoint-ts",
                                                        str(tso.now() + (3600_000 << 18)))
    # an unreachable sink is refused at create and at update, in one line naming it
    closed = f"mysql://root:cdcflow@127.0.0.1:{free_port()}/"
    err = cli_fails(capsys, "changefeed", "update", "-c", "lc-cli", "--sink-uri", closed)
    assert "cannot connect to the sink mysql://root:***@127.0.0.1:" in err and "lc-cli" in err
    err = cli_fails(capsys, "changefeed", "create", "-c", "lc-cli-2", "--source-uri", up.uri, "--sink-uri", closed)
    assert "cannot connect to the sink" in err and "lc-cli-2" in err
    assert json.loads(cli_ok(capsys, "changefeed", "query", "-c", "lc-cli"))["sink_uri"] == \
        down.uri.replace(":cdcflow@", ":***@")


def test_update_shows_the_diff_and_asks_enter_keeps_everything(own_pair, cdcflow_home, capsys, monkeypatch):
    """TiCDC's update: the diff of what changes, then "apply changes above? [y/N]" unless
    --no-confirm; a config file laid over the current one, so a file of only [filter] keeps
    the sink's worker-count (TiCDC decodes the file onto the changefeed's config)."""
    up, down = own_pair
    create_changefeed(capsys, up, down, "lc-upd", "")
    cli_ok(capsys, "changefeed", "pause", "-c", "lc-upd")
    sink_and_rules = cdcflow_home / "lc-upd-1.toml"
    sink_and_rules.write_text("[filter]\nrules = ['lc_upd.*']\n[sink]\nworker-count = 2\n")
    args = ["changefeed", "update", "-c", "lc-upd", "--config", str(sink_and_rules)]
    diff = ("Diff of changefeed lc-upd:\n"
            '  config.filter.rules: ["*.*"] -> ["lc_upd.*"]\n'
            "  config.sink.worker-count: 4 -> 2\n"
            "Could you agree to apply changes above to changefeed lc-upd? [y/N] ")

    def config() -> dict:
        return json.loads(cli_ok(capsys, "changefeed", "query", "-c", "lc-upd"))["config"]

    for answer in ("\n", "n\n", ""):  # Enter, no, and a closed stdin: nothing is changed
        monkeypatch.setattr("sys.stdin", io.StringIO(answer))
        capsys.readouterr()
        assert cli.main(args) == 1
        out = capsys.readouterr()
        assert out.out.startswith(diff), out.out
        assert "changefeed lc-upd: update cancelled: nothing was changed" in out.err
        assert "pass --no-confirm" in out.err and len(out.err.strip().splitlines()) == 1
        assert (config()["filter"]["rules"], config()["sink"]["worker-count"]) == (["*.*"], 4)
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    out = cli_ok(capsys, *args)
    assert out.startswith(diff) and updated(out) == {"config": {
        "filter.rules": {"old": ["*.*"], "new": ["lc_upd.*"]}, "sink.worker-count": {"old": 4, "new": 2}}}
    assert (config()["filter"]["rules"], config()["sink"]["worker-count"]) == (["lc_upd.*"], 2)

    # only [filter]: the diff names the one key that changes; worker-count keeps its 2
    only_filter = cdcflow_home / "lc-upd-2.toml"
    only_filter.write_text("[filter]\nrules = ['lc_upd.*', 'lc_upd2.*']\n")
    out = cli_ok(capsys, "changefeed", "update", "-c", "lc-upd", "--config", str(only_filter), "--no-confirm")
    assert out.startswith('Diff of changefeed lc-upd:\n  config.filter.rules: ["lc_upd.*"] -> '
                          '["lc_upd.*", "lc_upd2.*"]\nUpdate changefeed lc-upd successfully!\n'), out
    assert config()["sink"]["worker-count"] == 2 and config()["filter"]["rules"] == ["lc_upd.*", "lc_upd2.*"]

    # the values it has already: nothing to ask, nothing written (TiCDC: "do nothing")
    for same in (["--config", str(only_filter)], ["--sink-uri", down.uri]):
        out = cli_ok(capsys, "changefeed", "update", "-c", "lc-upd", *same)
        assert out == "Changefeed lc-upd already has the values given: nothing to update\n", out
    # a file that validates alone but not over the current config is refused before anything is asked
    cluster = cdcflow_home / "lc-upd-3.toml"
    cluster.write_text("[cdcflow]\nspark-master = 'spark://127.0.0.1:7077'\nevent-store = 'hdfs://nn:8020/cdc'\n")
    cli_ok(capsys, "changefeed", "update", "-c", "lc-upd", "--config", str(cluster), "--no-confirm")
    remote = cdcflow_home / "lc-upd-4.toml"
    remote.write_text("[cdcflow]\nspark-remote = 'sc://127.0.0.1:15002'\n")
    err = cli_fails(capsys, "changefeed", "update", "-c", "lc-upd", "--config", str(remote))
    assert "over changefeed lc-upd's config" in err and "spark-master and cdcflow.spark-remote are both set" in err


def test_create_paused_waits_for_resume_and_counts_the_tables_the_filter_keeps(own_pair, spark, cdcflow_home,
                                                                               capsys):
    up, down = own_pair
    for db in (up, down):
        db.execute("DROP DATABASE IF EXISTS lc_paused", "DROP DATABASE IF EXISTS lc_paused_not")
    up.execute("CREATE DATABASE lc_paused", "CREATE TABLE lc_paused.a (id INT PRIMARY KEY)",
               "CREATE TABLE lc_paused.b (id INT PRIMARY KEY)", "CREATE TABLE lc_paused.gone (id INT PRIMARY KEY)",
               "CREATE DATABASE lc_paused_not", "CREATE TABLE lc_paused_not.c (id INT PRIMARY KEY)")
    down.execute("CREATE DATABASE lc_paused", "CREATE TABLE lc_paused.a (id INT PRIMARY KEY)")
    info = create_changefeed(capsys, up, down, "lc-paused", "[filter]\nrules = ['lc_paused.*', '!lc_paused.gone']\n",
                             "--pause")
    assert info["state"] == "stopped" and info["tracked_tables"] == 2  # a and b: not gone, not lc_paused_not.c
    assert info["upstream_id"] == upstream_id.of_source(parse_source_uri(up.uri)) != 0
    status = simple(capsys, "lc-paused")
    assert status["state"] == "stopped" and status["upstream_id"] == info["upstream_id"]
    assert json.loads(cli_ok(capsys, "changefeed", "query", "-c", "lc-paused"))["upstream_id"] == info["upstream_id"]
    up.execute("INSERT INTO lc_paused.a VALUES (1)")
    skipped = run_cycle("lc-paused", spark=spark)
    assert skipped["skipped"] and "paused" in skipped["reason"]
    assert down.query("SELECT id FROM lc_paused.a") == []
    assert "stopped -> normal" in cli_ok(capsys, "changefeed", "resume", "-c", "lc-paused")  # ②
    run_cycle("lc-paused", spark=spark)
    assert down.query("SELECT id FROM lc_paused.a") == [(1,)]  # from the create's position: nothing was lost
    assert simple(capsys, "lc-paused")["state"] == "normal"


BAD_RULES = {  # config text -> what the refusal must name
    "[filter]\nrules = ['/(unclosed/.*']\n": "filter.rules[0] '/(unclosed/.*' is invalid",
    "[filter]\nrules = ['test.*', 'nodot']\n": "filter.rules[1] 'nodot' is invalid",
    "[filter]\nrules = ['*.*']\n[[filter.event-filters]]\nmatcher = ['[z-a].t']\nignore-event = ['insert']\n":
        "filter.event-filters[0].matcher[0] '[z-a].t' is invalid",
}


@pytest.mark.parametrize("config", list(BAD_RULES), ids=["regex", "no-table-part", "matcher"])
def test_invalid_filter_rules_are_refused_at_create_and_update(own_pair, cdcflow_home, capsys, tmp_path, config):
    up, down = own_pair
    bad = tmp_path / "bad.toml"
    bad.write_text(config)
    err = cli_fails(capsys, "changefeed", "create", "-c", "lc-rules", "--source-uri", up.uri,
                    "--sink-uri", down.uri, "--config", str(bad))
    assert BAD_RULES[config] in err and "lc-rules" in err
    assert "lc-rules" not in cli_ok(capsys, "changefeed", "list", "-a")
    create_changefeed(capsys, up, down, "lc-rules", "")
    cli_ok(capsys, "changefeed", "pause", "-c", "lc-rules")
    err = cli_fails(capsys, "changefeed", "update", "-c", "lc-rules", "--config", str(bad))
    assert BAD_RULES[config] in err and "lc-rules" in err
    assert json.loads(cli_ok(capsys, "changefeed", "query", "-c", "lc-rules"))["config"]["filter"]["rules"] == ["*.*"]


def test_a_start_ts_in_the_future_is_refused_with_the_current_tso(own_pair, cdcflow_home, capsys):
    up, down = own_pair
    future = tso.now() + (3600_000 << 18)
    err = cli_fails(capsys, "changefeed", "create", "-c", "lc-future", "--source-uri", up.uri,
                    "--sink-uri", down.uri, "--start-ts", str(future))
    assert f"start-ts {future}" in err and "later than the current TSO" in err and "lc-future" in err
    current = int(err.split("current TSO ")[1].split()[0])
    assert abs(current - tso.now()) < (60_000 << 18)
    assert "lc-future" not in cli_ok(capsys, "changefeed", "list", "-a")


def test_a_skipped_ddl_stays_named_on_the_runs_record(own_pair, spark, cdcflow_home, capsys):
    up, down = own_pair
    for s in (up, down):
        s.execute("DROP DATABASE IF EXISTS lc_kept", "DROP DATABASE IF EXISTS lc_other")
    create_changefeed(capsys, up, down, "lc-skips", "[filter]\nrules = ['lc_kept.*']\n")
    up.execute("CREATE DATABASE lc_kept", "CREATE TABLE lc_kept.t (id INT PRIMARY KEY)",
               "CREATE DATABASE lc_other", "CREATE TABLE lc_other.t (id INT PRIMARY KEY)")
    run_cycle("lc-skips", spark=spark)
    # the cycle's folder is gone (finish collects it): the run's record still names what was not run
    assert event_folders("lc-skips") == []
    last = json.loads(cli_ok(capsys, "changefeed", "query", "-c", "lc-skips"))["cdcflow"]["last_runs"][0]
    assert last["status"] == "done" and last["dry_run"] is False and last["started"].endswith("Z")
    assert last["ddl_skipped"] == 2
    statements = {d["statement"]: d for d in last["skipped_ddls"]}
    assert set(statements) == {"CREATE DATABASE lc_other", "CREATE TABLE lc_other.t (id INT PRIMARY KEY)"}
    assert all(d["why"] and d["commit_ts"] > 0 for d in statements.values())
    assert (last["mode"], last["origin"]) == ("catch-up", "cli")
    # a dry run from the command line says so
    cli_ok(capsys, "changefeed", "run", "-c", "lc-skips", "--dry-run")
    last = json.loads(cli_ok(capsys, "changefeed", "query", "-c", "lc-skips"))["cdcflow"]["last_runs"][0]
    assert (last["mode"], last["origin"], last["dry_run"]) == ("dry-run", "cli", True)
