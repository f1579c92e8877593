"""Every column type round-trips exactly, upstream → binlog → event store → downstream,
through the CLI against real MariaDB servers: extreme values, NULL in every column, zero
dates, negative and >24h TIME, TIMESTAMP written under a non-UTC session time zone, latin1,
arbitrary bytes."""

from __future__ import annotations

import pytest
from e2e_helpers import PREPARED_BATCHES, assert_consistent, create_changefeed, prepared_executions
from type_matrix import LAX_ROWS, assert_same_values, create_types

from cdcflow import cli

pytestmark = pytest.mark.e2e


def run_cli(changefeed_id: str) -> None:
    assert cli.main(["changefeed", "run", "-c", changefeed_id]) == 0


def test_every_type_round_trips_exactly(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    create_changefeed(capsys, up, down, "types", "[filter]\nrules = ['types.*']\n" + PREPARED_BATCHES)
    create_types(up)  # the binlog carries the TIMESTAMPs as UTC seconds
    with prepared_executions(down):
        run_cli("types")
    assert_same_values(up, down)
    assert_consistent(up, down, ["types"])

    # updates and deletes must find the rows by these exact values too
    with up.connect() as c, c.cursor() as cur:
        cur.execute("SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION'")
        cur.execute("SET SESSION time_zone = '-08:00'")
        cur.execute("UPDATE types.t SET id = id + 10 WHERE id IN (1, 3)")
        cur.execute("UPDATE types.t SET ts = '2020-02-29 23:59:59.999999', tm = '-00:00:00.5' WHERE id = 2")
        cur.execute("UPDATE types.t SET vb = x'00', y = 1999 WHERE id = 5")
        cur.execute("DELETE FROM types.t WHERE id = 4")
        cur.execute("UPDATE types.k SET v = v + 10")
        cur.execute("UPDATE types.k SET bk = CONCAT(bk, x'00') WHERE v = 12")
        cur.execute("DELETE FROM types.k WHERE v = 13")
        # rows found by values whose trailing zero bytes the binlog left out
        cur.execute("UPDATE types.fb SET i6 = '::1', un = 'ffffffff-ffff-ffff-ffff-ffffffffffff' WHERE i4 = '0.0.0.0'")
        cur.execute("DELETE FROM types.fb WHERE id = 3")
    run_cli("types")
    assert_same_values(up, down)
    assert_consistent(up, down, ["types"])
    assert down.query("SELECT HEX(bk), v FROM types.k ORDER BY bk") == [("00", 11), ("FF0000", 12)]


LAX_SESSIONS = {"insert ignore": ("STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION", "INSERT IGNORE"),
                "lax session": ("", "INSERT")}


@pytest.mark.parametrize("how", sorted(LAX_SESSIONS))
def test_values_a_lax_upstream_stored_replicate_exactly(mariadb_pair, spark, cdcflow_home, capsys, how):
    up, down = mariadb_pair
    db = "lax_" + how.replace(" ", "_")
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {db}")
    create_changefeed(capsys, up, down, db.replace("_", "-"), f"[filter]\nrules = ['{db}.*']\n" + PREPARED_BATCHES)
    create_types(up, db)
    mode, verb = LAX_SESSIONS[how]
    with up.connect() as c, c.cursor() as cur:
        cur.execute("SET SESSION sql_mode = %s", (mode,))
        for row in LAX_ROWS:
            cur.execute(f"{verb} INTO {db}.t VALUES {row}")
        cur.execute(f"{verb} INTO {db}.t (id, e) VALUES (103, 'c d') ON DUPLICATE KEY UPDATE e = 'nope'")
        cur.execute(f"UPDATE {'IGNORE ' if verb.endswith('IGNORE') else ''}{db}.t SET e = 'zz', ti = 500 "
                    "WHERE id = 103")
        assert cur.execute(f"SELECT 1 FROM {db}.t WHERE id = 101 AND e = '' AND ti = 127") == 1
    with prepared_executions(down):
        run_cli(db.replace("_", "-"))
    assert_same_values(up, down, db)
    assert_consistent(up, down, [db])
