from cdcflow.source.binlog import Position
from cdcflow.stages.barrier import build_segments
from cdcflow.stages.contracts import DdlEntry, Segment

END = Position("mysql-bin.000002", 900, "0-1-42")


def ddl(ts: int, query: str, start: int, end: int) -> DdlEntry:
    return DdlEntry(commit_ts=ts, query=query, default_schema=None, sql_mode=None,
                    start_pos=Position("mysql-bin.000001", start),
                    end_pos=Position("mysql-bin.000001", end, f"0-1-{end}"))


def test_no_ddl_gives_one_final_segment():
    segs = build_segments(100, [], 500, END)
    assert segs == [Segment(lo=100, hi=500, ddl=None, pos_before=None, pos_after=END)]


def test_empty_window_still_has_its_final_segment():
    segs = build_segments(100, [], 100, END)
    assert [(s.lo, s.hi) for s in segs] == [(100, 100)]
    assert segs[0].pos_after == END


def test_each_ddl_closes_a_segment_and_takes_its_positions():
    a, b = ddl(200, "CREATE TABLE t (id INT PRIMARY KEY)", 10, 20), ddl(300, "ALTER TABLE t ADD c INT", 30, 40)
    segs = build_segments(100, [a, b], 500, END)
    assert [(s.lo, s.hi) for s in segs] == [(100, 200), (200, 300), (300, 500)]
    assert [s.ddl for s in segs] == [a, b, None]
    assert segs[0].pos_before == a.start_pos and segs[0].pos_after == a.end_pos
    assert segs[1].pos_before == b.start_pos and segs[1].pos_after == b.end_pos
    assert segs[2].pos_before is None and segs[2].pos_after == END


def test_ddls_out_of_order_are_sorted_and_bounds_chain():
    ddls = [ddl(ts, f"DDL at {ts}", ts, ts + 1) for ts in (450, 120, 300, 121, 200)]
    segs = build_segments(100, ddls, 1000, END)
    his = [s.hi for s in segs]
    assert his == [120, 121, 200, 300, 450, 1000]
    assert [s.ddl.query for s in segs[:-1]] == [f"DDL at {ts}" for ts in his[:-1]]
    assert segs[0].lo == 100
    for prev, nxt in zip(segs, segs[1:]):
        assert nxt.lo == prev.hi
    assert [s.pos_before.pos for s in segs[:-1]] == his[:-1]
    assert [s.pos_after.pos for s in segs[:-1]] == [h + 1 for h in his[:-1]]
    # the input list is left as it was
    assert [d.commit_ts for d in ddls] == [450, 120, 300, 121, 200]


def test_ddl_at_the_resolved_ts_leaves_an_empty_final_segment():
    d = ddl(500, "DROP TABLE t", 1, 2)
    segs = build_segments(100, [d], 500, END)
    assert [(s.lo, s.hi, s.ddl) for s in segs] == [(100, 500, d), (500, 500, None)]


def test_final_segment_never_ends_below_the_last_barrier():
    d = ddl(700, "DROP TABLE t", 1, 2)
    segs = build_segments(100, [d], 600, END)
    assert (segs[-1].lo, segs[-1].hi) == (700, 700)
