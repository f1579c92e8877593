"""Upstream failover by GTID: the primary is killed mid-workload, its replica promoted, and the
changefeed continues there from its checkpoint's GTID position (`update --source-uri`); servers
that cannot continue it (behind the checkpoint, another history, purged binlogs) are refused.

A MariaDB primary and a replica of it (row binlog, gtid_strict_mode, log_slave_updates, the
replica on MASTER_USE_GTID=slave_pos) of this module's own, the shared pair's downstream.
"""

from __future__ import annotations

import threading
import time

import pytest

from cdcflow import cli
from cdcflow.changefeed import commands
from cdcflow.core.errors import CHECKPOINT_GTID_NOT_IN_SOURCE, SOURCE_BEHIND_CHECKPOINT, CdcflowError
from cdcflow.config.spec_store import load_spec, save_spec
from cdcflow.source.gtid_locate import locate
from cdcflow.store import metastore
from cdcflow_devtools.mariadb import HOST, ROOT_PASSWORD, ROOT_USER, MariaDB
from e2e_helpers import assert_consistent, cli_ok, cli_run, purge_binlogs_to, query, run_fails, schema_changefeed


def _gtid_pos(server) -> str:
    return server.query("SELECT @@GLOBAL.gtid_binlog_pos")[0][0]


def _replicate(replica: MariaDB, primary: MariaDB) -> None:
    replica.execute("STOP SLAVE", "RESET SLAVE ALL", "RESET MASTER", "SET GLOBAL gtid_slave_pos = ''",
                    f"CHANGE MASTER TO MASTER_HOST='{HOST}', MASTER_PORT={primary.port}, MASTER_USER='{ROOT_USER}', "
                    f"MASTER_PASSWORD='{ROOT_PASSWORD}', MASTER_USE_GTID=slave_pos", "START SLAVE")


def _caught_up(replica: MariaDB, primary: MariaDB) -> str:
    """Wait until the replica has applied everything the primary's binlog holds now; that GTID position."""
    pos = _gtid_pos(primary)
    assert replica.query(f"SELECT MASTER_GTID_WAIT('{pos}', 30)")[0][0] == 0, "the replica did not catch up"
    return pos


@pytest.fixture(scope="module")
def topology(tmp_path_factory):
    """(primary, replica) replicating by GTID, both from a reset binlog."""
    base = tmp_path_factory.mktemp("failover")
    primary = MariaDB(base, name="primary", binlog=True, server_id=11).start()
    replica = MariaDB(base, name="replica", binlog=True, server_id=12).start()
    try:
        primary.execute("RESET MASTER")
        _replicate(replica, primary)
        yield primary, replica
    finally:
        primary.stop()
        replica.stop()


def _purge_binlogs(server: MariaDB) -> None:
    """Every binlog file but a new one purged (MariaDB keeps a file until InnoDB's binlog
    checkpoint has moved past it: a moment after the flush)."""
    server.execute("FLUSH BINARY LOGS")
    purge_binlogs_to(server, server.query("SHOW MASTER STATUS")[0][0])


def _update_refused(capsys, cid: str, uri: str, code: str) -> str:
    """`update --source-uri` refused (the command line says so in one line): the error's text."""
    with pytest.raises(CdcflowError) as refused:
        commands.update(cid, source_uri=uri)
    assert refused.value.code == code and not refused.value.retryable
    capsys.readouterr()
    assert cli.main(["changefeed", "update", "-c", cid, "--source-uri", uri]) == 1
    assert capsys.readouterr().err.strip() == f"Error: {refused.value}"
    return str(refused.value)


