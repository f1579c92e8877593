"""Every row of seed 000/003's two RENAME TABLE tables, through the CLI against the real MariaDB
pair.  The seed's filter is ['test.t*']; here the schemas are rn_test and rn_ignore and the
rule is ['rn_test.t*'], the same shape.  A replicated rename runs downstream and the table's
later rows follow it; an ignored one leaves the downstream alone; a forbidden one fails the
changefeed naming the statement, its commit ts and the rule, until an operator skips it.
(tests/test_rename_rules.py walks the same rows as unit tests.)"""

from __future__ import annotations

import pytest
from e2e_helpers import cli_ok, cli_run, create_changefeed, query, run_fails, tables

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
