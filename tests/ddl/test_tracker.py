"""The tracked schema against the real thing: each DDL runs on the upstream MariaDB and
is applied to the tracker; columns (order, nullability), indexes and the valid key must
then equal what information_schema says."""

from __future__ import annotations

import time

import pytest

from cdcflow.ddl.classify import classify
from cdcflow.ddl.table_def import TableInfo
from cdcflow.ddl.tracker import UNKNOWN, SchemaTracker, disagreements, lookup_key
from cdcflow.store import schema_versions

DB = "st_db"

# (statement, the valid key the table has afterwards)
EVOLUTION = [
    ("CREATE TABLE t (a INT, b VARCHAR(10), c INT NOT NULL)", "t", None),
    ("ALTER TABLE t ADD UNIQUE KEY uc (c)", "t", ["c"]),
    ("ALTER TABLE t MODIFY c INT NULL", "t", None),  # unique but nullable: not valid
    ("ALTER TABLE t MODIFY c INT NOT NULL FIRST", "t", ["c"]),
    ("ALTER TABLE t ADD PRIMARY KEY (a)", "t", ["a"]),  # a becomes NOT NULL
    ("ALTER TABLE t DROP PRIMARY KEY", "t", ["c"]),
    ("ALTER TABLE t DROP INDEX uc", "t", None),
    ("CREATE UNIQUE INDEX ub ON t (b)", "t", None),  # b is nullable
    ("ALTER TABLE t CHANGE b bb VARCHAR(20) NOT NULL AFTER c", "t", ["bb"]),
    ("ALTER TABLE t RENAME COLUMN bb TO b2, ADD COLUMN d INT KEY FIRST", "t", ["d"]),
    ("ALTER TABLE t RENAME INDEX ub TO ub2, DROP COLUMN d", "t", ["b2"]),
    ("DROP INDEX ub2 ON t", "t", None),
    ("ALTER TABLE t ADD COLUMN (e INT NOT NULL, f INT), ADD CONSTRAINT ue UNIQUE (e, c)", "t", ["e", "c"]),
    # a unique prefix of a NOT NULL column counts (and px sorts before ue)
    ("ALTER TABLE t ADD INDEX plain (f), ADD UNIQUE px (b2(3))", "t", ["b2"]),
    ("ALTER TABLE t DROP COLUMN f", "t", ["b2"]),  # the index on f goes with it
    ("CREATE TABLE pb (b BLOB, v INT, PRIMARY KEY (b(20)))", "pb", ["b"]),  # a prefix primary key
    ("CREATE TABLE `u``q` (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT, v TEXT, PRIMARY KEY (id)) "
     "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4", "u`q", ["id"]),
    ("CREATE TABLE l LIKE `u``q`", "l", ["id"]),
    ("RENAME TABLE l TO l2", "l2", ["id"]),
    ("ALTER TABLE l2 RENAME TO l3, COMMENT 'x'", "l3", ["id"]),
    ("CREATE TABLE s (id SERIAL, x INT)", "s", ["id"]),
    ("CREATE TABLE k (id INT UNIQUE NOT NULL, g INT AS (id + 1) VIRTUAL)", "k", ["id"]),
    ("ALTER TABLE k ENGINE=InnoDB, ALGORITHM=COPY", "k", ["id"]),
    ("TRUNCATE TABLE k", "k", ["id"]),
    ("ALTER TABLE k RENAME COLUMN IF EXISTS id TO id2, MODIFY IF EXISTS nothere INT", "k", ["id2"]),
    # MariaDB's own tables: system versioning (the period's end joins the unique keys, and leaves
    # the valid key), sequences (their settings the key), partitions converted to tables and back
    ("CREATE TABLE v (id INT PRIMARY KEY, x INT) WITH SYSTEM VERSIONING", "v", ["id"]),
    ("CREATE TABLE w (id INT PRIMARY KEY, x INT, s TIMESTAMP(6) GENERATED ALWAYS AS ROW START INVISIBLE, "
     "e TIMESTAMP(6) GENERATED ALWAYS AS ROW END, UNIQUE (x), PERIOD FOR SYSTEM_TIME (s, e)) WITH SYSTEM VERSIONING",
     "w", ["id"]),
    ("ALTER TABLE k ADD SYSTEM VERSIONING", "k", ["id2"]),
    ("ALTER TABLE k DROP SYSTEM VERSIONING", "k", ["id2"]),
    ("CREATE TABLE p (id INT PRIMARY KEY, x INT)", "p", ["id"]),
    ("ALTER TABLE p ADD COLUMN s TIMESTAMP(6) GENERATED ALWAYS AS ROW START, "
     "ADD COLUMN e TIMESTAMP(6) GENERATED ALWAYS AS ROW END, ADD PERIOD FOR SYSTEM_TIME (s, e), "
     "ADD SYSTEM VERSIONING", "p", ["id"]),
    ("CREATE SEQUENCE sq START WITH 5 CACHE 10", "sq", ["minimum_value", "maximum_value", "start_value",
                                                       "increment", "cache_size", "cycle_option"]),
    ("CREATE TABLE r (id INT PRIMARY KEY, x INT) PARTITION BY RANGE (id) "
     "(PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN (20))", "r", ["id"]),
    ("ALTER TABLE r CONVERT PARTITION p1 TO TABLE r1", "r1", ["id"]),
    ("ALTER TABLE r1 ADD COLUMN y INT", "r1", ["id"]),
]


