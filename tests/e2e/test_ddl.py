"""DDL cases through the CLI against the real MariaDB pair: cross-database DDL run with the
upstream session's default schema, ANSI_QUOTES DDL, a DDL cdcflow cannot classify, DDL
outside the allow list, and keys taken from the upstream's tracked schema."""

from __future__ import annotations

import logging

import pytest
from e2e_helpers import assert_consistent, cli_ok, cli_run, create_changefeed, query, run_fails

from cdcflow import cli
from cdcflow.core import log_line
from cdcflow.store import schema_versions

pytestmark = pytest.mark.e2e


def _fresh(db, *servers):
    for s in servers:
        s.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}")


def _events(caplog, what: str) -> list[dict]:
    events = (log_line.parse(r.getMessage()) for r in caplog.records)
    return [d for d in events if d is not None and d["event"] == what]


def test_cross_database_ddl_and_ansi_quotes(mariadb_pair, spark, cdcflow_home, capsys, caplog):
    caplog.set_level(logging.INFO, logger="cdcflow")
    up, down = mariadb_pair
    for db in ("xa", "xb", "aq"):
        _fresh(db, up, down)
    _fresh("xz", up)  # not replicated, and absent downstream
    create_changefeed(capsys, up, down, "e2e-xdb", "[filter]\nrules = ['xa.*', 'xb.*', 'aq.*']\n")
    up.execute("CREATE TABLE xb.t2 (id INT PRIMARY KEY, v VARCHAR(5) NOT NULL DEFAULT 'd')")
    # issued from xb: `t2` is xb.t2, the new table is xa.t1 (TiCDC's DDL-replication doc's cross-database example)
    up.execute("CREATE TABLE xa.t1 LIKE t2", "INSERT INTO xa.t1 (id) VALUES (1)",
               "ALTER TABLE xa.t1 ADD COLUMN w INT", "INSERT INTO xa.t1 VALUES (2, 'b', 2)", database="xb")
    up.execute("SET SESSION sql_mode = 'ANSI_QUOTES'",
               'CREATE TABLE "q1" ("a" INT PRIMARY KEY, "b" VARCHAR(10))',
               "INSERT INTO \"q1\" VALUES (1, 'x'), (2, 'y')",
               'ALTER TABLE "q1" ADD COLUMN "c" INT DEFAULT 7', database="aq")
    # one statement dropping a replicated and a filtered table runs downstream for the first only
    up.execute("CREATE TABLE xa.d1 (id INT PRIMARY KEY)", "CREATE TABLE xz.d2 (id INT PRIMARY KEY)",
               "DROP TABLE xa.d1, xz.d2")
    rc, err = cli_run(capsys, "e2e-xdb")
    assert rc == 0, err
    assert down.query("SHOW DATABASES LIKE 'xz'") == []
    cols = ("SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, COLUMN_KEY FROM information_schema.COLUMNS "
            "WHERE TABLE_SCHEMA = 'xa' AND TABLE_NAME = 't1' ORDER BY ORDINAL_POSITION")
    assert down.query(cols) == up.query(cols)
    assert [c[0] for c in down.query(cols)] == ["id", "v", "w"]
    assert_consistent(up, down, ["xa", "xb", "aq"])
    assert down.query("SELECT * FROM aq.q1 ORDER BY a") == [(1, "x", 7), (2, "y", 7)]
    # the tracked schema the next cycle resumes from was persisted with this one
    tracked = schema_versions.load("e2e-xdb")
    assert [c["name"] for c in tracked.current("xa", "t1").columns] == ["id", "v", "w"]
    assert tracked.current("aq", "q1").valid_key() == ["a"]
    assert [c["name"] for c in tracked.current("aq", "q1").columns] == ["a", "b", "c"]
    assert _events(caplog, "schema drift") == []  # the binlog's table maps agree with the tracker


