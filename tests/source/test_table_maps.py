"""Table_map events parsed once per distinct definition still decode every row right,
across ALTER TABLEs that change the columns and across tables with the same layout."""

from __future__ import annotations

import json

from cdcflow.core.uri import parse_source_uri
from cdcflow.source import table_maps
from cdcflow.source.binlog import BinlogReader, Position

S = "tm_cache"


def test_rows_decode_with_each_definition_in_force(mariadb_pair):
    up, _ = mariadb_pair
    up.execute(f"DROP DATABASE IF EXISTS {S}", f"CREATE DATABASE {S}",
               f"CREATE TABLE {S}.a (id INT PRIMARY KEY, v VARCHAR(10))",
               f"CREATE TABLE {S}.b (id INT PRIMARY KEY, v VARCHAR(10))")
    start = Position(*up.binlog_head())
    stmts = []
    for i in range(1, 31):  # one transaction per row: one Table_map event per row
        stmts += [f"INSERT INTO {S}.a VALUES ({i}, 'a{i}')", f"INSERT INTO {S}.b VALUES ({i}, 'b{i}')"]
    stmts += [f"ALTER TABLE {S}.a ADD COLUMN w INT NOT NULL DEFAULT 5 FIRST"]
    stmts += [f"INSERT INTO {S}.a (id, v, w) VALUES ({i}, 'x{i}', {i})" for i in range(31, 41)]
    stmts += [f"ALTER TABLE {S}.a DROP COLUMN v", f"UPDATE {S}.a SET w = w + 1 WHERE id = 40"]
    up.execute(*stmts)
    head = Position(*up.binlog_head())
    table_maps._cache.clear()
    events = []
    BinlogReader(parse_source_uri(up.uri), 9191, start, head, prev_ts=1).read(events.append)
    try:
        rows = [(e.table, json.loads(e.before) if e.before else None, json.loads(e.after))
                for e in events if e.op in ("insert", "update")]
        assert rows[:2] == [("a", None, {"id": 1, "v": "a1"}), ("b", None, {"id": 1, "v": "b1"})]
        assert rows[59] == ("b", None, {"id": 30, "v": "b30"})
        assert rows[60] == ("a", None, {"w": 31, "id": 31, "v": "x31"})
        assert rows[-1] == ("a", {"w": 40, "id": 40}, {"w": 41, "id": 40})
        assert len(rows) == 71
        # 71 Table_map events, one parse per distinct definition (a, b, a after each ALTER)
        assert len(table_maps._cache) == 4
    finally:
        up.execute(f"DROP DATABASE {S}")
