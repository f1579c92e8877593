"""The event filter and the per-table DDL gate: TiCDC's DDL-replication doc's event-filter table row by row,
TiCDC's event names, and TiCDC's DDL-replication doc's valid-index matrix walked through the tracked schema."""

from __future__ import annotations

import pytest

from cdcflow.config.checks import EVENT_TYPES
from cdcflow.config.parsing import parse_config
from cdcflow.ddl.classify import classify
from cdcflow.ddl.tracker import SchemaTracker
from cdcflow.ddl.types import ALLOW_LIST, MARIADB_TYPES

# TiCDC's current whitelist beyond the documented list, and cdcflow's own (MariaDB's statements, sequences)
WHITELIST_AND_OWN = ("alter table partitioning", "remove partitioning", *MARIADB_TYPES)
from cdcflow.filter.ddl_gate import ValidIndexError, decide
from cdcflow.filter.event_filter import ALTER_TABLE_TYPES, DDL_EVENT_NAMES, EventFilter
from cdcflow.filter.table import TableFilter
from cdcflow.filter.assembled import ddl_decision

SEED_CONFIG = """
[filter]
rules = ['test.t*']
[[filter.event-filters]]
matcher = ["test.t1"]
ignore-event = ["create table", "drop table", "truncate table", "rename table"]
"""
# TiCDC's DDL-replication doc's last table: (DDL, DDL replicated?, table whose DML follows, DML replicated? or None for '-')
SEED_EVENT_FILTER_TABLE = [
    ("CREATE TABLE test.t1 (id INT, name VARCHAR(50));", False, "t1", True),
    ("CREATE TABLE test.t2 (id INT, name VARCHAR(50));", True, "t2", True),
    ("CREATE TABLE test.ignore (id INT, name VARCHAR(50));", False, "ignore", False),
    ("DROP TABLE test.t1;", False, "t1", None),
    ("TRUNCATE TABLE test.t1;", False, "t1", True),
    ("RENAME TABLE test.t1 TO test.t2;", False, "t2", True),
    ("RENAME TABLE test.t1 TO test.ignore;", False, "ignore", False),
]


def _gate(cfg, stmt, tracker=None, ts=100):
    tf = TableFilter(list(cfg.rules), case_sensitive=cfg.case_sensitive)
    ef = EventFilter(cfg.event_filters, cfg.case_sensitive)
    info = classify(stmt, "test")
    tracker = tracker or SchemaTracker()
    changes = tracker.apply(info, stmt, "", ts)
    return decide(info, stmt, ts, changes, tf, ef, cfg.force_replicate, ddl_decision(info, tf),
                  tracker.current), tf, ef


@pytest.mark.parametrize("stmt, ddl_kept, dml_table, dml_kept", SEED_EVENT_FILTER_TABLE)
def test_seed_event_filter_table(stmt, ddl_kept, dml_table, dml_kept):
    # The seed's tables have no valid index; force-replicate keeps the matrix out of this table
    # (test_valid_index_matrix walks that).
    cfg = parse_config("force-replicate = true\n" + SEED_CONFIG)
    verdict, tf, ef = _gate(cfg, stmt)
    assert verdict.keep is ddl_kept, verdict.why
    if not ddl_kept and tf.match_table("test", dml_table) and "t1" in stmt:
        assert "event filter 0 ignores" in verdict.why
    if dml_kept is not None:
        assert (tf.match_table("test", dml_table) and not ef.ignored_ops("test", dml_table)) is dml_kept


def test_every_allow_listed_type_has_a_ticdc_event_name():
    assert set(DDL_EVENT_NAMES) == set(ALLOW_LIST) | {"rename tables", "multi schema change"} | set(WHITELIST_AND_OWN)
    assert set(DDL_EVENT_NAMES.values()) <= EVENT_TYPES
    assert DDL_EVENT_NAMES["add index"] == "create index"  # CREATE INDEX and ADD INDEX alike
    assert "create table" not in ALTER_TABLE_TYPES and "add column" in ALTER_TABLE_TYPES


def _cfg(rule: str, force: bool = True):
    return parse_config(f"force-replicate = {str(force).lower()}\n[filter]\nrules = ['d.*']\n"
                        f"[[filter.event-filters]]\nmatcher = ['d.t*']\n{rule}\n")


