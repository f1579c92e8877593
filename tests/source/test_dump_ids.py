"""A binlog dump that another dump with its server id ends, against a real upstream MariaDB: the
server keeps one dump per server id and ends the older with error 4052. The upstream probe of
the oldest binlog (a cycle's prepare, a look from the Changefeeds page or a trigger: one probe
id per changefeed) and the read that finds a ts's position (create, a backfill, a resume that
moves the checkpoint) go with the probe id, never the changefeed's own, and go again when that
happens."""

from __future__ import annotations

import threading
import time

import pymysql
import pytest

from e2e_helpers import create_changefeed, other_dump

from cdcflow.changefeed import commands
from cdcflow.core import tso
from cdcflow.core.uri import default_server_id, parse_source_uri
from cdcflow.source import binlog
from cdcflow.store import metastore

pytestmark = pytest.mark.e2e

SCHEMA = "dump_ids_noise"


@pytest.fixture
def noisy_upstream(mariadb_pair):
    """40 MB of binlog: more than the sockets between a dump and its reader hold, so a dump of it
    is still being sent when another dump comes."""
    up, _ = mariadb_pair
    up.execute(f"DROP DATABASE IF EXISTS {SCHEMA}", f"CREATE DATABASE {SCHEMA}",
               f"CREATE TABLE {SCHEMA}.t (id INT PRIMARY KEY, v VARCHAR(2000))",
               f"INSERT INTO {SCHEMA}.t SELECT seq, REPEAT('x', 1600) FROM {SCHEMA}.seq_1_to_8000",
               f"UPDATE {SCHEMA}.t SET v = REPEAT('y', 1600)")
    yield up
    up.execute(f"DROP DATABASE {SCHEMA}")


class EndedBeforeDated:
    """A probe's stream that another dump with its server id ends before it hands out a dated
    event: once the dump is under way, another starts from the upstream's head with the same id
    (a second probe of the same changefeed), and this one reads on until the upstream ends it."""

    def __init__(self, stream, up, server_id: int):
        self.stream, self.up, self.server_id = stream, up, server_id
        self.other: list = []  # the other dump's events read, or its error

    def __iter__(self):
        assert self.stream.fetchone() is not None  # the dump is under way
        started = other_dump(self.up, self.server_id, self.other)
        while self.stream.fetchone() is not None:
            started.wait(0.0005)  # its thread writes again as this one reads, and is ended then
        return iter(())  # not ended: the probe finds nothing dated, and the test fails

    def close(self) -> None:
        self.stream.close()


def first_read_ended(up, monkeypatch) -> tuple[list, list]:
    """binlog.open_stream made to hand out, for its first read, one that another dump with its
    server id ends (EndedBeforeDated), and the others as they are: (the server ids the reads were
    opened with, [that first read])."""
    real_open = binlog.open_stream
    opened, ended = [], []

    def first_ended(uri_, server_id, start, only_events):
        stream = real_open(uri_, server_id, start, only_events)
        opened.append(server_id)
        if len(opened) == 1:
            ended.append(EndedBeforeDated(stream, up, server_id))
            return ended[0]
        return stream

    monkeypatch.setattr(binlog, "open_stream", first_ended)
    return opened, ended


def test_a_probe_another_probe_ends_goes_again_and_finds_the_oldest_binlogs_start(noisy_upstream, monkeypatch):
    up = noisy_upstream
    uri = parse_source_uri(up.uri)
    expected = binlog.oldest_held(uri, 77)
    real_open = binlog.open_stream
    opened, ended = first_read_ended(up, monkeypatch)
    assert binlog.oldest_held(uri, 77) == expected
    assert opened == [binlog.probe_server_id(77)] * 2
    # the other dump ran; the probe's second attempt may have ended it in turn, as it would end
    # another probe still under way
    assert ended[0].other, "the other dump never ran"

    # ended on every attempt: the upstream's error, as the caller reports any other
    opened.clear()
    monkeypatch.setattr(binlog, "open_stream",
                        lambda *a: (opened.append(a[1]), EndedBeforeDated(real_open(*a), up, a[1]))[1])
    with pytest.raises(pymysql.MySQLError) as refused:
        binlog.oldest_held(uri, 77)
    assert binlog.ended_by_same_id(refused.value) and refused.value.args[0] == 4052, refused.value
    assert opened == [binlog.probe_server_id(77)] * binlog.PROBE_ATTEMPTS


