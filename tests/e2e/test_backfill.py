"""A backfill from the second a changefeed was created (`resume --overwrite-checkpoint-ts`):
the window re-reads that whole binlog second, DDLs the changefeed's tracked schema starts
after among them, and must end `normal` with the downstream equal to the upstream."""

from __future__ import annotations

import pytest
from e2e_helpers import assert_consistent, cli_ok, cli_run, create_changefeed, fresh_schema, query

from cdcflow.core import tso
from cdcflow.store import metastore

pytestmark = pytest.mark.e2e

S = "bf_create"


def test_a_backfill_from_the_creation_second_converges(mariadb_pair, cdcflow_home, capsys):
    up, down = mariadb_pair
    down.execute(f"DROP DATABASE IF EXISTS {S}")
    # the upstream's DDL right before create falls into the creation second
    up.execute(f"DROP DATABASE IF EXISTS {S}", f"CREATE DATABASE {S}",
               f"CREATE TABLE {S}.t (id INT PRIMARY KEY, v VARCHAR(20))", f"INSERT INTO {S}.t VALUES (1, 'before')")
    down.execute(f"CREATE DATABASE {S}", f"CREATE TABLE {S}.t (id INT PRIMARY KEY, v VARCHAR(20))",
                 f"INSERT INTO {S}.t VALUES (1, 'before')")  # the snapshot the changefeed starts from
    create_changefeed(capsys, up, down, "bf-create", f"[filter]\nrules = ['{S}.*']\n")
    created = metastore.get_feed("bf-create").checkpoint_ts
    up.execute(f"INSERT INTO {S}.t VALUES (2, 'after')", f"ALTER TABLE {S}.t ADD COLUMN w INT",
               f"UPDATE {S}.t SET w = id")
    try:
        rc, err = cli_run(capsys, "bf-create")
        assert rc == 0, err
        assert_consistent(up, down, [S])

        down.execute(f"UPDATE {S}.t SET v = 'damaged' WHERE id = 2")
        cli_ok(capsys, "changefeed", "pause", "-c", "bf-create")
        # as a person gives it: the creation second, as a date-time (its start, before the snapshot)
        cli_ok(capsys, "changefeed", "resume", "-c", "bf-create", "--overwrite-checkpoint-ts",
               tso.to_text(created)[:19], "--no-confirm")
        rc, err = cli_run(capsys, "bf-create")
        assert rc == 0, err
        assert query(capsys, "bf-create")["state"] == "normal"
        assert_consistent(up, down, [S])
        assert metastore.get_feed("bf-create").checkpoint_ts > created
    finally:
        for s in (up, down):
            s.execute(f"DROP DATABASE IF EXISTS {S}")


def test_prepare_refuses_a_start_ts_from_the_future_and_resume_repairs_a_future_checkpoint(mariadb_pair, spark,
                                                                                           cdcflow_home, capsys):
    """prepare is the last guard: a backfill from the future that reached it (a trigger an older
    surface let through) changes nothing.  A changefeed an older cdcflow moved into the future
    (checkpoint and resolved ts in 2999) is repaired by `resume --overwrite-checkpoint-ts now`."""
    from cdcflow.core.errors import CLI_START_TS_IN_FUTURE, CdcflowError
    from cdcflow.launch.in_process import new_run_id
    from cdcflow.stages.prepare import prepare
    from cdcflow.stages.cycle import Cycle

    up, down = mariadb_pair
    fresh_schema(up, down, "bf_future", "CREATE TABLE t (id INT PRIMARY KEY)")
    create_changefeed(capsys, up, down, "bf-future", "[filter]\nrules = ['bf_future.*']\n")
    before = metastore.get_feed("bf-future")
    future = tso.parse("2999-01-01")
    with pytest.raises(CdcflowError) as refused:
        prepare(Cycle.load("bf-future", new_run_id()), start_ts=future)
    assert refused.value.code == CLI_START_TS_IN_FUTURE and f"start_ts {future}" in str(refused.value)
    assert metastore.get_feed("bf-future") == before and metastore.recent_runs("bf-future") == []

    # what an older cdcflow left: checkpoint and resolved ts in 2999, state normal
    metastore.update_feed("bf-future", checkpoint_ts=future, resolved_ts=future, replay_until=future)
    cli_ok(capsys, "changefeed", "pause", "-c", "bf-future")
    cli_ok(capsys, "changefeed", "resume", "-c", "bf-future", "--overwrite-checkpoint-ts", "now", "--no-confirm")
    repaired = metastore.get_feed("bf-future")
    assert repaired.checkpoint_ts <= tso.now() and repaired.resolved_ts == repaired.checkpoint_ts
    assert repaired.replay_until < tso.parse("2100-01-01")
    up.execute("INSERT INTO bf_future.t VALUES (1)")
    rc, err = cli_run(capsys, "bf-future")
    assert rc == 0, err
    assert metastore.get_feed("bf-future").checkpoint_ts <= tso.now()
    assert query(capsys, "bf-future")["state"] == "normal"
    assert_consistent(up, down, ["bf_future"])