@pytest.mark.parametrize("rule, stmt, ignored", [
    ('ignore-event = ["create index"]', "ALTER TABLE d.t1 ADD INDEX i (a)", True),
    ('ignore-event = ["create index"]', "CREATE INDEX i ON d.t1 (a)", True),
    ('ignore-event = ["create index"]', "ALTER TABLE d.t1 ADD COLUMN c INT", False),
    ('ignore-event = ["alter table"]', "ALTER TABLE d.t1 ADD COLUMN c INT", True),
    ('ignore-event = ["alter table"]', "RENAME TABLE d.t1 TO d.t2", True),  # TiCDC's alterTableSubType
    ('ignore-event = ["alter table"]', "CREATE TABLE d.t1 (a INT)", False),
    ('ignore-event = ["all ddl"]', "TRUNCATE TABLE d.t1", True),
    ('ignore-event = ["all dml"]', "TRUNCATE TABLE d.t1", False),
    ('ignore-event = ["set default value"]', "ALTER TABLE d.t1 ALTER COLUMN a SET DEFAULT 1", True),
    ('ignore-event = ["modify table comment"]', "ALTER TABLE d.t1 COMMENT 'x'", True),
    ('ignore-event = ["add column"]', "ALTER TABLE d.t1 ADD COLUMN c INT, ADD INDEX ic (c)", False),
    ('ignore-event = ["multi schema change"]', "ALTER TABLE d.t1 ADD COLUMN c INT, ADD INDEX ic (c)", True),
    ('ignore-event = ["drop table"]', "DROP TABLE d.other", False),  # the matcher is d.t*
    ('ignore-sql = ["^drop", "add column"]', "drop table d.t1", True),
    ('ignore-sql = ["ADD COLUMN"]', "alter table d.t1 add column c int", True),  # case-insensitive
    ('ignore-sql = ["comment"]', "ALTER TABLE d.t1 ADD COLUMN c INT", False),
])
def test_ignore_event_and_ignore_sql(rule, stmt, ignored):
    verdict, _, _ = _gate(_cfg(rule), stmt)
    assert verdict.keep is not ignored, verdict.why


def test_database_ddl_is_matched_by_schema():
    cfg = parse_config("[filter]\nrules = ['d.*', 'e.*']\n[[filter.event-filters]]\nmatcher = ['d.*']\n"
                       'ignore-event = ["drop database", "modify schema charset and collate"]\n')
    assert _gate(cfg, "DROP DATABASE d")[0].keep is False
    assert _gate(cfg, "ALTER DATABASE d CHARACTER SET utf8mb4")[0].keep is False
    assert _gate(cfg, "DROP DATABASE e")[0].keep is True


@pytest.mark.parametrize("rule, ignored", [
    ('ignore-event = ["insert"]', {"insert"}),
    ('ignore-event = ["update", "delete"]', {"update", "delete"}),
    ('ignore-event = ["all dml"]', {"insert", "update", "delete"}),
    ('ignore-event = ["all ddl"]', set()),
    ('ignore-sql = ["insert"]', set()),  # ignore-sql is for DDL only
])
def test_dml_kinds(rule, ignored):
    ef = EventFilter(_cfg(rule).event_filters)
    assert ef.ignored_ops("d", "t1") == ignored
    assert ef.ignored_ops("d", "other") == set()


def test_a_multi_table_statement_runs_for_the_tables_that_pass():
    cfg = _cfg('ignore-event = ["rename table", "drop table"]')
    verdict, _, _ = _gate(cfg, "RENAME TABLE d.t1 TO d.x1, d.a TO d.b")
    assert verdict.keep and verdict.query == "RENAME TABLE `d`.`a` TO `d`.`b`"
    verdict, _, _ = _gate(cfg, "DROP TABLE IF EXISTS d.t1, d.a, other.z")
    assert verdict.keep and verdict.query == "DROP TABLE IF EXISTS `d`.`a`"
    assert "other.z is filtered out" in verdict.why and "d.t1: event filter 0" in verdict.why


def test_ignored_ddl_still_evolves_the_schema():
    cfg = _cfg('ignore-event = ["add primary key"]')
    tr = SchemaTracker()
    _gate(cfg, "CREATE TABLE d.t1 (a INT NOT NULL)", tr, ts=1)
    verdict, _, _ = _gate(cfg, "ALTER TABLE d.t1 ADD PRIMARY KEY (a)", tr, ts=2)
    assert verdict.keep is False and verdict.schema_only  # not run, but splits the segments
    assert tr.at("d", "t1", 3).valid_key() == ["a"]


# ------------------------------------------------------------------ TiCDC's DDL-replication doc's valid-index matrix

