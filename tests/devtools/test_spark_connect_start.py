"""A Spark Connect server whose warm-up fails is stopped before start() raises: its caller
never gets it, so nothing else would stop it."""

from __future__ import annotations

import pytest

from cdcflow_devtools import spark_connect as connect
from cdcflow_devtools.mariadb import free_port


def test_a_failed_warm_up_leaves_no_server_running(tmp_path, monkeypatch):
    started = []
    stop = connect.ConnectServer.stop

    def broken(server, log_dir):
        started.append(server)
        raise RuntimeError("warm-up failed")

    monkeypatch.setattr(connect, "_warm", broken)
    port = free_port()
    try:
        with pytest.raises(RuntimeError, match="warm-up failed"):
            connect.start(tmp_path, port=port, shuffle_partitions=1)
        (server,) = started
        assert not connect._group_alive(server.process.pid) and not connect.port_taken(port)
    finally:
        for server in started:  # a no-op when start() stopped it; a failing test leaves nothing behind
            stop(server)
