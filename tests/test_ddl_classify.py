"""DDL classification: the seeds' allow list and Y/N matrix, names, SQL modes, errors."""

from __future__ import annotations

import pytest

from cdcflow.core.errors import CdcflowError
from cdcflow.ddl.classify import DDLParseError, TableName, classify
from cdcflow.ddl.types import ALLOW_LIST, REPLICATE_MATRIX, should_replicate

# ---------------------------------------------------------------- seed 000's Y/N table, row by row
# (DDL as the seed writes it, cdcflow type, "has valid index | no valid index, force=false |
#  no valid index, force=true")
SEED_000_MATRIX = [
    ("CREATE DATABASE", "create database", "Y Y Y"),
    ("DROP DATABASE", "drop database", "Y Y Y"),
    ("ALTER DATABASE CHARACTER SET", "alter database character set", "Y Y Y"),
    ("CREATE INDEX", "add index", "Y Y Y"),
    ("ADD INDEX", "add index", "Y Y Y"),
    ("DROP INDEX", "drop index", "Y N Y"),
    ("ADD PRIMARY KEY", "add primary key", "Y Y Y"),
    ("DROP PRIMARY KEY", "drop primary key", "Y N Y"),
    ("CREATE TABLE", "create table", "Y N Y"),
    ("DROP TABLE", "drop table", "Y N Y"),
    ("ADD COLUMN", "add column", "Y N Y"),
    ("DROP COLUMN", "drop column", "Y N Y"),
    ("TRUNCATE TABLE", "truncate table", "Y N Y"),
    ("MODIFY COLUMN", "modify column", "Y N Y"),
    ("RENAME TABLE", "rename table", "Y N Y"),
    ("ALTER COLUMN DEFAULT VALUE", "alter column default value", "Y N Y"),
    ("ALTER TABLE COMMENT", "alter table comment", "Y N Y"),
    ("RENAME INDEX", "rename index", "Y N Y"),
    ("ADD PARTITION", "add partition", "Y N Y"),
    ("DROP PARTITION", "drop partition", "Y N Y"),
    ("TRUNCATE PARTITION", "truncate partition", "Y N Y"),
    ("CREATE VIEW", "create view", "Y N Y"),
    ("DROP VIEW", "drop view", "Y N Y"),
    ("ALTER TABLE CHARACTER SET", "alter table character set", "Y N Y"),
    ("RECOVER TABLE", "recover table", "Y N Y"),
    ("REBASE AUTO ID", "rebase auto id", "Y N Y"),
    ("ALTER TABLE INDEX VISIBILITY", "alter table index visibility", "Y N Y"),
    ("EXCHANGE PARTITION", "exchange partition", "Y N Y"),
    ("REORGANIZE PARTITION", "reorganize partition", "Y N Y"),
    ("ALTER TABLE TTL", "alter table ttl", "Y N Y"),
    ("ALTER TABLE REMOVE TTL", "alter table remove ttl", "Y N Y"),
]

# Seed 003's allow list, in its order.
SEED_003_ALLOW_LIST = [
    "create database", "drop database", "create table", "drop table", "add column", "drop column",
    "create index / add index", "drop index", "truncate table", "modify column", "rename table",
    "alter column default value", "alter table comment", "rename index", "add partition",
    "drop partition", "truncate partition", "create view", "drop view", "alter table character set",
    "alter database character set", "recover table", "add primary key", "drop primary key",
    "rebase auto id", "alter table index visibility", "exchange partition", "reorganize partition",
    "alter table ttl", "alter table remove ttl",
]


@pytest.mark.parametrize("seed_ddl,ddl_type,row", SEED_000_MATRIX, ids=[r[0] for r in SEED_000_MATRIX])
def test_matrix_row_matches_seed(seed_ddl, ddl_type, row):
    expected = tuple(cell == "Y" for cell in row.split())
    assert REPLICATE_MATRIX[ddl_type] == expected
    assert should_replicate(ddl_type, has_valid_index=True, force_replicate=False) is expected[0]
    assert should_replicate(ddl_type, has_valid_index=True, force_replicate=True) is expected[0]
    assert should_replicate(ddl_type, has_valid_index=False, force_replicate=False) is expected[1]
    assert should_replicate(ddl_type, has_valid_index=False, force_replicate=True) is expected[2]


