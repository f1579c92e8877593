"""MariaDB's `ALTER TABLE … CONVERT PARTITION p TO TABLE t` and `CONVERT TABLE t TO PARTITION p`
(issue 42, item 4b): the binlog holds the statement only (the rows move inside the server), so
the downstream must run it to get the table it makes (and the rows written to it afterwards), or
to lose the table it takes.  A downstream without the syntax (TiDB, MySQL) runs the partition
exchange both have (ddl.mariadb_only): those statements are run here on a MariaDB server too,
where the result must equal the upstream's own."""

from __future__ import annotations

import pytest
from e2e_helpers import assert_consistent, fresh_schema, replicate_workload, tables

from cdcflow.ddl import mariadb_only
from cdcflow.ddl.classify import classify
from cdcflow.ddl.tidb_only import MYSQL8, TIDB
from cdcflow.source.binlog import Position
from cdcflow.stages.contracts import DdlEntry

pytestmark = pytest.mark.e2e

DB = "convpart"
TABLE = ("CREATE TABLE q (id INT PRIMARY KEY, x INT, KEY (x)) "
         "PARTITION BY RANGE (id) (PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN (20))")
WORKLOAD = (
    TABLE,
    "INSERT INTO q VALUES (1, 1), (2, 2), (11, 11), (12, 12)",
    "ALTER TABLE q CONVERT PARTITION p1 TO TABLE q1",
    "INSERT INTO q1 VALUES (13, 13)",
    "UPDATE q1 SET x = 110 WHERE id = 11",
    "DELETE FROM q1 WHERE id = 12",
    "CREATE TABLE q2 (id INT PRIMARY KEY, x INT, KEY (x))",
    "INSERT INTO q2 VALUES (21, 21), (22, 22)",
    "ALTER TABLE q CONVERT TABLE q1 TO PARTITION p1 VALUES LESS THAN (20)",
    "ALTER TABLE q CONVERT TABLE q2 TO PARTITION p2 VALUES LESS THAN (30)",
    "UPDATE q SET x = x + 1 WHERE id IN (11, 21)",
    "INSERT INTO q VALUES (25, 25)",
    "ALTER TABLE q CONVERT PARTITION p0 TO TABLE q0",  # a table made and kept
    "INSERT INTO q0 VALUES (3, 3)",
    "UPDATE q0 SET x = 10 WHERE id = 1",
)


def test_convert_partition_and_table_are_replicated(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    replicate_workload(capsys, up, down, "e2e-convert-partition", DB, WORKLOAD)
    assert tables(down, DB) == tables(up, DB) == ["q", "q0"]
    for table in ("q", "q0"):
        assert down.query(f"SHOW CREATE TABLE {DB}.{table}") == up.query(f"SHOW CREATE TABLE {DB}.{table}")
    assert down.query(f"SELECT * FROM {DB}.q ORDER BY id") == [(11, 111), (13, 13), (21, 22), (22, 22), (25, 25)]
    assert down.query(f"SELECT * FROM {DB}.q0 ORDER BY id") == [(1, 10), (2, 2), (3, 3)]
    assert_consistent(up, down, [DB])


def _entry(query: str) -> DdlEntry:
    info = classify(query, DB, "")
    return DdlEntry(commit_ts=1, query=query, default_schema=DB, sql_mode="", start_pos=Position("b.1", 4),
                    end_pos=Position("b.1", 90), name=info.statement_name, type=info.type,
                    sub_types=list(info.sub_types), tables=[(t.schema, t.table) for t in info.tables])


@pytest.mark.parametrize("flavour", [TIDB, MYSQL8])
def test_the_equivalent_statements_do_what_convert_does(mariadb_pair, flavour):
    """Each CONVERT of the workload run upstream, and what a TiDB or MySQL downstream runs for it
    run downstream (MariaDB has every statement of it): the same tables, definitions and rows."""
    up, down = mariadb_pair
    fresh_schema(up, down, DB)
    ran = 0
    for statement in WORKLOAD:
        up.execute(statement, database=DB)
        if "CONVERT" in statement:
            equivalent = mariadb_only.for_flavour(_entry(statement), flavour, "cf")
            assert len(equivalent) > 1 and not any("CONVERT" in q for q in equivalent), equivalent
            down.execute(*equivalent, database=DB)
            ran += 1
            assert tables(down, DB) == tables(up, DB)
            for table in tables(up, DB):
                assert down.query(f"SHOW CREATE TABLE {DB}.{table}") == up.query(f"SHOW CREATE TABLE {DB}.{table}")
        else:
            down.execute(statement, database=DB)
    assert ran == 4
    assert_consistent(up, down, [DB])
