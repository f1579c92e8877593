"""The `@binlog` schedule's trigger against real MariaDB servers of this module's own (the
tests stop the upstream): it fires when the upstream's binlog moves past the changefeed's
checkpoint, not while it stands still or the changefeed is caught up, and lives through an
upstream that is down or restarts.  The looks it takes (cdcflow.changefeed.head_watch) are
tested step by step first, then the trigger as the triggerer builds it from serialize()."""

from __future__ import annotations

import asyncio

import pytest
from e2e_helpers import cli_run, create_changefeed, own_pair

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
        assert watch.news().head.key() > news.head.key()  # a later head: asked again
        assert cli_run(capsys, "watch-steps")[0] == 0  # a cycle applies up to the head
        assert watch.news() is None and not watch.look().behind
        assert down.query(f"SELECT id FROM {SCHEMA}.t WHERE id IN (1, 2) ORDER BY id") == [(1,), (2,)]
        # a paused changefeed's run would do nothing: no news however the head moves
        capsys.readouterr()
        assert cli.main(["changefeed", "pause", "-c", "watch-steps"]) == 0
        _write(up, 3)
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


def test_the_trigger_fires_when_the_binlog_moves_and_not_while_it_stands_still(pair, cdcflow_home, capsys):
    up, down = pair
    create_changefeed(capsys, up, down, "trigger-moves", CONFIG)

    async def scenario():
        events = _trigger("trigger-moves").run()
        try:
            first = asyncio.ensure_future(anext(events))
            moved = await _no_event_then(first, 0.5, lambda: _write(up, 20))
            second = asyncio.ensure_future(anext(events))
            # the head stands still past the checkpoint: one event for it, not one a poll
            again = await _no_event_then(second, 0.5, lambda: _write(up, 21))
            return moved, again
        finally:
            await events.aclose()

    moved, again = asyncio.run(scenario())
    assert moved["changefeed"] == "trigger-moves" and moved["state"] == "normal"
    assert moved["applied"] == metastore.get_feed("trigger-moves").checkpoint_pos
    assert (moved["head"]["file"], moved["head"]["pos"]) > (moved["applied"]["file"], moved["applied"]["pos"])
    assert (again["head"]["file"], again["head"]["pos"]) > (moved["head"]["file"], moved["head"]["pos"])


def test_the_trigger_lives_through_an_upstream_that_is_down_and_restarts(pair, cdcflow_home, capsys):
    up, down = pair
    create_changefeed(capsys, up, down, "trigger-restart", CONFIG)
    assert cli_run(capsys, "trigger-restart")[0] == 0  # caught up: no event until the binlog moves

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
    assert cli_run(capsys, "trigger-restart")[0] == 0
    assert down.query(f"SELECT v FROM {SCHEMA}.t WHERE id = 30") == [(30,)]
