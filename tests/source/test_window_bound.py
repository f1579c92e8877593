"""bounded_head: where a window ends when it may hold max-window-bytes of binlog, across files."""

from __future__ import annotations

from cdcflow.source.binlog import Position
from cdcflow.source.binlog_ranges import bounded_head, window_bytes


def test_the_bound_counts_bytes_across_binlog_files(mariadb_pair):
    up, _down = mariadb_pair
    up.execute("DROP DATABASE IF EXISTS wb_src", "CREATE DATABASE wb_src",
               "CREATE TABLE wb_src.t (id INT PRIMARY KEY, pad VARCHAR(100))")
    start = Position(*up.binlog_head())
    up.execute("INSERT INTO wb_src.t VALUES (1, REPEAT('a', 100))", "FLUSH BINARY LOGS",
               "INSERT INTO wb_src.t VALUES (2, REPEAT('b', 100))")
    head = Position(*up.binlog_head())
    assert head.file > start.file
    conn = up.connect()
    try:
        sizes = {r[0]: int(r[1]) for r in up.query("SHOW BINARY LOGS")}
        first = sizes[start.file] - start.pos  # the window's part of the first file
        total = window_bytes(conn, start, head)
        assert total == first + head.pos - 4
        assert bounded_head(conn, start, head, total) is None  # the whole window fits
        assert bounded_head(conn, start, head, 10) == Position(start.file, start.pos + 10)
        assert bounded_head(conn, start, head, first + 7) == Position(head.file, 4 + 7)
        # a bound at a file's end: just past the next file's header, before its first transaction
        assert bounded_head(conn, start, head, first) == Position(head.file, 5)
    finally:
        conn.close()
