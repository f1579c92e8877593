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
