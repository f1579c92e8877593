"""The `@binlog` schedule's trigger against real MariaDB servers of this module's own (the
tests stop the upstream): it fires when the upstream's binlog moves past the changefeed's
checkpoint, not while it stands still or the changefeed is caught up, and lives through an
upstream that is down or restarts.  The looks it takes (cdcflow.changefeed.head_watch) are
tested step by step first, then the trigger as the triggerer builds it from serialize()."""

from __future__ import annotations

import asyncio

import pytest
from e2e_helpers import cli_run, create_changefeed, next_second, own_pair

try:
    from airflow_env import use_airflow
except ImportError:  # tests/ imported as a package
    from tests.airflow_env import use_airflow

from cdcflow import cli
from cdcflow.changefeed.head_watch import HeadWatch
from cdcflow.config.spec_store import home
from cdcflow.core.home import Home
from cdcflow.store import metastore

pytestmark = [pytest.mark.e2e, pytest.mark.airflow]

SCHEMA = "binlog_trigger"
CONFIG = f"[filter]\nrules = ['{SCHEMA}.*']\n[cdcflow]\nschedule = \"@binlog\"\n"


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    use_airflow(tmp_path_factory.mktemp("airflow"))  # the trigger's module imports Airflow's
    with own_pair(tmp_path_factory, "binlog-trigger") as (up, down):
        for s in (up, down):
            s.execute(f"DROP DATABASE IF EXISTS {SCHEMA}", f"CREATE DATABASE {SCHEMA}",
                      f"CREATE TABLE {SCHEMA}.t (id INT PRIMARY KEY, v INT)")
        yield up, down


def _write(up, i: int) -> None:
    up.execute(f"INSERT INTO {SCHEMA}.t VALUES ({i}, {i})")


def _start_a_cycle(changefeed_id: str, run_id: str) -> None:
    feed = metastore.get_feed(changefeed_id)
    metastore.start_run(changefeed_id, run_id, feed.checkpoint_ts, feed.checkpoint_pos, 0, False)


def _catch_up(capsys, changefeed_id: str) -> None:
    """A cycle that applies everything written so far (a cycle's window ends at a whole second
    the binlog's events are dated by: what was written in the current one waits for the next)."""
    next_second()
    assert cli_run(capsys, changefeed_id)[0] == 0


def test_a_look_asks_for_a_run_when_the_head_moves_past_the_checkpoint(pair, cdcflow_home, capsys):
    up, down = pair
    create_changefeed(capsys, up, down, "watch-steps", CONFIG)
    watch = HeadWatch("watch-steps", Home(str(home())), reask_after=3600)
    try:
        assert watch.news() is None  # created at the head: nothing to ask for
        _write(up, 1)
        news = watch.news()
        assert news is not None and news.behind and news.head.key() > news.applied.key()
        assert news.to_dict()["applied"] == metastore.get_feed("watch-steps").checkpoint_pos
        assert watch.news() is None  # the same head again: the run asked for reads it
        _write(up, 2)
        # a later head, the checkpoint where it was, no cycle started: the run asked for reads up to the head
        # it finds when it starts
        assert watch.look().head.key() > news.head.key() and watch.news() is None
        _start_a_cycle("watch-steps", "started-1")  # as a run's prepare does
        assert watch.news() is None  # it reads up to the head it found
        _write(up, 3)  # after that cycle's start: the next run's to read, asked for at once
        started = watch.news()
        assert started is not None and started.cycle == "started-1" and started.applied == news.applied
        assert watch.news() is None  # asked for: nothing new since
        _catch_up(capsys, "watch-steps")  # a cycle applies up to the head
        assert watch.news() is None and not watch.look().behind
        assert down.query(f"SELECT id FROM {SCHEMA}.t WHERE id IN (1, 2, 3) ORDER BY id") == [(1,), (2,), (3,)]
        _write(up, 4)  # past the checkpoint that cycle left: a new ask
        again = watch.news()
        assert again is not None and again.applied.key() > news.applied.key() and again.head.key() > again.applied.key()
        _catch_up(capsys, "watch-steps")
        # a paused changefeed's run would do nothing: no news however the head moves
        capsys.readouterr()
        assert cli.main(["changefeed", "pause", "-c", "watch-steps"]) == 0
        _write(up, 5)
        look = watch.look()
        assert look.state == "stopped" and look.head.key() > look.applied.key() and watch.news() is None
    finally:
        watch.close()


def test_a_head_that_stays_behind_is_asked_for_again_after_the_reask_time(pair, cdcflow_home, capsys):
    up, down = pair
    create_changefeed(capsys, up, down, "watch-reask", CONFIG)
    watch = HeadWatch("watch-reask", Home(str(home())), reask_after=60)
    try:
        _write(up, 10)
        first = watch.news(now=1000.0)
        assert first is not None
        assert watch.news(now=1059.0) is None  # the run it asked for may still be coming
        again = watch.news(now=1061.0)  # no run moved the checkpoint in a minute: ask again
        assert again is not None and again.head == first.head
    finally:
        watch.close()


