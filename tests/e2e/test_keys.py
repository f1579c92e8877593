"""Row keys through the CLI against the real MariaDB pair: a primary key on a column prefix is
a valid index (rows keyed by the full values), and keys a case- or accent-insensitive
collation takes as equal are one row downstream, ending with the upstream's exact bytes."""

from __future__ import annotations

import pytest
from e2e_helpers import assert_consistent, cli_json, create_changefeed

pytestmark = pytest.mark.e2e


def _fresh(db: str, *servers) -> None:
    for s in servers:
        s.execute(f"DROP DATABASE IF EXISTS {db}")


def _run(capsys, changefeed_id: str) -> dict:
    return cli_json(capsys, "changefeed", "run", "-c", changefeed_id)


def _same_bytes(up, down, db: str, table: str) -> None:
    """Every table row for row in its exact bytes (HEX), not as the collation compares them."""
    sql = f"SELECT HEX(k), v FROM {db}.{table} ORDER BY HEX(k)"
    assert down.query(sql) == up.query(sql), table


def test_prefix_keys_are_valid_indexes(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    db = "keys_prefix"
    _fresh(db, up, down)
    create_changefeed(capsys, up, down, "keys-prefix", f"[filter]\nrules = ['{db}.*']\n")
    up.execute(
        f"CREATE DATABASE {db}",
        f"CREATE TABLE {db}.tp (b TEXT, v INT, PRIMARY KEY (b(20)))",
        f"CREATE TABLE {db}.bp (b BLOB, v INT, PRIMARY KEY (b(6)))",
        # a unique prefix index on NOT NULL columns: the full values are unique too
        f"CREATE TABLE {db}.up (a VARCHAR(100) NOT NULL, c INT NOT NULL, v INT, UNIQUE KEY ua (a(3), c))",
        f"INSERT INTO {db}.tp VALUES ('{'x' * 10}1{'x' * 20}', 1), ('{'x' * 10}2{'x' * 20}', 2), ('short', 3)",
        f"INSERT INTO {db}.bp VALUES (X'0102030405', 1), (X'0102030406', 2)",
        f"INSERT INTO {db}.up VALUES ('abcdef', 1, 1), ('abcxyz', 2, 2), ('q', 1, 3)",
    )
    _run(capsys, "keys-prefix")
    assert_consistent(up, down, [db])
    up.execute(
        f"UPDATE {db}.tp SET v = 10 WHERE b = '{'x' * 10}2{'x' * 20}'",
        f"DELETE FROM {db}.tp WHERE b = '{'x' * 10}1{'x' * 20}'",
        f"UPDATE {db}.tp SET b = 'longer and longer and longer' WHERE b = 'short'",
        f"UPDATE {db}.bp SET v = 20 WHERE b = X'0102030406'", f"DELETE FROM {db}.bp WHERE b = X'0102030405'",
        f"INSERT INTO {db}.bp VALUES (X'0102030407', 3)",
        f"UPDATE {db}.up SET v = 20 WHERE a = 'abcxyz'", f"DELETE FROM {db}.up WHERE a = 'abcdef'",
        f"UPDATE {db}.up SET a = 'qrs' WHERE a = 'q'", database=db)
    _run(capsys, "keys-prefix")
    assert_consistent(up, down, [db])
    assert down.query(f"SELECT COUNT(*) FROM {db}.tp") == [(2,)]


# (table, collation, initial keys, statements in one window)
_RESPELLINGS = [
    ("gen", "utf8mb4_general_ci", ["é", "A", "b ", "x", "m"],
     ["UPDATE {t} SET k = 'e', v = v + 1 WHERE k = 'é'", "UPDATE {t} SET k = 'a', v = v + 1 WHERE k = 'A'",
      "UPDATE {t} SET k = 'b', v = v + 1 WHERE k = 'b '", "DELETE FROM {t} WHERE k = 'x'",
      "INSERT INTO {t} VALUES ('X', 9)", "UPDATE {t} SET k = 'M' WHERE k = 'm'", "UPDATE {t} SET k = 'n' WHERE k = 'M'"]),
    ("uca", "utf8mb4_uca1400_ai_ci", ["é", "B", "c ", "y"],
     ["UPDATE {t} SET k = 'e', v = v + 1 WHERE k = 'é'", "UPDATE {t} SET k = 'b', v = v + 1 WHERE k = 'B'",
      "UPDATE {t} SET k = 'c', v = v + 1 WHERE k = 'c '", "DELETE FROM {t} WHERE k = 'y'",
      "INSERT INTO {t} VALUES ('Ý', 9)"]),
    ("lat", "latin1_swedish_ci", ["A", "z"],
     ["UPDATE {t} SET k = 'a', v = v + 1 WHERE k = 'A'", "DELETE FROM {t} WHERE k = 'z'",
      "INSERT INTO {t} VALUES ('Z', 9)"]),
]


@pytest.mark.parametrize("safe", [True, False])
def test_keys_equal_under_the_collation_are_one_row(mariadb_pair, spark, cdcflow_home, capsys, safe):
    up, down = mariadb_pair
    db, changefeed_id = f"keys_coll_{int(safe)}", f"keys-coll-{int(safe)}"
    _fresh(db, up, down)
    create_changefeed(capsys, up, down, changefeed_id,
                      f"[filter]\nrules = ['{db}.*']\n[sink]\nsafe-mode = {str(safe).lower()}\n")
    charset = {"lat": "latin1"}
    up.execute(f"CREATE DATABASE {db}")
    for name, coll, keys, _ in _RESPELLINGS:
        cs = charset.get(name, "utf8mb4")
        up.execute(f"CREATE TABLE {db}.{name} (k VARCHAR(20) CHARACTER SET {cs} COLLATE {coll} PRIMARY KEY, v INT)",
                   # the same under a unique key, and with the collation as the table's default
                   f"CREATE TABLE {db}.{name}_u (k VARCHAR(20) NOT NULL, v INT,"
                   f" UNIQUE KEY uk (k)) DEFAULT CHARSET={cs} COLLATE={coll}")
        for k in keys:
            up.execute(f"INSERT INTO {db}.{name} VALUES ('{k}', 1)", f"INSERT INTO {db}.{name}_u VALUES ('{k}', 1)")
    _run(capsys, changefeed_id)
    assert_consistent(up, down, [db])

    for name, _, _, statements in _RESPELLINGS:
        for t in (name, f"{name}_u"):
            up.execute(*[s.format(t=f"{db}.{t}") for s in statements])
    result = _run(capsys, changefeed_id)
    assert result["apply"]["safe_mode"] is safe
    for name, *_ in _RESPELLINGS:
        for t in (name, f"{name}_u"):
            _same_bytes(up, down, db, t)
    assert_consistent(up, down, [db])
