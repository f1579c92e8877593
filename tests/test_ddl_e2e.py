"""DDL cases through the CLI against the real MariaDB pair: cross-database DDL run with the
upstream session's default schema, ANSI_QUOTES DDL, a DDL cdcflow cannot classify, DDL
outside the allow list, and keys taken from the upstream's tracked schema."""

from __future__ import annotations

import json
import logging

import pytest

from cdcflow import schema_store
from e2e_helpers import assert_consistent, cli_ok, cli_run, create_changefeed, query, run_fails

pytestmark = pytest.mark.e2e


def _fresh(db, *servers):
    for s in servers:
        s.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}")


def _events(caplog, what: str) -> list[dict]:
    out = []
    for r in caplog.records:
        try:
            d = json.loads(r.getMessage())
        except ValueError:
            continue
        if isinstance(d, dict) and d.get("event") == what:
            out.append(d)
    return out


def test_cross_database_ddl_and_ansi_quotes(mariadb_pair, spark, cdcflow_home, capsys, caplog):
    caplog.set_level(logging.INFO, logger="cdcflow")
    up, down = mariadb_pair
    for db in ("xa", "xb", "aq"):
        _fresh(db, up, down)
    _fresh("xz", up)  # not replicated, and absent downstream
    create_changefeed(capsys, up, down, "e2e-xdb", "[filter]\nrules = ['xa.*', 'xb.*', 'aq.*']\n")
    up.execute("CREATE TABLE xb.t2 (id INT PRIMARY KEY, v VARCHAR(5) NOT NULL DEFAULT 'd')")
    # issued from xb: `t2` is xb.t2, the new table is xa.t1 (seed 000's cross-database example)
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
    tracked = schema_store.load("e2e-xdb")
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
    assert schema_store.load("e2e-uc").current("uc", "nokey").valid_key() is None
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