def test_matrix_and_allow_list_cover_exactly_the_seed_types():
    assert len(ALLOW_LIST) == 30 == len(set(ALLOW_LIST))
    assert list(ALLOW_LIST) == [t.replace("create index / add index", "add index") for t in SEED_003_ALLOW_LIST]
    assert set(REPLICATE_MATRIX) == set(ALLOW_LIST) == {r[1] for r in SEED_000_MATRIX}


@pytest.mark.parametrize("ddl_type", ["multi schema change", "rename tables"])
def test_extra_allowed_types_follow_the_y_n_y_row(ddl_type):
    assert should_replicate(ddl_type, True, False) is True
    assert should_replicate(ddl_type, False, False) is False
    assert should_replicate(ddl_type, False, True) is True


def test_should_replicate_rejects_unknown_type():
    with pytest.raises(ValueError, match="create procedure"):
        should_replicate("create procedure", True, True)


# ---------------------------------------------------------------- one example per type (MariaDB syntax
# where MariaDB has it; RECOVER TABLE and TTL are TiDB-only statements)
EXAMPLES = {
    "create database": ["CREATE DATABASE IF NOT EXISTS shop DEFAULT CHARACTER SET utf8mb4", "CREATE SCHEMA s2"],
    "drop database": ["DROP DATABASE shop", "DROP SCHEMA IF EXISTS `shop`"],
    "alter database character set": ["ALTER DATABASE shop CHARACTER SET = utf8mb4 COLLATE utf8mb4_bin",
                                     "ALTER SCHEMA DEFAULT CHARSET latin1"],
    "create table": ["CREATE TABLE t1 (id INT PRIMARY KEY, name VARCHAR(50))",
                     "CREATE OR REPLACE TABLE t1 (id INT)", "CREATE TABLE t2 LIKE t1",
                     "CREATE TABLE t3 AS SELECT * FROM t1"],
    "drop table": ["DROP TABLE `t1` /* generated by server */", "DROP TABLE IF EXISTS t1, t2"],
    "add column": ["ALTER TABLE t1 ADD COLUMN c INT AFTER id", "ALTER TABLE t1 ADD IF NOT EXISTS c INT",
                   "ALTER TABLE t1 ADD (c INT, d INT)"],
    "drop column": ["ALTER TABLE t1 DROP COLUMN c", "ALTER TABLE t1 DROP IF EXISTS c"],
    "add index": ["CREATE INDEX i ON t1 (name)", "CREATE UNIQUE INDEX u USING BTREE ON t1 (name)",
                  "ALTER TABLE t1 ADD INDEX i (name)", "ALTER TABLE t1 ADD UNIQUE KEY u (name)",
                  "ALTER TABLE t1 ADD CONSTRAINT uq UNIQUE (name)", "ALTER TABLE t1 ADD FULLTEXT ft (name)"],
    "drop index": ["DROP INDEX i ON t1", "ALTER TABLE t1 DROP INDEX i", "ALTER TABLE t1 DROP KEY IF EXISTS i"],
    "truncate table": ["TRUNCATE TABLE t1", "TRUNCATE t1"],
    "modify column": ["ALTER TABLE t1 MODIFY COLUMN name VARCHAR(100)", "ALTER TABLE t1 CHANGE name nm TEXT",
                      "ALTER TABLE t1 RENAME COLUMN name TO nm"],
    "rename table": ["RENAME TABLE t1 TO t9", "ALTER TABLE t1 RENAME TO t9", "ALTER TABLE t1 RENAME AS t9",
                     "ALTER TABLE t1 RENAME t9"],
    "alter column default value": ["ALTER TABLE t1 ALTER COLUMN name SET DEFAULT 'x'",
                                   "ALTER TABLE t1 ALTER name DROP DEFAULT"],
    "alter table comment": ["ALTER TABLE t1 COMMENT = 'orders'", "ALTER TABLE t1 COMMENT 'orders'"],
    "rename index": ["ALTER TABLE t1 RENAME INDEX i TO j", "ALTER TABLE t1 RENAME KEY i TO j"],
    "add partition": ["ALTER TABLE t1 ADD PARTITION (PARTITION p3 VALUES LESS THAN (3000))"],
    "drop partition": ["ALTER TABLE t1 DROP PARTITION p1, p2", "ALTER TABLE t1 DROP PARTITION IF EXISTS p1"],
    "truncate partition": ["ALTER TABLE t1 TRUNCATE PARTITION p1", "ALTER TABLE t1 TRUNCATE PARTITION ALL"],
    "create view": ["CREATE VIEW v1 AS SELECT id FROM t1", "CREATE OR REPLACE VIEW v1 AS SELECT 1",
                    "CREATE ALGORITHM=MERGE DEFINER=`root`@`localhost` SQL SECURITY DEFINER VIEW v1 AS SELECT 1",
                    "CREATE DEFINER='root'@'%' VIEW IF NOT EXISTS v1 AS SELECT 1"],
    "drop view": ["DROP VIEW v1", "DROP VIEW IF EXISTS v1, v2"],
    "alter table character set": ["ALTER TABLE t1 CHARACTER SET utf8mb4",
                                  "ALTER TABLE t1 DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin",
                                  "ALTER TABLE t1 CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"],
    "recover table": ["RECOVER TABLE t1", "RECOVER TABLE BY JOB 53", "FLASHBACK TABLE t1 TO t1_back"],
    "add primary key": ["ALTER TABLE t1 ADD PRIMARY KEY (id)", "ALTER TABLE t1 ADD CONSTRAINT pk PRIMARY KEY (id)"],
    "drop primary key": ["ALTER TABLE t1 DROP PRIMARY KEY", "DROP INDEX `PRIMARY` ON t1"],
    "rebase auto id": ["ALTER TABLE t1 AUTO_INCREMENT = 1000", "ALTER TABLE t1 AUTO_INCREMENT 5"],
    "alter table index visibility": ["ALTER TABLE t1 ALTER INDEX i IGNORED", "ALTER TABLE t1 ALTER KEY i NOT IGNORED",
                                     "ALTER TABLE t1 ALTER INDEX i INVISIBLE"],
    "exchange partition": ["ALTER TABLE t1 EXCHANGE PARTITION p1 WITH TABLE t2 WITHOUT VALIDATION"],
    "reorganize partition": ["ALTER TABLE t1 REORGANIZE PARTITION p1, p2 INTO "
                             "(PARTITION p3 VALUES LESS THAN (100))"],
    "alter table ttl": ["ALTER TABLE t1 TTL = created_at + INTERVAL 1 DAY",
                        "ALTER TABLE t1 TTL_ENABLE = 'OFF'"],
    "alter table remove ttl": ["ALTER TABLE t1 REMOVE TTL"],
    "rename tables": ["RENAME TABLE t1 TO t8, t2 TO t9"],
    "multi schema change": ["ALTER TABLE t1 ADD COLUMN c INT, ADD INDEX ic (c)"],
}
_EXAMPLE_CASES = [(t, q) for t, qs in EXAMPLES.items() for q in qs]


