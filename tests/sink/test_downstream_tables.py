"""sink.downstream_tables: finding the valid index in the downstream's catalogue (a fake
connection answers the query)."""

import pytest
from fake_downstream import FakeConn

from cdcflow.sink.downstream_tables import catalogue_key, key_indexed, table_columns, triggered, valid_key


def _stat(index, col, nullable, sub_part=None, data_type="int", collation=None):
    return index, col, nullable, sub_part, data_type, collation


@pytest.mark.parametrize("rows, key", [
    ([_stat("PRIMARY", "id", "NO"), _stat("u", "code", "NO")], ["id"]),
    ([_stat("PRIMARY", "a", "NO"), _stat("PRIMARY", "b", "NO")], ["a", "b"]),
    ([_stat("u1", "a", "NO"), _stat("u1", "b", "YES"), _stat("u2", "c", "NO"), _stat("u2", "d", "NO")], ["c", "d"]),
    ([_stat("u1", "a", "YES")], None),
    ([_stat("PRIMARY", "b", "NO", 20, "text")], ["b"]),  # a prefix primary key is valid
    ([_stat("u1", "b", "NO", 3, "varchar")], ["b"]),
    ([], None),
])
def test_valid_key(rows, key):
    conn = FakeConn(rows=rows)
    assert valid_key(conn, "db", "t") == key
    assert conn.sql[0][1] == ("db", "t")


def test_catalogue_key_names_the_collations_of_string_key_columns():
    conn = FakeConn(rows=[_stat("PRIMARY", "k", "NO", None, "varchar", "utf8mb4_General_ci"),
                          _stat("PRIMARY", "n", "NO")])
    assert catalogue_key(conn, "db", "t") == (["k", "n"], {"k": "utf8mb4_general_ci"})



def test_key_indexed_needs_a_whole_column_unique_index_on_exactly_the_key():
    keys = {"db.pk": ["id"], "db.pk2": ["a", "b"], "db.uk": ["code"], "db.surrogate": ["code"],
            "db.prefix": ["name"], "db.wider": ["a"], "db.case": ["Id"]}
    conn = FakeConn(rows=[("db", "pk", "PRIMARY", "id", None), ("db", "pk", "u", "v", None),
                          ("db", "pk2", "PRIMARY", "b", None), ("db", "pk2", "PRIMARY", "a", None),
                          ("db", "uk", "PRIMARY", "rowid", None), ("db", "uk", "uc", "code", None),
                          ("db", "surrogate", "PRIMARY", "rowid", None),
                          ("db", "prefix", "PRIMARY", "name", 10),
                          ("db", "wider", "u", "a", None), ("db", "wider", "u", "z", None),
                          ("db", "case", "PRIMARY", "id", None)])
    assert key_indexed(conn, keys) == {"db.pk", "db.pk2", "db.uk", "db.case"}
    # one statement, a branch per table (downstream_tables._rows_of)
    (sql, args), = conn.sql
    assert "NON_UNIQUE = 0" in sql and sql.count(" UNION ALL ") == len(keys) - 1
    assert set(zip(args[::2], args[1::2])) == {tuple(k.split(".")) for k in keys}
    assert key_indexed(FakeConn(), {}) == frozenset()


def test_table_columns_tells_the_generated_from_the_others():
    conn = FakeConn(rows=[("db", "t", "id", 0), ("db", "t", "Name", 0), ("db", "t", "g", 1), ("db", "u", "k", 0)])
    generated, stored = table_columns(conn, [("db", "t"), ("db", "u")])
    assert generated == {"db.t": frozenset({"g"})}
    assert stored == {"db.t": frozenset({"id", "name"}), "db.u": frozenset({"k"})}
    (sql, args), = conn.sql
    assert "information_schema.COLUMNS" in sql and "GENERATED" in sql and args == ["db", "t", "db", "u"]
    assert table_columns(FakeConn(), []) == ({}, {})


def test_triggered_reads_the_triggers_by_the_tables_they_fire_on():
    conn = FakeConn(rows=[("db", "t"), ("db", "t")])
    assert triggered(conn, [("db", "t"), ("db", "u")]) == {"db.t"}
    (sql, args), = conn.sql
    assert "information_schema.TRIGGERS" in sql and sql.count("EVENT_OBJECT_SCHEMA = %s AND EVENT_OBJECT_TABLE = %s") == 2
    assert triggered(FakeConn(), []) == frozenset()
