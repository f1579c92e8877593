"""Foreign keys with row-changing actions (CASCADE, SET NULL) through the CLI against the real
MariaDB pair.  InnoDB's cascaded changes are not in the binlog; the downstream keeps the keys
and redoes them, as a native replica does: the tables such keys bind are written in commit
order, parents' UPDATEs and DELETEs by key with foreign_key_checks = 1, in one transaction with
a marker so a replay after a kill writes nothing twice.  Only a replicated child whose parent
the filter leaves out is refused, at create and at the DDL, naming the key and the remedy."""

from __future__ import annotations

import os

import pytest
from e2e_helpers import (_write_config, assert_consistent, cli_ok, cli_run, create_changefeed, forked_runs, fresh_schema,
                         prepared_executions, run_fails)

from cdcflow import cli
from cdcflow.store import metastore

pytestmark = pytest.mark.e2e

PARENT = "CREATE TABLE p (id INT PRIMARY KEY, v INT)"
CHILD = ("CREATE TABLE c (id INT PRIMARY KEY, pid INT, v INT DEFAULT 0, "
         "FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE ON UPDATE CASCADE)")
NULLED = ("CREATE TABLE n (id INT PRIMARY KEY, pid INT NULL, "
          "FOREIGN KEY (pid) REFERENCES p (id) ON DELETE SET NULL ON UPDATE SET NULL)")
# grandparent -> parent -> child, a self-referencing table each way, and a table no key binds
LEVELS = (
    "CREATE TABLE gp (id INT PRIMARY KEY, v INT)",
    "CREATE TABLE p (id INT PRIMARY KEY, gid INT, v INT, "
    "FOREIGN KEY (gid) REFERENCES gp (id) ON DELETE CASCADE ON UPDATE CASCADE)",
    CHILD, NULLED,
    "CREATE TABLE emp (id INT PRIMARY KEY, manager_id INT NULL, name VARCHAR(20), "
    "FOREIGN KEY (manager_id) REFERENCES emp (id) ON DELETE CASCADE)",
    "CREATE TABLE emp2 (id INT PRIMARY KEY, manager_id INT NULL, name VARCHAR(20), "
    "FOREIGN KEY (manager_id) REFERENCES emp2 (id) ON DELETE SET NULL)",
    "CREATE TABLE plain (id INT PRIMARY KEY, v INT)",
)
START = (
    "INSERT INTO gp VALUES (1, 0), (2, 0), (3, 0)",
    "INSERT INTO p VALUES (1, 1, 0), (2, 1, 0), (3, 2, 0), (4, 2, 0), (5, 3, 0), (6, 3, 0)",
    "INSERT INTO c (id, pid) VALUES " + ", ".join(f"({10 * p + i}, {p})" for p in range(1, 7) for i in range(3)),
    "INSERT INTO n VALUES " + ", ".join(f"({10 * p + i}, {p})" for p in range(1, 7) for i in range(2)),
    "INSERT INTO emp VALUES (1, NULL, 'ceo'), (2, 1, 'vp'), (3, 2, 'dev'), (4, NULL, 'cto'), (5, 4, 'ops')",
    "INSERT INTO emp2 VALUES (1, NULL, 'ceo'), (2, 1, 'vp'), (3, 2, 'dev')",
    "INSERT INTO plain VALUES (1, 1), (2, 2)",
)


def _same(up, down, table):
    assert sorted(down.query(f"SELECT * FROM {table}")) == sorted(up.query(f"SELECT * FROM {table}")), table


@pytest.fixture(autouse=True, scope="module")
def _no_cascading_keys_left(mariadb_pair):
    """The servers serve the whole session: keys left behind would bind tables of later tests (and
    the marker table is the downstream's only)."""
    yield
    for s in mariadb_pair:
        s.execute(*(f"DROP DATABASE IF EXISTS {d}" for d in ("fka", "fkb", "fkk", "fk_normal", "fk_safe", "fk_off", "cdcflow")))


