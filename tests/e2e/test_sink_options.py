"""TiCDC's MySQL-sink options take effect, seen from the downstream's own counters:
worker-count (connections that write), max-txn-row (rows per statement), and
transaction-atomicity = table (one downstream COMMIT per upstream transaction and table,
no compaction across transactions)."""

from __future__ import annotations

import json
import math
import re

import pytest
from e2e_helpers import assert_consistent, backdate, create_changefeed

from cdcflow import cli
from cdcflow.store import metastore

pytestmark = pytest.mark.e2e


def status(down) -> dict:
    rows = down.query("SHOW GLOBAL STATUS WHERE Variable_name IN "
                      "('Connections', 'Com_replace', 'Com_delete', 'Com_commit', 'Com_insert')")
    return {k: int(v) for k, v in rows}


def run_measured(capsys, down, changefeed_id: str) -> tuple[dict, dict]:
    """One cycle through the CLI: its result, and how the downstream's counters moved
    (less the one connection that reads them)."""
    before = status(down)
    capsys.readouterr()
    assert cli.main(["changefeed", "run", "-c", changefeed_id]) == 0
    result = json.loads(capsys.readouterr().out)
    after = status(down)
    delta = {k: after[k] - before[k] for k in after}
    delta["Connections"] -= 1
    return result, delta


def make_tables(up, down, db: str, *ddl: str) -> None:
    for server in (up, down):
        server.execute(f"CREATE DATABASE {db}", *ddl)


@pytest.mark.parametrize("workers, rows_per_stmt", [(1, 1000), (3, 7)])
def test_worker_count_and_max_txn_row(mariadb_pair, spark, cdcflow_home, capsys, workers, rows_per_stmt):
    up, down = mariadb_pair
    db, changefeed_id = f"sinkopt_{workers}", f"sinkopt-{workers}"
    make_tables(up, down, db, f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(20))")
    # the options come from the sink URI here (the [sink] section is the other way)
    create_changefeed(capsys, up, down, changefeed_id, f"[filter]\nrules = ['{db}.*']\n", "--sink-uri",
                      f"{down.uri}?worker-count={workers}&max-txn-row={rows_per_stmt}")
    up.execute(f"INSERT INTO {db}.t SELECT seq, CONCAT('v', seq) FROM seq_1_to_1000", database=db)
    result, delta = run_measured(capsys, down, changefeed_id)
    apply = result["apply"]
    assert apply["workers"] == workers
    # the apply stage's own connection, and one per worker
    assert delta["Connections"] == 1 + workers
    # the downstream's primary key is the upstream's key, its columns the upstream's, no trigger:
    # the first cycle's safe mode writes the rows in place, `INSERT … ON DUPLICATE KEY UPDATE`, no
    # DELETE first (sink.row_writer; test_rows_already_downstream_are_upserted_outside_safe_mode
    # has the other forms)
    assert apply["safe_mode"] and delta["Com_delete"] == delta["Com_replace"] == 0
    assert delta["Com_insert"] == apply["statements"]
    assert math.ceil(1000 / rows_per_stmt) <= delta["Com_insert"] <= math.ceil(1000 / rows_per_stmt) + workers
    assert_consistent(up, down, [db])


