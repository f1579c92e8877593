"""stages.apply's barrier loop over sinks that record what they are asked: which rows and DDLs
reach the downstream, with which replay flag, and where the checkpoint stands meanwhile (the
metadata store is the real one)."""

from __future__ import annotations

import pytest

from cdcflow.core.errors import VALID_INDEX_CHANGED, CdcflowError
from cdcflow.sink.row_sink import Written
from cdcflow.source.binlog import Position
from cdcflow.stages import contracts
from cdcflow.stages.apply import _Barriers
from cdcflow.stages.contracts import DdlEntry, DdlError, Segment
from cdcflow.stages.engine import AUTO, Engine
from cdcflow.store import metastore

CF = "loop"


def pos(n: int) -> Position:
    return Position(file="bin.000001", pos=n)


def seg(lo: int, hi: int, rows: int = 0, ddl: str | None = "ALTER TABLE t ADD c INT", **kw) -> Segment:
    entry = None if ddl is None else DdlEntry(commit_ts=hi, query=ddl, default_schema="db", sql_mode=None,
                                              start_pos=pos(hi * 10), end_pos=pos(hi * 10 + 5), keep=True,
                                              tables=[("db", "t")], **kw)
    return Segment(lo=lo, hi=hi, ddl=entry, pos_before=pos(hi * 10) if entry else None, pos_after=pos(hi * 10 + 5),
                   rows=rows, tables=[("db", "t")] if rows else [])


class Cycle:
    changefeed_id = CF
    engine = Engine(AUTO, 20_000_000, 500_000, 128 << 20)

    def __init__(self):
        self.events = []

    def feed(self):
        return metastore.get_feed(CF)

    def keep_lease(self, stage):
        pass

    def log_event(self, what, **fields):
        self.events.append(what)


class Ddls:
    """Runs nothing; records each DDL with its replay flag and the feed as execute found it."""

    def __init__(self, waits=()):
        self.ran, self.waits = [], list(waits)

    def blockers(self, ddl, replay):
        return self.waits

    def execute(self, ddl, replay, checkpoint):
        metastore.mark_ddl_in_flight(CF, ddl.commit_ts, checkpoint)  # as the DDL sink does
        self.ran.append((ddl.commit_ts, replay, checkpoint))
        return "applied"


class Rows:
    def __init__(self):
        self.wrote = []

    def write_segment(self, rows, tables, lo, hi, count, local, one_task=False):
        self.wrote.append((lo, hi, metastore.get_feed(CF).checkpoint_ts))
        return Written(rows=count, statements=1, workers=1)

    def ddl_ran(self, ddl):
        pass


@pytest.fixture
def feed(cdcflow_home):
    metastore.create_feed(CF, 5, pos(50).to_dict())


def walk(segments, ddls=None, rows=None, dry_run=False, replay_until=0):
    ddls, rows = ddls or Ddls(), rows or Rows()
    window = contracts.Window(start_ts=5, start_pos=pos(50), head=pos(999), head_tso=999, replay_until=replay_until)
    stats = contracts.ApplyResult(safe_mode=True)
    _Barriers(Cycle(), window, ddls, rows, stats, dry_run).run(segments, None, {})
    return ddls, rows, stats


def test_rows_then_the_checkpoint_at_the_barrier_then_the_ddl_then_past_it(feed):
    ddls, rows, stats = walk([seg(5, 10, rows=3), seg(10, 11), seg(11, 12), seg(12, 20, rows=2, ddl=None)])
    # the rows of a segment are written before the checkpoint moves to its barrier
    assert rows.wrote == [(5, 10, 5), (12, 20, 12)]
    # the checkpoint just below the first DDL, and the one past each DDL, go with the next DDL's mark
    assert ddls.ran == [(10, False, (9, pos(100).to_dict())), (11, False, (10, pos(105).to_dict())),
                        (12, False, (11, pos(115).to_dict()))]
    state = metastore.get_feed(CF)
    assert (state.checkpoint_ts, state.checkpoint_pos) == (20, pos(205).to_dict())
    assert (stats.rows_in, stats.rows_written, stats.ddl_applied, stats.changed_tables) == (5, 5, 3, ["db.t"])


def test_a_ddl_marked_in_flight_below_the_checkpoint_is_a_replay(feed):
    metastore.mark_ddl_in_flight(CF, 10, (9, pos(100).to_dict()))
    ddls, rows, _ = walk([seg(5, 10, rows=3), seg(10, 20, ddl=None)])
    assert rows.wrote == [(9, 10, 9)]  # only the rows above the checkpoint
    assert [(ts, replay) for ts, replay, _ in ddls.ran] == [(10, True)]


def test_a_mark_from_before_the_checkpoint_moved_back_is_no_replay(feed):
    metastore.mark_ddl_in_flight(CF, 10)  # then the checkpoint went back to 5 (a rewind): the rows run again
    ddls, _, _ = walk([seg(5, 10, rows=3), seg(10, 20, ddl=None)])
    assert [(ts, replay) for ts, replay, _ in ddls.ran] == [(10, False)]


def test_a_ddl_at_or_below_replay_until_is_a_replay(feed):
    ddls, _, _ = walk([seg(5, 10), seg(10, 12), seg(12, 20, ddl=None)], replay_until=10)
    assert [(ts, replay) for ts, replay, _ in ddls.ran] == [(10, True), (12, False)]


def test_a_ddl_waiting_for_an_index_build_stops_the_loop_just_below_it(feed):
    class Job:
        job_id = 122

        def what(self):
            return "job 122"

    ddls, rows, stats = walk([seg(5, 10, rows=3), seg(10, 20, rows=1, ddl=None)], ddls=Ddls(waits=[Job()]))
    assert ddls.ran == [] and rows.wrote == [(5, 10, 5)]
    assert stats.index_wait == contracts.IndexWait(commit_ts=10, jobs=[122])
    assert metastore.get_feed(CF).checkpoint_ts == 9


def test_a_rule_the_ddl_breaks_fails_at_its_barrier_with_the_checkpoint_below_it(feed):
    broken = seg(5, 10, rows=3, error=DdlError(message="valid index changed", code=VALID_INDEX_CHANGED,
                                               retryable=False, hint="skip it"))
    with pytest.raises(CdcflowError) as e:
        walk([broken, seg(10, 20, ddl=None)])
    assert (e.value.code, e.value.retryable, e.value.ts) == (VALID_INDEX_CHANGED, False, 10)
    assert metastore.get_feed(CF).checkpoint_ts == 9


def test_a_dry_run_plans_every_segment_and_moves_nothing(feed):
    ddls, rows, stats = walk([seg(5, 10, rows=3), seg(10, 20, rows=1, ddl=None)], dry_run=True)
    assert ddls.ran == [] and rows.wrote == [] and metastore.get_feed(CF).checkpoint_ts == 5
    assert [(p.rows, p.ddl and p.ddl.commit_ts) for p in stats.would_apply] == [(3, 10), (1, None)]


def test_the_ddl_that_ran_is_past_whatever_fails_after_it(feed):
    class Lost(Ddls):
        def blockers(self, ddl, replay):
            if ddl.commit_ts == 12:
                raise CdcflowError("ADMIN SHOW DDL JOBS cannot be read")
            return []

    with pytest.raises(CdcflowError):
        walk([seg(5, 10), seg(10, 12), seg(12, 20, ddl=None)], ddls=Lost())
    # the checkpoint past DDL 10 was held for DDL 12's mark: written all the same
    assert metastore.get_feed(CF).checkpoint_ts == 10
