"""ddl.mariadb_only: MariaDB's own DDL per downstream flavour.  CONVERT PARTITION / TABLE's
equivalents run for real in tests/e2e/test_convert_partition.py; here the versioning clauses a
downstream without system versioning does without, and sequences."""

from __future__ import annotations

import pytest

from cdcflow.core.errors import CdcflowError
from cdcflow.ddl import mariadb_only as m
from cdcflow.ddl.classify import classify
from cdcflow.ddl.tidb_only import MARIADB, MYSQL8, TIDB
from cdcflow.source.binlog import Position
from cdcflow.stages.contracts import DdlEntry


def _entry(query: str) -> DdlEntry:
    info = classify(query, "d", "")
    return DdlEntry(commit_ts=4242, query=query, default_schema="d", sql_mode="", start_pos=Position("b.1", 4),
                    end_pos=Position("b.1", 90), name=info.statement_name, type=info.type,
                    sub_types=list(info.sub_types), tables=[(t.schema, t.table) for t in info.tables])


# (upstream statement, what TiDB and MySQL run: [] is nothing)
VERSIONING = [
    ("CREATE TABLE v (id INT PRIMARY KEY, x INT) WITH SYSTEM VERSIONING",
     ["CREATE TABLE v (id INT PRIMARY KEY, x INT) "]),
    ("CREATE TABLE w (id INT PRIMARY KEY, s TIMESTAMP(6) GENERATED ALWAYS AS ROW START INVISIBLE, "
     "e TIMESTAMP(6) GENERATED ALWAYS AS ROW END, n INT WITHOUT SYSTEM VERSIONING, PERIOD FOR SYSTEM_TIME (s, e)) "
     "ENGINE=InnoDB WITH SYSTEM VERSIONING COMMENT 'c'",
     ["CREATE TABLE w (id INT PRIMARY KEY, n INT ) ENGINE=InnoDB  COMMENT 'c'"]),
    ("ALTER TABLE t ADD SYSTEM VERSIONING", []),
    ("ALTER TABLE t DROP SYSTEM VERSIONING", []),
    ("ALTER TABLE t ADD COLUMN s TIMESTAMP(6) GENERATED ALWAYS AS ROW START, ADD COLUMN e TIMESTAMP(6) "
     "GENERATED ALWAYS AS ROW END, ADD PERIOD FOR SYSTEM_TIME (s, e), ADD SYSTEM VERSIONING", []),
    ("ALTER TABLE t ADD SYSTEM VERSIONING, ADD COLUMN y INT, COMMENT 'x'", ["ALTER TABLE t ADD COLUMN y INT, COMMENT 'x'"]),
    ("CREATE TABLE plain (id INT PRIMARY KEY)", ["CREATE TABLE plain (id INT PRIMARY KEY)"]),
]


@pytest.mark.parametrize("query, elsewhere", VERSIONING, ids=[q[:50] for q, _ in VERSIONING])
def test_versioning_clauses_are_left_out_where_the_downstream_has_none(query, elsewhere):
    for flavour in (TIDB, MYSQL8):
        assert m.for_flavour(_entry(query), flavour, "cf") == elsewhere
    assert m.for_flavour(_entry(query), MARIADB, "cf") == [query]


@pytest.mark.parametrize("query", ["CREATE SEQUENCE s START WITH 5 CACHE 10", "ALTER SEQUENCE s RESTART WITH 9",
                                   "DROP SEQUENCE IF EXISTS s"])
def test_sequences_run_on_tidb_and_stop_a_mysql_downstream(query):
    assert m.for_flavour(_entry(query), TIDB, "cf") == [query]
    assert m.for_flavour(_entry(query), MARIADB, "cf") == [query]
    with pytest.raises(CdcflowError) as e:
        m.for_flavour(_entry(query), MYSQL8, "cf")
    assert "MySQL has no sequences" in e.value.message and "4242" in str(e.value) and "skip-ddl" in e.value.hint


def test_convert_table_keeps_the_partition_definition():
    q = "ALTER TABLE q CONVERT TABLE q1 TO PARTITION p1 VALUES IN (1, 2) COMMENT 'x'"
    assert m.for_flavour(_entry(q), TIDB, "cf") == [
        "ALTER TABLE `d`.`q` ADD PARTITION (PARTITION p1 VALUES IN (1, 2) COMMENT 'x')",
        "ALTER TABLE `d`.`q` EXCHANGE PARTITION `p1` WITH TABLE `d`.`q1`", "DROP TABLE `d`.`q1`"]


def test_each_of_cdcflows_own_types_says_what_ticdc_and_other_downstreams_do():
    from cdcflow.ddl.types import MARIADB as OWN, ROWS

    own = [r for r in ROWS if r.allowed == OWN]
    assert {r.name for r in own} == {"alter table system versioning", "convert partition", "convert table",
                                     "create sequence", "alter sequence", "drop sequence"}
    assert all(r.elsewhere and r.ticdc for r in own)