def test_each_ddl_evolves_the_tracked_schema_like_mariadb(mariadb_pair):
    up, _ = mariadb_pair
    up.execute(f"DROP DATABASE IF EXISTS {DB}", f"CREATE DATABASE {DB}")
    tracker = SchemaTracker()
    for ts, (stmt, table, key) in enumerate(EVOLUTION, start=10):
        up.execute(stmt, database=DB)
        tracker.apply(classify(stmt, DB), stmt, "", ts)
        with up.connect() as conn:
            real = schema_versions.read_catalogue(conn)[(DB, table)]
        mine = tracker.current(DB, table)
        assert isinstance(mine, TableInfo), stmt
        assert [(c["name"], c["nullable"]) for c in mine.columns] == \
               [(c["name"], c["nullable"]) for c in real.columns], stmt
        assert {n: (i["columns"], i["unique"]) for n, i in mine.indexes.items()} == \
               {n: (i["columns"], i["unique"]) for n, i in real.indexes.items()}, stmt
        assert mine.valid_key() == real.valid_key() == key, stmt
        assert (mine.period, mine.sequence) == (real.period, real.sequence), stmt
    assert tracker.current(DB, "l") is None and tracker.current(DB, "l2") is None
    gone = ["DROP SEQUENCE sq", "ALTER TABLE r1 DROP COLUMN y", "ALTER TABLE r CONVERT TABLE r1 TO PARTITION p1 "
            "VALUES LESS THAN (20)"]
    for ts, stmt in enumerate(gone, start=100):
        up.execute(stmt, database=DB)
        tracker.apply(classify(stmt, DB), stmt, "", ts)
    assert tracker.current(DB, "sq") is None and tracker.current(DB, "r1") is None
    assert tracker.period_ranges(DB, "w", 0, 200) == [[0, None], [36, ["s", "e"]]]  # made at ts 36
    with up.connect() as conn:
        assert set(schema_versions.read_catalogue(conn)) >= {(DB, "v"), (DB, "w"), (DB, "r")}


def test_versions_are_read_by_commit_ts_and_drops_are_versions():
    tr = SchemaTracker()
    for ts, stmt in ((100, "CREATE TABLE t (a INT)"), (200, "ALTER TABLE t ADD PRIMARY KEY (a)"),
                     (300, "DROP TABLE t"), (400, "CREATE TABLE t (b INT NOT NULL UNIQUE)")):
        tr.apply(classify(stmt, "d"), stmt, "", ts)
    assert tr.at("d", "t", 50) is UNKNOWN
    assert tr.at("d", "t", 150).valid_key() is None
    assert tr.at("d", "t", 201).valid_key() == ["a"]
    assert tr.at("d", "t", 300).valid_key() == ["a"]  # a row at the DROP's own ts precedes it
    assert tr.at("d", "t", 301) is None
    assert tr.at("d", "t", 401).valid_key() == ["b"]
    ranges = tr.key_ranges("d", "t", 150, 350)
    assert ranges == [[150, None, True, {}], [200, ["a"], True, {}], [300, None, True, {}]]
    assert lookup_key(ranges, 199) == (None, True, {}) and lookup_key(ranges, 250) == (["a"], True, {})
    # gc keeps the newest version at or below the checkpoint, and everything after it
    assert tr.gc(250) == [("d", "t", 100)]
    assert tr.at("d", "t", 260).valid_key() == ["a"]