def test_a_new_binlogs_header_is_asked_for_once_and_its_cycle_leaves_nothing_behind(pair, cdcflow_home, capsys):
    """FLUSH BINARY LOGS (as a restart does) puts the head past the checkpoint with a new binlog's
    header alone: one run is asked for, and its cycle moves the checkpoint to the head, so the
    changefeed is not behind and nothing is asked for again when the reask time passes (a run
    every REASK_AFTER_S until the next transaction, while the position stayed behind)."""
    up, down = pair
    create_changefeed(capsys, up, down, "watch-flush", CONFIG)
    watch = HeadWatch("watch-flush", Home(str(home())), reask_after=60)
    try:
        _write(up, 15)
        _catch_up(capsys, "watch-flush")
        assert watch.news(now=1000.0) is None
        head = up.new_binlog()
        news = watch.news(now=1001.0)
        assert news is not None and (news.head.file, news.head.pos) == head
        _catch_up(capsys, "watch-flush")
        look = watch.look()
        assert not look.behind and look.applied.key() == head
        assert watch.news(now=1001.0 + 61) is None
    finally:
        watch.close()


def _trigger(changefeed_id: str):
    """The trigger as the triggerer builds it: from what serialize() gave."""
    from airflow.sdk._shared.module_loading import import_string

    from cdcflow_airflow.binlog_trigger import BinlogHeadTrigger

    classpath, kwargs = BinlogHeadTrigger(changefeed_id, str(home()), poll_interval=0.05,
                                          max_backoff=0.2).serialize()
    assert classpath == "cdcflow_airflow.binlog_trigger.BinlogHeadTrigger"
    return import_string(classpath)(**kwargs)


async def _no_event_then(first, quiet: float, then) -> dict:
    """`first` (the pending next event) has not come after `quiet` seconds; `then()`; the event."""
    await asyncio.sleep(quiet)
    assert not first.done(), first.result()
    await asyncio.to_thread(then)
    return (await asyncio.wait_for(first, 60)).payload


def test_the_trigger_fires_when_the_binlog_moves_past_the_checkpoint_and_again_once_a_cycle_started(
        pair, cdcflow_home, capsys):
    up, down = pair
    create_changefeed(capsys, up, down, "trigger-moves", CONFIG)

    async def scenario():
        events = _trigger("trigger-moves").run()
        try:
            first = asyncio.ensure_future(anext(events))
            moved = await _no_event_then(first, 0.5, lambda: _write(up, 20))  # nothing while caught up
            second = asyncio.ensure_future(anext(events))
            await asyncio.to_thread(_write, up, 21)  # no run started yet: the one asked for reads it
            await asyncio.sleep(0.5)
            assert not second.done(), second.result()
            await asyncio.to_thread(_start_a_cycle, "trigger-moves", "started-2")
            again = await _no_event_then(second, 0.5, lambda: _write(up, 22))  # after that start: the next run's
            return moved, again
        finally:
            await events.aclose()

    moved, again = asyncio.run(scenario())
    assert moved["changefeed"] == "trigger-moves" and moved["state"] == "normal" and moved["cycle"] is None
    assert moved["applied"] == metastore.get_feed("trigger-moves").checkpoint_pos == again["applied"]
    assert (moved["head"]["file"], moved["head"]["pos"]) > (moved["applied"]["file"], moved["applied"]["pos"])
    assert again["cycle"] == "started-2"
    assert (again["head"]["file"], again["head"]["pos"]) > (moved["head"]["file"], moved["head"]["pos"])


def test_the_trigger_lives_through_an_upstream_that_is_down_and_restarts(pair, cdcflow_home, capsys):
    up, down = pair
    create_changefeed(capsys, up, down, "trigger-restart", CONFIG)
    _catch_up(capsys, "trigger-restart")  # caught up: no event until the binlog moves

    async def scenario():
        events = _trigger("trigger-restart").run()
        try:
            first = asyncio.ensure_future(anext(events))
            await asyncio.sleep(0.3)  # a few looks on a connection of its own
            assert not first.done(), first.result()
            await asyncio.to_thread(up.stop)  # its connection breaks; new ones are refused

            def restart_and_write():
                up.start()
                _write(up, 30)

            return await _no_event_then(first, 1.0, restart_and_write)
        finally:
            await events.aclose()

    event = asyncio.run(scenario())
    assert event["changefeed"] == "trigger-restart"
    assert (event["head"]["file"], event["head"]["pos"]) > (event["applied"]["file"], event["applied"]["pos"])
    _catch_up(capsys, "trigger-restart")
    assert down.query(f"SELECT v FROM {SCHEMA}.t WHERE id = 30") == [(30,)]
