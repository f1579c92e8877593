"""The cycle's session is started in a thread (launch.sessions.start_session) that also starts an
embedded session's Python workers; a failed start of the workers leaves the session to
the stages, whose own error will say why."""

from __future__ import annotations

import logging

from cdcflow.config.keys import ChangefeedConfig
from cdcflow.launch import sessions


def test_the_session_starts_its_python_workers(spark, monkeypatch):
    started = []
    monkeypatch.setattr(sessions, "python_workers", lambda s: started.append(s) or 0.1)
    got = sessions.start_session(ChangefeedConfig(), "warm", None).result(timeout=120)
    assert got.sparkContext is spark.sparkContext  # the process's session, found again
    assert started == [got]


def test_a_failed_worker_start_leaves_the_session_to_the_stages(spark, monkeypatch, caplog):
    def fail(_spark):
        raise RuntimeError("no Python worker could start")

    monkeypatch.setattr(sessions, "python_workers", fail)
    with caplog.at_level(logging.WARNING, logger="cdcflow"):
        got = sessions.start_session(ChangefeedConfig(), "warm", None).result(timeout=120)
    assert got.range(3).count() == 3  # usable: the stage that needs the workers reports why
    assert "did not start ahead of the stages: no Python worker could start" in caplog.text


def test_the_worker_start_runs_on_an_embedded_session(spark):
    # the cycle only logs its failure: a broken warm-up would otherwise go unnoticed
    from cdcflow.spark.warm_up import python_workers

    assert python_workers(spark) > 0



def _pids(spark) -> set[int]:
    """The pids of the Python workers that ran a job of two tasks on `spark`."""
    def worker_pids(batches):  # nested: pickled by value, as the worker cannot import the tests
        import os  # lazy: runs in Spark's Python worker

        import pyarrow as pa  # lazy: runs in Spark's Python worker

        for b in batches:
            yield pa.RecordBatch.from_pydict({"pid": [os.getpid()] * b.num_rows})

    return {r.pid for r in spark.range(0, 4, 1, 2).mapInArrow(worker_pids, "pid long").collect()}


def test_a_spark_connect_session_starts_its_own_workers(spark_connect, monkeypatch):
    # a Connect server forks a worker daemon per client session: the workers an earlier session
    # (the server's warm-up) started do not serve a new one, so the cycle's session starts its own
    from cdcflow.spark.place import SparkPlace
    from cdcflow.spark.session import connect_session, release
    from cdcflow.spark.warm_up import python_workers

    earlier = connect_session(spark_connect.url)
    try:
        before = _pids(earlier)
    finally:
        release(earlier)
    started = []
    monkeypatch.setattr(sessions, "python_workers", lambda s: started.append(s) or python_workers(s))
    got = sessions.start_session(ChangefeedConfig(), "warm", SparkPlace.resolve(ChangefeedConfig(), spark_connect.url)
                                 ).result(timeout=120)
    try:
        assert started == [got]
        assert not _pids(got) & before  # workers of its own, which start_session started
    finally:
        release(got)


def _cycle_session(spark_connect, changefeed_id: str):
    from cdcflow.spark.place import SparkPlace

    cfg = ChangefeedConfig()
    return sessions.open_session(SparkPlace.resolve(cfg, spark_connect.url), cfg, changefeed_id, cycle=True)


def test_a_changefeed_s_cycles_share_one_connect_session_and_its_workers(spark_connect, cdcflow_home):
    from cdcflow.spark.session import release

    first = _cycle_session(spark_connect, "shared-a")
    try:
        workers = _pids(first)
    finally:
        release(first)  # the next cycle's, or the next stage task's, finds it on the server
    again, other = _cycle_session(spark_connect, "shared-a"), _cycle_session(spark_connect, "shared-b")
    try:
        assert again.client._session_id == first.client._session_id
        assert _pids(again) == workers  # no new Python workers for the next cycle
        assert other.client._session_id != first.client._session_id  # another changefeed: its own
    finally:
        release(again)
        release(other)


def test_a_shared_session_the_server_closed_is_followed_by_the_next_name(spark_connect, cdcflow_home):
    from cdcflow.spark.session import release

    first = _cycle_session(spark_connect, "shared-closed")
    closed = first.client._session_id
    first.stop()  # the server closes it (as its idle timeout would): the name is refused from now on
    release(first)
    then = _cycle_session(spark_connect, "shared-closed")
    try:
        assert then.client._session_id != closed
        assert then.range(3).count() == 3
        later = _cycle_session(spark_connect, "shared-closed")
        assert later.client._session_id == then.client._session_id
        release(later)
    finally:
        release(then)


def test_a_connect_session_for_stages_run_in_process_starts_no_workers(spark_connect, cdcflow_home, monkeypatch):
    # a cycle on auto whose window the stages read in process opens its Connect session after
    # pull without starting the workers none of its steps uses (1.4-2.0 s on a fresh server)
    from cdcflow.spark.place import SparkPlace
    from cdcflow.spark.session import release

    started = []
    monkeypatch.setattr(sessions, "python_workers", lambda s: started.append(s) or 0.1)
    cfg = ChangefeedConfig()
    got = sessions.start_session(cfg, "no-workers", SparkPlace.resolve(cfg, spark_connect.url), workers=False
                                 ).result(timeout=120)
    try:
        assert started == [] and got.range(2).count() == 2
    finally:
        release(got)
