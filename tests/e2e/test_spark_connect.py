"""The stages on a Spark Connect server, as `cdcflow changefeed run --spark-remote` runs them
in a process of its own: the same window gives the same stage results and the same
downstream as the embedded Spark, and a server that is down or was restarted is a
retryable error (warning, the checkpoint kept), never a hang."""

from __future__ import annotations

import os

import pytest
from e2e_helpers import (assert_consistent, backdate, compare_twins, create_changefeed, cycle_result, query,
                         run_in_own_process, twin_changefeeds)

from cdcflow_devtools.mariadb import MariaDB, free_port
from cdcflow.store import metastore

pytestmark = pytest.mark.e2e

S = "sc_eq"
CIDS = ("sc-embedded", "sc-connect")


def test_a_window_on_spark_connect_equals_the_embedded_one(mariadb_pair, cdcflow_home, capsys, spark_connect,
                                                          tmp_path):
    up, down = mariadb_pair
    other = MariaDB(tmp_path, name="down-connect", port=free_port()).start()
    try:
        twin_changefeeds(capsys, up, down, other, S, CIDS)
        proc = run_in_own_process("sc-connect", "--spark-remote", spark_connect.url)
        assert proc.returncode == 0, proc.stderr[-3000:]
        compare_twins(up, down, other, S, CIDS)
        assert other.query(f"SELECT id, v, x FROM {S}.t ORDER BY id") == [
            (1, "one", 2), (2, "two", 4), (5, "five", 5), (40, None, 7)]  # 'skip' was filtered
    finally:
        other.stop()
        up.execute(f"DROP DATABASE IF EXISTS {S}")
        down.execute(f"DROP DATABASE IF EXISTS {S}")


def _on_a_server_that_is_down(capsys, up, down, changefeed_id: str, db: str, more: str = "") -> None:
    """A changefeed of `db`'s tables whose spark-remote names a port nothing listens on."""
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {db}")
    nobody = f"sc://127.0.0.1:{free_port()}"
    create_changefeed(capsys, up, down, changefeed_id,
                      f"[filter]\nrules = ['{db}.*']\n[cdcflow]\nspark-remote = \"{nobody}\"\n{more}")


def test_a_server_that_is_down_is_a_retryable_error(mariadb_pair, cdcflow_home, capsys, spark_connect):
    """A window whose row steps run in Spark (engine "spark" here) cannot go on without its server."""
    up, down = mariadb_pair
    db = "sc_down"
    _on_a_server_that_is_down(capsys, up, down, "sc-down", db, 'engine = "spark"\n')
    before = metastore.get_feed("sc-down").checkpoint_ts
    up.execute(f"CREATE DATABASE {db}", f"CREATE TABLE {db}.t (id INT PRIMARY KEY)",
               f"INSERT INTO {db}.t VALUES (1), (2)")
    try:
        proc = run_in_own_process("sc-down", timeout=180)  # a hang fails here
        assert proc.returncode == 1
        last = [line for line in proc.stderr.splitlines() if line.strip()][-1]
        assert last.startswith("Error: changefeed sc-down") and "Spark Connect server" in last, proc.stderr[-2000:]
        status = query(capsys, "sc-down")
        assert status["state"] == "warning" and status["error"]["code"] == "CDCFLOW:ErrSparkUnavailable"
        assert metastore.get_feed("sc-down").checkpoint_ts == before
        assert down.query(f"SHOW DATABASES LIKE '{db}'") == []

        # the server is back (here: another one, given on the command line): the next retry converges
        backdate("sc-down", 3600, "next_retry_at")
        proc = run_in_own_process("sc-down", "--spark-remote", spark_connect.url)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert query(capsys, "sc-down")["state"] == "normal"
        assert_consistent(up, down, [db])
    finally:
        for s in (up, down):
            s.execute(f"DROP DATABASE IF EXISTS {db}")


def test_a_window_the_process_reads_opens_no_session(mariadb_pair, cdcflow_home, capsys):
    """On engine auto a window whose row steps all run in the cycle's process asks nothing of its
    Spark Connect server: the cycle opens no session (a fresh process's 0.6 s), so it converges
    while the server is down, as an embedded cycle starts no JVM."""
    up, down = mariadb_pair
    db = "sc_unused"
    _on_a_server_that_is_down(capsys, up, down, "sc-unused", db)
    up.execute(f"CREATE DATABASE {db}", f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(8))",
               f"INSERT INTO {db}.t VALUES (1, 'a'), (2, 'b')", f"UPDATE {db}.t SET v = 'c' WHERE id = 2")
    try:
        # the changefeed's own engine, auto: a suite forced to Spark (--engine spark) would send it the rows
        result = cycle_result(run_in_own_process("sc-unused", timeout=180, env={"CDCFLOW_ENGINE": ""}))
        assert result["apply"]["rows_in"] == 3 and not result["spark_session"], result
        assert result["filter"]["ran_in"] == "process" and result["apply"]["segments_in_spark"] == 0, result
        assert query(capsys, "sc-unused")["state"] == "normal"
        assert_consistent(up, down, [db])
    finally:
        for s in (up, down):
            s.execute(f"DROP DATABASE IF EXISTS {db}")


def test_a_new_server_is_warmed_up_before_it_is_used(spark_connect):
    """The first stage on a new server would pay for its JVM's and Python workers' first use:
    the server the devtools start has run the warm-up job (Parquet, a window, a shuffle, an
    Arrow function importing cdcflow) before anything uses it."""
    said = [line for line in spark_connect.log_path.read_text().splitlines() if line.startswith("cdcflow: warm-up")]
    assert len(said) == 1 and said[0].startswith("cdcflow: warm-up job took ")


def test_a_restarted_server_is_a_retryable_error(tmp_path):
    """A session whose server went away and came back (a restart mid-stage) is lost; the stage's
    error says so and is retryable."""
    from cdcflow.core.errors import SPARK_UNAVAILABLE
    from cdcflow_devtools import spark_connect as connect
    from cdcflow.spark.session import get_session, release
    from cdcflow.core.errors import classify

    port = free_port()
    server = connect.start(tmp_path, port=port, shuffle_partitions=1, warm=False)
    spark = get_session(remote=server.url)
    try:
        assert spark.range(3).count() == 3
        server.stop()
        server = connect.start(tmp_path, port=port, shuffle_partitions=1, warm=False)
        with pytest.raises(Exception) as lost:
            spark.range(3).count()
        err = classify(lost.value, "apply", "sc-restart")
        assert err.code == SPARK_UNAVAILABLE and err.retryable
        assert str(err).startswith("changefeed sc-restart") or "sc-restart" in str(err)
    finally:
        release(spark)
        server.stop()
    assert "SPARK_CONNECT_MODE_ENABLED" not in os.environ  # an embedded session works again