def test_transaction_atomicity_table(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    make_tables(up, down, "atom", "CREATE TABLE atom.a (id INT PRIMARY KEY, v INT)",
                "CREATE TABLE atom.b (id INT PRIMARY KEY, v INT)")
    up.execute("INSERT INTO atom.a VALUES (1, 0), (2, 0)")
    down.execute("INSERT INTO atom.a VALUES (1, 0), (2, 0)")
    create_changefeed(capsys, up, down, "atom", "[filter]\nrules = ['atom.*']\n"
                      "[sink]\ntransaction-atomicity = 'table'\nworker-count = 2\n")
    pairs = 0
    for i in range(5):
        with up.connect() as c, c.cursor() as cur:
            cur.execute("BEGIN")
            cur.execute("UPDATE atom.a SET v = v + 1 WHERE id = 1")
            cur.execute("UPDATE atom.a SET v = v + 1 WHERE id = 1")  # twice: compacts inside the txn
            pairs += 1
            if i != 2:
                cur.execute(f"INSERT INTO atom.b VALUES ({i}, {i})")
                cur.execute("UPDATE atom.a SET id = 20 + id, v = -1 WHERE id = 2" if i == 3 else "DO 0")
                pairs += 1
            cur.execute("COMMIT")
    result, delta = run_measured(capsys, down, "atom")
    assert delta["Com_commit"] == pairs == 9
    # a.1 written once per transaction (5), not once per cycle; b's 4 inserts; the key change: delete + insert
    assert result["apply"]["rows_written"] == 5 + 4 + 2
    assert_consistent(up, down, ["atom"])


@pytest.mark.parametrize("safe", [False, True])
def test_safe_mode(mariadb_pair, spark, cdcflow_home, capsys, safe):
    """safe-mode = false writes new rows with INSERT, so a row the downstream should not have
    stops the cycle (as in TiCDC: a retryable error, warning); safe-mode = true REPLACEs it.  A
    cycle after a failed one is always safe, so the changefeed recovers after the backoff."""
    up, down = mariadb_pair
    db, changefeed_id = f"safe_{int(safe)}", f"safe-{int(safe)}"
    make_tables(up, down, db, f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(10))")
    create_changefeed(capsys, up, down, changefeed_id,
                      f"[filter]\nrules = ['{db}.*']\n[sink]\nsafe-mode = {str(safe).lower()}\n")
    up.execute(f"INSERT INTO {db}.t VALUES (1, 'a')")
    result, _ = run_measured(capsys, down, changefeed_id)
    assert result["apply"]["safe_mode"]  # a changefeed's first cycle is always safe

    down.execute(f"INSERT INTO {db}.t VALUES (2, 'stray')")  # the downstream drifts
    up.execute(f"INSERT INTO {db}.t VALUES (2, 'b'), (3, 'c')", f"UPDATE {db}.t SET v = 'a2' WHERE id = 1")
    capsys.readouterr()
    rc = cli.main(["changefeed", "run", "-c", changefeed_id])
    out = capsys.readouterr()
    if safe:
        assert rc == 0 and json.loads(out.out)["apply"]["safe_mode"] is True
        assert_consistent(up, down, [db])
        return
    assert rc == 1 and "Duplicate entry" in out.err and "INSERT into" in out.err
    assert re.search(r"in the row changes committed in \(\d+, \d+\]", out.err), out.err  # where in the window
    assert down.query(f"SELECT v FROM {db}.t WHERE id = 2") == [("stray",)]
    assert metastore.get_feed(changefeed_id).state == "warning"
    backdate(changefeed_id, 11, "next_retry_at")  # the first backoff (10 s) runs out
    result, _ = run_measured(capsys, down, changefeed_id)
    assert result["apply"]["safe_mode"] is True  # the previous cycle failed
    assert_consistent(up, down, [db])
    up.execute(f"INSERT INTO {db}.t VALUES (4, 'd')", f"DELETE FROM {db}.t WHERE id = 3")
    result, _ = run_measured(capsys, down, changefeed_id)
    assert result["apply"]["safe_mode"] is False
    assert_consistent(up, down, [db])


def test_rows_already_downstream_are_upserted_outside_safe_mode(mariadb_pair, spark, cdcflow_home, capsys):
    """Outside safe mode a row that was there before the window is written with INSERT … ON
    DUPLICATE KEY UPDATE (no DELETE) where the downstream has a unique index on exactly the
    upstream's key; rows rotating unique values across partitions make such statements meet
    stale rows, which are refused and written as DELETE + REPLACE.  Generated columns, a
    case-insensitive key respelled, and a table the downstream keys otherwise all end equal."""
    up, down = mariadb_pair
    db, changefeed_id = "upsert", "upsert"
    n = 400
    common = (f"CREATE TABLE {db}.uk (id INT PRIMARY KEY, u INT NOT NULL, w VARCHAR(20) NOT NULL, v INT, "
              "UNIQUE KEY uu (u), UNIQUE KEY uw (w))",
              f"CREATE TABLE {db}.gen (id INT PRIMARY KEY, a INT, g INT AS (a * 2) STORED, h INT AS (a + 1) VIRTUAL, "
              "KEY kg (g))",
              f"CREATE TABLE {db}.ci (name VARCHAR(20) COLLATE utf8mb4_general_ci PRIMARY KEY, v INT)")
    make_tables(up, down, db, *common)
    up.execute(f"CREATE TABLE {db}.other (id INT PRIMARY KEY, v INT)")
    down.execute(f"CREATE TABLE {db}.other (rid INT AUTO_INCREMENT PRIMARY KEY, id INT NOT NULL, v INT, KEY (id))")
    create_changefeed(capsys, up, down, changefeed_id,
                      f"[filter]\nrules = ['{db}.*']\n[sink]\nworker-count = 4\nmax-txn-row = 16\n")
    up.execute(f"INSERT INTO {db}.uk SELECT seq, seq, CONCAT('w', seq), seq FROM seq_1_to_{n}",
               f"INSERT INTO {db}.gen (id, a) SELECT seq, seq FROM seq_1_to_{n}",
               f"INSERT INTO {db}.ci VALUES ('abc', 1), ('x', 2)",
               f"INSERT INTO {db}.other SELECT seq, seq FROM seq_1_to_{n}", database=db)
    result, delta = run_measured(capsys, down, changefeed_id)
    # the first cycle, in safe mode: `other` deleted by the key and REPLACEd; uk, gen and ci
    # written in place (the downstream's columns are the upstream's, no trigger: row_writer)
    assert result["apply"]["safe_mode"] and result["apply"]["upsert_fallbacks"] == 0
    assert delta["Com_delete"] == delta["Com_replace"] >= math.ceil(n / 16)
    assert delta["Com_insert"] >= 2 * math.ceil(n / 16) + 1

    up.execute(f"UPDATE {db}.gen SET a = a + 7", f"UPDATE {db}.ci SET name = 'ABC', v = 3 WHERE name = 'abc'",
               f"UPDATE {db}.other SET v = -v", f"UPDATE {db}.uk SET v = v + 1 WHERE id > {n // 2}")
    result, delta = run_measured(capsys, down, changefeed_id)
    apply = result["apply"]
    assert apply["safe_mode"] is False and apply["upsert_fallbacks"] == 0
    # `other` only (the downstream does not index its key): deleted by the key and REPLACEd
    assert delta["Com_delete"] == delta["Com_replace"] >= math.ceil(n / 16)
    assert delta["Com_insert"] >= math.ceil(n / 16) + math.ceil(n // 2 / 16) + 1  # gen, uk, ci: upserted
    assert down.query(f"SELECT name, v FROM {db}.ci ORDER BY v") == [("x", 2), ("ABC", 3)]
    same_rows(up, down, db, {"gen": "id, a, g, h", "other": "id, v", "uk": "id, u, w, v"})

    # every row takes another's unique values: most statements meet a stale row
    in_txn = [f"UPDATE {db}.uk SET u = u + {n}, w = CONCAT('t', w)",
              f"UPDATE {db}.uk SET u = (u - {n}) % {n} + 1, w = CONCAT('w', SUBSTR(w, 3) % {n} + 1), v = v + 1"]
    with up.connect() as c, c.cursor() as cur:
        cur.execute("BEGIN")
        for stmt in in_txn:
            cur.execute(stmt)
        cur.execute("COMMIT")
    result, _ = run_measured(capsys, down, changefeed_id)
    assert result["apply"]["safe_mode"] is False and result["apply"]["upsert_fallbacks"] > 0
    same_rows(up, down, db, {"gen": "id, a, g, h", "other": "id, v", "uk": "id, u, w, v", "ci": "name, v"})


def same_rows(up, down, db: str, columns: dict[str, str]) -> None:
    """The tables hold the same rows on these columns (`other`'s definitions differ on purpose)."""
    for t, cols in columns.items():
        q = f"SELECT {cols} FROM {db}.{t} ORDER BY 1"
        assert down.query(q) == up.query(q), t
