"""The lag computed when asked, against a real upstream MariaDB: it grows while no cycle runs,
is zero once a cycle caught up, ignores what the filter does not replicate, says when it is
only a bound, and says so when the upstream is down (no 0)."""

from __future__ import annotations

import dataclasses
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from e2e_helpers import CountedReads, cli_run, create_changefeed, other_dump, own_pair, schema_changefeed

from cdcflow.changefeed import live_lag
from cdcflow.core import tso
from cdcflow.config.spec_store import load_spec
from cdcflow.store import metastore


def lag_of(changefeed_id: str) -> live_lag.Lag:
    return live_lag.live_lag(load_spec(changefeed_id), metastore.get_feed(changefeed_id))


def test_the_lag_grows_while_no_cycle_runs_and_is_zero_once_caught_up(mariadb_pair, cdcflow_home, spark, capsys):
    up, down = mariadb_pair
    schema_changefeed(capsys, up, down, "lag-live", "lag_live")
    fresh = lag_of("lag-live")
    assert (fresh.status, fresh.seconds, fresh.pending_ts) == (live_lag.CAUGHT_UP, 0.0, None)
    # what its filter does not replicate is no lag
    up.execute("CREATE DATABASE IF NOT EXISTS lag_other", "CREATE TABLE IF NOT EXISTS lag_other.t (id INT PRIMARY KEY)",
               "INSERT INTO lag_other.t VALUES (1)")
    assert lag_of("lag-live").status == live_lag.CAUGHT_UP

    written = time.time()
    up.execute("CREATE DATABASE lag_live", "CREATE TABLE lag_live.t (id INT PRIMARY KEY, v INT)",
               "INSERT INTO lag_live.t VALUES (1, 1)")
    time.sleep(2)
    first = lag_of("lag-live")
    assert first.status == live_lag.BEHIND and first.seconds >= 1.0, first
    # the commit time of the first change not applied: the CREATE DATABASE (the binlog dates to the second)
    assert int(written) <= tso.physical_ms(first.pending_ts) / 1000 <= written + 1
    time.sleep(1.5)
    second = lag_of("lag-live")
    assert second.pending_ts == first.pending_ts and second.seconds >= first.seconds + 1.4, (first, second)

    rc, err = cli_run(capsys, "lag-live")
    assert rc == 0, err
    assert lag_of("lag-live").status == live_lag.CAUGHT_UP and lag_of("lag-live").seconds == 0


def test_a_bounded_read_says_the_lag_is_at_most(mariadb_pair, cdcflow_home, capsys, monkeypatch):
    up, down = mariadb_pair
    schema_changefeed(capsys, up, down, "lag-bound", "lag_bound")
    up.execute("CREATE DATABASE IF NOT EXISTS lag_noise", "CREATE TABLE IF NOT EXISTS lag_noise.t (id INT PRIMARY KEY)",
               *(f"INSERT INTO lag_noise.t VALUES ({i}) ON DUPLICATE KEY UPDATE id = id" for i in range(5)),
               "CREATE DATABASE lag_bound")
    monkeypatch.setattr(live_lag, "SCAN_EVENTS", 3)
    bounded = lag_of("lag-bound")
    assert bounded.status == live_lag.AT_MOST and bounded.seconds >= 0, bounded
    assert "first 3 events" in bounded.note and "at most 3 events" in bounded.note
    monkeypatch.setattr(live_lag, "SCAN_EVENTS", 1000)
    assert lag_of("lag-bound").status == live_lag.BEHIND


def test_an_upstream_that_is_down_is_said_so_not_zero(tmp_path_factory, cdcflow_home, capsys):
    with own_pair(tmp_path_factory, "lag-down") as (up, down):
        create_changefeed(capsys, up, down, "lag-down", "")
        assert lag_of("lag-down").status == live_lag.CAUGHT_UP
        up.stop()
        lag = lag_of("lag-down")
        assert (lag.status, lag.seconds) == (live_lag.UNKNOWN, None)
        assert lag.note.startswith("the upstream mysql://") and "cannot be read" in lag.note, lag.note
        assert lag.to_dict()["seconds"] is None


FEEDS = 20