def test_drop_database_drops_its_tables_and_ansi_quotes_parse():
    tr = SchemaTracker()
    q = 'CREATE TABLE "x" ("a" INT PRIMARY KEY)'
    tr.apply(classify(q, "d", "ANSI_QUOTES"), q, "ANSI_QUOTES", 1)
    assert tr.current("d", "x").valid_key() == ["a"]
    tr.apply(classify("DROP DATABASE d", None), "DROP DATABASE d", "", 2)
    assert tr.current("d", "x") is None


def test_a_window_re_read_from_before_the_oldest_version_keeps_it():
    """A backfill from before the snapshot taken at create (a date-time of the creation second)
    re-reads DDLs that snapshot already holds: they leave it as it is."""
    tr = SchemaTracker()
    q = "CREATE TABLE t (a INT PRIMARY KEY, b INT)"
    tr.apply(classify(q, "d"), q, "", 1000)  # stands for the snapshot at create
    tr.rewind(900)
    assert tr.at("d", "t", 1001).valid_key() == ["a"]  # still known after the rewind
    for ts, stmt in ((910, "DROP DATABASE IF EXISTS d"), (920, "CREATE TABLE t (z INT)")):
        assert tr.apply(classify(stmt, None if "DATABASE" in stmt else "d"), stmt, "", ts) == []
    assert [c["name"] for c in tr.current("d", "t").columns] == ["a", "b"]
    assert tr.at("d", "t", 950) is UNKNOWN  # rows before the snapshot: nothing is known of them
    # a DDL after it still evolves the table
    tr.apply(classify("ALTER TABLE t DROP COLUMN b", "d"), "ALTER TABLE t DROP COLUMN b", "", 1100)
    assert [c["name"] for c in tr.current("d", "t").columns] == ["a"]


def test_a_create_table_without_a_column_list_is_unknown_not_guessed():
    tr = SchemaTracker()
    tr.apply(classify("CREATE TABLE c LIKE gone", "d"), "CREATE TABLE c LIKE gone", "", 5)
    assert tr.current("d", "c") is UNKNOWN
    assert tr.key_ranges("d", "c", 1, 9) == [[1, None, False, {}], [5, None, False, {}]]


def test_versions_persist_and_reload(cdcflow_home):
    tr = SchemaTracker()
    tr.apply(classify("CREATE TABLE t (a INT PRIMARY KEY)", "d"), "CREATE TABLE t (a INT PRIMARY KEY)", "", 7)
    tr.apply(classify("CREATE TABLE c LIKE gone", "d"), "CREATE TABLE c LIKE gone", "", 8)
    schema_versions.save("cf", tr.added)
    schema_versions.save("cf", tr.added)  # idempotent
    back = schema_versions.load("cf")
    assert back.at("d", "t", 9).valid_key() == ["a"] and back.at("d", "c", 9) is UNKNOWN
    tr.apply(classify("DROP TABLE t", "d"), "DROP TABLE t", "", 9)
    schema_versions.save("cf", tr.added)
    schema_versions.forget("cf", tr.gc(8))  # the CREATE's version is the newest at the checkpoint: kept
    assert [v for v, _ in schema_versions.load("cf").versions[("d", "t")]] == [7, 9]
    schema_versions.forget("cf", tr.gc(9))  # the checkpoint passed the DROP: the table is gone for good
    assert ("d", "t") not in schema_versions.load("cf").versions
    schema_versions.delete("cf")
    assert schema_versions.load("cf").versions == {}


@pytest.mark.parametrize("stmt", ["ALTER TABLE t ADD FOREIGN KEY (a) REFERENCES p (id)",
                                  "ALTER TABLE t ADD CHECK (a > 0)", "ALTER TABLE t ALTER COLUMN a SET DEFAULT 3"])
def test_clauses_that_do_not_touch_keys_leave_them(stmt):
    tr = SchemaTracker()
    tr.apply(classify("CREATE TABLE t (a INT NOT NULL, UNIQUE KEY (a))", "d"),
             "CREATE TABLE t (a INT NOT NULL, UNIQUE KEY (a))", "", 1)
    tr.apply(classify(stmt, "d"), stmt, "", 2)
    assert tr.current("d", "t").valid_key() == ["a"]