def test_unclassifiable_and_not_allowed_ddl(mariadb_pair, spark, cdcflow_home, capsys, caplog):
    caplog.set_level(logging.INFO, logger="cdcflow")
    up, down = mariadb_pair
    _fresh("uc", up, down)
    # the upstream table exists before the changefeed: the catalogue snapshot holds it; the
    # downstream copy has a primary key the upstream lacks, and the upstream decides
    up.execute("CREATE TABLE uc.nokey (a INT, b INT)")
    down.execute("CREATE TABLE uc.nokey (a INT PRIMARY KEY, b INT)")
    out = create_changefeed(capsys, up, down, "e2e-uc", "[filter]\nrules = ['uc.*']\n")
    assert out["tracked_tables"] >= 1
    assert schema_versions.load("e2e-uc").current("uc", "nokey").valid_key() is None
    up.execute(
        "INSERT INTO nokey VALUES (1, 1)",
        "CREATE TABLE t (id INT PRIMARY KEY, v INT)", "INSERT INTO t VALUES (1, 1)",
        "CREATE PROCEDURE p() SELECT 1",  # outside the allow list: logged by name, not replicated
        "ANALYZE TABLE t",
        # MariaDB's NOWAIT is a clause cdcflow's classifier does not know
        "ALTER TABLE t NOWAIT ADD COLUMN x INT", "INSERT INTO t VALUES (2, 2, 2)", database="uc")
    _, message, ts = run_fails(capsys, "e2e-uc")
    assert "ALTER TABLE t NOWAIT ADD COLUMN x INT" in message and "cannot classify" in message
    assert f"cdcflow changefeed skip-ddl -c e2e-uc --commit-ts {ts}" in message
    skipped = {d["name"]: d["why"] for d in _events(caplog, "ddl skipped")}
    assert "CREATE PROCEDURE" in skipped and "not in the DDL allow list" in skipped["CREATE PROCEDURE"]
    assert "ANALYZE TABLE" in skipped
    assert down.query("SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA='uc'") == []
    assert down.query("SELECT * FROM uc.t") == [(1, 1)]  # everything before the DDL
    assert down.query("SELECT * FROM uc.nokey") == []  # no valid index upstream: not fed
    assert any(d["table"] == "uc.nokey" for d in _events(caplog, "rows skipped"))

    # the operator runs an equivalent downstream, skips the statement, resumes
    down.execute("ALTER TABLE uc.t ADD COLUMN x INT")
    cli_ok(capsys, "changefeed", "skip-ddl", "-c", "e2e-uc", "--commit-ts", str(ts))
    cli_ok(capsys, "changefeed", "resume", "-c", "e2e-uc")
    rc, err = cli_run(capsys, "e2e-uc")
    assert rc == 0, err
    assert down.query("SELECT * FROM uc.t ORDER BY id") == [(1, 1, None), (2, 2, 2)]
    # the tracker could not read the skipped statement; the binlog's row names column x
    assert any("uc.t at commit ts" in d["detail"] and "column(s) x" in d["detail"]
               for d in _events(caplog, "schema drift"))
    assert query(capsys, "e2e-uc")["state"] == "normal"