@pytest.mark.parametrize("ddl_type,query", _EXAMPLE_CASES, ids=[q for _, q in _EXAMPLE_CASES])
def test_every_allow_listed_type_is_classified(ddl_type, query):
    info = classify(query, "shop")
    assert (info.kind, info.type, info.allowed) == ("ddl", ddl_type, True)
    if ddl_type != "multi schema change":
        assert info.sub_types == (ddl_type,)


def test_examples_cover_the_whole_allow_list():
    assert set(ALLOW_LIST) | {"rename tables", "multi schema change"} == set(EXAMPLES)


def test_create_index_and_add_index_share_a_type_but_not_a_name():
    created = classify("CREATE INDEX i ON t1 (a)", "db")
    added = classify("ALTER TABLE t1 ADD INDEX i (a)", "db")
    assert created.type == added.type == "add index"
    assert created.statement_name == "CREATE INDEX"
    assert added.statement_name == "ALTER TABLE ADD INDEX"
    assert created.tables == added.tables == (TableName("db", "t1"),)


# ---------------------------------------------------------------- names and schemas
def test_unqualified_names_resolve_against_the_default_schema():
    info = classify("CREATE TABLE t1 (id INT)", "shop")
    assert info.tables == (TableName("shop", "t1"),) and info.schema == "shop"
    info = classify("CREATE TABLE other.t1 (id INT)", "shop")
    assert info.tables == (TableName("other", "t1"),) and info.schema == "other"


