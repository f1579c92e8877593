"""The lag computed when asked, against a real upstream MariaDB: it grows while no cycle runs,
is zero once a cycle caught up, ignores what the filter does not replicate, says when it is
only a bound, and says so when the upstream is down (no 0)."""

from __future__ import annotations

import time

from e2e_helpers import cli_run, create_changefeed, own_pair, schema_changefeed

from cdcflow.changefeed import live_lag
from cdcflow.core import tso
from cdcflow.core.spec_store import load_spec
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