def test_many_changefeeds_on_one_upstream_read_its_head_once_and_their_binlogs_at_once(
        mariadb_pair, cdcflow_home, capsys, monkeypatch, tmp_path_factory):
    up, down = mariadb_pair
    ids = [f"lag-many-{i:02d}" for i in range(FEEDS)]
    for s in (up, down):
        s.execute("DROP DATABASE IF EXISTS lag_many")
    for changefeed_id in ids:
        create_changefeed(capsys, up, down, changefeed_id, "[filter]\nrules = ['lag_many.*']\n")
    pairs = [(load_spec(i), metastore.get_feed(i)) for i in ids]
    reads = CountedReads(monkeypatch)
    lags = live_lag.live_lags(pairs)
    assert {lag.status for lag in lags.values()} == {live_lag.CAUGHT_UP} and sorted(lags) == ids
    assert (reads.heads, reads.reads) == (1, 0)  # caught up: the head alone, read once for all 20

    up.execute("CREATE DATABASE lag_many", "CREATE TABLE lag_many.t (id INT PRIMARY KEY)",
               "INSERT INTO lag_many.t VALUES (1)")
    reads.heads = 0
    lags = live_lag.live_lags(pairs)
    assert reads.heads == 1 and reads.reads == FEEDS and reads.most >= 2, vars(reads)
    assert {lag.status for lag in lags.values()} == {live_lag.BEHIND}
    # the same figures as each changefeed's own live_lag
    alone = {i: live_lag.live_lag(*pair) for i, pair in zip(ids, pairs)}
    assert {i: (lag.status, lag.pending_ts) for i, lag in lags.items()} == \
        {i: (lag.status, lag.pending_ts) for i, lag in alone.items()}

    # a second upstream that is down, and a spec whose source URI no longer parses: those changefeeds
    # say so, the others keep their figures
    bad_uri = dataclasses.replace(load_spec(ids[0]), id="lag-many-bad-uri", source_uri="mysql://u@h:notaport/")
    with own_pair(tmp_path_factory, "lag-many-down") as (up2, down2):
        create_changefeed(capsys, up2, down2, "lag-many-down", "")
        up2.stop()
        reads.heads = reads.reads = 0
        lags = live_lag.live_lags([*pairs, (load_spec("lag-many-down"), metastore.get_feed("lag-many-down")),
                                   (bad_uri, dataclasses.replace(pairs[0][1], id="lag-many-bad-uri"))])
    assert lags["lag-many-down"].status == live_lag.UNKNOWN and "cannot be read" in lags["lag-many-down"].note
    assert lags["lag-many-bad-uri"].status == live_lag.UNKNOWN
    assert lags["lag-many-bad-uri"].note.startswith("the source URI cannot be read: "), lags["lag-many-bad-uri"].note
    assert all(lags[i].status == live_lag.BEHIND for i in ids)
    assert reads.heads == 1  # the upstream that answers; the one that is down fails to connect



def behind_after_noise(capsys, up, down, changefeed_id: str, schema: str) -> tuple:
    """A changefeed behind its upstream by a change that comes after 16,000 row changes (40 MB of
    binlog, more than the sockets between a dump and its reader hold) of a table it does not
    replicate: each read of its lag takes a while, and is still reading when another dump comes."""
    schema_changefeed(capsys, up, down, changefeed_id, schema)
    up.execute(f"CREATE DATABASE {schema}_noise", f"CREATE TABLE {schema}_noise.t (id INT PRIMARY KEY, v VARCHAR(2000))",
               f"INSERT INTO {schema}_noise.t SELECT seq, REPEAT('x', 1600) FROM {schema}_noise.seq_1_to_8000",
               f"UPDATE {schema}_noise.t SET v = REPEAT('y', 1600)",
               f"CREATE DATABASE {schema}", f"CREATE TABLE {schema}.t (id INT PRIMARY KEY)")
    return load_spec(changefeed_id), metastore.get_feed(changefeed_id)



