"""A window the cycle's engine reads here (stages.engine) is read with pyarrow in the stage's process (the
rows the driver writes, barrier's counts, filter's DDLs, latest keys and samples); a larger one
with Spark.  Both reads apply one table of what a window drops; here they are held to the same
answers on windows that drop by every rule, from pull's events and from filter's copy."""

from __future__ import annotations

import threading
import time

import pyarrow as pa
import pytest

from cdcflow.config.parsing import parse_config
from cdcflow.core.event import Event
from cdcflow.filter.row_rules import RowRules
from cdcflow.source.binlog import Position
from cdcflow.stages import contracts, filter_stage, rows
from cdcflow.stages.barrier import COUNTED_COLUMNS, COUNTED_SIZES, counts_in_process, counts_in_spark
from cdcflow.stages.read_ahead import ReadAhead
from cdcflow.stages.engine import Engine
from cdcflow.stages.contracts import Segment
from cdcflow.store.events import RunFolder

COLUMNS = ["schema", "table", "commit_ts", "seq", "op", "before", "after", "before_key", "after_key"]


@pytest.fixture(autouse=True)
def _places_by_config(monkeypatch):
    # each test picks the places it compares by the config's engine; `--engine spark` (the
    # CDCFLOW_ENGINE override) would make both sides Spark's
    monkeypatch.delenv("CDCFLOW_ENGINE", raising=False)


class _Cycle:
    def __init__(self, folder: RunFolder, config_text: str):
        self.folder, self.config = folder, parse_config(config_text)
        self.engine = Engine.of(self.config)


def _events() -> list[Event]:
    """Ten transactions of three changes each, a DDL at ts 50, and what each rule drops among them."""
    out = []
    for ts in range(10, 110, 10):
        if ts == 50:
            out.append(Event(commit_ts=ts, seq=0, schema="s", table="t", op="ddl", ddl_query="ALTER TABLE t ADD c INT"))
            continue
        for seq in range(3):
            # the last change of each is an update: both images count in barrier's bytes
            out.append(Event(commit_ts=ts, seq=seq, schema="s", table="t" if seq else "u",
                             op="update" if seq == 2 else "insert",
                             before=f'{{"id": {ts + seq}, "old": true}}' if seq == 2 else None,
                             after=f'{{"id": {ts + seq}}}', after_key=f"{ts + seq}", pk=None if ts == 90 else '["id"]',
                             start_ts=300 if ts == 30 else None, gtid=f"0-1-{ts}" if ts != 70 else None))
    return out


def _window(aborted=(), rolled_back=()) -> contracts.Window:
    p = Position("binlog.000001", 4)
    return contracts.Window(start_ts=0, start_pos=p, head=p, head_tso=200, pulled=contracts.Pulled(
        end_ts=100, end_pos=p, resolved_ts=200, stopped_at_target=False, aborted_ts=list(aborted), events=28,
        transactions=10, rolled_back=list(rolled_back)))


def _folder(tmp_path, window: contracts.Window, keep: tuple[int, int] | None = None) -> RunFolder:
    """The window's events in pull's folder: written, or `keep`, kept in this process's memory."""
    folder = RunFolder(str(tmp_path / "events"), "cf", "run")
    writer = folder.writer("raw", batch_rows=7, keep=keep)  # several row groups, for the ts filter to skip some
    for e in _events():
        writer.add(e)
    writer.close()
    contracts.WINDOW.write(folder, window)
    return folder


def _sorted(table: pa.Table) -> list[tuple]:
    return sorted(tuple(r.values()) for r in table.select(COLUMNS).to_pylist())


def _spark_rows(spark, cycle, lo: int, hi: int) -> list[tuple]:
    from pyspark.sql import functions as F

    kept = rows.kept_rows(spark, cycle).where((F.col("commit_ts") > lo) & (F.col("commit_ts") <= hi))
    return _sorted(kept.select(*COLUMNS).toArrow())


CONFIGS = [
    "",
    "[filter]\nignore-txn-start-ts = [300]\n",
    "[filter]\nignore-txn-commit-ts = [20, 999]\nignore-txn-gtid = ['0-1-90']\n",
]