@pytest.mark.parametrize("safe_mode", [False, True], ids=["normal", "safe-mode"])
def test_cascades_are_redone_by_the_downstreams_keys(mariadb_pair, spark, cdcflow_home, capsys, safe_mode):
    up, down = mariadb_pair
    db = f"fk_{'safe' if safe_mode else 'normal'}"
    fresh_schema(up, down, db, *LEVELS)
    cid = db.replace("_", "-")
    create_changefeed(capsys, up, down, cid,
                      f"[filter]\nrules = ['{db}.*']\n[sink]\nsafe-mode = {str(safe_mode).lower()}\n")
    up.execute(*START, database=db)
    rc, err = cli_run(capsys, cid)
    assert rc == 0, err
    assert_consistent(up, down, [db])

    # a parent's non-key UPDATE (and an upsert of its row in safe mode) deletes no child
    up.execute("UPDATE gp SET v = v + 1", "UPDATE p SET v = v + 1", "UPDATE emp SET name = UPPER(name)",
               database=db)
    rc, err = cli_run(capsys, cid)
    assert rc == 0, err
    assert down.query(f"SELECT COUNT(*) FROM {db}.c") == [(18,)] and down.query(f"SELECT COUNT(*) FROM {db}.n") \
        == [(12,)]
    assert_consistent(up, down, [db])

    up.execute(
        "DELETE FROM p WHERE id = 1",                 # ON DELETE CASCADE / SET NULL
        "UPDATE p SET id = 20 WHERE id = 2",          # ON UPDATE CASCADE / SET NULL of the parent's key
        "DELETE FROM gp WHERE id = 2",                # two levels: p 3 and 4 go, and their children
        "UPDATE gp SET id = 30 WHERE id = 3",         # the key update reaches p.gid
        # a child's own changes and its parent's delete in one transaction, in commit order
        "BEGIN", "INSERT INTO c (id, pid) VALUES (100, 5)", "UPDATE c SET v = 7 WHERE id = 100",
        "DELETE FROM p WHERE id = 5", "INSERT INTO p VALUES (5, 30, 9)", "INSERT INTO c (id, pid) VALUES (101, 5)",
        "UPDATE c SET pid = 6 WHERE id = 60", "COMMIT",
        "DELETE FROM emp WHERE id = 1",               # self-referencing: the whole chain below goes
        "DELETE FROM emp2 WHERE id = 1",              # its reports stay, without a manager
        "UPDATE plain SET v = 3 WHERE id = 1", "DELETE FROM plain WHERE id = 2",
        database=db)
    with prepared_executions(down, at_least=10):  # each change one statement, prepared (cache-prep-stmts)
        rc, err = cli_run(capsys, cid)
    assert rc == 0, err
    assert_consistent(up, down, [db])
    assert down.query(f"SELECT id, pid FROM {db}.c WHERE id IN (20, 60, 100, 101) ORDER BY id") == [
        (20, 20), (60, 6), (101, 5)]
    assert down.query(f"SELECT id FROM {db}.emp ORDER BY id") == [(4,), (5,)]
    assert down.query(f"SELECT id, manager_id FROM {db}.emp2 ORDER BY id") == [(2, None), (3, 2)]


def test_changes_made_with_the_upstreams_key_checks_off_run_no_action_downstream(mariadb_pair, spark, cdcflow_home,
                                                                                 capsys):
    """A session with foreign_key_checks = 0 (a purge of parents, a load in any order) changes rows
    without their keys' actions, and its rows events say so (NO_FOREIGN_KEY_CHECKS).  The downstream
    writes those changes with the checks off too: no cascade runs that did not run upstream, and a
    parent's change the upstream let through as an orphan is not refused (1452).  The same session's
    changes after it turns the checks back on cascade as before."""
    up, down = mariadb_pair
    db = "fk_off"
    fresh_schema(up, down, db, *LEVELS)
    create_changefeed(capsys, up, down, "fk-off", f"[filter]\nrules = ['{db}.*']\n")
    up.execute(*START, database=db)
    rc, err = cli_run(capsys, "fk-off")
    assert rc == 0, err

    up.execute(
        "SET SESSION foreign_key_checks = 0",
        "DELETE FROM p WHERE id = 1",              # c 10-12 and n 10-11 stay, pointing at nothing
        "UPDATE p SET id = 20 WHERE id = 2",       # c 20-22 and n 20-21 keep pid 2
        "DELETE FROM gp WHERE id = 2",             # p 3 and 4 stay, and their children
        "UPDATE p SET gid = 99 WHERE id = 5",      # p is a parent too: an orphan gid, refused with the checks on
        "DELETE FROM emp WHERE id = 1",            # its reports stay
        "BEGIN", "DELETE FROM emp2 WHERE id = 1", "SET SESSION foreign_key_checks = 1",
        "DELETE FROM p WHERE id = 6", "COMMIT",    # checks on again, in the same transaction: cascades
        database=db)
    rc, err = cli_run(capsys, "fk-off")
    assert rc == 0, err
    assert_consistent(up, down, [db])
    assert down.query(f"SELECT pid, COUNT(*) FROM {db}.c WHERE pid IN (1, 2, 6) GROUP BY pid ORDER BY pid") == [
        (1, 3), (2, 3)]
    assert down.query(f"SELECT id, gid FROM {db}.p WHERE id IN (3, 4, 5) ORDER BY id") == [(3, 2), (4, 2), (5, 99)]
    assert down.query(f"SELECT COUNT(*) FROM {db}.emp") == [(5 - 1,)]
    assert down.query(f"SELECT id, manager_id FROM {db}.emp2 ORDER BY id") == [(2, 1), (3, 2)]


