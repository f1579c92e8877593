"""Where a cycle's row steps run (stages.engine): one policy from the changefeed's config, the
engine forced either way, CDCFLOW_ENGINE over every config, and the bounds of each mode."""

from __future__ import annotations

import numpy as np
import pytest

from cdcflow.config.parsing import parse_config
from cdcflow.core.errors import CdcflowError
from cdcflow.source.binlog import Position
from cdcflow.stages.contracts import Segment, Slice
from cdcflow.stages.engine import OLD_RECORD_ROWS, Engine

END = Position("binlog.000001", 4)


def _engine(text: str = "", monkeypatch=None) -> Engine:
    return Engine.of(parse_config(text))


def _seg(lo, rows, image_bytes):
    return Segment(lo=lo, hi=lo + 10, ddl=None, pos_before=None, pos_after=END, rows=rows, image_bytes=image_bytes)


@pytest.fixture(autouse=True)
def _no_override(monkeypatch):
    monkeypatch.delenv("CDCFLOW_ENGINE", raising=False)


def test_auto_reads_a_window_here_up_to_its_bound():
    e = _engine("[cdcflow]\nlocal-max-events = 1000\n")
    assert e.mode == "auto" and e.window_in_process(1000) and not e.window_in_process(1001)
    assert Engine.of(parse_config("")).max_events == 20_000_000  # the default, declared once in the config


def test_auto_writes_segments_here_within_rows_and_image_bytes():
    """Segments not applied yet within local-segment-rows and local-segment-bytes each; a record
    without image bytes (an older barrier's) the old row bound."""
    e = _engine("[cdcflow]\nlocal-segment-bytes = 1000\nlocal-segment-rows = 50000\n")
    segs = [_seg(0, 5, 10), _seg(10, 5, 10), _seg(20, 50_001, 90), _seg(30, 50_000, 600),
            _seg(40, OLD_RECORD_ROWS + 1, 0), _seg(50, 0, 0), _seg(60, 10, 1001), _seg(70, 10, 1000)]
    # 0: applied (hi 10 <= the checkpoint); 2: too many rows; 4: an older record over the old bound;
    # 5: no rows; 6: over the bytes; 3 and 7 fit (each segment is held alone, one read ahead)
    assert e.parts_in_process(segs, checkpoint_ts=10) == [(1, 0), (3, 0), (7, 0)]
    assert _engine("").parts_in_process(segs, checkpoint_ts=10) == [(i, 0) for i in (1, 2, 3, 6, 7)]  # 500,000 and 128 MiB


def test_local_lifts_the_row_bounds_and_keeps_the_memory_bound():
    e = _engine("[cdcflow]\nengine = 'local'\nlocal-max-events = 10\nlocal-segment-rows = 1\n"
                "local-segment-bytes = 1000\n")
    assert e.window_in_process(10**9)
    segs = [_seg(0, 10**7, 900), _seg(10, 5, 1001), _seg(20, 10**6, 1000), _seg(30, 0, 0)]
    # each segment is held alone: 0 and 2 fit the bytes whatever their rows, 1 does not
    assert e.parts_in_process(segs, checkpoint_ts=0) == [(0, 0), (2, 0)]


