"""One upstream transaction far larger than what pull and apply may hold at once: pull writes
it in row groups of at most `pull-batch-rows` events, apply's writers hold at most
`max-txn-row` row images at a time, counted by the code itself (pull's `events_held`, apply's
`rows_held`), and `transaction-atomicity = table` still writes each table's part of it as one
downstream transaction."""

from __future__ import annotations

import pytest
from e2e_helpers import assert_consistent, create_changefeed, fresh_schema

from cdcflow.launch.in_process import run_cycle

pytestmark = pytest.mark.e2e

ROWS = 100_000
BATCH = 2_000  # pull-batch-rows
STATEMENT = 300  # max-txn-row


def commits(down) -> int:
    return int(down.query("SHOW GLOBAL STATUS LIKE 'Com_commit'")[0][1])


@pytest.mark.parametrize("atomicity, parallelism", [("none", 1), ("table", 0)])
def test_a_huge_transaction_is_held_in_bounded_batches(mariadb_pair, spark, cdcflow_home, capsys, atomicity,
                                                       parallelism):
    up, down = mariadb_pair
    db, changefeed_id = f"bigtxn_{atomicity}", f"bigtxn-{atomicity}"
    fresh_schema(up, down, db, "CREATE TABLE a (id INT PRIMARY KEY, k INT NOT NULL, pad CHAR(32), UNIQUE KEY (k))",
                 "CREATE TABLE b (id INT PRIMARY KEY, v INT)")
    # pull-parallelism 1 reads in this process; 0 in a range read by a Spark task (a transaction is
    # never cut, so one range)
    create_changefeed(capsys, up, down, changefeed_id, f"[filter]\nrules = ['{db}.*']\n"
                      f"[cdcflow]\npull-batch-rows = {BATCH}\npull-parallelism = {parallelism}\n"
                      f"pull-parallel-min-bytes = 1048576\n"
                      f"[sink]\nmax-txn-row = {STATEMENT}\ntransaction-atomicity = '{atomicity}'\n")
    with up.connect(database=db) as c, c.cursor() as cur:
        cur.execute("BEGIN")
        cur.execute(f"INSERT INTO a SELECT seq, seq, MD5(seq) FROM seq_1_to_{ROWS}")
        cur.execute("UPDATE a SET pad = 'changed' WHERE id % 10 = 0")
        cur.execute("INSERT INTO b VALUES (1, 1), (2, 2)")
        cur.execute("COMMIT")
    before = commits(down)
    result = run_cycle(changefeed_id, spark=spark)  # a session up from the start: ranges at once
    pull, apply = result["pull"], result["apply"]
    assert pull["pulled"] == ROWS + ROWS // 10 + 2 and pull["transactions"] == 1
    assert bool(pull["spark"]) == (parallelism == 0)  # read by a Spark task, or in this process
    assert 0 < pull["events_held"] <= BATCH
    assert apply["rows_written"] == ROWS + 2
    assert 0 < apply["rows_held"] <= STATEMENT
    assert apply["statements"] >= ROWS // STATEMENT
    if atomicity == "table":
        # each table's part of the transaction is one downstream transaction, however many statements
        assert commits(down) - before == 2
    assert_consistent(up, down, [db])