def test_create_table_like_names_both_tables_in_order():
    info = classify("CREATE TABLE db1.t1 LIKE t2", "db0")
    assert info.tables == (TableName("db1", "t1"), TableName("db0", "t2"))
    info = classify("CREATE TABLE db1.t1 (LIKE db2.t2)", "db0")
    assert info.tables == (TableName("db1", "t1"), TableName("db2", "t2"))


def test_create_table_select_names_only_the_new_table():
    info = classify("CREATE TABLE t3 (id INT) SELECT id FROM src WHERE name LIKE 'a%'", "db")
    assert info.type == "create table" and info.tables == (TableName("db", "t3"),)


def test_drop_table_lists_every_table():
    info = classify("DROP TABLE IF EXISTS a, db2.b, `c d` /* generated by server */", "db")
    assert info.tables == (TableName("db", "a"), TableName("db2", "b"), TableName("db", "c d"))
    assert info.if_exists


def test_backtick_names_keep_their_case_and_quotes():
    info = classify("CREATE TABLE `My``Db`.`Tab.1` (`select` INT)", None)
    assert info.tables == (TableName("My`Db", "Tab.1"),)


def test_keywords_as_unquoted_names():
    assert classify("CREATE TABLE status (a INT)", "db").tables == (TableName("db", "status"),)
    assert classify("ALTER TABLE t ADD COLUMN `key` INT", "db").type == "add column"


def test_schema_level_ddl():
    info = classify("CREATE DATABASE IF NOT EXISTS `shop`", "other")
    assert info.schema == "shop" and info.is_schema_level and info.tables == () and info.if_exists
    info = classify("ALTER DATABASE CHARACTER SET utf8mb4", "shop")
    assert info.schema == "shop" and info.is_schema_level
    assert not classify("CREATE TABLE t (a INT)", "shop").is_schema_level


def test_unqualified_name_without_default_schema_is_an_error():
    with pytest.raises(DDLParseError, match="no default schema"):
        classify("CREATE TABLE t1 (id INT)", None)
    assert classify("CREATE TABLE db.t1 (id INT)", None).tables == (TableName("db", "t1"),)


def test_view_tables_are_the_view():
    info = classify("CREATE VIEW rpt.v AS SELECT * FROM shop.orders JOIN shop.items", "shop")
    assert info.tables == (TableName("rpt", "v"),)


def test_exchange_partition_names_both_tables():
    info = classify("ALTER TABLE t1 EXCHANGE PARTITION p0 WITH TABLE db2.t2", "db")
    assert info.tables == (TableName("db", "t1"), TableName("db2", "t2"))


# ---------------------------------------------------------------- SQL mode
def test_ansi_quotes_makes_double_quotes_identifiers():
    info = classify('CREATE TABLE "t1" ("a" int primary key)', "test", "ANSI_QUOTES")
    assert (info.type, info.tables) == ("create table", (TableName("test", "t1"),))
    full = "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,ANSI_QUOTES"
    assert classify('DROP TABLE "a""b"', "test", full).tables == (TableName("test", 'a"b'),)


def test_double_quotes_without_ansi_quotes_are_strings():
    with pytest.raises(DDLParseError, match="ANSI_QUOTES"):
        classify('CREATE TABLE "t1" ("a" int primary key)', "test", "STRICT_TRANS_TABLES")
    # A double-quoted string value is fine when the mode does not make it a name.
    assert classify("ALTER TABLE t1 COMMENT \"x\"", "test").type == "alter table comment"


# ---------------------------------------------------------------- comments
def test_comments_are_skipped_and_executable_comments_are_content():
    assert classify("DROP TABLE `t1` /* generated by server */", "db").type == "drop table"
    assert classify("/* hint */ DROP -- why\n TABLE # more\n t1", "db").tables == (TableName("db", "t1"),)
    info = classify("CREATE TABLE t1 (a INT) /*!50100 PARTITION BY HASH (a) */;", "db")
    assert info.type == "create table"
    info = classify("/*!40101 ALTER TABLE t1 COMMENT 'x' */", "db")
    assert info.type == "alter table comment"
    assert classify("/*M!100100 ALTER TABLE t1 DROP COLUMN c */", "db").type == "drop column"
    assert classify("/*!40000 ALTER TABLE `t1` DISABLE KEYS */", "db").statement_name == "ALTER TABLE DISABLE KEYS"


