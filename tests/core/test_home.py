"""The home a launcher runs cdcflow in (core.home.Home): its CDCFLOW_HOME and its airflow-conn-id
lookup hold for the block that entered it (its thread or asyncio task), never written to the
process's environment; a child process gets it through its own environment."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading

from cdcflow.core import home as running
from cdcflow.core.home import Home
from cdcflow.config.spec_store import Spec, home, list_specs, save_spec
from cdcflow.core.uri import parse_sink_uri


def test_a_block_works_in_its_home_and_leaves_the_environment_alone(cdcflow_home, tmp_path):
    other = tmp_path / "other-home"
    with Home(str(other)).entered():
        assert home() == other
        save_spec(Spec(id="there", source_uri="mysql://u@h/", sink_uri="mysql://u@h/"))
        assert [s.id for s in list_specs()] == ["there"]
        assert os.environ["CDCFLOW_HOME"] == str(cdcflow_home)
    assert home() == cdcflow_home and list_specs() == []  # the process's home again


def test_two_homes_at_once_do_not_see_each_other(tmp_path):
    # two triggers of one triggerer, each looking in its own thread
    seen, ready = {}, threading.Barrier(2)

    def look(name):
        with Home(str(tmp_path / name)).entered():
            ready.wait(timeout=10)
            seen[name] = home().name

    threads = [threading.Thread(target=look, args=(n,)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"a": "a", "b": "b"}

    async def both():
        async def one(name):
            with Home(str(tmp_path / name)).entered():
                await asyncio.sleep(0.01)
                return await asyncio.to_thread(lambda: home().name)  # the thread gets the task's home
        return await asyncio.gather(one("c"), one("d"))

    assert asyncio.run(both()) == ["c", "d"]


def test_the_lookup_is_the_homes(monkeypatch):
    monkeypatch.delenv("AIRFLOW_CONN_DOWN", raising=False)
    sink = parse_sink_uri("mysql://db:3306/?airflow-conn-id=down")
    with Home(airflow_lookup=lambda conn_id: ("rep", f"pw-of-{conn_id}")).entered():
        assert running.current().airflow_lookup is not None
        args = sink.connection_args()
    assert (args["user"], args["password"]) == ("rep", "pw-of-down")
    assert running.current().airflow_lookup is None


def test_a_child_process_is_handed_the_home(tmp_path, monkeypatch):
    monkeypatch.delenv("CDCFLOW_HOME", raising=False)
    there = Home(str(tmp_path / "h"))
    env = {**there.child_env(), "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", "from cdcflow.config.spec_store import home; print(home())"],
                         env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert out == str(tmp_path / "h")
    assert "CDCFLOW_HOME" not in os.environ


def test_child_calls_run_in_the_callers_home(cdcflow_home, tmp_path):
    from cdcflow.core import child_calls

    with Home(str(tmp_path / "task-home")).entered():
        assert child_calls.call_all([(home, ())], "the home reader") == [tmp_path / "task-home"]
    assert child_calls.call_all([(home, ())], "the home reader") == [cdcflow_home]