def test_servers_that_cannot_continue_the_checkpoint_are_refused(capsys, cdcflow_home, spark, topology,
                                                                  mariadb_pair):
    primary, replica = topology
    down = mariadb_pair[1]
    s = "fo_refuse"
    schema_changefeed(capsys, primary, down, "fo-refuse", s, f"CREATE DATABASE {s}",
                      f"CREATE TABLE {s}.t (id INT PRIMARY KEY, v INT)", f"INSERT INTO {s}.t VALUES (1, 1)")
    _caught_up(replica, primary)
    replica.execute("STOP SLAVE")  # a replica that falls behind
    primary.execute(f"INSERT INTO {s}.t VALUES (2, 2)", f"UPDATE {s}.t SET v = 10 WHERE id = 1")
    assert cli_run(capsys, "fo-refuse")[0] == 0
    cli_ok(capsys, "changefeed", "pause", "-c", "fo-refuse")
    before = metastore.get_feed("fo-refuse").checkpoint_pos
    checkpoint_gtid = before["gtid"]
    assert checkpoint_gtid == _gtid_pos(primary)  # the checkpoint holds the primary's GTID position

    err = _update_refused(capsys, "fo-refuse", replica.uri, SOURCE_BEHIND_CHECKPOINT)
    assert "changefeed fo-refuse" in err
    assert checkpoint_gtid in err and f"gtid_binlog_pos '{_gtid_pos(replica)}'" in err and "promote" in err

    # a server of another history (the shared pair's upstream): the same domain, its own transactions
    # past the checkpoint's seq
    stranger = mariadb_pair[0]
    seq = int(checkpoint_gtid.split("-")[2])
    stranger.execute("CREATE DATABASE IF NOT EXISTS fo_stranger", "CREATE TABLE IF NOT EXISTS fo_stranger.t (id INT)",
                     *(["INSERT INTO fo_stranger.t VALUES (1)"] * (seq + 1)))
    err = _update_refused(capsys, "fo-refuse", stranger.uri, CHECKPOINT_GTID_NOT_IN_SOURCE)
    assert "another history" in err and checkpoint_gtid in err

    # the replica once caught up, but with the binlogs after the checkpoint purged
    replica.execute("START SLAVE")
    _caught_up(replica, primary)
    primary.execute(f"INSERT INTO {s}.t VALUES (3, 3)")
    _caught_up(replica, primary)
    _purge_binlogs(replica)
    err = _update_refused(capsys, "fo-refuse", replica.uri, CHECKPOINT_GTID_NOT_IN_SOURCE)
    assert "purged" in err and checkpoint_gtid in err

    # nothing was recorded: the changefeed is where it was, on the primary
    assert metastore.get_feed("fo-refuse").checkpoint_pos == before
    assert load_spec("fo-refuse").source_uri == primary.uri

    # a server that changed after the update is refused by the cycle, in the same words (one check)
    spec = load_spec("fo-refuse")
    spec.source_uri = replica.uri
    save_spec(spec)
    metastore.update_feed("fo-refuse", checkpoint_pos={"file": None, "pos": None, "gtid": checkpoint_gtid})
    cli_ok(capsys, "changefeed", "resume", "-c", "fo-refuse")
    status, message, _ = run_fails(capsys, "fo-refuse")
    assert status["error"]["code"] == CHECKPOINT_GTID_NOT_IN_SOURCE and "purged" in message


