"""TiCDC's split of key-changing UPDATEs's update split end to end, through the CLI against real MariaDB servers: key
swaps and longer key cycles in one transaction, on primary keys and on NOT NULL unique keys,
and many rows exchanging unique-key values across parallel apply partitions."""

from __future__ import annotations

import pytest
from e2e_helpers import assert_consistent, create_changefeed

from cdcflow import cli

pytestmark = pytest.mark.e2e


def run_cli(changefeed_id: str) -> None:
    assert cli.main(["changefeed", "run", "-c", changefeed_id]) == 0


def in_one_txn(up, *stmts: str) -> None:
    with up.connect() as c, c.cursor() as cur:
        cur.execute("BEGIN")
        for s in stmts:
            cur.execute(s)
        cur.execute("COMMIT")


def test_seed_002_key_swaps_and_cycles(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    # small batches and several workers, so the rows of one swap land in different
    # partitions and statements
    create_changefeed(capsys, up, down, "split-swap", "[filter]\nrules = ['split_swap.*']\n"
                      "[sink]\nworker-count = 4\nmax-txn-row = 2\n")
    up.execute("CREATE DATABASE split_swap")
    up.execute(
        "CREATE TABLE split_swap.pk (a INT PRIMARY KEY, b INT)",
        "CREATE TABLE split_swap.uk (a INT NOT NULL, b INT, UNIQUE KEY ua (a))",  # valid index: the UK
        "CREATE TABLE split_swap.both (id INT PRIMARY KEY, u VARCHAR(10) NOT NULL, v INT, UNIQUE KEY uu (u))",
        "CREATE TABLE split_swap.ring (a INT PRIMARY KEY, b INT)",
        "INSERT INTO split_swap.pk VALUES (1, 1), (2, 2)",
        "INSERT INTO split_swap.uk VALUES (1, 1), (2, 2)",
        "INSERT INTO split_swap.both VALUES (1, 'x', 1), (2, 'y', 2), (3, 'z', 3)",
        "INSERT INTO split_swap.ring SELECT seq, seq FROM seq_1_to_9",
        database="split_swap",
    )
    run_cli("split-swap")
    assert_consistent(up, down, ["split_swap"])

    for t in ("pk", "uk"):  # the seed's example: two rows swap keys through a third value
        in_one_txn(up, f"UPDATE split_swap.{t} SET a = 3 WHERE a = 1",
                   f"UPDATE split_swap.{t} SET a = 1 WHERE a = 2",
                   f"UPDATE split_swap.{t} SET a = 2 WHERE a = 3")
    # rows keep their primary key and rotate their unique values x -> y -> z -> x
    in_one_txn(up, "UPDATE split_swap.both SET u = CONCAT(u, '#')",
               "UPDATE split_swap.both SET u = ELT(id % 3 + 1, 'x', 'y', 'z'), v = v * 10")
    # a 9-cycle of primary keys: 1 -> 2 -> ... -> 9 -> 1, through a parking value
    in_one_txn(up, "UPDATE split_swap.ring SET a = 100 WHERE a = 9",
               *[f"UPDATE split_swap.ring SET a = {k + 1} WHERE a = {k}" for k in range(8, 0, -1)],
               "UPDATE split_swap.ring SET a = 1 WHERE a = 100")
    run_cli("split-swap")
    assert_consistent(up, down, ["split_swap"])
    assert down.query("SELECT a, b FROM split_swap.pk ORDER BY a") == [(1, 2), (2, 1)]
    assert down.query("SELECT a, b FROM split_swap.uk ORDER BY a") == [(1, 2), (2, 1)]
    assert down.query("SELECT id, u, v FROM split_swap.both ORDER BY id") == [(1, 'y', 10), (2, 'z', 20),
                                                                              (3, 'x', 30)]
    assert down.query("SELECT a, b FROM split_swap.ring ORDER BY a") == [(1, 9)] + [(k, k - 1) for k in range(2, 10)]

    # the same swap split over two transactions of one cycle, and swapped back in a third
    in_one_txn(up, "UPDATE split_swap.pk SET a = 10 WHERE a = 1", "UPDATE split_swap.pk SET a = 1 WHERE a = 2")
    in_one_txn(up, "UPDATE split_swap.pk SET a = 2 WHERE a = 10")
    in_one_txn(up, "UPDATE split_swap.pk SET a = a + 5", "UPDATE split_swap.pk SET a = 7 - a + 5")
    run_cli("split-swap")
    assert_consistent(up, down, ["split_swap"])


def _lock_waits(server) -> int:
    """How many times a row lock made a statement wait on the server (deadlocks included)."""
    return int(server.query("SHOW GLOBAL STATUS LIKE 'Innodb_row_lock_waits'")[0][1])


@pytest.mark.parametrize("workers", [1, 4])
def test_many_rows_exchange_unique_values_across_partitions(mariadb_pair, spark, cdcflow_home, capsys, workers):
    """Thousands of rows rotate their unique-key values in one transaction (and again in
    later ones): every final image's REPLACE may meet a stale row another partition has not
    written yet.  The downstream must still end equal to the upstream."""
    up, down = mariadb_pair
    db = f"split_many_{workers}"
    changefeed_id = f"split-many-{workers}"
    create_changefeed(capsys, up, down, changefeed_id, f"[filter]\nrules = ['{db}.*']\n"
                      f"[sink]\nworker-count = {workers}\nmax-txn-row = 50\n")
    n = 3000
    up.execute(f"CREATE DATABASE {db}")
    up.execute(
        # PK stays, two unique keys rotate
        f"CREATE TABLE {db}.pk_uk (id INT PRIMARY KEY, u INT NOT NULL, w VARCHAR(20) NOT NULL, v INT, "
        "UNIQUE KEY uu (u), UNIQUE KEY uw (w))",
        # no PK: the NOT NULL unique key itself moves (split into DELETE + INSERT)
        f"CREATE TABLE {db}.uk_only (u INT NOT NULL, v INT, UNIQUE KEY uu (u))",
        f"INSERT INTO {db}.pk_uk SELECT seq, seq, CONCAT('w', seq), seq FROM seq_1_to_{n}",
        f"INSERT INTO {db}.uk_only SELECT seq, seq FROM seq_1_to_{n}",
        database=db,
    )
    run_cli(changefeed_id)
    for shift in (1, 7, n // 2):
        in_one_txn(up,
                   f"UPDATE {db}.pk_uk SET u = u + {n}, w = CONCAT('t', w)",
                   f"UPDATE {db}.pk_uk SET u = (u - {n} + {shift} - 1) % {n} + 1, "
                   f"w = CONCAT('w', (SUBSTR(w, 3) + {shift} - 1) % {n} + 1), v = v + 1",
                   f"UPDATE {db}.uk_only SET u = u + {n}",
                   f"UPDATE {db}.uk_only SET u = (u - {n} + {shift} - 1) % {n} + 1",
                   f"DELETE FROM {db}.uk_only WHERE u = {shift}",
                   f"INSERT INTO {db}.uk_only VALUES ({shift}, -{shift})")
    # one statement that moves every key up by one, highest first
    in_one_txn(up, f"UPDATE {db}.uk_only SET u = u + 1 ORDER BY u DESC")
    before = _lock_waits(down)
    run_cli(changefeed_id)
    assert_consistent(up, down, [db])
    # the changes that exchange pk_uk's unique values are written on one connection: cdcflow's own
    # writers never wait on each other's locks over them (sink.conflict_keys; 5 waits before)
    assert _lock_waits(down) == before
    assert down.query(f"SELECT COUNT(*), COUNT(DISTINCT u), MIN(u), MAX(u) FROM {db}.uk_only") == [(n, n, 2, n + 1)]
