"""Value expressions read each row with the table as it was at the row's commit ts (the
tracked schema), not the upstream's catalogue when the cycle runs: a table dropped, or a
column renamed or dropped, after the rows still has its rows judged.  TRUE and FALSE are
MySQL's 1 and 0."""

from __future__ import annotations

import pytest
from e2e_helpers import create_changefeed, tables

from cdcflow import cli

pytestmark = pytest.mark.e2e

CONFIG = """
[filter]
rules = ['vfs.*']

[[filter.event-filters]]
matcher = ['vfs.gone']
ignore-insert-value-expr = "name = 'skip'"

[[filter.event-filters]]
matcher = ['vfs.cols']
ignore-insert-value-expr = "old_name = 'skip' OR extra > 10"

[[filter.event-filters]]
matcher = ['vfs.flags']
ignore-insert-value-expr = "flag = true AND big = TRUE"
ignore-delete-value-expr = "flag = false"
"""

TABLES = ("CREATE TABLE vfs.gone (id INT PRIMARY KEY, name VARCHAR(20))",
          "CREATE TABLE vfs.cols (id INT PRIMARY KEY, old_name VARCHAR(20), extra INT)",
          "CREATE TABLE vfs.flags (id INT PRIMARY KEY, flag TINYINT, big BIGINT)")


def test_rows_are_judged_with_the_schema_of_their_commit_ts(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    up.execute("CREATE DATABASE vfs", *TABLES)
    down.execute("CREATE DATABASE vfs", *TABLES)
    create_changefeed(capsys, up, down, "vfs", CONFIG)
    up.execute("INSERT INTO vfs.gone VALUES (1, 'keep'), (2, 'skip')",
               "INSERT INTO vfs.cols VALUES (1, 'keep', 1), (2, 'skip', 1), (3, 'keep', 11)",
               "INSERT INTO vfs.flags VALUES (1, 1, 1), (2, 0, 1), (3, 1, 0), (4, NULL, 1), (5, 0, 0)")
    # all of this is upstream before the cycle runs: the catalogue no longer has vfs.gone
    up.execute("INSERT INTO vfs.gone VALUES (3, 'keep')",
               "DROP TABLE vfs.gone",
               "ALTER TABLE vfs.cols RENAME COLUMN old_name TO new_name",
               "ALTER TABLE vfs.cols DROP COLUMN extra",
               "DELETE FROM vfs.flags WHERE id IN (2, 3)")
    assert cli.main(["changefeed", "run", "-c", "vfs"]) == 0
    assert tables(down, "vfs") == ["cols", "flags"]
    assert down.query("SELECT id, new_name FROM vfs.cols ORDER BY id") == [(1, "keep")]
    # flag = true AND big = TRUE ignored insert 1; flag = false kept row 2 on delete
    assert down.query("SELECT id FROM vfs.flags ORDER BY id") == [(2,), (4,), (5,)]


def test_rows_on_either_side_of_a_column_change_read_their_own_version(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    ddl = "CREATE TABLE vfr.t (id INT PRIMARY KEY, name VARCHAR(20))"
    up.execute("CREATE DATABASE vfr", ddl)
    down.execute("CREATE DATABASE vfr", ddl)
    create_changefeed(capsys, up, down, "vfr", """
[filter]
rules = ['vfr.*']

[[filter.event-filters]]
matcher = ['vfr.t']
ignore-insert-value-expr = "name = 'skip'"
""")
    up.execute("INSERT INTO vfr.t VALUES (1, 'skip'), (2, 'keep')",
               "ALTER TABLE vfr.t CHANGE name label VARCHAR(20), ADD COLUMN name INT",
               "INSERT INTO vfr.t VALUES (3, 'skip', 1), (4, 'keep', 2)")
    assert cli.main(["changefeed", "run", "-c", "vfr"]) == 0
    assert down.query("SELECT id, label, name FROM vfr.t ORDER BY id") == [(2, "keep", None), (3, "skip", 1),
                                                                          (4, "keep", 2)]
