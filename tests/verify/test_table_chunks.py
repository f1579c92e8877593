"""Chunk boundaries read from a real server: spans of keys for a dense integer key, the key
order walked otherwise; either way the chunks cover every row once."""

from __future__ import annotations

import pytest

from cdcflow.verify.chunks import table_chunks
from cdcflow.verify.comparison import reading_session

pytestmark = pytest.mark.e2e

S = "chunkbounds"


@pytest.fixture
def upstream(mariadb_pair):
    up, _ = mariadb_pair
    up.execute(f"DROP DATABASE IF EXISTS {S}", f"CREATE DATABASE {S}")
    conn = reading_session({"host": "127.0.0.1", "port": up.port, "user": "root", "password": "cdcflow"})
    yield up, conn
    conn.close()


def _rows_per_chunk(up, conn, table: str, key: list[str], size: int, queries: list) -> list[int]:
    real = conn.cursor

    def counting(*args):  # the statements table_chunks sends
        cur = real(*args)
        execute = cur.execute
        cur.execute = lambda sql, args=None: queries.append(sql) or execute(sql, args)
        return cur

    conn.cursor = counting
    try:
        chunks = table_chunks(conn, f"`{S}`.`{table}`", key, size)
    finally:
        conn.cursor = real
    counts = []
    for c in chunks:
        where, args = c.where(key)
        counts.append(up.query(f"SELECT COUNT(*) FROM {S}.{table}" + (f" WHERE {where}" if where else ""),
                               tuple(args))[0][0])
    return counts


@pytest.mark.parametrize("ddl, fill, key, expected, walked", [
    # an auto-increment key from 1: the spans are the walk's chunks exactly, found in two queries
    ("(id BIGINT PRIMARY KEY, v INT)", "SELECT seq, seq FROM {S}.seq_1_to_1000", ["id"], [300, 300, 300, 100], False),
    # negative keys with a few gaps (still dense): spans of 300 keys, each about 300 rows
    ("(id INT PRIMARY KEY, v INT)", "SELECT CAST(seq AS SIGNED) - 501, seq FROM {S}.seq_1_to_1000 WHERE seq % 50 <> 7",
     ["id"], [294, 294, 294, 98], False),
    # every second key: spans would hold half the rows they should, so the index is walked
    ("(id INT PRIMARY KEY, v INT)", "SELECT seq * 2, seq FROM {S}.seq_1_to_1000", ["id"], [300, 300, 300, 100],
     True),
    # sparse keys (one in a thousand): the span would make empty chunks, so the index is walked
    ("(id INT PRIMARY KEY, v INT)", "SELECT seq * 1000, seq FROM {S}.seq_1_to_1000", ["id"], [300, 300, 300, 100],
     True),
    # a string key and a composite one are walked
    ("(code VARCHAR(10) PRIMARY KEY, v INT)", "SELECT CONCAT('c', seq), seq FROM {S}.seq_1_to_1000", ["code"],
     [300, 300, 300, 100], True),
    ("(a INT, b INT, PRIMARY KEY (a, b))", "SELECT seq % 10, seq FROM {S}.seq_1_to_1000", ["a", "b"],
     [300, 300, 300, 100], True),
])
def test_chunks_cover_every_row_once_spans_for_a_dense_integer_key(upstream, ddl, fill, key, expected, walked):
    up, conn = upstream
    up.execute(f"CREATE TABLE {S}.t {ddl}", f"INSERT INTO {S}.t {fill.format(S=S)}", f"ANALYZE TABLE {S}.t")
    queries = []
    assert _rows_per_chunk(up, conn, "t", key, 300, queries) == expected
    assert any("OFFSET" in q for q in queries) == walked, queries


def test_an_empty_table_is_one_chunk(upstream):
    up, conn = upstream
    up.execute(f"CREATE TABLE {S}.e (id INT PRIMARY KEY)")
    assert _rows_per_chunk(up, conn, "e", ["id"], 300, []) == [0]