def test_create_refuses_only_a_replicated_child_whose_parent_is_left_out(mariadb_pair, cdcflow_home, capsys):
    up, down = mariadb_pair
    fresh_schema(up, down, "fka", PARENT, CHILD, NULLED)
    path = _write_config("e2e-fka", "[filter]\nrules = ['fka.*', '!fka.p']\n")
    capsys.readouterr()
    rc = cli.main(["changefeed", "create", "-c", "e2e-fka", "--source-uri", up.uri, "--sink-uri", down.uri,
                   "--config", str(path)])
    err = capsys.readouterr().err
    assert rc != 0 and "to parents the filter leaves out" in err and "fka.c key" in err and "→ fka.p" in err
    assert "ON DELETE CASCADE" in err and "fka.n key" in err and "SET NULL" in err
    assert "replicate the parent too" in err and "leave fka.c, fka.n out of filter.rules" in err
    # the parent replicated and the children left out: exact, nothing to refuse
    create_changefeed(capsys, up, down, "e2e-fka", "[filter]\nrules = ['fka.*', '!fka.c', '!fka.n']\n")
    cli_ok(capsys, "changefeed", "remove", "-c", "e2e-fka")
    # both replicated, but the downstream's n lacks its key: nothing would redo its SET NULL there
    down.execute("ALTER TABLE n DROP FOREIGN KEY n_ibfk_1", database="fka")
    path = _write_config("e2e-fka", "[filter]\nrules = ['fka.*']\n")
    capsys.readouterr()
    rc = cli.main(["changefeed", "create", "-c", "e2e-fka", "--source-uri", up.uri, "--sink-uri", down.uri,
                   "--config", str(path)])
    err = capsys.readouterr().err
    assert rc != 0 and "the downstream has replicated tables without the foreign keys" in err
    assert "fka.n key n_ibfk_1 → fka.p ON DELETE SET NULL ON UPDATE SET NULL" in err and "fka.c" not in err
    assert "add the keys to the downstream's tables" in err
    # with the key back, the downstream's keys redo the cascades
    down.execute("ALTER TABLE n ADD CONSTRAINT n_ibfk_1 FOREIGN KEY (pid) REFERENCES p (id) ON DELETE SET NULL "
                 "ON UPDATE SET NULL", database="fka")
    create_changefeed(capsys, up, down, "e2e-fka", "[filter]\nrules = ['fka.*']\n")


