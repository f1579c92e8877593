"""A backfill from the second a changefeed was created (`resume --overwrite-checkpoint-ts`):
the window re-reads that whole binlog second, DDLs the changefeed's tracked schema starts
after among them, and must end `normal` with the downstream equal to the upstream."""

from __future__ import annotations

import pytest
from e2e_helpers import assert_consistent, cli_ok, cli_run, create_changefeed, query

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
