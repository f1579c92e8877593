"""bounded_head: where a window ends when it may hold max-window-bytes of binlog, across files;
spans_of: its part of each file."""

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


def test_the_spans_name_each_binlog_file_of_the_window(mariadb_pair):
    """spans_of: the window's part of each file, from the sizes SHOW BINARY LOGS gives, the first
    from the start's byte, the last to the head's; a window in one file needs no sizes."""
    from cdcflow.source.binlog_ranges import spans_of
    from cdcflow.source.position import binlog_sizes

    up, _down = mariadb_pair
    up.execute("DROP DATABASE IF EXISTS ws_src", "CREATE DATABASE ws_src",
               "CREATE TABLE ws_src.t (id INT PRIMARY KEY, pad VARCHAR(100))")
    start = Position(*up.binlog_head())
    up.execute("INSERT INTO ws_src.t VALUES (1, 'a')", "FLUSH BINARY LOGS", "INSERT INTO ws_src.t VALUES (2, 'b')",
               "FLUSH BINARY LOGS", "INSERT INTO ws_src.t VALUES (3, 'c')")
    head = Position(*up.binlog_head())
    conn = up.connect()
    try:
        sizes = binlog_sizes(conn)
    finally:
        conn.close()
    files = [f for f in sizes if start.file <= f <= head.file]
    assert len(files) == 3 and files[-1] == head.file
    assert spans_of(sizes, start, head) == [(files[0], start.pos, sizes[files[0]]), (files[1], 4, sizes[files[1]]),
                                            (head.file, 4, head.pos)]
    assert sum(hi - lo for _f, lo, hi in spans_of(sizes, start, head)) == \
        sizes[files[0]] - start.pos + sizes[files[1]] - 4 + head.pos - 4
    assert spans_of({}, Position(head.file, 4), head) == [(head.file, 4, head.pos)]
    assert spans_of(sizes, Position(None, None), head) is None
    # a start in a file purged since: the files the server holds, no error (prepare's check refuses the window)
    assert spans_of({"b.000003": 100, "b.000004": 50}, Position("b.000001", 400), Position("b.000004", 20)) == \
        [("b.000003", 4, 100), ("b.000004", 4, 20)]


def test_a_cycles_window_records_its_spans_across_binlog_files(mariadb_pair, cdcflow_home, capsys):
    """prepare records the window's spans (what pull's writer projects the window from) over
    every file it crosses; the cycle then replicates it as any other."""
    from e2e_helpers import assert_consistent, cli_run, create_changefeed

    from cdcflow.launch.in_process import new_run_id
    from cdcflow.source.position import binlog_sizes
    from cdcflow.stages import contracts
    from cdcflow.stages.cycle import Cycle
    from cdcflow.stages.prepare import prepare
    from cdcflow.store import metastore

    up, down = mariadb_pair
    for s in (up, down):
        s.execute("DROP DATABASE IF EXISTS wsp", "CREATE DATABASE wsp",
                  "CREATE TABLE wsp.t (id INT PRIMARY KEY, v VARCHAR(20)) CHARSET latin1")
    create_changefeed(capsys, up, down, "ws-feed")
    start = metastore.get_feed("ws-feed").checkpoint_pos
    up.execute("INSERT INTO wsp.t VALUES (1, 'caf\u00e9')", "FLUSH BINARY LOGS", "UPDATE wsp.t SET v = 'na\u00efve'",
               "INSERT INTO wsp.t VALUES (2, 'x')")
    cycle = Cycle.load("ws-feed", new_run_id())
    assert not prepare(cycle).skip
    window = contracts.WINDOW.read(cycle.folder)
    conn = up.connect()
    try:
        sizes = binlog_sizes(conn)
    finally:
        conn.close()
    assert window.spans == [(start["file"], start["pos"], sizes[start["file"]]), (window.head.file, 4, window.head.pos)]
    metastore.release_lease("ws-feed", cycle.run_id)  # the prepare alone: its cycle ends here
    rc, err = cli_run(capsys, "ws-feed")
    assert rc == 0, err
    assert_consistent(up, down, ["wsp"])
