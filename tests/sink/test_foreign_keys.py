"""sink.foreign_keys against the real downstream MariaDB: which tables a row-changing key binds,
and their changes written in commit order in one transaction with the marker."""

from __future__ import annotations

import json

import pymysql
import pytest

from cdcflow.sink import foreign_keys
from cdcflow.sink.connection import DML_SESSION
from cdcflow.sink.foreign_keys import (
    ForeignKeys,
    applied_up_to,
    cascade_group,
    dictionary_keys,
    marker_id,
    read_keys,
    referential_keys,
    write_group,
)

pytestmark = pytest.mark.e2e

SCHEMAS = ("fks1", "fks2", "fk é-中.x@#")


@pytest.fixture
def down(mariadb_pair):
    _, down = mariadb_pair
    drop = ["SET foreign_key_checks = 0", *(f"DROP DATABASE IF EXISTS `{s}`" for s in (*SCHEMAS, "cdcflow"))]
    down.execute(*drop, *(f"CREATE DATABASE `{s}`" for s in SCHEMAS))
    yield down
    down.execute(*drop)


@pytest.fixture
def conn(down):
    c = down.connect()
    with c.cursor() as cur:
        for stmt in DML_SESSION:
            cur.execute(stmt)
    yield c
    c.close()


def test_a_row_changing_key_binds_its_component_across_schemas(down, conn):
    down.execute(
        "CREATE TABLE fks1.p (id INT PRIMARY KEY)",
        "CREATE TABLE fks2.c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES fks1.p (id) ON DELETE CASCADE)",
        # bound through a RESTRICT key to the cascade's child
        "CREATE TABLE fks1.r (id INT PRIMARY KEY, cid INT, FOREIGN KEY (cid) REFERENCES fks2.c (id))",
        # a RESTRICT-only pair and a table without keys are not bound
        "CREATE TABLE fks1.a (id INT PRIMARY KEY)",
        "CREATE TABLE fks1.b (id INT PRIMARY KEY, aid INT, FOREIGN KEY (aid) REFERENCES fks1.a (id))",
        "CREATE TABLE fks1.plain (id INT PRIMARY KEY)")
    segment = [("fks1", "p"), ("fks1", "r"), ("fks1", "a"), ("fks1", "b"), ("fks1", "plain")]
    group = cascade_group(read_keys(conn), segment)
    assert group.tables == {"fks1.p", "fks1.r"} and group.parents == {"fks1.p"}
    assert cascade_group(read_keys(conn), [("fks1", "a"), ("fks1", "plain")]).tables == set()


RULES = ("CASCADE", "SET NULL", "NO ACTION", "RESTRICT")
# names the server writes in its file-name encoding: spaces, punctuation, the separator itself,
# accented Latin, Greek, Cyrillic, CJK, upper case
NAMES = ("pä rent/1", "chïld$2", "Ωμέγα", "таблица", "表.名", "a-b@c#d", "UPPER lower", "x")


def test_the_dictionary_gives_the_information_schemas_keys_and_without_process_that_is_read(down, conn,
                                                                                           monkeypatch):
    """On MariaDB read_keys reads InnoDB's dictionary (no table opened) where the login has PROCESS;
    its rows are the information schema's, every rule pair and name alike."""
    odd = SCHEMAS[2]
    down.execute(f"CREATE TABLE `{odd}`.`{NAMES[0]}` (id INT PRIMARY KEY)",
                 *(f"CREATE TABLE `{odd}`.`{name}` (id INT PRIMARY KEY, pid INT, k INT, "
                   f"CONSTRAINT `k {i}` FOREIGN KEY (pid) REFERENCES `{NAMES[0]}` (id) "
                   f"ON DELETE {RULES[i % 4]} ON UPDATE {RULES[i // 4 % 4]})"
                   for i, name in enumerate(NAMES[1:])),
                 # the rule pairs the names did not cover, and keys across schemas both ways
                 "CREATE TABLE fks1.p (id INT PRIMARY KEY)",
                 *(f"CREATE TABLE fks1.c{i} (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES fks1.p (id) "
                   f"ON DELETE {RULES[i % 4]} ON UPDATE {RULES[i // 4]})" for i in range(16)),
                 f"CREATE TABLE fks2.c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES `{odd}`.`x` (id))",
                 f"ALTER TABLE `{odd}`.`x` ADD FOREIGN KEY (k) REFERENCES fks2.c (id) ON DELETE SET NULL",
                 # MyISAM and Aria parse a key and keep none, in either view
                 "CREATE TABLE fks1.m (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES fks1.p (id)) "
                 "ENGINE=MyISAM")

    def ours(rows):
        return sorted(r for r in rows if r[0] in SCHEMAS)

    with conn.cursor() as cur:
        fast, viewed = ours(dictionary_keys(cur)), ours(referential_keys(cur))
    assert len(viewed) == len(NAMES) - 1 + 16 + 2
    assert {(d, u) for *_, d, u in viewed} == {(d, u) for d in RULES for u in RULES}
    assert fast == viewed
    with monkeypatch.context() as m:  # root has PROCESS: the view is not read
        m.setattr(foreign_keys, "referential_keys", lambda cur: pytest.fail("the view was read"))
        assert ours(read_keys(conn)) == viewed

    # a login without PROCESS: the information schema's view (the keys of the tables it may see)
    down.execute("DROP USER IF EXISTS 'fk_noprocess'@'%'", "CREATE USER 'fk_noprocess'@'%' IDENTIFIED BY 'pw'",
                 *(f"GRANT SELECT, REFERENCES ON `{s}`.* TO 'fk_noprocess'@'%'" for s in SCHEMAS))
    plain = pymysql.connect(host="127.0.0.1", port=down.port, user="fk_noprocess", password="pw")
    try:
        with plain.cursor() as cur, pytest.raises(pymysql.MySQLError, match="PROCESS"):
            dictionary_keys(cur)
        assert ours(read_keys(plain)) == viewed
    finally:
        plain.close()
        down.execute("DROP USER 'fk_noprocess'@'%'")


