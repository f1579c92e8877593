"""compare sees a table's whole definition: a downstream whose index, collation, default,
generated column or partitioning differs from the upstream's is no faithful copy, unless the
test allows exactly that aspect of exactly that table."""

from __future__ import annotations

import pytest

from cdcflow_devtools.compare import compare

S = "tdef"
BASE = ("id INT NOT NULL, a INT, b VARCHAR(10), c INT DEFAULT 5, g INT AS (a + 1) VIRTUAL, "
        "d DATETIME DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, PRIMARY KEY (id), KEY k (a, b)")

# (the part of BASE the downstream has otherwise, what it has instead, the aspect that differs, words shown)
CASES = [
    ("KEY k (a, b)", "UNIQUE KEY k (a, b)", "indexes", "k: up 'non-unique btree (a, b)', down 'unique btree (a, b)'"),
    ("KEY k (a, b)", "KEY k (b, a)", "indexes", "down 'non-unique btree (b, a)'"),
    ("KEY k (a, b)", "KEY k (a, b(3))", "indexes", "(a, b(3))"),
    ("KEY k (a, b)", "KEY k (a, b), KEY extra (c)", "indexes", "indexes extra only down"),
    ("b VARCHAR(10)", "b VARCHAR(10) COLLATE utf8mb4_bin", "collation",
     "collation b: up 'utf8mb4 utf8mb4_general_ci', down 'utf8mb4 utf8mb4_bin'"),
    ("c INT DEFAULT 5", "c INT DEFAULT 6", "default", "default c: up '5', down '6'"),
    ("(a + 1) VIRTUAL", "(1 + a) VIRTUAL", "generated", "generated g: up '`a` + 1', down '1 + `a`'"),
    ("(a + 1) VIRTUAL", "(a + 1) STORED", "extra", "extra g: up 'virtual generated', down 'stored generated'"),
    (" ON UPDATE CURRENT_TIMESTAMP", "", "extra", "extra d: up 'on update current_timestamp()', down None"),
    (")", ") PARTITION BY HASH (id) PARTITIONS 2", "partitions", "partitions p0 only down: 'HASH `id`'"),
]


ROW = f"INSERT INTO {S}.t (id, a, b, c, d) VALUES (1, 1, 'x', 5, '2000-01-01')"


def _table(old: str = "", new: str = "") -> str:
    text = f"CREATE TABLE {S}.t ({BASE})"
    return text[::-1].replace(old[::-1], new[::-1], 1)[::-1] if old else text  # the last occurrence


@pytest.fixture
def pair(mariadb_pair):
    up, down = mariadb_pair
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {S}", f"CREATE DATABASE {S}")
    yield up, down
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {S}")


def _diffs(up, down, allow=None) -> list[str]:
    with up.connect() as u, down.connect() as d:
        return [str(x) for x in compare(u, d, schemas=[S], allow=allow)]


@pytest.mark.parametrize("old, new, aspect, words", CASES)
def test_each_difference_in_the_definition_is_found_and_only_its_own_allowance_hides_it(pair, old, new, aspect,
                                                                                          words):
    up, down = pair
    up.execute(_table(), ROW)
    down.execute(_table(old, new), ROW)
    diffs = _diffs(up, down)
    assert len(diffs) == 1 and diffs[0].startswith(f"{S}.t: definition differs: ") and words in diffs[0], diffs
    assert _diffs(up, down, allow={f"{S}.*": {aspect}}) == []
    others = {a for _o, _n, a, _w in CASES if a != aspect}
    assert _diffs(up, down, allow={f"{S}.*": others}) == diffs       # another aspect's allowance does not hide it
    assert _diffs(up, down, allow={f"{S}.other": {aspect}}) == diffs  # nor another table's


def test_the_same_definition_is_consistent_whatever_the_auto_increment_counter(pair):
    up, down = pair
    for s in (up, down):
        s.execute(f"CREATE TABLE {S}.t ({BASE.replace('id INT NOT NULL', 'id INT NOT NULL AUTO_INCREMENT')}) "
                  "DEFAULT CHARSET = utf8mb4")
    up.execute(f"INSERT INTO {S}.t (id, a) VALUES (100, 1)", f"DELETE FROM {S}.t WHERE id = 100",
               f"INSERT INTO {S}.t (id, a) VALUES (1, 1)")
    down.execute(f"INSERT INTO {S}.t (id, a) VALUES (1, 1)")
    assert _diffs(up, down) == []


def test_allowed_rows_still_compare_the_definition(pair):
    up, down = pair
    up.execute(_table(), f"INSERT INTO {S}.t (id, a) VALUES (1, 1), (2, 2)")
    down.execute(_table("c INT DEFAULT 5", "c INT DEFAULT 6"), f"INSERT INTO {S}.t (id, a) VALUES (1, 1)")
    assert _diffs(up, down, allow={f"{S}.t": {"rows"}}) == [
        f"{S}.t: definition differs: default c: up '5', down '6'"]
    assert _diffs(up, down, allow={f"{S}.t": {"rows", "default"}}) == []