# ---------------------------------------------------------------- ALTER TABLE with several clauses
def test_multi_schema_change_keeps_clause_types():
    info = classify("ALTER TABLE t1 ADD COLUMN c INT, DROP COLUMN d, MODIFY e BIGINT, ADD INDEX (c)", "db")
    assert info.type == "multi schema change" and info.allowed
    assert info.sub_types == ("add column", "drop column", "modify column", "add index")
    assert info.statement_name == "ALTER TABLE ADD COLUMN, DROP COLUMN, MODIFY COLUMN, ADD INDEX"


def test_algorithm_and_lock_are_not_clauses():
    info = classify("ALTER TABLE t1 ADD INDEX i (a), ALGORITHM=INPLACE, LOCK=NONE", "db")
    assert (info.type, info.sub_types) == ("add index", ("add index",))


def test_charset_and_collate_are_one_change():
    info = classify("ALTER TABLE t1 DEFAULT CHARACTER SET utf8mb4, COLLATE utf8mb4_bin", "db")
    assert (info.type, info.sub_types) == ("alter table character set", ("alter table character set",))


def test_options_outside_the_allow_list_ride_along():
    info = classify("ALTER TABLE t1 ADD COLUMN c INT, ENGINE=InnoDB", "db")
    assert (info.type, info.allowed) == ("add column", True)
    assert info.statement_name == "ALTER TABLE ADD COLUMN, ENGINE"
    info = classify("ALTER TABLE t1 COMMENT 'x' ENGINE=InnoDB ROW_FORMAT=DYNAMIC", "db")
    assert info.type == "alter table comment"


def test_alter_table_rename_records_the_pair():
    info = classify("ALTER TABLE shop.t1 RENAME TO archive.t1", "db")
    assert info.type == "rename table"
    assert info.renames == ((TableName("shop", "t1"), TableName("archive", "t1")),)
    assert info.tables == (TableName("shop", "t1"), TableName("archive", "t1"))


def test_if_exists_in_clauses_and_statements():
    assert classify("ALTER TABLE t1 DROP COLUMN IF EXISTS c", "db").if_exists
    assert classify("ALTER TABLE IF EXISTS t1 ADD COLUMN c INT", "db").if_exists
    assert not classify("ALTER TABLE t1 ADD COLUMN c INT", "db").if_exists
    assert not classify("DROP TABLE t1", "db").if_exists


