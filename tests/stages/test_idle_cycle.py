"""A cycle with nothing to read (the fixed price of a scheduled catch-up) moves the checkpoint
without starting Spark; a small window of keyed tables is applied without it too; a window of
tables a foreign key binds starts it when apply needs it."""

from __future__ import annotations

from e2e_helpers import assert_consistent, create_changefeed, query

from cdcflow.launch import sessions
from cdcflow.launch.in_process import run_cycle
from cdcflow.store import metastore

S = "idle_cycle"


def test_idle_cycle_moves_the_checkpoint_without_spark(mariadb_pair, cdcflow_home, capsys, monkeypatch):
    # every session a cycle opens is asked for here (the test session's own Spark may be running)
    opened = []
    start_session = sessions.start_session
    monkeypatch.setattr(sessions, "start_session", lambda *a, **kw: opened.append(a) or start_session(*a, **kw))
    monkeypatch.delenv("CDCFLOW_ENGINE", raising=False)  # the default engine's choices, whatever the suite forces
    up, down = mariadb_pair
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {S}", f"CREATE DATABASE {S}",
                  f"CREATE TABLE {S}.t (id INT PRIMARY KEY, v INT)")
    create_changefeed(capsys, up, down, "idle", f"[filter]\nrules = ['{S}.*']\n")
    before = query(capsys, "idle")
    result = run_cycle("idle")
    assert opened == []
    assert result["pull"]["pulled"] == 0 and result["apply"]["rows_in"] == 0
    after = query(capsys, "idle")
    assert after["state"] == "normal"
    assert after["checkpoint_tso"] > before["checkpoint_tso"]
    run = metastore.recent_runs("idle", limit=1)[0]
    assert run.status == "done" and run.stats["apply"]["rows_in"] == 0

    # a dry run of an idle window applies nothing, so the checkpoint stays
    run_cycle("idle", dry_run=True)
    assert query(capsys, "idle")["checkpoint_tso"] == after["checkpoint_tso"] and opened == []

    # beside them, rows of a table the filter drops: filter copies the kept table's rows with pyarrow
    up.execute(f"DROP DATABASE IF EXISTS {S}_other", f"CREATE DATABASE {S}_other",
               f"CREATE TABLE {S}_other.x (id INT PRIMARY KEY)", f"INSERT INTO {S}_other.x VALUES (1), (2)")
    up.execute(f"INSERT INTO {S}.t VALUES (1, 1), (2, 2)", f"UPDATE {S}.t SET v = 9 WHERE id = 2")
    try:
        result = run_cycle("idle")
        assert result["pull"]["pulled"] == 8 and result["apply"]["rows_in"] == 3
        assert result["filter"]["rows_copied"] and result["filter"]["kept_tables"] == 1
        # a small window of a keyed table: filter, barrier and apply read it with pyarrow
        assert opened == [] and not result["spark_session"]
        assert_consistent(up, down, [S])
        assert down.query(f"SHOW DATABASES LIKE '{S}_other'") == []

        # the tables a cascading foreign key binds are written in commit order from the rows held
        # here too: a small window of them needs no session either
        up.execute(f"CREATE TABLE {S}.p (id INT PRIMARY KEY)",
                   f"CREATE TABLE {S}.c (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES {S}.p (id) "
                   "ON DELETE CASCADE)",
                   f"INSERT INTO {S}.p VALUES (1), (2)", f"INSERT INTO {S}.c VALUES (10, 1), (20, 2)",
                   f"DELETE FROM {S}.p WHERE id = 1")
        result = run_cycle("idle")
        # 5 row changes: the cascade deletes c (10) downstream, as upstream, unlogged
        assert result["apply"]["rows_in"] == 5 and opened == [] and not result["spark_session"]
        assert_consistent(up, down, [S])
    finally:
        for s in (up, down):
            s.execute(f"DROP DATABASE IF EXISTS {S}", f"DROP DATABASE IF EXISTS {S}_other")