# Every allow-listed DDL MariaDB executes (TiDB's TTL and RECOVER TABLE it cannot), with
# rows between them; `compare` checks tables, columns and rows, `_catalogue` the rest.
EVERY_DDL = [
    "CREATE DATABASE al2",
    "ALTER DATABASE al2 CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
    "CREATE TABLE al.t (id INT PRIMARY KEY AUTO_INCREMENT, a INT, b VARCHAR(20))",
    "INSERT INTO al.t VALUES (1, 1, 'one'), (2, 2, 'two')",
    "ALTER TABLE al.t ADD COLUMN c INT DEFAULT 1",
    "INSERT INTO al.t (id, a, b) VALUES (3, 3, 'three')",
    "ALTER TABLE al.t DROP COLUMN b",
    "CREATE INDEX ia ON al.t (a)",
    "ALTER TABLE al.t ADD INDEX ic (c)",
    "UPDATE al.t SET c = 10 WHERE id = 1",
    "ALTER TABLE al.t DROP INDEX ic",
    "ALTER TABLE al.t MODIFY COLUMN a BIGINT",
    "INSERT INTO al.t (id, a) VALUES (4, 40000000000)",
    "ALTER TABLE al.t ALTER COLUMN c SET DEFAULT 5",
    "INSERT INTO al.t (id, a) VALUES (5, 5)",
    "ALTER TABLE al.t COMMENT = 'every ddl'",
    "ALTER TABLE al.t RENAME INDEX ia TO ia2",
    "ALTER TABLE al.t ALTER INDEX ia2 IGNORED",  # index visibility, MariaDB's words
    "ALTER TABLE al.t CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
    "ALTER TABLE al.t AUTO_INCREMENT = 1000",
    "INSERT INTO al.t (a) VALUES (6)",
    "ALTER TABLE al.t ADD COLUMN d VARCHAR(8) NOT NULL DEFAULT 'x', ADD INDEX idd (d), MODIFY c INT NOT NULL DEFAULT 5",
    "UPDATE al.t SET d = 'y' WHERE id > 3",
    "CREATE TABLE al.tr (id INT PRIMARY KEY, v INT)",
    "INSERT INTO al.tr VALUES (1, 1), (2, 2)",
    "TRUNCATE TABLE al.tr",
    "INSERT INTO al.tr VALUES (3, 3)",
    "RENAME TABLE al.t TO al.t1",
    "INSERT INTO al.t1 (id, a) VALUES (7, 7)",
    "CREATE TABLE al.x (id INT PRIMARY KEY)",
    "CREATE TABLE al.y (id INT PRIMARY KEY)",
    "RENAME TABLE al.x TO al.x2, al.y TO al.y2",
    "INSERT INTO al.x2 VALUES (1)",
    "INSERT INTO al.y2 VALUES (2)",
    "CREATE TABLE al.k (id INT NOT NULL, u INT NOT NULL, UNIQUE KEY uu (u))",
    "INSERT INTO al.k VALUES (1, 1)",
    "ALTER TABLE al.k ADD PRIMARY KEY (id)",
    "INSERT INTO al.k VALUES (2, 2)",
    "ALTER TABLE al.k DROP PRIMARY KEY",
    "UPDATE al.k SET id = 20 WHERE u = 2",
    "CREATE TABLE al.p (id INT PRIMARY KEY, v INT) PARTITION BY RANGE (id) "
    "(PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN (20))",
    "INSERT INTO al.p VALUES (1, 1), (11, 11), (12, 12)",
    "ALTER TABLE al.p ADD PARTITION (PARTITION p2 VALUES LESS THAN (30))",
    "INSERT INTO al.p VALUES (21, 21), (26, 26)",
    "ALTER TABLE al.p TRUNCATE PARTITION p1",
    "ALTER TABLE al.p REORGANIZE PARTITION p2 INTO "
    "(PARTITION p2a VALUES LESS THAN (25), PARTITION p2b VALUES LESS THAN (30))",
    "CREATE TABLE al.px (id INT PRIMARY KEY, v INT)",
    "INSERT INTO al.px VALUES (22, 220), (23, 230)",
    "ALTER TABLE al.p EXCHANGE PARTITION p2a WITH TABLE al.px",
    "UPDATE al.p SET v = v + 1 WHERE id = 22",
    "ALTER TABLE al.p DROP PARTITION p0",
    "INSERT INTO al.p VALUES (13, 13)",
    "CREATE VIEW al.v AS SELECT id, a FROM al.t1 WHERE a > 1",
    "CREATE VIEW al.v2 AS SELECT id FROM al.k",
    "DROP VIEW al.v2",
    "DROP TABLE al.tr",
    "DROP DATABASE al2",
]