# ---------------------------------------------------------------- not allow-listed, but DDL
NOT_ALLOWED = [
    ("CREATE TEMPORARY TABLE tmp (a INT)", "CREATE TEMPORARY TABLE"),
    ("DROP TEMPORARY TABLE IF EXISTS `tmp` /* generated by server */", "DROP TEMPORARY TABLE"),
    ("CREATE DEFINER=`root`@`localhost` PROCEDURE p() BEGIN SELECT 1; END", "CREATE PROCEDURE"),
    ("DROP PROCEDURE IF EXISTS p", "DROP PROCEDURE"),
    ("CREATE FUNCTION f(x INT) RETURNS INT DETERMINISTIC RETURN x + 1", "CREATE FUNCTION"),
    ("CREATE AGGREGATE FUNCTION agg(x INT) RETURNS INT BEGIN RETURN 1; END", "CREATE FUNCTION"),
    ("ALTER FUNCTION f COMMENT 'x'", "ALTER FUNCTION"),
    ("CREATE OR REPLACE TRIGGER tr BEFORE INSERT ON t1 FOR EACH ROW SET NEW.a = 1", "CREATE TRIGGER"),
    ("DROP TRIGGER tr", "DROP TRIGGER"),
    ("CREATE DEFINER='root'@'%' EVENT e ON SCHEDULE EVERY 1 DAY DO DELETE FROM t1", "CREATE EVENT"),
    ("ALTER EVENT e DISABLE", "ALTER EVENT"),
    ("CREATE USER 'u'@'%' IDENTIFIED BY 'p'", "CREATE USER"),
    ("ALTER USER 'u'@'%' PASSWORD EXPIRE", "ALTER USER"),
    ("DROP USER IF EXISTS 'u'@'%'", "DROP USER"),
    ("RENAME USER 'u'@'%' TO 'v'@'%'", "RENAME USER"),
    ("CREATE ROLE r", "CREATE ROLE"),
    ("GRANT SELECT ON shop.* TO 'u'@'%'", "GRANT"),
    ("REVOKE ALL PRIVILEGES ON *.* FROM 'u'@'%'", "REVOKE"),
    ("SET PASSWORD FOR 'u'@'%' = PASSWORD('x')", "SET PASSWORD"),
    ("SET DEFAULT ROLE r FOR 'u'@'%'", "SET DEFAULT ROLE"),
    ("ANALYZE TABLE t1", "ANALYZE TABLE"),
    ("OPTIMIZE TABLE t1", "OPTIMIZE TABLE"),
    ("CHECK TABLE t1", "CHECK TABLE"),
    ("REPAIR TABLE t1", "REPAIR TABLE"),
    ("FLUSH PRIVILEGES", "FLUSH"),
    ("CREATE SEQUENCE s START WITH 1", "CREATE SEQUENCE"),
    ("DROP SEQUENCE IF EXISTS s", "DROP SEQUENCE"),
    ("ALTER TABLE t1 ENGINE=InnoDB", "ALTER TABLE ENGINE"),
    ("ALTER TABLE t1 ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8", "ALTER TABLE ROW_FORMAT, KEY_BLOCK_SIZE"),
    ("ALTER TABLE t1 FORCE", "ALTER TABLE FORCE"),
    ("ALTER TABLE t1 ADD CONSTRAINT fk FOREIGN KEY (a) REFERENCES p (id)", "ALTER TABLE ADD FOREIGN KEY"),
    ("ALTER TABLE t1 DROP FOREIGN KEY fk", "ALTER TABLE DROP FOREIGN KEY"),
    ("ALTER TABLE t1 ADD CONSTRAINT CHECK (a > 0)", "ALTER TABLE ADD CHECK"),
    ("ALTER TABLE t1 PARTITION BY HASH (a) PARTITIONS 4", "ALTER TABLE PARTITION BY"),
    ("ALTER TABLE t1 REMOVE PARTITIONING", "ALTER TABLE REMOVE PARTITIONING"),
    ("ALTER TABLE t1 COALESCE PARTITION 2", "ALTER TABLE COALESCE PARTITION"),
    ("ALTER TABLE t1 ALTER COLUMN c SET INVISIBLE", "ALTER TABLE ALTER COLUMN"),
    ("ALTER TABLE t1 ADD SYSTEM VERSIONING", "ALTER TABLE ADD SYSTEM VERSIONING"),
    ("ALTER DATABASE shop COMMENT 'x'", "ALTER DATABASE COMMENT"),
]


@pytest.mark.parametrize("query,name", NOT_ALLOWED, ids=[n for _, n in NOT_ALLOWED])
def test_not_allow_listed_ddl(query, name):
    info = classify(query, "shop")
    assert (info.kind, info.type, info.allowed, info.statement_name) == ("ddl", None, False, name)
    assert info.sub_types == ()


NOT_DDL = [
    ("BEGIN", "BEGIN"), ("COMMIT", "COMMIT"), ("ROLLBACK", "ROLLBACK"), ("SAVEPOINT sp1", "SAVEPOINT"),
    ("XA START 'x1'", "XA START"), ("XA END 'x1'", "XA END"), ("XA PREPARE 'x1'", "XA PREPARE"),
    ("XA COMMIT 'x1'", "XA COMMIT"), ("START TRANSACTION", "START TRANSACTION"),
    ("SET NAMES utf8mb4", "SET"), ("SET @@session.sql_mode = 'ANSI'", "SET"),
    ("INSERT INTO t1 VALUES (1)", "INSERT"), ("UPDATE t1 SET a = 1", "UPDATE"),
    ("DELETE FROM t1 WHERE a = 1", "DELETE"), ("REPLACE INTO t1 VALUES (1)", "REPLACE"),
    ("LOAD DATA INFILE 'x' INTO TABLE t1", "LOAD DATA"), ("", "EMPTY"), ("/* only a comment */", "EMPTY"),
]