def test_a_segment_over_the_bounds_is_cut_into_slices_that_fit_at_run_ends():
    """Engine.slices: greedy cuts at the ends of barrier's runs (upto, rows, bytes), never inside a
    run, so a slice is whole transactions; the slices cover the segment, rows and bytes add up."""
    e = _engine("[cdcflow]\nlocal-segment-rows = 100\nlocal-segment-bytes = 1000\n")
    seg = Segment(lo=0, hi=100, ddl=None, pos_before=None, pos_after=END, rows=250, image_bytes=1450)
    runs = [(10, 60, 100), (20, 30, 100), (30, 50, 100), (30, 10, 100), (60, 100, 100), (90, 0, 950)]
    got = e.slices(seg, runs)
    assert got == [Slice(0, 20, 90, 200), Slice(20, 30, 60, 200), Slice(30, 60, 100, 100),
                   Slice(60, 100, 0, 950)]  # (30, ...) twice: one run end, never cut between
    assert (sum(s.rows for s in got), sum(s.image_bytes for s in got)) == (250, 1450)
    seg.slices = got
    assert seg.parts() == got and e.parts_in_process([seg], checkpoint_ts=20) == [(0, 1), (0, 2)]  # (60, 100]: no rows
    # the bytes bound cuts too; a segment that fits, one transaction and Spark are not cut
    assert [s.hi for s in e.slices(seg, [(10, 1, 900), (20, 1, 900), (30, 1, 900)])] == [10, 20, 100]
    small = Segment(lo=0, hi=100, ddl=None, pos_before=None, pos_after=END, rows=100, image_bytes=1000)
    assert e.slices(small, runs) == [] and small.parts() == [Slice(0, 100, 100, 1000)]
    assert e.slices(seg, [(50, 250, 1000)]) == []
    assert _engine("[cdcflow]\nengine = 'spark'\nlocal-segment-rows = 100\n").slices(seg, runs) == []


def test_the_first_part_begins_with_lead_slices_of_whole_transactions():
    """Engine.lead: local-lead-rows, then four times as many, each ending at a transaction's end
    (every row of a commit ts on one side), each cut only where as many rows follow; the rows and
    the images' bytes of each slice exact, the slices covering the part in order."""
    e = _engine("[cdcflow]\nlocal-lead-rows = 3\n")
    assert e.lead_rows == 3 and _engine("").lead_rows == 4_096  # the default, declared once in the config
    # 40 rows in transactions of 2 (commit ts 2, 4, ..., 40), each row's images 10 bytes but the
    # first row's 5
    ts = np.repeat(np.arange(2, 42, 2), 2)
    sizes = np.full(40, 10)
    sizes[0] = 5
    part = Slice(1, 50, 40, 395)
    got = e.lead(part, ts, sizes)
    # 3 rows reach into the second transaction (ts 4): the lead ends after it, 4 rows; the next
    # wants 12 and ends with the transaction of its 12th row (ts 16); the rest runs to the part's end
    assert got == [Slice(1, 4, 4, 35), Slice(4, 16, 12, 120), Slice(16, 50, 24, 240)]
    # rows out of commit order are cut alike; without the stored sizes the bytes are the part's share
    shuffled = np.random.default_rng(7).permutation(40)
    assert e.lead(part, ts[shuffled], sizes[shuffled]) == got
    assert [s.image_bytes for s in e.lead(part, ts, None)] == [39, 118, 237]
    # the second slice is cut only where 12 rows follow it; none is where 3 do not follow the lead
    assert e.lead(Slice(1, 30, 24, 240), ts[:24], None) == [Slice(1, 4, 4, 40), Slice(4, 30, 20, 200)]
    assert e.lead(Slice(1, 6, 6, 60), ts[:6], None) == []
    # one transaction: nothing to cut at; local-lead-rows 0: the part whole
    assert e.lead(Slice(1, 50, 40, 400), np.full(40, 7), None) == []
    assert _engine("[cdcflow]\nlocal-lead-rows = 0\n").lead(part, ts, sizes) == []


def test_spark_runs_every_step_in_spark_tasks():
    e = _engine("[cdcflow]\nengine = 'spark'\n")
    assert not e.window_in_process(0) and e.parts_in_process([_seg(0, 1, 1)], checkpoint_ts=0) == []
    assert e.place(False) == "spark" and e.place(True) == "process"


def test_the_environment_forces_every_changefeed(monkeypatch):
    monkeypatch.setenv("CDCFLOW_ENGINE", "Spark")
    assert _engine("[cdcflow]\nengine = 'local'\n").mode == "spark"
    monkeypatch.setenv("CDCFLOW_ENGINE", "gpu")
    with pytest.raises(CdcflowError, match="CDCFLOW_ENGINE='gpu' names no engine") as e:
        _engine()
    assert "auto, local, spark" in e.value.hint


def test_the_config_refuses_an_unknown_engine():
    with pytest.raises(CdcflowError, match="engine"):
        parse_config("[cdcflow]\nengine = 'cluster'\n")
