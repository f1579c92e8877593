"""Every row of TiCDC's DDL-replication doc's two RENAME TABLE tables, through the CLI against the real MariaDB
pair.  The seed's filter is ['test.t*']; here the schemas are rn_test and rn_ignore and the
rule is ['rn_test.t*'], the same shape.  A replicated rename runs downstream and the table's
later rows follow it; an ignored one leaves the downstream alone; a forbidden one fails the
changefeed naming the statement, its commit ts and the rule, until an operator skips it.
(tests/filter/test_rename.py walks the same rows as unit tests.)  Then what the seed's rows
leave open: rename chains, true swaps, swaps among tables the filter leaves out, and a
multi-table rename partly outside the filter."""

from __future__ import annotations

import pytest
from e2e_helpers import (
    assert_consistent,
    cli_ok,
    cli_run,
    create_changefeed,
    query,
    run_fails,
    tables,
)

from cdcflow_devtools.compare import compare

pytestmark = pytest.mark.e2e

CID = "e2e-rename-seed"
T, I = "rn_test", "rn_ignore"
CONFIG = f"[filter]\nrules = ['{T}.t*']\n"
TABLES = [f"{T}.{t}" for t in ("t1", "t3", "t5", "t10", "t11", "t13", "t14", "n1")] + [f"{I}.a", f"{I}.b"]

# (statement, what the seed says, rows written afterwards to the table's new name)
STEPS = [
    # single-table RENAME: the old name decides
    (f"RENAME TABLE {T}.t1 TO {T}.t2", "replicate", f"{T}.t2"),         # old and new match
    (f"RENAME TABLE {T}.t2 TO {I}.t2", "replicate", f"{I}.t2"),         # old matches, new does not
    (f"RENAME TABLE {I}.a TO {I}.a2", "ignore", f"{I}.a2"),             # neither matches
    (f"RENAME TABLE {T}.n1 TO {T}.t7", "old name", None),               # old does not, new does
    (f"RENAME TABLE {I}.b TO {T}.t8", "old name", None),                # old in another schema
    # multi-table RENAME: all old names and all new schemas must match
    (f"RENAME TABLE {T}.t3 TO {T}.t4, {T}.t5 TO {T}.t9", "replicate", f"{T}.t4"),
    (f"RENAME TABLE {T}.t4 TO {T}.ignore1, {T}.t9 TO {T}.ignore2", "replicate", f"{T}.ignore1"),
    (f"RENAME TABLE {T}.t10 TO {I}.t10, {T}.t11 TO {T}.t22", "new schema", None),
    (f"RENAME TABLE {T}.t13 TO {T}.t15, {T}.t14 TO {T}.t13, {T}.t15 TO {T}.t14", "swaps", None),
]