@pytest.mark.parametrize("config_text", CONFIGS)
@pytest.mark.parametrize("copied", [False, True], ids=["pull's events", "filter's copy"])
def test_both_reads_keep_the_same_rows(spark, tmp_path, config_text, copied):
    window = _window(aborted=[40], rolled_back=[(60, 1, 3), (80, 0, 1)])
    folder = _folder(tmp_path, window)
    cycle = _Cycle(folder, config_text)
    if copied:
        # filter's copy, as Spark writes it, without the key columns (a copy older than them)
        kept = rows.row_events(rows.window_events(spark, cycle, window)).drop("before_key", "after_key")
        kept.write.parquet(folder.path(rows.COPY))
        contracts.ROWS.write(folder, contracts.KeptRows(copied=True))
    else:
        assert not rows.copy_kept(spark, cycle, window, RowRules())  # rules that drop nothing copy nothing
    everything = _spark_rows(spark, cycle, 0, 200)
    # every rule dropped something, and the DDL is no row
    kept_ts = {r[2] for r in everything}
    assert 40 not in kept_ts and 50 not in kept_ts
    assert [r[3] for r in everything if r[2] == 60] == [0] and [r[3] for r in everything if r[2] == 80] == [1, 2]
    if "300" in config_text:
        assert 30 not in kept_ts
    if "0-1-90" in config_text:
        assert not kept_ts & {20, 90} and 70 in kept_ts  # a null gtid is no match
    if copied:
        assert {r[7:] for r in everything} == {(None, None)}
    for spans in ([(0, 200)], [(10, 40)], [(0, 20), (50, 80)], [(60, 60)]):
        here = _sorted(rows.kept_rows_arrow(cycle, spans, COLUMNS).to_table())
        assert here == [r for r in everything if any(lo < r[2] <= hi for lo, hi in spans)], spans
    assert _sorted(rows.kept_rows_arrow(cycle, None, COLUMNS).to_table()) == everything
    # barrier's counts per segment and table, rows and image bytes: pyarrow's a batch at a time
    # (the writer's row groups of 7 events are its batches), Spark's in one job
    his = [25, 50, 75, 90]
    here = counts_in_process(rows.kept_rows_arrow(cycle, None, COUNTED_COLUMNS).to_batches(), his)
    # the same counts from the images' sizes stored beside them, where the files hold them (pull's
    # events; not a copy Spark wrote): what segment_counts reads then, the images left unread
    assert rows.kept_rows_have_image_bytes(cycle) == (not copied)
    if not copied:
        sized = counts_in_process(rows.kept_rows_arrow(cycle, None, COUNTED_SIZES).to_batches(), his)
        assert sorted(sized.totals) == sorted(here.totals) and sized.runs == here.runs
    counted = sorted(here.totals)
    assert counted == sorted(counts_in_spark(rows.kept_rows(spark, cycle), his).totals)
    assert {k[0] for k, _, _ in counted} >= {0, 2, 4} and all(b > 0 for _, _, b in counted)
    # the runs each segment may be cut at (here only): the same rows and bytes, ascending ends in it
    for seg, runs in here.runs.items():
        assert [sum(n for _, n, _ in runs), sum(b for _, _, b in runs)] == [
            sum(n for (s, _, _), n, _ in counted if s == seg), sum(b for (s, _, _), _, b in counted if s == seg)]
        ends = [upto for upto, _, _ in runs]
        assert ends == sorted(ends) and all((his + [10**9])[seg - 1] < e <= (his + [10**9])[seg] if seg else e <= his[0]
                                            for e in ends)


def _segments(his: list[int], counts: list[int]) -> list[Segment]:
    out, lo = [], 0
    for hi, n in zip(his, counts):
        out.append(Segment(lo=lo, hi=hi, ddl=None, pos_before=None, pos_after=Position("binlog.000001", 4), rows=n, image_bytes=n * 10))
        lo = hi
    return out


def test_the_driver_gets_each_picked_segment_whole_and_nothing_else(spark, tmp_path):
    folder = _folder(tmp_path, _window(aborted=[40]))
    cycle = _Cycle(folder, "[cdcflow]\nlocal-segment-rows = 5\n")
    rows.copy_kept(spark, cycle, contracts.WINDOW.read(folder), RowRules())
    his = [20, 35, 50, 70, 90, 200]
    # segment 3 (ts 50-70] is over the driver's bound: Spark writes it, the driver never reads it;
    # segment 0 is below the checkpoint; segment 2 holds no rows (only the aborted transaction)
    segments = _segments(his, [6, 3, 0, 6, 3, 3])
    local = ReadAhead(cycle, segments, checkpoint_ts=20)
    try:
        got = {i: local.get((i, 0)) for i in range(len(segments))}
    finally:
        local.close()
    assert [i for i, table in got.items() if table is not None] == [1, 4, 5]
    for i in (1, 4, 5):
        assert _sorted(got[i].rows) == _spark_rows(spark, cycle, his[i - 1], his[i]) and len(got[i].rows) > 0, i
    assert local.get((1, 0)) is None  # each segment's rows are handed out once, then let go