WITH_KEY = "CREATE TABLE t1 (id INT PRIMARY KEY, name VARCHAR(50) NOT NULL, UNIQUE KEY u (name), KEY i (name))"
WITHOUT_KEY = "CREATE TABLE t1 (id INT, name VARCHAR(50), KEY i (name))"
# one statement per seed row (test_ddl_classify walks the type of each); a CREATE TABLE brings
# its own key, so the row's two states are two statements
STATEMENTS = {
    "create database": "CREATE DATABASE shop", "drop database": "DROP DATABASE shop",
    "alter database character set": "ALTER DATABASE shop CHARACTER SET utf8mb4",
    "add index": "CREATE INDEX i2 ON t1 (name)", "drop index": "DROP INDEX i ON t1",
    "add primary key": "ALTER TABLE t1 ADD PRIMARY KEY (id)", "drop primary key": "ALTER TABLE t1 DROP PRIMARY KEY",
    "drop table": "DROP TABLE t1", "add column": "ALTER TABLE t1 ADD COLUMN c INT",
    "drop column": "ALTER TABLE t1 DROP COLUMN name", "truncate table": "TRUNCATE TABLE t1",
    "modify column": "ALTER TABLE t1 MODIFY COLUMN id BIGINT NOT NULL", "rename table": "RENAME TABLE t1 TO t9",
    "alter column default value": "ALTER TABLE t1 ALTER COLUMN name SET DEFAULT 'x'",
    "alter table comment": "ALTER TABLE t1 COMMENT 'x'", "rename index": "ALTER TABLE t1 RENAME INDEX i TO j",
    "add partition": "ALTER TABLE t1 ADD PARTITION (PARTITION p3 VALUES LESS THAN (3000))",
    "drop partition": "ALTER TABLE t1 DROP PARTITION p1", "truncate partition": "ALTER TABLE t1 TRUNCATE PARTITION p1",
    "alter table character set": "ALTER TABLE t1 CHARACTER SET utf8mb4", "recover table": "RECOVER TABLE t1",
    "rebase auto id": "ALTER TABLE t1 AUTO_INCREMENT = 1000",
    "alter table index visibility": "ALTER TABLE t1 ALTER INDEX i IGNORED",
    "exchange partition": "ALTER TABLE t1 EXCHANGE PARTITION p1 WITH TABLE t2",
    "reorganize partition": "ALTER TABLE t1 REORGANIZE PARTITION p1 INTO (PARTITION p3 VALUES LESS THAN (9))",
    "alter table ttl": "ALTER TABLE t1 TTL = created_at + INTERVAL 1 DAY",
    "alter table remove ttl": "ALTER TABLE t1 REMOVE TTL",
}
CREATE_TABLE = {True: "CREATE TABLE t5 (id INT PRIMARY KEY)", False: "CREATE TABLE t5 (id INT)"}
VIEWS = {"create view": "CREATE VIEW v1 AS SELECT 1", "drop view": "DROP VIEW v1"}
STOPS = "stops"  # replicated per the matrix, but the seed's warned case: a failing barrier
# TiCDC's DDL-replication doc's rows as (type, "has valid index | none, force=false | none, force=true")
from seed_tables import SEED_000_MATRIX  # noqa: E402


def _matrix_cases():
    for _, ddl_type, row in SEED_000_MATRIX:
        for col, cell in enumerate(row.split()):
            yield pytest.param(ddl_type, col, cell == "Y", id=f"{ddl_type}-{col}")


@pytest.mark.parametrize("ddl_type, col, expected", list(_matrix_cases()))
def test_valid_index_matrix(ddl_type, col, expected):
    has_key, force = col == 0, col == 2
    cfg = parse_config(f"force-replicate = {str(force).lower()}\n")
    tr = SchemaTracker()
    _gate(cfg, WITH_KEY if has_key else WITHOUT_KEY, tr, ts=1)
    if ddl_type in VIEWS:
        # TiCDC counts a view as eligible whatever its tables: only the Y cells can arise
        verdict, _, _ = _gate(cfg, VIEWS[ddl_type], tr)
        assert verdict.keep is True
        return
    stmt = CREATE_TABLE[has_key] if ddl_type == "create table" else STATEMENTS[ddl_type]
    assert classify(stmt, "test").type == ddl_type
    verdict, _, _ = _gate(cfg, stmt, tr)
    if ddl_type == "add primary key" and col == 1:
        # Y in the seed; the seed warns the table was never replicated: cdcflow stops here
        assert verdict.keep and isinstance(verdict.error, ValidIndexError)
        return
    assert verdict.error is None, verdict.why
    assert verdict.keep is expected, verdict.why


def test_warned_cases_name_table_statement_ts_and_remedy():
    cfg = parse_config("")
    tr = SchemaTracker()
    _gate(cfg, "CREATE TABLE t1 (id INT NOT NULL, v INT)", tr, ts=1)
    v, _, _ = _gate(cfg, "ALTER TABLE t1 ADD UNIQUE KEY u (id)", tr, ts=2)
    e = v.error
    assert e.ts == 2 and "ALTER TABLE t1 ADD UNIQUE" in e.statement and "test.t1" in e.message
    assert "never replicated" in e.message and "skip-ddl --commit-ts 2" in e.hint and "force-replicate" in e.hint
    v, _, _ = _gate(cfg, "ALTER TABLE t1 DROP INDEX u", tr, ts=3)
    e = v.error
    assert e.ts == 3 and "last valid index of table test.t1" in e.message and not e.retryable
    assert "skip-ddl --commit-ts 3" in e.hint
    # dropping one of two valid indexes is fine
    _gate(cfg, "ALTER TABLE t1 ADD PRIMARY KEY (id), ADD UNIQUE KEY u2 (id)", tr, ts=4)
    assert _gate(cfg, "ALTER TABLE t1 DROP INDEX u2", tr, ts=5)[0].error is None
