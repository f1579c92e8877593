import bisect
import random
from collections import Counter

from cdcflow.source.binlog import Position
from cdcflow.stages.barrier import build_segments, counts_in_process, counts_in_spark
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


def test_rows_are_counted_per_segment_and_table_with_thousands_of_barriers(spark):
    """A window of 2,500 DDLs: each row lands in the segment (lo, hi] that holds its ts, as
    bisect gives it (a plan with a term per DDL overflowed the JVM's stack from ~500 on)."""
    rnd = random.Random(27)
    his = sorted(rnd.sample(range(1_000, 10_000_000), 2_500))
    row_ts = [his[0] - 1, his[0], his[0] + 1, his[-1], his[-1] + 5, 1]  # the edges of (lo, hi]
    row_ts += [rnd.randrange(0, 10_000_100) for _ in range(20_000)]
    rows = [(ts, "s", f"t{ts % 7}", "é" * (ts % 5) if ts % 3 else None, "x" * (ts % 11)) for ts in row_ts]
    # transactions of many rows over several tables, one on a barrier's ts: counted per (ts, table) first
    rows += [(ts, "s", f"t{i % 3}", None, "ab") for ts in (his[3], his[3] + 1, his[-1] + 9) for i in range(40)]
    df = spark.createDataFrame(rows, "commit_ts bigint, schema string, table string, before string, after string")
    want = Counter((bisect.bisect_left(his, ts), s, t) for ts, s, t, _b, _a in rows)
    size = Counter()  # the images' bytes (UTF-8), a missing image none
    for ts, s, t, b, a in rows:
        size[(bisect.bisect_left(his, ts), s, t)] += len((b or "").encode()) + len(a.encode())
    # the one counting step, in Spark tasks and over the same rows' Arrow batches in this process
    # (here in runs of 10 rows: how a segment may be cut, which changes no total)
    for counted in (counts_in_spark(df, his).totals,
                    counts_in_process(df.toArrow().to_batches(max_chunksize=997), his, 10).totals):
        got = {k: n for k, n, _ in counted}
        assert got == want
        assert {k: b for k, _, b in counted} == size
        assert got[(0, "s", f"t{his[0] % 7}")] >= 1 and got[(len(his), "s", f"t{(his[-1] + 5) % 7}")] >= 1