def test_only_a_dump_ended_for_its_server_id_is_told_apart():
    assert binlog.ended_by_same_id(pymysql.err.OperationalError(
        4052, "A slave with the same server_uuid/server_id is already connected"))
    # MySQL's words, as its replicas report them
    assert binlog.ended_by_same_id(pymysql.err.OperationalError(
        1236, "A slave with the same server_uuid/server_id as this slave has connected to the master; "
              "the first event '' at 4, the last event read from 'binlog.000001' at 123"))
    assert not binlog.ended_by_same_id(pymysql.err.OperationalError(
        1236, "Could not find first log file name in binary log index file"))
    assert not binlog.ended_by_same_id(pymysql.err.OperationalError(2013, "Lost connection to server during query"))
    assert not binlog.ended_by_same_id(ValueError())


def test_the_read_that_finds_a_ts_goes_with_the_probe_id_and_again_when_another_ends_it(noisy_upstream, monkeypatch):
    up = noisy_upstream
    uri = parse_source_uri(up.uri)
    _, oldest_ts = binlog.oldest_held(uri, 78)
    expected = binlog.position_for_ts(uri, 78, oldest_ts)
    opened, ended = first_read_ended(up, monkeypatch)
    # not ended, the first read would find nothing and give the upstream's head
    assert binlog.position_for_ts(uri, 78, oldest_ts) == expected != binlog.head_position(up.connect())
    assert opened == [binlog.probe_server_id(78)] * 2
    assert ended[0].other, "the other dump never ran"


class HeldDump:
    """A cycle's pull still reading with the changefeed's own server id: a blocking dump from the
    upstream's head, waiting in a thread for the next event."""

    def __init__(self, up, server_id: int):
        from pymysqlreplication import BinLogStreamReader

        file, pos = up.binlog_head()
        self.stream = BinLogStreamReader(connection_settings=parse_source_uri(up.uri).connection_args(),
                                         server_id=server_id, blocking=True, resume_stream=True,
                                         log_file=file, log_pos=pos)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            self.stream.fetchone()
        except Exception:  # noqa: BLE001 - closed by the test
            pass

    def close(self) -> None:
        self.stream.close()


def _dumps(up) -> set[int]:
    """The connections of the binlog dumps under way upstream."""
    return {r[0] for r in up.query("SELECT ID FROM information_schema.PROCESSLIST WHERE COMMAND = 'Binlog Dump'")}


def test_a_resume_that_moves_the_checkpoint_leaves_a_pulling_cycles_dump_alone(mariadb_pair, capsys):
    up, down = mariadb_pair
    create_changefeed(capsys, up, down, "dump-ids-resume", "[filter]\nrules = ['dump_ids_resume.*']\n")
    commands.pause("dump-ids-resume")
    before = _dumps(up)
    held = HeldDump(up, default_server_id("dump-ids-resume"))
    try:
        deadline = time.time() + 10
        while not _dumps(up) - before and time.time() < deadline:
            time.sleep(0.05)
        pulling = _dumps(up) - before
        assert len(pulling) == 1, pulling
        ts = metastore.get_feed("dump-ids-resume").checkpoint_ts
        assert commands.resume("dump-ids-resume", overwrite_checkpoint_ts=ts)[1] == "normal"
        # a read with the changefeed's own id had ended it (4052 to a reader that does not
        # reconnect, as a cycle's pull does not): the upstream ends the older dump of an id
        assert pulling <= _dumps(up)
    finally:
        held.close()
        commands.remove("dump-ids-resume")
