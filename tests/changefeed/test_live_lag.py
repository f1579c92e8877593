"""The lag computed when asked, against a real upstream MariaDB: it grows while no cycle runs,
is zero once a cycle caught up, ignores what the filter does not replicate, says when it is
only a bound, and says so when the upstream is down (no 0)."""

from __future__ import annotations

import dataclasses
import time

from e2e_helpers import CountedReads, cli_run, create_changefeed, own_pair, schema_changefeed

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
