"""Generated columns (VIRTUAL and STORED) are never written: the downstream computes them, as
TiCDC's sink leaves them out.  A matrix of virtual/stored x indexed/not x JSON-extracted/
arithmetic, with safe mode off and on; the columns added, modified and dropped by DDL while
rows flow; a value filter naming a generated column; a table without a valid index.  Each
cycle is compared with the upstream (generated values included, as the downstream computes
them)."""

from __future__ import annotations

import itertools

import pytest
from e2e_helpers import assert_consistent, cli_run, create_changefeed, fresh_schema

pytestmark = pytest.mark.e2e

KINDS = ("VIRTUAL", "STORED")
EXPRESSIONS = {"json": ("VARCHAR(32)", "JSON_UNQUOTE(JSON_EXTRACT(j, '$.a'))"), "arith": ("INT", "n * 2 + 1")}
MATRIX = list(itertools.product(KINDS, (False, True), EXPRESSIONS))


def _table(kind: str, indexed: bool, expr: str) -> tuple[str, str]:
    name = f"g_{kind.lower()}_{'ix' if indexed else 'plain'}_{expr}"
    col_type, text = EXPRESSIONS[expr]
    index = ", UNIQUE KEY uk_g (g)" if indexed else ""
    return name, (f"CREATE TABLE {name} (id INT PRIMARY KEY, n INT, j JSON, g {col_type} AS ({text}) {kind}, "
                  f"note VARCHAR(20){index})")


def _rows(up, schema: str, name: str, base: int) -> None:
    """Inserts, updates of a base column, of another column only, of the key, and a delete."""
    ids = range(base + 1, base + 9)
    up.execute(f"INSERT INTO {schema}.{name} (id, n, j, note) VALUES "
               + ", ".join(f"({i}, {i}, '{{\"a\": \"v{i}\"}}', 'n{i}')" for i in ids),
               f"UPDATE {schema}.{name} SET n = n + 1000, j = JSON_SET(j, '$.a', CONCAT('w', id)) "
               f"WHERE id IN ({base + 2}, {base + 3})",
               f"UPDATE {schema}.{name} SET note = 'only note' WHERE id = {base + 4}",
               f"UPDATE {schema}.{name} SET id = id + 1000 WHERE id = {base + 5}",
               f"DELETE FROM {schema}.{name} WHERE id = {base + 6}")


def _fresh(up, down, schema: str) -> str:
    fresh_schema(up, down, schema)
    return schema.replace("_", "-")


def _cycle(capsys, up, down, changefeed_id: str, schema: str) -> None:
    rc, err = cli_run(capsys, changefeed_id)
    assert rc == 0, err
    assert_consistent(up, down, [schema])


@pytest.mark.parametrize("safe_mode", [False, True], ids=["normal", "safe-mode"])
def test_the_matrix_of_generated_columns_replicates(mariadb_pair, spark, cdcflow_home, capsys, safe_mode):
    up, down = mariadb_pair
    schema = f"gen_{'safe' if safe_mode else 'normal'}"
    changefeed_id = _fresh(up, down, schema)
    tables = [_table(*cell) for cell in MATRIX]
    for _, ddl in tables[:4]:  # half exist before the changefeed (its schema read from the catalogue)
        up.execute(ddl, database=schema)
        down.execute(ddl, database=schema)
    create_changefeed(capsys, up, down, changefeed_id,
                      f"[filter]\nrules = ['{schema}.*']\n[sink]\nsafe-mode = {str(safe_mode).lower()}\n")
    for _, ddl in tables[4:]:  # half created by a replicated DDL
        up.execute(ddl, database=schema)
    for name, _ in tables:
        _rows(up, schema, name, 0)
    _cycle(capsys, up, down, changefeed_id, schema)
    for name, _ in tables:
        _rows(up, schema, name, 100)
    _cycle(capsys, up, down, changefeed_id, schema)
    assert down.query(f"SELECT g FROM {schema}.g_stored_ix_arith WHERE id = 2") == [(2005,)]


def test_generated_columns_added_modified_and_dropped(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    schema = "gen_ddl"
    changefeed_id = _fresh(up, down, schema)
    create_changefeed(capsys, up, down, changefeed_id, f"[filter]\nrules = ['{schema}.*']\n")
    up.execute("CREATE TABLE t (id INT PRIMARY KEY, n INT, j JSON, note VARCHAR(20))", database=schema)
    _rows(up, schema, "t", 0)
    up.execute("ALTER TABLE t ADD COLUMN g INT AS (n * 3) VIRTUAL, ADD COLUMN s INT AS (n + 1) STORED",
               database=schema)
    _rows(up, schema, "t", 100)
    _cycle(capsys, up, down, changefeed_id, schema)
    up.execute("ALTER TABLE t MODIFY COLUMN g BIGINT AS (n * 5) VIRTUAL", database=schema)
    _rows(up, schema, "t", 200)
    up.execute("ALTER TABLE t MODIFY COLUMN s BIGINT", database=schema)  # no longer generated: written
    _rows(up, schema, "t", 300)
    up.execute("UPDATE t SET s = 7 WHERE id = 301", database=schema)
    _cycle(capsys, up, down, changefeed_id, schema)
    up.execute("ALTER TABLE t DROP COLUMN g", database=schema)
    _rows(up, schema, "t", 400)
    _cycle(capsys, up, down, changefeed_id, schema)
    assert down.query(f"SELECT s FROM {schema}.t WHERE id IN (301, 401) ORDER BY id") == [(7,), (None,)]


def test_a_value_filter_names_a_generated_column(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    schema = "gen_filter"
    changefeed_id = _fresh(up, down, schema)
    ddl = "CREATE TABLE t (id INT PRIMARY KEY, n INT, g INT AS (n * 10) VIRTUAL)"
    up.execute(ddl, database=schema)
    down.execute(ddl, database=schema)
    create_changefeed(capsys, up, down, changefeed_id,
                      f"[filter]\nrules = ['{schema}.*']\n[[filter.event-filters]]\nmatcher = ['{schema}.t']\n"
                      "ignore-insert-value-expr = \"g > 50\"\n")
    up.execute("INSERT INTO t (id, n) VALUES (1, 1), (2, 5), (3, 6), (4, 9)", database=schema)
    rc, err = cli_run(capsys, changefeed_id)
    assert rc == 0, err
    assert down.query(f"SELECT id, g FROM {schema}.t ORDER BY id") == [(1, 10), (2, 50)]


def test_a_table_without_a_valid_index_keeps_its_generated_column_computed(mariadb_pair, spark, cdcflow_home,
                                                                           capsys):
    up, down = mariadb_pair
    schema = "gen_keyless"
    changefeed_id = _fresh(up, down, schema)
    create_changefeed(capsys, up, down, changefeed_id, f"force-replicate = true\n[filter]\nrules = ['{schema}.*']\n")
    up.execute("CREATE TABLE t (n INT, j JSON, g INT AS (n + 1) STORED, note VARCHAR(20))", database=schema)
    up.execute("INSERT INTO t (n, j, note) VALUES (1, '{}', 'a'), (2, '{}', 'b'), (2, '{}', 'b')",
               "UPDATE t SET n = 3 WHERE note = 'a'", "DELETE FROM t WHERE n = 2 LIMIT 1", database=schema)
    _cycle(capsys, up, down, changefeed_id, schema)