def test_failover_to_the_promoted_replica(capsys, cdcflow_home, spark, topology, mariadb_pair):
    primary, replica = topology
    down = mariadb_pair[1]
    s = "fo_main"
    schema_changefeed(capsys, primary, down, "fo-main", s, f"CREATE DATABASE {s}",
                      f"CREATE TABLE {s}.t (id INT PRIMARY KEY, v INT, note VARCHAR(20))",
                      *(f"INSERT INTO {s}.t VALUES ({i}, {i}, 'a')" for i in range(1, 21)))
    # a checkpoint an older cdcflow recorded, without GTID position: the cycle reads it from the binlog
    metastore.update_feed("fo-main", checkpoint_pos={**metastore.get_feed("fo-main").checkpoint_pos, "gtid": None})
    assert cli_run(capsys, "fo-main")[0] == 0
    checkpoint = metastore.get_feed("fo-main").checkpoint_pos
    assert checkpoint["gtid"] == _gtid_pos(primary)
    primary.execute(f"UPDATE {s}.t SET v = v + 100 WHERE id <= 5", f"DELETE FROM {s}.t WHERE id = 20",
                    f"ALTER TABLE {s}.t ADD COLUMN extra INT DEFAULT 7",
                    *(f"INSERT INTO {s}.t VALUES ({i}, {i}, 'b', {i})" for i in range(21, 61)))
    _caught_up(replica, primary)

    # the primary dies mid-workload: whatever the replica did not receive is lost with it
    written, stop = [], threading.Event()

    def keep_writing():
        conn = primary.connect()
        try:
            for i in range(61, 100_000):
                if stop.is_set():
                    return
                conn.cursor().execute(f"INSERT INTO {s}.t VALUES ({i}, {i}, 'd', 1)")
                written.append(i)
        except Exception:  # noqa: BLE001 - the primary was killed under it
            return

    writer = threading.Thread(target=keep_writing)
    writer.start()
    while len(written) < 50:
        time.sleep(0.01)
    primary.kill()
    stop.set()
    writer.join(10)
    time.sleep(0.5)  # the replica's IO thread notices
    replica.execute("STOP SLAVE", "RESET SLAVE ALL")
    # writes go on on the new primary: new rows, rows of before the failover changed, a DDL
    replica.execute(f"UPDATE {s}.t SET note = 'promoted' WHERE id IN (1, 30, 45)", f"DELETE FROM {s}.t WHERE id = 2",
                    f"ALTER TABLE {s}.t ADD COLUMN after_failover VARCHAR(10) DEFAULT 'x'",
                    *(f"INSERT INTO {s}.t (id, v, note) VALUES ({i}, {i}, 'e')" for i in range(200_000, 200_020)))

    cli_ok(capsys, "changefeed", "pause", "-c", "fo-main")
    primary_id = query(capsys, "fo-main")["upstream_id"]
    cli_ok(capsys, "changefeed", "update", "-c", "fo-main", "--source-uri", replica.uri, "--no-confirm")
    assert query(capsys, "fo-main")["upstream_id"] not in (primary_id, 0)  # another server: another upstream id
    moved = metastore.get_feed("fo-main").checkpoint_pos
    assert moved == {"file": None, "pos": None, "gtid": checkpoint["gtid"]}  # located by GTID at the next cycle
    lag = query(capsys, "fo-main")["cdcflow"]["lag"]
    assert lag["status"] == "unknown" and "located" in lag["note"]
    cli_ok(capsys, "changefeed", "resume", "-c", "fo-main")
    rc, err = cli_run(capsys, "fo-main")
    assert rc == 0, err
    # exactly the transactions after the checkpoint's GTID were read: none twice, none lost
    (domain, _server, seq), = [tuple(int(x) for x in g.split("-")) for g in checkpoint["gtid"].split(",")]
    head = _gtid_pos(replica)
    pulled = metastore.recent_runs("fo-main", limit=1)[0].stats["pull"]
    assert pulled["transactions"] == int(head.split("-")[2]) - seq
    replica.execute(f"INSERT INTO {s}.t (id, v, note) VALUES (300000, 1, 'f')", f"UPDATE {s}.t SET v = 0 WHERE id = 3")
    rc, err = cli_run(capsys, "fo-main")
    assert rc == 0, err
    assert_consistent(replica, down, [s])
    feed = metastore.get_feed("fo-main")
    assert feed.state == "normal" and feed.checkpoint_pos["gtid"] == _gtid_pos(replica)
    assert feed.checkpoint_pos["gtid"].startswith(f"{domain}-12-")  # a transaction the new primary wrote


def test_a_checkpoint_without_gtid_or_of_the_other_flavour_is_refused(topology):
    _, replica = topology  # the one server of the two that is never killed
    with replica.connect() as conn:
        for gtid, why in ((None, "records no GTID position"),
                          ("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5", "GTIDs are mysql's, the server is mariadb")):
            with pytest.raises(CdcflowError) as refused:
                locate(conn, gtid, "fo-x", 1, "the replica")
            assert refused.value.code == CHECKPOINT_GTID_NOT_IN_SOURCE and why in str(refused.value)