def test_a_not_null_unique_key_the_binlog_names_as_primary_is_no_drift():
    tr = SchemaTracker()
    stmt = "CREATE TABLE u (a INT NOT NULL, b INT, c INT, UNIQUE KEY (a), UNIQUE KEY (b))"
    tr.apply(classify(stmt, "d"), stmt, "", 1)
    assert disagreements(tr, [("d", "u", 5, '["a"]', '{"a":1,"b":2,"c":3}')]) == []
    # a nullable unique key is never InnoDB's primary one: that is drift
    assert "primary key is (b), the tracked one (none)" in disagreements(
        tr, [("d", "u", 5, '["b"]', '{"a":1,"b":2,"c":3}')])[0]


def test_disagreements_with_the_binlog_row_are_reported():
    tr = SchemaTracker()
    tr.apply(classify("CREATE TABLE t (a INT PRIMARY KEY, b INT)", "d"), "CREATE TABLE t (a INT PRIMARY KEY, b INT)",
             "", 1)
    assert disagreements(tr, [("d", "t", 5, '["a"]', '{"a":1,"b":2}')]) == []
    notes = disagreements(tr, [("d", "t", 5, '["b"]', '{"a":1,"b":2,"x":3}'), ("d", "gone", 5, None, "{}")])
    assert notes == ["d.t at commit ts 5: the binlog's row has column(s) x the tracked schema does not",
                     "d.t at commit ts 5: the binlog's primary key is (b), the tracked one (a)"]
    versioned = "CREATE TABLE v (a INT PRIMARY KEY) WITH SYSTEM VERSIONING"
    tr.apply(classify(versioned, "d"), versioned, "", 2)  # the binlog's rows and key carry the period
    assert disagreements(tr, [("d", "v", 5, '["a","row_end"]', '{"a":1,"row_start":{},"row_end":{}}')]) == []


def test_key_collations_follow_the_clauses_and_the_table_default():
    tr = SchemaTracker()
    for ts, stmt in (
            (1, "CREATE TABLE t (a VARCHAR(9) COLLATE utf8mb4_general_ci, b CHAR(2) CHARACTER SET latin1, "
                "c TEXT, d VARBINARY(4), n INT, PRIMARY KEY (a, b, c(3), d, n)) DEFAULT CHARSET=utf8mb4 "
                "COLLATE=utf8mb4_uca1400_ai_ci"),
            (2, "CREATE TABLE u (a VARCHAR(9) CHARSET binary PRIMARY KEY, b VARCHAR(9) NOT NULL UNIQUE)"),
            (3, "ALTER TABLE u CONVERT TO CHARACTER SET latin1 COLLATE latin1_swedish_ci")):
        tr.apply(classify(stmt, "d"), stmt, "", ts)
    t = tr.current("d", "t")
    assert t.key_collations(t.valid_key()) == {"a": "utf8mb4_general_ci", "b": None, "c": "utf8mb4_uca1400_ai_ci"}
    assert tr.key_ranges("d", "u", 1, 2)[-1][3] == {"a": "binary"}
    assert tr.current("d", "u").key_collations(["a", "b"]) == {"a": "binary", "b": "latin1_swedish_ci"}


def test_collations_of_columns_and_of_create_table_are_kept():
    tr = SchemaTracker()
    stmt = "CREATE TABLE t (a VARCHAR(5), b VARCHAR(5) COLLATE utf8mb4_general_ci) DEFAULT CHARSET=utf8mb4 " \
           "COLLATE=utf8mb4_bin"
    tr.apply(classify(stmt, "d"), stmt, "", 10)
    assert [c.get("collation") for c in tr.current("d", "t").columns] == ["utf8mb4_bin", "utf8mb4_general_ci"]


def test_versions_made_in_a_window_of_many_ddls_are_kept_without_a_scan_per_ddl():
    """40,000 versions (a window creating and altering 20,000 tables): each put used to scan
    every version made before it, 800 million comparisons; a re-derived version still replaces
    its first derivation and becomes the newest."""
    tr = SchemaTracker()
    t0 = time.perf_counter()
    for i in range(20_000):
        tr.put("d", f"t{i}", 2 * i + 1, None)
        tr.put("d", f"t{i}", 2 * i + 2, None)
    assert time.perf_counter() - t0 < 3.0
    tr.put("d", "t0", 2, None)  # re-derived
    assert len(tr.added) == 40_000 and tr.added[-1][:3] == ("d", "t0", 2) and tr.added[0][:3] == ("d", "t0", 1)