def _catalogue(server, schema: str) -> dict:
    """What `compare` leaves out: views, indexes (incl. IGNORED), partitions, comments, charsets."""
    return {
        "views": server.query("SELECT TABLE_NAME, VIEW_DEFINITION FROM information_schema.VIEWS "
                              f"WHERE TABLE_SCHEMA = '{schema}' ORDER BY 1"),
        "indexes": server.query("SELECT TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, NON_UNIQUE, IGNORED "
                                f"FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = '{schema}' ORDER BY 1, 2, 3"),
        "partitions": server.query("SELECT TABLE_NAME, PARTITION_NAME, PARTITION_DESCRIPTION FROM "
                                   "information_schema.PARTITIONS WHERE TABLE_SCHEMA = '{0}' AND PARTITION_NAME "
                                   "IS NOT NULL ORDER BY 1, 2".format(schema)),
        "tables": server.query("SELECT TABLE_NAME, TABLE_TYPE, TABLE_COMMENT, TABLE_COLLATION FROM "
                               f"information_schema.TABLES WHERE TABLE_SCHEMA = '{schema}' ORDER BY 1"),
        "defaults": server.query("SELECT TABLE_NAME, COLUMN_NAME, COLUMN_DEFAULT FROM information_schema.COLUMNS "
                                 f"WHERE TABLE_SCHEMA = '{schema}' ORDER BY 1, ORDINAL_POSITION"),
    }


def test_every_ddl_mariadb_executes(mariadb_pair, spark, cdcflow_home, capsys, caplog):
    caplog.set_level(logging.INFO, logger="cdcflow")
    up, down = mariadb_pair
    for s in (up, down):
        s.execute("DROP DATABASE IF EXISTS al2")
    _fresh("al", up, down)
    create_changefeed(capsys, up, down, "e2e-every", "[filter]\nrules = ['al.*', 'al2.*']\n")
    half = EVERY_DDL.index("CREATE TABLE al.tr (id INT PRIMARY KEY, v INT)")
    for chunk in (EVERY_DDL[:half], EVERY_DDL[half:]):  # two cycles
        up.execute(*chunk)
        rc, err = cli_run(capsys, "e2e-every")
        assert rc == 0, err
    assert query(capsys, "e2e-every")["state"] == "normal"
    assert _events(caplog, "ddl skipped") == []  # every one of them was replicated
    applied = [d["ddl_applied"] for d in _events(caplog, "applied")]
    assert sum(applied) == sum(1 for q in EVERY_DDL if not q.startswith(("INSERT", "UPDATE")))
    assert down.query("SHOW DATABASES LIKE 'al2'") == []
    assert_consistent(up, down, ["al"])
    assert _catalogue(down, "al") == _catalogue(up, "al")
    assert down.query("SELECT * FROM al.v ORDER BY id") == up.query("SELECT * FROM al.v ORDER BY id")
    assert [r[1] for r in _catalogue(down, "al")["views"]] and down.query("SELECT COUNT(*) FROM al.v")[0][0] > 0
    assert ("t1", "ia2", 1, "a", 1, "YES") in _catalogue(down, "al")["indexes"]


