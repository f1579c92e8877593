"""Event-filter value expressions with TiDB's functions end to end through the CLI: DM's own
expression filters (`c_json->'$.id' = 2`, `ts > NOW()`), date arithmetic, strings, CASE and
CAST over inserts, updates and deletes; an unknown function refused at create by name.  The
downstream holds exactly the rows the filters say (every column compared)."""

from __future__ import annotations

import pytest
from e2e_helpers import create_changefeed

from cdcflow import cli

pytestmark = pytest.mark.e2e

TABLE = ("CREATE TABLE vff.t (id INT PRIMARY KEY, c_json JSON, ts TIMESTAMP(6) NULL DEFAULT NULL, d DATE, "
         "name VARCHAR(20), amount DECIMAL(10,2))")

CONFIG = """
[filter]
rules = ['vff.*']

[[filter.event-filters]]
matcher = ['vff.t']
ignore-insert-value-expr = "c_json->'$.id' = 2 OR ts > NOW() OR YEAR(d) < 2000 OR name REGEXP '^tmp_' OR CASE WHEN amount > 100 THEN 1 ELSE 0 END = 1"
ignore-update-new-value-expr = "CAST(c_json->>'$.v' AS SIGNED) < 0"
ignore-delete-value-expr = "DATE_ADD(d, INTERVAL 1 MONTH) > CURDATE() OR CONCAT(UPPER(LEFT(name, 1)), 'x') = 'Kx'"
"""

ALL = "SELECT id, c_json, CAST(ts AS CHAR), CAST(d AS CHAR), name, amount FROM vff.t ORDER BY id"


def test_value_expressions_with_tidb_functions(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    for s in (up, down):
        s.execute("DROP DATABASE IF EXISTS vff", "CREATE DATABASE vff", TABLE)
    create_changefeed(capsys, up, down, "vff", CONFIG)
    up.execute(
        "INSERT INTO vff.t VALUES"
        " (1, '{\"id\": 1}', '2001-01-01 00:00:00', '2020-01-01', 'a', 1),"
        " (2, '{\"id\": 2}', '2001-01-01 00:00:00', '2020-01-01', 'a', 1),"     # the JSON path: ignored
        " (3, '{\"id\": 3}', '2037-12-31 00:00:00', '2020-01-01', 'a', 1),"     # after NOW(): ignored
        " (4, '{\"id\": 4}', '2001-01-01 00:00:00', '1999-12-31', 'a', 1),"     # YEAR < 2000: ignored
        " (5, '{\"id\": 5}', '2001-01-01 00:00:00', '2020-01-01', 'tmp_x', 1),"  # REGEXP: ignored
        " (6, '{\"id\": 6}', '2001-01-01 00:00:00', '2020-01-01', 'a', 500),"   # CASE: ignored
        " (7, NULL, NULL, NULL, NULL, NULL),"                                     # NULL everywhere: kept
        " (8, '{\"id\": \"2\"}', '2001-01-01 00:00:00', '2020-01-01', 'b', 1),"  # JSON string \"2\" is not 2
        " (9, '{\"id\": 9}', '2001-01-01 00:00:00', '2020-01-01', 'kate', 1)",
        "INSERT INTO vff.t VALUES (10, '{}', '2001-01-01 00:00:00', CURDATE(), 'z', 1)",
    )
    assert cli.main(["changefeed", "run", "-c", "vff"]) == 0
    assert [r[0] for r in down.query(ALL)] == [1, 7, 8, 9, 10]
    assert down.query(ALL) == [r for r in up.query(ALL) if r[0] in (1, 7, 8, 9, 10)]

    up.execute(
        "UPDATE vff.t SET c_json = '{\"id\": 1, \"v\": -5}' WHERE id = 1",  # new v < 0: ignored
        "UPDATE vff.t SET c_json = '{\"v\": 3}' WHERE id = 9",             # replicated
        "DELETE FROM vff.t WHERE id = 9",     # name 'kate': 'K' + 'x' = 'Kx', ignored (the update above stays)
        "DELETE FROM vff.t WHERE id = 10",    # d is today: a month on is after CURDATE(), ignored
        "DELETE FROM vff.t WHERE id IN (7, 8)",  # NULLs, and a date long past: deleted
    )
    assert cli.main(["changefeed", "run", "-c", "vff"]) == 0
    got = down.query(ALL)
    assert [r[0] for r in got] == [1, 9, 10]
    assert got[0][1] == '{"id": 1}'  # the ignored update left the old document
    assert got[1][1] == '{"v": 3}'


def test_create_refuses_an_unknown_function_naming_it(mariadb_pair, cdcflow_home, capsys):
    up, down = mariadb_pair
    up.execute("CREATE DATABASE IF NOT EXISTS vffbad", "CREATE TABLE IF NOT EXISTS vffbad.t (id INT PRIMARY KEY, "
               "name VARCHAR(9))")
    path = cdcflow_home / "vffbad.toml"
    path.write_text("[filter]\nrules = ['vffbad.*']\n[[filter.event-filters]]\nmatcher = ['vffbad.*']\n"
                    "ignore-delete-value-expr = \"id > NOW() OR SHA2(name, 256) = 'x'\"\n")
    capsys.readouterr()
    rc = cli.main(["changefeed", "create", "-c", "vffbad", "--source-uri", up.uri, "--sink-uri", down.uri,
                   "--config", str(path)])
    err = capsys.readouterr().err
    assert rc == 1
    assert "SHA2" in err and "ignore-delete-value-expr" in err and "NOW" not in err.split("uses", 1)[1]
    assert cli.main(["changefeed", "query", "-c", "vffbad"]) == 1  # nothing was created