class Scans:
    """The binlog reads live_lag makes (real ones, wrapped), by the server id each used. With
    `hold`, the first waits that long before it reads, so the callers started with it are all
    asking; the reads numbered in `intrude` (from 1) are each ended by another dump with their
    server id (another process's read of the same lag) that starts after their first event."""

    def __init__(self, monkeypatch, up=None, hold: float = 0.0, intrude: tuple = ()):
        self.ids: list[int] = []
        self.intruders: list[tuple[int, list]] = []  # (server id, [events read or the error])
        self._lock, self._up = threading.Lock(), up
        self._current = threading.local()
        scan, replicated = live_lag._scan, live_lag._replicated

        def counted(*args):
            with self._lock:
                self.ids.append(args[-1])
                nth = len(self.ids)
            self._current.intrude, self._current.started = (args[-1] if nth in intrude else None), None
            if nth == 1 and hold:
                time.sleep(hold)
            return scan(*args)

        def ended_by_another(flt, event):
            if getattr(self._current, "intrude", None) is not None:
                server_id = self._current.intrude
                ended = []
                self.intruders.append((server_id, ended))
                self._current.started = other_dump(self._up, server_id, ended)
                self._current.intrude = None
            started = getattr(self._current, "started", None)
            if started is not None and not started.is_set():
                # read on, slowly: the upstream ends this dump once its thread, blocked on a full
                # socket, can write again, and starts the other one after that
                started.wait(0.0005)
            return replicated(flt, event)

        monkeypatch.setattr(live_lag, "_scan", counted)
        monkeypatch.setattr(live_lag, "_replicated", ended_by_another)


def test_reads_of_one_changefeeds_lag_at_once_share_one_read_and_back_to_back_each_read(
        mariadb_pair, cdcflow_home, capsys, monkeypatch):
    """The Changefeeds page asks for the list's lags and the open changefeed's own at about the
    same time, and two people may look at once: in one process they share one read of the
    binlog (a second dump with one server id ends the first: MariaDB's 4052)."""
    up, down = mariadb_pair
    pair = behind_after_noise(capsys, up, down, "lag-twice", "lag_twice")
    scans = Scans(monkeypatch, hold=2.0)
    with ThreadPoolExecutor(max_workers=6) as pool:
        alone = [pool.submit(live_lag.live_lag, *pair) for _ in range(4)]
        listed = [pool.submit(live_lag.live_lags, [pair]) for _ in range(2)]
        lags = [f.result() for f in alone] + [f.result()["lag-twice"] for f in listed]
    assert scans.ids == [live_lag.lag_server_id("lag-twice")], scans.ids
    back_to_back = [live_lag.live_lag(*pair) for _ in range(3)]
    assert len(scans.ids) == 4 and set(scans.ids) == {live_lag.lag_server_id("lag-twice")}, scans.ids
    for lag in lags + back_to_back:
        assert lag.status == live_lag.BEHIND, lag
    assert len({lag.pending_ts for lag in lags + back_to_back}) == 1

    # two reads at once that cannot share (different checkpoints, as when a cycle moved it between
    # them: here its ts, which the commit ts of what is read is derived from) each read with a
    # server id of its own
    spec, feed = pair
    earlier = dataclasses.replace(feed, checkpoint_ts=feed.checkpoint_ts - 1)
    scans = Scans(monkeypatch, hold=2.0)
    with ThreadPoolExecutor(max_workers=2) as pool:
        lags = list(pool.map(lambda f: live_lag.live_lag(spec, f), [feed, earlier]))
    assert sorted(scans.ids) == sorted(live_lag.lag_server_id("lag-twice", nth) for nth in (0, 1)), scans.ids
    assert [lag.status for lag in lags] == [live_lag.BEHIND] * 2, lags


def test_a_read_another_process_ends_goes_again_with_the_next_server_id(
        mariadb_pair, cdcflow_home, capsys, monkeypatch):
    up, down = mariadb_pair
    pair = behind_after_noise(capsys, up, down, "lag-held", "lag_held")
    ids = [live_lag.lag_server_id("lag-held", nth) for nth in range(live_lag.LAG_IDS)]
    assert len(set(ids)) == live_lag.LAG_IDS
    scans = Scans(monkeypatch, up, intrude=(1, 2))
    lag = live_lag.live_lag(*pair)
    assert lag.status == live_lag.BEHIND, lag
    assert scans.ids == ids[:3]  # ended twice, read with the third
    # the other dumps read to the end of the log: the upstream ended the older dump, not them
    assert [i for i, _ in scans.intruders] == ids[:2] and all(isinstance(n[0], int) and n[0] > 0
                                                              for _, n in scans.intruders), scans.intruders

    scans = Scans(monkeypatch, up, intrude=tuple(range(1, live_lag.LAG_IDS + 1)))
    lag = live_lag.live_lag(*pair)
    assert (lag.status, lag.seconds) == (live_lag.UNKNOWN, None)
    assert lag.note == (f"other reads of this changefeed's lag held each of its {live_lag.LAG_IDS} server ids "
                        "for the upstream's binlog at the same time: ask again"), lag.note
    assert scans.ids == ids
    assert live_lag.live_lag(*pair).status == live_lag.BEHIND  # once they are gone