def test_replace_ddl_gets_past_a_rejected_ddl(mariadb_pair, spark, cdcflow_home, capsys, caplog):
    """`cdcflow changefeed replace-ddl` (issue item 10, DM's `binlog replace`): the stored statements
    run downstream instead of the DDL at that commit ts; the tracked schema follows the original,
    or the replacement where cdcflow cannot read the original."""
    caplog.set_level(logging.INFO, logger="cdcflow")
    up, down = mariadb_pair
    _fresh("rq", up, down)
    create_changefeed(capsys, up, down, "e2e-rq", "[filter]\nrules = ['rq.*']\n")
    up.execute("CREATE TABLE rq.t (id INT PRIMARY KEY, v INT, w INT)", "INSERT INTO rq.t VALUES (1, 1, 1)")
    rc, err = cli_run(capsys, "e2e-rq")
    assert rc == 0, err
    # someone made an index `ix` downstream by hand: the upstream's ADD INDEX ix is rejected there
    down.execute("ALTER TABLE rq.t ADD INDEX ix (w)")
    up.execute("ALTER TABLE rq.t ADD INDEX ix (v)", "INSERT INTO rq.t VALUES (2, 2, 2)")
    _, message, ts = run_fails(capsys, "e2e-rq")
    assert "ALTER TABLE rq.t ADD INDEX ix (v)" in message and "Duplicate key name" in message
    # only while stopped or failed, and only above the checkpoint
    cli_ok(capsys, "changefeed", "resume", "-c", "e2e-rq")
    assert cli.main(["changefeed", "replace-ddl", "-c", "e2e-rq", "--commit-ts", str(ts), "--sql", "SELECT 1"]) == 1
    assert "pause" in capsys.readouterr().err
    # resumed without a fix it fails again: a DDL the downstream rejected did not run, so the
    # rerun is no replay and "Duplicate key name" is not taken for "already applied"
    _, again, ts_again = run_fails(capsys, "e2e-rq")
    assert ts_again == ts and "Duplicate key name" in again
    assert cli.main(["changefeed", "replace-ddl", "-c", "e2e-rq", "--commit-ts", "1", "--sql", "SELECT 1"]) == 1
    assert "below the checkpoint" in capsys.readouterr().err
    cli_ok(capsys, "changefeed", "replace-ddl", "-c", "e2e-rq", "--commit-ts", str(ts),
           "--sql", "ALTER TABLE rq.t DROP INDEX ix", "--sql", "ALTER TABLE rq.t ADD INDEX ix (v);")
    cli_ok(capsys, "changefeed", "resume", "-c", "e2e-rq")
    # the next DDL cdcflow cannot read at all; replaced by its plain form
    up.execute("ALTER TABLE t NOWAIT ADD COLUMN x INT", "INSERT INTO t VALUES (3, 3, 3, 3)", database="rq")
    _, message, ts2 = run_fails(capsys, "e2e-rq")
    assert ts2 > ts and "cannot classify" in message
    assert down.query("SELECT id FROM rq.t ORDER BY id") == [(1,), (2,)]  # the rows between them landed
    cli_ok(capsys, "changefeed", "replace-ddl", "-c", "e2e-rq", "--commit-ts", str(ts2),
           "--sql", "ALTER TABLE t ADD COLUMN x INT")  # the upstream session's default schema applies
    cli_ok(capsys, "changefeed", "resume", "-c", "e2e-rq")
    up.execute("INSERT INTO rq.t VALUES (4, 4, 4, 4)")
    outcomes = [d["outcome"] for d in _events(caplog, "ddl applied")]
    caplog.clear()  # the failed run checked its rows against a tracker without column x
    rc, err = cli_run(capsys, "e2e-rq")
    assert rc == 0, err
    assert query(capsys, "e2e-rq")["state"] == "normal"
    assert_consistent(up, down, ["rq"])
    idx = "SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA='rq' ORDER BY 1, 2"
    assert down.query(idx) == up.query(idx) == [("ix", "v"), ("PRIMARY", "id")]
    outcomes += [d["outcome"] for d in _events(caplog, "ddl applied")]
    assert outcomes.count("replaced by 2 statement(s) (replace-ddl)") == 1
    assert outcomes.count("replaced by 1 statement(s) (replace-ddl)") == 1
    # the tracker learnt column x from the replacement: no drift in the run that applied it
    assert [c["name"] for c in schema_versions.load("e2e-rq").current("rq", "t").columns] == ["id", "v", "w", "x"]
    assert _events(caplog, "schema drift") == []
