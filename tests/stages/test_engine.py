"""Where a cycle's row steps run (stages.engine): one policy from the changefeed's config, the
engine forced either way, CDCFLOW_ENGINE over every config, and the bounds of each mode."""

from __future__ import annotations

import pytest

from cdcflow.core.config import parse_config
from cdcflow.core.errors import CdcflowError
from cdcflow.source.binlog import Position
from cdcflow.stages.contracts import Segment
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
    assert e.mode == "auto" and e.window_here(1000) and not e.window_here(1001)
    assert Engine.of(parse_config("")).max_events == 20_000_000  # the default, declared once in the config


def test_auto_writes_segments_here_within_rows_and_image_bytes():
    """Segments not applied yet within local-segment-rows and local-segment-bytes each; a record
    without image bytes (an older barrier's) the old row bound."""
    e = _engine("[cdcflow]\nlocal-segment-bytes = 1000\nlocal-segment-rows = 50000\n")
    segs = [_seg(0, 5, 10), _seg(10, 5, 10), _seg(20, 50_001, 90), _seg(30, 50_000, 600),
            _seg(40, OLD_RECORD_ROWS + 1, 0), _seg(50, 0, 0), _seg(60, 10, 1001), _seg(70, 10, 1000)]
    # 0: applied (hi 10 <= the checkpoint); 2: too many rows; 4: an older record over the old bound;
    # 5: no rows; 6: over the bytes; 3 and 7 fit (each segment is held alone, one read ahead)
    assert e.segments_here(segs, checkpoint_ts=10) == [1, 3, 7]
    assert _engine("").segments_here(segs, checkpoint_ts=10) == [1, 2, 3, 6, 7]  # 1,000,000 and 256 MiB


def test_local_lifts_the_row_bounds_and_keeps_the_memory_bound():
    e = _engine("[cdcflow]\nengine = 'local'\nlocal-max-events = 10\nlocal-segment-rows = 1\n"
                "local-segment-bytes = 1000\n")
    assert e.window_here(10**9)
    segs = [_seg(0, 10**7, 900), _seg(10, 5, 1001), _seg(20, 10**6, 1000), _seg(30, 0, 0)]
    # each segment is held alone: 0 and 2 fit the bytes whatever their rows, 1 does not
    assert e.segments_here(segs, checkpoint_ts=0) == [0, 2]


def test_spark_runs_every_step_in_spark_tasks():
    e = _engine("[cdcflow]\nengine = 'spark'\n")
    assert not e.window_here(0) and e.segments_here([_seg(0, 1, 1)], checkpoint_ts=0) == []
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