@pytest.mark.parametrize("config_text", CONFIGS[:2])
def test_filter_reads_the_same_ddls_keys_and_samples_either_way(spark, tmp_path, config_text):
    """Filter's reads of a window (rows.window_map: one step over a batch, then the driver's
    reduction) give the same answers over pyarrow's scan here and in Spark's tasks."""
    window = _window(aborted=[40], rolled_back=[(60, 1, 3)])
    folder = _folder(tmp_path, window)
    cycles = [_Cycle(folder, f"{config_text}\n[cdcflow]\nengine = '{e}'\n") for e in ("spark", "local")]
    ddls = [filter_stage._ddl_events(c, window) for c in cycles]  # read here in both places
    assert ddls[0] == ddls[1] and [e.commit_ts for e in ddls[0]] == [50]
    found = [filter_stage._latest(spark, c, window) for c in cycles]
    latest = [sorted(keys, key=repr) for keys, _seen in found]
    assert latest[0] == latest[1]
    assert (("s", "t", None, 90) in latest[0]) and not any(r[3] == 40 for r in latest[0])  # a null key is a key
    # each table's first and last row change, without the aborted transaction's (ts 40)
    assert found[0][1] == found[1][1] == {("s", "t"): (10, 100), ("s", "u"): (10, 100)}
    samples = [sorted(filter_stage._latest_images(spark, c, window, latest[0]), key=repr) for c in cycles]
    # one image per (table, key, ts): which of the transaction's images is either engine's first
    assert [s[:4] for s in samples[0]] == [s[:4] for s in samples[1]] == sorted(
        ((s, t, ts, pk) for s, t, pk, ts in latest[0]), key=repr)
    every = {(e.schema, e.table, e.commit_ts, e.after) for e in _events()}
    assert all((s, t, ts, image) in every for s, t, ts, _pk, image in samples[0] + samples[1])


@pytest.mark.parametrize("config_text", CONFIGS)
@pytest.mark.parametrize("kept", [False, True], ids=["written", "kept in memory"])
def test_a_parts_rows_read_as_one_table_are_the_scans(tmp_path, config_text, kept):
    """What apply's read-ahead reads of a part (rows.kept_rows_table) is the scan's table, row for
    row and in its order, whatever the spans cut: mid-batch, around the DDL, around the rows a
    rule drops; from a window kept in memory, a batch's rows that are one run are its slice,
    sharing its memory."""
    window = _window(aborted=[40], rolled_back=[(60, 1, 3), (80, 0, 1)])
    folder = _folder(tmp_path, window, keep=(1_000, 1_000_000) if kept else None)
    assert folder.kept("raw") == kept
    contracts.ROWS.write(folder, contracts.KeptRows(copied=False))  # filter's rules dropped no row
    cycle = _Cycle(folder, config_text)
    for spans in ([(0, 200)], [(10, 40)], [(0, 20), (50, 80)], [(60, 60)], [(30, 60)], [(44, 55)], [(100, 300)]):
        table = rows.kept_rows_table(cycle, spans, COLUMNS)
        assert table.equals(rows.kept_rows_arrow(cycle, spans, COLUMNS).to_table()), spans
    if kept:
        # (60, 70]: the ts-70 transaction, rows 2-4 of the third batch of 7 (the DDL is row 12)
        part = rows.kept_rows_table(cycle, [(60, 70)], COLUMNS)
        assert part["commit_ts"].to_pylist() == [70] * 3 and part["after"].num_chunks == 1
        held = folder._kept["raw"][1][2].column("after")
        assert part["after"].chunk(0).buffers()[2].address == held.buffers()[2].address  # its data, not a copy


@pytest.mark.parametrize("config_text", CONFIGS)
def test_a_copy_of_some_tables_is_the_same_written_by_pyarrow_as_by_spark(spark, tmp_path, config_text):
    """Filter's copy through its row rules (rows.copy_kept): written with pyarrow in this process
    for a window the engine reads here, by Spark tasks for one it does not; every field of every
    row alike; keeping no table copies no row."""
    window = _window(aborted=[40], rolled_back=[(60, 1, 3), (80, 0, 1)])
    copies = {}
    for way, engine, tables in (("spark", "spark", {("s", "t")}), ("here", "local", {("s", "t")}),
                                ("none", "local", set())):
        cycle = _Cycle(_folder(tmp_path / way, window), f"{config_text}\n[cdcflow]\nengine = '{engine}'\n")
        assert rows.copy_kept(spark, cycle, window, RowRules(tables=frozenset(tables)))
        # a copy written here stores the images' sizes as pull's events do; Spark's does not
        assert rows.kept_rows_have_image_bytes(cycle) == (way != "spark")
        every = sorted(map(repr, rows.kept_rows(spark, cycle).toArrow().to_pylist()))
        copies[way] = every, _sorted(rows.kept_rows_arrow(cycle, None, COLUMNS).to_table())
    assert copies["spark"] == copies["here"] and copies["none"] == ([], [])
    # rules that turn out to drop no row of the window (a table it does not hold): no copy kept here
    cycle = _Cycle(_folder(tmp_path / "nothing", window), f"{config_text}\n[cdcflow]\nengine = 'local'\n")
    assert not rows.copy_kept(spark, cycle, window, RowRules(ineligible={("s", "absent"): [[0, None]]}))
    assert not cycle.folder.exists(rows.COPY) and not contracts.ROWS.read(cycle.folder).copied
    kept = copies["here"][1]
    assert kept and {r[1] for r in kept} == {"t"} and 40 not in {r[2] for r in kept}  # no u, no aborted
    assert [r[3] for r in kept if r[2] == 60] == []  # t's changes at 60 (seq 1, 2) were rolled back