@pytest.mark.parametrize("query,name", NOT_DDL, ids=[q or "empty" for q, _ in NOT_DDL])
def test_not_ddl(query, name):
    info = classify(query, "shop")
    assert (info.kind, info.type, info.allowed, info.statement_name) == ("not-ddl", None, False, name)
    assert info.tables == ()


def test_set_statement_for_classifies_the_inner_statement():
    info = classify("SET STATEMENT max_statement_time=60 FOR ALTER TABLE t1 ADD COLUMN c INT", "db")
    assert (info.type, info.tables) == ("add column", (TableName("db", "t1"),))


# ---------------------------------------------------------------- unparseable statements
@pytest.mark.parametrize("query", ["FROBNICATE TABLE t1", "CREATE WIDGET w", "ALTER TABLE t1 FROBNICATE",
                                   "RENAME TABLE a b", "DROP INDEX i"])
def test_unparseable_statement_raises_with_skip_hint(query):
    with pytest.raises(DDLParseError) as exc:
        classify(query, "db")
    err = exc.value
    assert isinstance(err, CdcflowError)
    assert err.code == "CDCFLOW:ErrDDLUnparseable" and err.retryable is False
    assert err.statement == query
    text = str(err.with_context(changefeed="cf1", ts=449))
    assert text.startswith("changefeed cf1, commit ts 449: cannot classify DDL statement")
    assert f"[statement: {query}]" in text
    assert "cdcflow changefeed skip-ddl -c <changefeed> --commit-ts <ts>" in text


def test_unparseable_message_names_what_was_found():
    with pytest.raises(DDLParseError, match="unknown ALTER TABLE clause at 'FROBNICATE'"):
        classify("ALTER TABLE t1 FROBNICATE", "db")


# ---------------------------------------------------------------- seed 000's RENAME TABLE statements
def _t(name: str) -> TableName:
    schema, table = name.split(".")
    return TableName(schema, table)


RENAMES = [
    ("RENAME TABLE test.t1 TO test.t2", "rename table", [("test.t1", "test.t2")]),
    ("RENAME TABLE test.t1 TO ignore.t1", "rename table", [("test.t1", "ignore.t1")]),
    ("RENAME TABLE ignore.t1 TO ignore.t2", "rename table", [("ignore.t1", "ignore.t2")]),
    ("RENAME TABLE test.n1 TO test.t1", "rename table", [("test.n1", "test.t1")]),
    ("RENAME TABLE ignore.t1 TO test.t1", "rename table", [("ignore.t1", "test.t1")]),
    ("RENAME TABLE test.t1 TO test.t2, test.t3 TO test.t4", "rename tables",
     [("test.t1", "test.t2"), ("test.t3", "test.t4")]),
    ("RENAME TABLE test.t1 TO test.ignore1, test.t3 TO test.ignore2", "rename tables",
     [("test.t1", "test.ignore1"), ("test.t3", "test.ignore2")]),
    ("RENAME TABLE test.t1 TO ignore.t1, test.t2 TO test.t22;", "rename tables",
     [("test.t1", "ignore.t1"), ("test.t2", "test.t22")]),
    ("RENAME TABLE test.t1 TO test.t4, test.t3 TO test.t1, test.t4 TO test.t3;", "rename tables",
     [("test.t1", "test.t4"), ("test.t3", "test.t1"), ("test.t4", "test.t3")]),
]


@pytest.mark.parametrize("query,ddl_type,pairs", RENAMES, ids=[q for q, _, _ in RENAMES])
def test_seed_rename_statements(query, ddl_type, pairs):
    info = classify(query, "other")
    assert (info.type, info.allowed, info.statement_name) == (ddl_type, True, "RENAME TABLE")
    assert info.renames == tuple((_t(a), _t(b)) for a, b in pairs)
    assert info.tables == tuple(_t(n) for pair in pairs for n in pair)
    assert info.schema == _t(pairs[0][0]).schema


def test_rename_resolves_unqualified_names_and_mariadb_wait():
    info = classify("RENAME TABLE IF EXISTS a WAIT 5 TO b, c NOWAIT TO db2.d", "db")
    assert info.renames == ((TableName("db", "a"), TableName("db", "b")),
                            (TableName("db", "c"), TableName("db2", "d")))
    assert info.if_exists
