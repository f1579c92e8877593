"""sink.foreign_keys against the real downstream MariaDB: which tables a row-changing key binds,
and their changes written in commit order in one transaction with the marker."""

from __future__ import annotations

import json

import pymysql
import pytest

from cdcflow.sink.connection import DML_SESSION
from cdcflow.sink.foreign_keys import (
    ForeignKeys,
    applied_up_to,
    cascade_group,
    marker_id,
    read_keys,
    write_group,
)

pytestmark = pytest.mark.e2e

SCHEMAS = ("fks1", "fks2")


@pytest.fixture
def down(mariadb_pair):
    _, down = mariadb_pair
    drop = ["SET foreign_key_checks = 0", *(f"DROP DATABASE IF EXISTS {s}" for s in (*SCHEMAS, "cdcflow"))]
    down.execute(*drop, *(f"CREATE DATABASE {s}" for s in SCHEMAS))
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