def test_written_parts_are_let_go_on_the_thread_that_made_them(spark, tmp_path, monkeypatch):
    """apply hands a written part's memory back on the read-ahead's thread, where the part was
    made (the allocator collects a thread's own heap), in turn after the part it is making, and
    not on the stage's thread, which goes on to the DDL meanwhile."""
    from cdcflow.stages import read_ahead

    folder = _folder(tmp_path, _window(aborted=[40]))
    cycle = _Cycle(folder, "[cdcflow]\nlocal-segment-rows = 5\n")
    rows.copy_kept(spark, cycle, contracts.WINDOW.read(folder), RowRules())
    ran = []
    made = []
    monkeypatch.setattr(read_ahead, "let_go", lambda: ran.append(threading.current_thread().name))
    local = ReadAhead(cycle, _segments([20, 35, 50, 70, 90, 200], [6, 3, 0, 6, 3, 3]), checkpoint_ts=20,
                      ahead=lambda seg, part, table: made.append(threading.current_thread().name))
    try:
        assert local.get((1, 0)) is not None
        local.let_go()
        assert local.get((4, 0)) is not None and local.get((5, 0)) is not None
    finally:
        local.close()
    assert len(ran) == 1 and ran[0].startswith("read-ahead") and ran[0] in made, (ran, made)
    assert threading.current_thread().name not in ran
    # asked for while the next part is still being made, then closed at once (the last part of
    # an apply): the part not needed is dropped, the let_go still runs
    slow = ReadAhead(cycle, _segments([20, 35, 50, 70, 90, 200], [6, 3, 0, 6, 3, 3]), checkpoint_ts=20,
                     ahead=lambda seg, part, table: time.sleep(0.2))
    try:
        assert slow.get((1, 0)) is not None  # part (4, 0) is being made now, for 0.2 s
        slow.let_go()
    finally:
        slow.close()
    assert len(ran) == 2, ran
    none = ReadAhead(cycle, [], checkpoint_ts=20)  # nothing read here: nothing to let go, no thread
    none.let_go()
    none.close()


def test_a_parts_writer_shares_are_made_in_turn_before_the_next_part_is_read(spark, tmp_path):
    """The read-ahead hands a part's writers' shares over as the Futures of their making, made on
    its thread one after the other, and reads the next part only after them: a writer starts on
    its share while the next is made, and no later part's making comes between."""
    from concurrent.futures import Future

    from cdcflow.sink.row_sink import WriterInput

    folder = _folder(tmp_path, _window(aborted=[40]))
    cycle = _Cycle(folder, "[cdcflow]\nlocal-segment-rows = 5\n")
    rows.copy_kept(spark, cycle, contracts.WINDOW.read(folder), RowRules())
    done = []

    def share(lo: int, w: int):
        def make():
            done.append(("share", lo, w, threading.current_thread().name))
            return w
        return make

    def ahead(seg, part, table):
        done.append(("read", part.lo, None, threading.current_thread().name))
        return WriterInput(frozenset(), {}, part.lo, [share(part.lo, w) for w in range(3)])

    local = ReadAhead(cycle, _segments([20, 35, 50, 70, 90, 200], [6, 3, 0, 6, 3, 3]), checkpoint_ts=20, ahead=ahead)
    try:
        got = [local.get(p) for p in ((1, 0), (4, 0), (5, 0))]
    finally:
        local.close()
    for part in got:
        assert all(isinstance(f, Future) for f in part.ahead.parts)
        assert [f.result() for f in part.ahead.parts] == [0, 1, 2]
    assert [d[:3] for d in done] == [(kind, lo, w) for lo in (20, 70, 90)
                                      for kind, w in (("read", None), ("share", 0), ("share", 1), ("share", 2))]
    assert {d[3] for d in done} == {done[0][3]} and done[0][3].startswith("read-ahead")