def test_seed_rename_tables_end_to_end(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    for db in (up, down):
        db.execute(f"DROP DATABASE IF EXISTS {T}", f"DROP DATABASE IF EXISTS {I}")
    # rn_ignore is filtered out, so its CREATE DATABASE is not replicated; a rename into it
    # needs it downstream, which the seed leaves to the operator
    down.execute(f"CREATE DATABASE {I}")
    create_changefeed(capsys, up, down, CID, CONFIG)
    up.execute(f"CREATE DATABASE {T}", f"CREATE DATABASE {I}",
               *[f"CREATE TABLE {t} (id INT PRIMARY KEY, v VARCHAR(20))" for t in TABLES],
               *[f"INSERT INTO {t} VALUES (1, 'before')" for t in TABLES])
    for n, (statement, _, follow) in enumerate(STEPS, start=2):
        up.execute(statement, *([f"INSERT INTO {follow} VALUES ({n}, 'after')"] if follow else []))

    # each forbidden rename fails the changefeed in turn; everything before it is applied
    for statement, rule, _ in STEPS:
        if rule in ("replicate", "ignore"):
            continue
        status, message, ts = run_fails(capsys, CID)
        assert statement in message and rule in message and f"commit ts {ts}" in message, message
        assert status["error"]["code"] == "CDCFLOW:ErrSyncRenameTableFailed"  # failed, not warning: not retryable
        cli_ok(capsys, "changefeed", "skip-ddl", "-c", CID, "--commit-ts", str(ts))
        cli_ok(capsys, "changefeed", "resume", "-c", CID)
    rc, err = cli_run(capsys, CID)
    assert rc == 0, err
    assert query(capsys, CID)["state"] == "normal"

    # the replicated renames ran downstream and their rows followed them; n1, ignore.a and
    # ignore.b never existed downstream; the skipped renames left their tables where they were
    assert tables(down, T) == ["ignore1", "ignore2", "t10", "t11", "t13", "t14"]
    assert tables(down, I) == ["t2"]
    # t2's row written before the rename followed it; the one written after, into a table the
    # filter excludes, did not
    assert sorted(down.query(f"SELECT id, v FROM {I}.t2")) == [(1, "before"), (2, "after")]
    assert sorted(down.query(f"SELECT id, v FROM {T}.ignore1")) == [(1, "before"), (7, "after")]
    for table in ("ignore2", "t10", "t11", "t13", "t14"):
        assert down.query(f"SELECT id, v FROM {T}.{table}") == [(1, "before")]


# -- beyond the seed's rows: chains, swaps, and multi-table renames partly outside the filter
# (the clauses replayed in order, each table followed to its last name; TiCDC's ddl puller
# leaves out a clause whose table is outside the filter before and after)

def _start(mariadb_pair, capsys, schema: str, changefeed_id: str, rules: str, *tables: str):
    """A fresh schema on both servers, a changefeed with `rules`, then `tables` created upstream,
    each with one row: (up, down)."""
    up, down = mariadb_pair
    for db in (up, down):
        db.execute(f"DROP DATABASE IF EXISTS {schema}")
    create_changefeed(capsys, up, down, changefeed_id, f"[filter]\nrules = [{rules}]\n")
    up.execute(f"CREATE DATABASE {schema}",
               *[f"CREATE TABLE {schema}.{t} (id INT PRIMARY KEY, v VARCHAR(20))" for t in tables],
               *[f"INSERT INTO {schema}.{t} VALUES (1, 'was {t}')" for t in tables])
    return up, down


def _differences(up, down, schema: str) -> list[str]:
    with up.connect() as u, down.connect() as d:
        return sorted(str(x) for x in compare(u, d, schemas=[schema]))


def test_a_rename_chain_replicates(mariadb_pair, spark, cdcflow_home, capsys):
    S = "rn_chain"
    up, down = _start(mariadb_pair, capsys, S, "e2e-rename-chain", f"'{S}.*'", "a", "b", "c", "e")
    # each new name is free when its clause runs: a chain, not a swap; then e goes to f through
    # x, and d (a before) takes the name e
    up.execute("RENAME TABLE a TO d, b TO a, c TO b", "RENAME TABLE e TO x, x TO f, d TO e",
               *[f"INSERT INTO {t} VALUES (2, 'now {t}')" for t in ("a", "b", "e", "f")], database=S)
    rc, err = cli_run(capsys, "e2e-rename-chain")
    assert rc == 0, err
    assert tables(down, S) == ["a", "b", "e", "f"]
    assert down.query(f"SELECT v FROM {S}.e ORDER BY id") == [("was a",), ("now e",)]
    assert_consistent(up, down, [S])


def test_a_swap_fails_naming_its_clauses_until_skipped(mariadb_pair, spark, cdcflow_home, capsys):
    S, changefeed_id = "rn_swap", "e2e-rename-swap"
    up, down = _start(mariadb_pair, capsys, S, changefeed_id, f"'{S}.*'", "a", "b")
    statement = "RENAME TABLE a TO tmp, b TO a, tmp TO b"
    up.execute(statement, "INSERT INTO a VALUES (2, 'now a')", database=S)
    status, message, ts = run_fails(capsys, changefeed_id)
    assert status["error"]["code"] == "CDCFLOW:ErrSyncRenameTableFailed"
    assert "swaps names" in message and f"commit ts {ts}" in message
    assert f"{S}.a ends as {S}.b and {S}.b as {S}.a" in message
    assert f"{S}.a TO {S}.tmp, {S}.b TO {S}.a, {S}.tmp TO {S}.b" in message
    # the way past it the message gives: run the exchange downstream, skip it, resume
    assert "skip-ddl" in message
    down.execute(statement, database=S)
    cli_ok(capsys, "changefeed", "skip-ddl", "-c", changefeed_id, "--commit-ts", str(ts))
    cli_ok(capsys, "changefeed", "resume", "-c", changefeed_id)
    rc, err = cli_run(capsys, changefeed_id)
    assert rc == 0, err
    assert query(capsys, changefeed_id)["state"] == "normal"
    assert down.query(f"SELECT v FROM {S}.a ORDER BY id") == [("was b",), ("now a",)]
    assert_consistent(up, down, [S])


def test_a_swap_among_tables_the_filter_leaves_out_fails_nothing(mariadb_pair, spark, cdcflow_home, capsys):
    S, changefeed_id = "rn_xswap", "e2e-rename-xswap"
    up, down = _start(mariadb_pair, capsys, S, changefeed_id, f"'{S}.t*'", "t1", "n1", "n2")
    up.execute("RENAME TABLE n1 TO ntmp, n2 TO n1, ntmp TO n2",  # only excluded tables: ignored
               "RENAME TABLE t1 TO t2, n1 TO ntmp, n2 TO n1, ntmp TO n2",  # runs as RENAME TABLE t1 TO t2
               "INSERT INTO t2 VALUES (2, 'now t2')", "INSERT INTO n1 VALUES (2, 'now n1')", database=S)
    rc, err = cli_run(capsys, changefeed_id)
    assert rc == 0, err
    assert query(capsys, changefeed_id)["state"] == "normal"
    assert tables(down, S) == ["t2"]
    assert _differences(up, down, S) == [f"{S}.n1: missing downstream", f"{S}.n2: missing downstream"]


def test_a_multi_table_rename_partly_outside_the_filter_replicates_the_rest(mariadb_pair, spark, cdcflow_home,
                                                                          capsys):
    S, changefeed_id = "rn_part", "e2e-rename-part"
    up, down = _start(mariadb_pair, capsys, S, changefeed_id, f"'{S}.t6*', '{S}.t7*', '{S}.t8*'", "t7", "t555", "t8")
    up.execute("RENAME TABLE t7 TO t77, t555 TO t55",  # t555 and t55 are both outside the filter
               "INSERT INTO t77 VALUES (2, 'now t77')", "INSERT INTO t55 VALUES (2, 'now t55')", database=S)
    rc, err = cli_run(capsys, changefeed_id)
    assert rc == 0, err
    assert tables(down, S) == ["t77", "t8"]
    assert down.query(f"SELECT id, v FROM {S}.t77 ORDER BY id") == [(1, "was t7"), (2, "now t77")]
    assert _differences(up, down, S) == [f"{S}.t55: missing downstream"]

    # a clause moving a table into the filter still fails the statement, naming the clause
    up.execute("RENAME TABLE t8 TO t88, t55 TO t66", database=S)
    status, message, _ = run_fails(capsys, changefeed_id)
    assert status["error"]["code"] == "CDCFLOW:ErrSyncRenameTableFailed"
    assert f"{S}.t55 TO {S}.t66: the old name {S}.t55 does not match but the new name {S}.t66 does" in message
