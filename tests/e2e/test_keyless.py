"""Tables without a valid index under force-replicate, end to end through the CLI: duplicate
rows, NULLs, a nullable unique key; changes applied in commit order matching whole rows."""

from __future__ import annotations

import pytest
from e2e_helpers import assert_consistent, create_changefeed, prepared_executions

from cdcflow import cli

pytestmark = pytest.mark.e2e


def test_duplicate_rows_stay_right(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    create_changefeed(capsys, up, down, "keyless", "force-replicate = true\n[filter]\nrules = ['keyless.*']\n")
    up.execute(
        "CREATE DATABASE keyless",
        "CREATE TABLE keyless.dup (a INT, b VARCHAR(10), f DOUBLE)",
        # a unique key over a nullable column is no valid index: NULLs may repeat
        "CREATE TABLE keyless.nuk (u INT NULL, v INT, UNIQUE KEY uu (u))",
        "INSERT INTO keyless.dup VALUES (1, 'a', 0.1), (1, 'a', 0.1), (1, 'a', 0.1), (2, NULL, NULL), "
        "(2, NULL, NULL), (3, 'c', -0.0)",
        "INSERT INTO keyless.nuk VALUES (NULL, 1), (NULL, 1), (1, 1), (2, 2)",
    )
    with up.connect() as c, c.cursor() as cur:
        cur.execute("BEGIN")
        cur.execute("UPDATE keyless.dup SET b = 'z' WHERE a = 1 LIMIT 1")   # one of three equal rows
        cur.execute("DELETE FROM keyless.dup WHERE a = 2 LIMIT 1")          # one of two rows with NULLs
        cur.execute("UPDATE keyless.dup SET a = 4 WHERE b IS NULL")         # the other, found through NULL
        cur.execute("INSERT INTO keyless.dup VALUES (1, 'a', 0.1)")         # a fourth copy
        cur.execute("UPDATE keyless.nuk SET u = 3 WHERE u IS NULL LIMIT 1")
        cur.execute("UPDATE keyless.nuk SET u = NULL WHERE u = 1")
        cur.execute("COMMIT")
    up.execute("DELETE FROM keyless.dup WHERE a = 1 AND b = 'a' LIMIT 2",
               "UPDATE keyless.nuk SET v = v + 1 WHERE u IS NULL")
    with prepared_executions(down, at_least=8):  # each change one statement, prepared (cache-prep-stmts)
        assert cli.main(["changefeed", "run", "-c", "keyless"]) == 0
    assert_consistent(up, down, ["keyless"])
    assert sorted(down.query("SELECT a, b FROM keyless.dup")) == sorted(up.query("SELECT a, b FROM keyless.dup"))
    assert down.query("SELECT COUNT(*) FROM keyless.dup WHERE a = 1 AND b = 'a'") == [(1,)]
    assert down.query("SELECT COUNT(*) FROM keyless.nuk WHERE u IS NULL AND v = 2") == [(2,)]


def test_without_force_replicate_the_rows_are_skipped(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    create_changefeed(capsys, up, down, "keyless-off", "[filter]\nrules = ['keyless_off.*']\n")
    up.execute("CREATE DATABASE keyless_off", "CREATE TABLE keyless_off.t (a INT)",
               "INSERT INTO keyless_off.t VALUES (1), (1)")
    assert cli.main(["changefeed", "run", "-c", "keyless-off"]) == 0
    # TiCDC's DDL-replication doc: without a valid index and force-replicate the table's DDL and rows stay upstream
    assert down.query("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'keyless_off'") == [(0,)]
