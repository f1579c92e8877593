"""A Connect session that cannot be opened leaves no client open: pyspark calls an open
client's server once more at the process's exit, with its default retries, which held the
exit of a stage whose server was down and printed a traceback after its error."""

from __future__ import annotations

import os

import pytest
from pyspark.sql.connect.client import core

from cdcflow_devtools.mariadb import free_port
from cdcflow.spark import session
from cdcflow.spark.session import CONNECT_MODE, connect_session, release


def test_a_server_that_is_down_leaves_no_client_open(monkeypatch):
    clients = []
    init = core.SparkConnectClient.__init__

    def recording(self, *a, **k):
        init(self, *a, **k)
        clients.append(self)

    monkeypatch.setattr(core.SparkConnectClient, "__init__", recording)
    monkeypatch.setattr(session, "CONNECT_RETRIES", 1)  # what is left open does not depend on how long it tried
    with pytest.raises(Exception, match="UNAVAILABLE|RETRIES_EXCEEDED"):
        connect_session(f"sc://127.0.0.1:{free_port()}")  # nothing listens there
    assert clients and all(c.is_closed for c in clients)
    assert CONNECT_MODE not in os.environ


def test_release_closes_the_client_of_a_server_gone(spark_connect, monkeypatch):
    spark = connect_session(spark_connect.url)
    monkeypatch.setattr(type(spark), "stop", lambda self: (_ for _ in ()).throw(RuntimeError("server gone")))
    release(spark)  # swallowed: the stage's own outcome is what counts
    assert spark.client.is_closed
    assert CONNECT_MODE not in os.environ