def _ch(table, op, before=None, after=None):
    return {"schema": "fks1", "table": table, "op": op, "before": before and json.dumps(before),
            "after": after and json.dumps(after)}


def test_changes_run_in_commit_order_with_the_parents_key_cascading(down, conn):
    down.execute("CREATE TABLE fks1.p (id INT PRIMARY KEY, v INT)",
                 "CREATE TABLE fks1.c (id INT PRIMARY KEY, pid INT, "
                 "FOREIGN KEY (pid) REFERENCES fks1.p (id) ON DELETE CASCADE ON UPDATE CASCADE)",
                 "INSERT INTO fks1.p VALUES (1, 0), (2, 0)", "INSERT INTO fks1.c VALUES (10, 1), (20, 2)")
    group = cascade_group(read_keys(conn), [("fks1", "p"), ("fks1", "c")])
    keys = {"fks1.p": ["id"], "fks1.c": ["id"]}
    marker = marker_id("fk-unit", 1.5)
    assert applied_up_to(conn, marker) == 0
    changes = [
        _ch("p", "update", {"id": 1, "v": 0}, {"id": 1, "v": 5}),   # a non-key update: c 10 stays
        _ch("c", "insert", None, {"id": 11, "pid": 1}),
        _ch("p", "update", {"id": 1, "v": 5}, {"id": 3, "v": 5}),   # the key: c 10 and 11 follow
        _ch("p", "delete", {"id": 2, "v": 0}),                      # c 20 goes with it
        _ch("p", "insert", None, {"id": 2, "v": 7}),
    ]
    assert write_group(conn, iter(changes), keys, {}, group, True, marker, 100) == 5
    assert down.query("SELECT * FROM fks1.p ORDER BY id") == [(2, 7), (3, 5)]
    assert down.query("SELECT * FROM fks1.c ORDER BY id") == [(10, 3), (11, 3)]
    assert applied_up_to(conn, marker) == 100
    assert _checks(conn) == 0  # as every row session has it

    # a refusal rolls the whole group back, the marker with it
    bad = [_ch("p", "delete", {"id": 2, "v": 7}), _ch("c", "insert", None, {"id": 12, "pid": 1, "x": 0})]
    with pytest.raises(Exception, match="Unknown column"):
        write_group(conn, iter(bad), keys, {}, group, True, marker, 200)
    assert down.query("SELECT * FROM fks1.p ORDER BY id") == [(2, 7), (3, 5)]
    assert applied_up_to(conn, marker) == 100 and _checks(conn) == 0


def _checks(conn) -> int:
    with conn.cursor() as cur:
        cur.execute("SELECT @@SESSION.foreign_key_checks")
        return cur.fetchone()[0]


def test_the_keys_are_read_again_only_after_a_ddl_that_may_change_them(down, conn):
    down.execute("CREATE TABLE fks1.p (id INT PRIMARY KEY)", "CREATE TABLE fks1.c (id INT PRIMARY KEY, pid INT)")
    keys, segment = ForeignKeys(conn), [("fks1", "p"), ("fks1", "c")]
    assert keys.group(segment).tables == set()
    add = "ALTER TABLE fks1.c ADD FOREIGN KEY (pid) REFERENCES fks1.p (id) ON DELETE CASCADE"
    down.execute(add)
    keys.ddl_ran("create table", ["CREATE TABLE fks1.t1 (id INT PRIMARY KEY)"])  # keeps the keys read
    assert keys.group(segment).tables == set()
    keys.ddl_ran("create table", ["CREATE TABLE fks1.t2 (id INT, pid INT REFERENCES fks1.p (id))"])
    assert keys.group(segment).tables == {"fks1.p", "fks1.c"}
    # DDLs that cannot change a key keep the keys read: a window of thousands of ALTERs and DROPs
    # on other tables reads the catalogue (every table of the downstream) once, not per DDL
    down.execute("ALTER TABLE fks1.c ADD COLUMN x INT, ADD INDEX ix (x)")
    keys.ddl_ran("add column", ["ALTER TABLE fks1.c ADD COLUMN x INT, ADD INDEX ix (x)"], [("fks1", "c")])
    keys.ddl_ran("drop table", ["DROP TABLE fks1.t1"], [("fks1", "t1")])
    keys.ddl_ran("truncate table", ["TRUNCATE fks1.t2"], [("fks1", "t2")])
    down.execute("ALTER TABLE fks1.c DROP FOREIGN KEY c_ibfk_1")  # behind its back: the keys kept show
    assert keys.group(segment).tables == {"fks1.p", "fks1.c"}
    # the reason a DROP COLUMN or DROP INDEX may keep them: the server refuses to drop what a key needs
    down.execute(add.replace("ADD FOREIGN KEY", "ADD CONSTRAINT fk_again FOREIGN KEY"))
    with pytest.raises(pymysql.MySQLError):
        down.execute("ALTER TABLE fks1.c DROP COLUMN pid")
    keys.ddl_ran("alter table", ["ALTER TABLE fks1.c DROP FOREIGN KEY c_ibfk_1"])  # names a key: read again
    assert keys.group(segment).tables == {"fks1.p", "fks1.c"}
    down.execute("ALTER TABLE fks1.c DROP FOREIGN KEY fk_again")
    keys.ddl_ran("drop table", ["DROP TABLE fks1.c"], [("fks1", "c")])  # a table a key binds: read again
    assert keys.group(segment).tables == set()