def test_a_ddl_adding_a_cascading_key_mid_stream_is_replicated(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    fresh_schema(up, down, "fkb")
    create_changefeed(capsys, up, down, "e2e-fkb", "[filter]\nrules = ['fkb.*', '!fkb.q']\n")
    up.execute(PARENT, "INSERT INTO p VALUES (1, 1), (2, 2), (3, 3)", CHILD,
               "INSERT INTO c (id, pid) VALUES (10, 1), (20, 2), (30, 3)",
               "DELETE FROM p WHERE id = 1", "UPDATE p SET v = 3 WHERE id = 2", "UPDATE p SET id = 4 WHERE id = 3",
               database="fkb")
    rc, err = cli_run(capsys, "e2e-fkb")
    assert rc == 0, err
    assert down.query("SELECT id, pid FROM fkb.c ORDER BY id") == [(20, 2), (30, 4)]
    assert_consistent(up, down, ["fkb"])

    # ALTER TABLE … ADD FOREIGN KEY … ON UPDATE SET NULL on a replicated table, then a key update
    up.execute("CREATE TABLE d (id INT PRIMARY KEY, pid INT)", "INSERT INTO d VALUES (1, 2), (2, 4)",
               "ALTER TABLE d ADD CONSTRAINT dp FOREIGN KEY (pid) REFERENCES p (id) ON UPDATE SET NULL",
               "UPDATE p SET id = 5 WHERE id = 2", database="fkb")
    rc, err = cli_run(capsys, "e2e-fkb")
    assert rc == 0, err
    assert down.query("SELECT * FROM fkb.d ORDER BY id") == [(1, None), (2, 4)]
    assert_consistent(up, down, ["fkb"])
    # the key dropped upstream is dropped downstream: its action no longer fires on either side
    up.execute("ALTER TABLE d DROP FOREIGN KEY dp", "UPDATE p SET id = 7 WHERE id = 4", database="fkb")
    rc, err = cli_run(capsys, "e2e-fkb")
    assert rc == 0, err
    assert down.query("SELECT * FROM fkb.d ORDER BY id") == [(1, None), (2, 4)]
    assert down.query("SELECT id, pid FROM fkb.c ORDER BY id") == [(20, 5), (30, 7)]
    assert_consistent(up, down, ["fkb"])

    # a cascading key from a replicated table to one the filter leaves out stops at its DDL
    up.execute("CREATE TABLE q (id INT PRIMARY KEY)", "INSERT INTO q VALUES (1)",
               "CREATE TABLE e (id INT PRIMARY KEY, qid INT, FOREIGN KEY (qid) REFERENCES q (id) ON DELETE CASCADE)",
               database="fkb")
    status, message, ts = run_fails(capsys, "e2e-fkb")
    assert status["error"]["code"] == "CDCFLOW:ErrCascadingForeignKey"
    assert "CREATE TABLE gives table fkb.e a foreign key ON DELETE CASCADE to fkb.q, which the filter leaves out" \
        in message
    assert f"replace-ddl -c e2e-fkb --commit-ts {ts}" in message and "leave fkb.e out of them" in message
    # the remedy: leave the child out too, resume
    path = _write_config("e2e-fkb", "[filter]\nrules = ['fkb.*', '!fkb.q', '!fkb.e']\n")
    cli_ok(capsys, "changefeed", "update", "-c", "e2e-fkb", "--config", str(path), "--no-confirm")
    cli_ok(capsys, "changefeed", "resume", "-c", "e2e-fkb")
    up.execute("UPDATE p SET id = 6 WHERE id = 7", database="fkb")
    rc, err = cli_run(capsys, "e2e-fkb")
    assert rc == 0, err
    for t in ("p", "c", "d"):
        _same(up, down, f"fkb.{t}")


# The CLI in a child process on the session's Spark Connect server, killed (os._exit: no clean-up,
# the connection dropped) where argv[3] says: "open" after the bound tables' statements ran in
# their transaction, before it commits; "committed" right after it committed, before the
# checkpoint moves; "none" not at all.
KILLED_RUN = r"""
import os, sys
from cdcflow import cli
from cdcflow.sink import foreign_keys
from cdcflow.sink import row_sink

where = sys.argv[3]
if where == "open":
    foreign_keys.mark_applied = lambda *a: os._exit(9)
elif where == "committed":
    real = row_sink.write_group

    def write_group(*a, **k):
        real(*a, **k)
        os._exit(9)

    row_sink.write_group = write_group
sys.exit(cli.main(["changefeed", "run", "-c", sys.argv[1], "--spark-remote", sys.argv[2]]))
"""


def _killed_run(run, spark_connect, cid: str, where: str) -> int:
    proc = run(KILLED_RUN, cid, spark_connect.url, where)
    assert proc.returncode in (0, 9), proc.stderr[-3000:]
    return proc.returncode


def test_a_kill_mid_segment_then_the_replay_writes_each_change_once(mariadb_pair, cdcflow_home, capsys,
                                                                     spark_connect, tmp_path):
    up, down = mariadb_pair
    fresh_schema(up, down, "fkk", PARENT, CHILD, NULLED)
    create_changefeed(capsys, up, down, "e2e-fkk", "[filter]\nrules = ['fkk.*']\n[sink]\nsafe-mode = false\n")
    up.execute("INSERT INTO p VALUES (1, 0), (3, 0)", "INSERT INTO c (id, pid) VALUES (10, 1), (30, 3)",
               "INSERT INTO n VALUES (1, 1)", database="fkk")
    with forked_runs(tmp_path, dict(os.environ)) as run:  # each run a process of its own
        assert _killed_run(run, spark_connect, "e2e-fkk", "none") == 0
        before = metastore.get_feed("e2e-fkk").checkpoint_ts
        # rewritten over its own result this segment would diverge: c 11 follows p 1's key to 2 by the
        # cascade, and a new p 1 would take it back if its INSERT ran again
        up.execute("INSERT INTO c (id, pid) VALUES (11, 1)", "UPDATE p SET id = 2 WHERE id = 1",
                   "INSERT INTO p VALUES (1, 5)", "DELETE FROM p WHERE id = 3", "UPDATE c SET v = v + 1 WHERE id = 10",
                   database="fkk")
        assert _killed_run(run, spark_connect, "e2e-fkk", "open") == 9
        assert down.query("SELECT id, pid FROM fkk.c ORDER BY id") == [(10, 1), (30, 3)]  # rolled back
        assert _killed_run(run, spark_connect, "e2e-fkk", "committed") == 9
        assert metastore.get_feed("e2e-fkk").checkpoint_ts == before
        assert down.query("SELECT id, pid, v FROM fkk.c ORDER BY id") == [(10, 2, 1), (11, 2, 0)]
        assert _killed_run(run, spark_connect, "e2e-fkk", "none") == 0  # the replay, in safe mode
        assert metastore.get_feed("e2e-fkk").checkpoint_ts > before
        assert_consistent(up, down, ["fkk"])
        assert down.query("SELECT id, pid, v FROM fkk.c ORDER BY id") == [(10, 2, 1), (11, 2, 0)]
        assert down.query("SELECT * FROM fkk.n") == [(1, None)]
