"""Rows are written by the upstream's key, whatever keys the downstream table has: a
reporting replica with an extra or a different unique key, a surrogate key of its own, a
missing secondary index or an extra nullable column ends with the upstream's rows on the
replicated columns (TiCDC's MySQL sink matches rows by the upstream's handle key too)."""

from __future__ import annotations

import pytest
from e2e_helpers import cli_run, create_changefeed, fresh_schema

pytestmark = pytest.mark.e2e

UPSTREAM = "CREATE TABLE {t} (id INT PRIMARY KEY, code VARCHAR(20) NOT NULL, v INT, note VARCHAR(20), KEY k_v (v))"
COLUMNS = "id, code, v, note"
# downstream table -> how it differs from the upstream's
DOWNSTREAM = {
    "extra_unique": "CREATE TABLE {t} (id INT PRIMARY KEY, code VARCHAR(20) NOT NULL, v INT, note VARCHAR(20), "
                    "KEY k_v (v), UNIQUE KEY uk_code (code))",
    "other_primary": "CREATE TABLE {t} (id INT NOT NULL, code VARCHAR(20) NOT NULL PRIMARY KEY, v INT, "
                     "note VARCHAR(20), KEY k_v (v))",
    "surrogate_key": "CREATE TABLE {t} (rid BIGINT AUTO_INCREMENT PRIMARY KEY, id INT NOT NULL, "
                     "code VARCHAR(20) NOT NULL, v INT, note VARCHAR(20), loaded TIMESTAMP NULL)",
    "no_secondary_index": "CREATE TABLE {t} (id INT PRIMARY KEY, code VARCHAR(20) NOT NULL, v INT, "
                          "note VARCHAR(20))",
    "extra_column": "CREATE TABLE {t} (id INT PRIMARY KEY, code VARCHAR(20) NOT NULL, v INT, note VARCHAR(20), "
                    "KEY k_v (v), extra VARCHAR(20) NULL)",
}


def _inserts(up, schema: str, table: str, base: int) -> None:
    up.execute(f"INSERT INTO {schema}.{table} VALUES "
               + ", ".join(f"({base + i}, 'c{base + i}', {i}, 'n')" for i in range(1, 11)))


def _changes(up, schema: str, table: str, base: int) -> None:
    """Changes to rows an earlier cycle wrote: each must find its row downstream."""
    t = f"{schema}.{table}"
    up.execute(f"UPDATE {t} SET v = v + 100 WHERE id = {base + 1}",                        # a plain column
               f"UPDATE {t} SET code = CONCAT('x', code) WHERE id IN ({base + 2}, {base + 3})",  # the unique value
               f"UPDATE {t} SET code = 'swap{base}' WHERE id = {base + 4}",
               f"UPDATE {t} SET code = 'c{base + 4}' WHERE id = {base + 5}",               # takes a freed value
               f"UPDATE {t} SET id = id + 1000 WHERE id = {base + 6}",                     # the upstream key
               f"DELETE FROM {t} WHERE id = {base + 7}")


def _rows(server, schema: str, table: str) -> list[tuple]:
    return server.query(f"SELECT {COLUMNS} FROM {schema}.{table} ORDER BY id")


@pytest.mark.parametrize("safe_mode", [False, True], ids=["normal", "safe-mode"])
def test_downstream_tables_with_keys_of_their_own_end_equal(mariadb_pair, spark, cdcflow_home, capsys, safe_mode):
    up, down = mariadb_pair
    schema = f"dkeys_{'safe' if safe_mode else 'normal'}"
    fresh_schema(up, down, schema)
    for table, ddl in DOWNSTREAM.items():
        up.execute(UPSTREAM.format(t=table), database=schema)
        down.execute(ddl.format(t=table), database=schema)
    changefeed_id = schema.replace("_", "-")
    create_changefeed(capsys, up, down, changefeed_id,
                      f"[filter]\nrules = ['{schema}.*']\n[sink]\nsafe-mode = {str(safe_mode).lower()}\n")
    for step in (lambda t: _inserts(up, schema, t, 0), lambda t: _changes(up, schema, t, 0),
                 lambda t: (_inserts(up, schema, t, 100), _changes(up, schema, t, 100)),  # in one cycle
                 lambda t: _changes(up, schema, t, 1000)):  # the moved keys change again
        for table in DOWNSTREAM:
            step(table)
        rc, err = cli_run(capsys, changefeed_id)
        assert rc == 0, err
        for table in DOWNSTREAM:
            assert _rows(down, schema, table) == _rows(up, schema, table), table


