"""Tables of the seeds (the specification) as the tests walk them, row by row."""

# TiCDC's DDL-replication doc's Y/N table, row by row
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
