"""Where a cycle's row steps run (stages.engine): one policy from the changefeed's config, the
engine forced either way, CDCFLOW_ENGINE over every config, and the bounds of each mode."""

from __future__ import annotations

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