# safe mode's statements, by what the downstream table has beside the upstream's columns
SAFE_UPSTREAM = "CREATE TABLE {t} (id INT PRIMARY KEY, code VARCHAR(20) NOT NULL, v INT, UNIQUE KEY uk_code (code))"
SAFE_DOWNSTREAM = {
    "plain": SAFE_UPSTREAM,
    "own_column": "CREATE TABLE {t} (id INT PRIMARY KEY, code VARCHAR(20) NOT NULL, v INT, "
                  "own VARCHAR(10) NOT NULL DEFAULT 'default', UNIQUE KEY uk_code (code))",
    "with_trigger": SAFE_UPSTREAM,
}


def test_safe_mode_writes_as_replace_what_only_the_downstream_holds(mariadb_pair, spark, cdcflow_home, capsys):
    """In safe mode a row the downstream holds is written over as TiCDC's REPLACE leaves it: a
    column only the downstream has goes back to its default, and the table's DELETE triggers
    fire, as before; a table with exactly the upstream's columns and no trigger ends with the
    same rows (its rows are written in place: tests/sink/test_safe_mode_in_place.py)."""
    up, down = mariadb_pair
    schema = "dkeys_safe_own"
    fresh_schema(up, down, schema)
    for table, ddl in SAFE_DOWNSTREAM.items():
        up.execute(SAFE_UPSTREAM.format(t=table), database=schema)
        down.execute(ddl.format(t=table), database=schema)
    down.execute("CREATE TABLE deleted_log (id INT)",
                 "CREATE TRIGGER log_deletes AFTER DELETE ON with_trigger FOR EACH ROW "
                 "INSERT INTO deleted_log VALUES (OLD.id)", database=schema)
    create_changefeed(capsys, up, down, "dkeys-safe-own",
                      f"[filter]\nrules = ['{schema}.*']\n[sink]\nsafe-mode = true\n")
    for table in SAFE_DOWNSTREAM:
        up.execute(f"INSERT INTO {schema}.{table} VALUES " + ", ".join(f"({i}, 'c{i}', {i})" for i in range(1, 6)))
    rc, err = cli_run(capsys, "dkeys-safe-own")
    assert rc == 0, err
    down.execute(f"UPDATE {schema}.own_column SET own = 'mine'")
    for table in SAFE_DOWNSTREAM:
        up.execute(f"UPDATE {schema}.{table} SET v = v + 10 WHERE id <= 3",
                   f"UPDATE {schema}.{table} SET code = CONCAT('x', code) WHERE id = 4")
    rc, err = cli_run(capsys, "dkeys-safe-own")
    assert rc == 0, err
    for table in SAFE_DOWNSTREAM:
        assert down.query(f"SELECT id, code, v FROM {schema}.{table} ORDER BY id") == \
            up.query(f"SELECT id, code, v FROM {schema}.{table} ORDER BY id"), table
    assert down.query(f"SELECT id, own FROM {schema}.own_column ORDER BY id") == \
        [(1, "default"), (2, "default"), (3, "default"), (4, "default"), (5, "mine")]
    assert sorted(i for (i,) in down.query(f"SELECT id FROM {schema}.deleted_log")) == [1, 2, 3, 4]
