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
