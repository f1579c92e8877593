"""Every column type round-trips exactly, upstream → binlog → event store → downstream,
through the CLI against real MariaDB servers: extreme values, NULL in every column, zero
dates, negative and >24h TIME, TIMESTAMP written under a non-UTC session time zone, latin1,
arbitrary bytes."""

from __future__ import annotations

import pytest
from e2e_helpers import assert_consistent, create_changefeed
from type_matrix import assert_same_values, create_types

from cdcflow import cli

pytestmark = pytest.mark.e2e


def run_cli(changefeed_id: str) -> None:
    assert cli.main(["changefeed", "run", "-c", changefeed_id]) == 0


def test_every_type_round_trips_exactly(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    create_changefeed(capsys, up, down, "types", "[filter]\nrules = ['types.*']\n")
    create_types(up)  # the binlog carries the TIMESTAMPs as UTC seconds
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
    run_cli("types")
    assert_same_values(up, down)
    assert_consistent(up, down, ["types"])
    assert down.query("SELECT HEX(bk), v FROM types.k ORDER BY bk") == [("00", 11), ("FF0000", 12)]
