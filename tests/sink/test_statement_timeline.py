"""Apply's time with nothing of its own in flight (sink.statement_timeline), told by where it fell."""

from __future__ import annotations

import threading
import time

import pytest

from cdcflow.sink import statement_timeline
from cdcflow.sink.statement_timeline import GAP_KINDS, Timeline


def test_the_time_with_nothing_in_flight_is_told_by_where_it_fell():
    # seconds from the start: two writers' statements overlapping, a DDL, the next segment's
    # statements, the end
    t = Timeline(started=0.0,
                 statements=[(0.070, 0.100), (0.080, 0.120), (0.125, 0.200), (0.210, 0.300), (0.310, 0.400)],
                 ddls=[(0.202, 0.205)])
    s = t.summary(ended=0.450)
    assert (s["statements"], s["ddls"], s["seconds"]) == (5, 1, 0.45)
    assert s["idle_ms_by_kind"] == {"before the first": 70.0, "after a DDL": 5.0, "before a DDL": 2.0,
                                    "between statements": 15.0, "after the last": 50.0}
    assert s["idle_ms"] == pytest.approx(142.0)
    assert list(s["idle_ms_by_kind"]) == list(GAP_KINDS)


def test_a_statement_inside_a_longer_one_leaves_no_gap_and_nothing_sent_is_all_idle():
    t = Timeline(started=0.0, statements=[(0.0, 0.5), (0.1, 0.2), (0.6, 0.7)])
    assert t.summary(ended=0.7)["idle_ms_by_kind"]["between statements"] == pytest.approx(100.0)
    assert t.summary(ended=0.7)["idle_ms"] == pytest.approx(100.0)
    assert Timeline(started=0.0).summary(ended=0.25)["idle_ms_by_kind"]["before the first"] == 250.0


def test_statements_are_timed_only_while_recording_and_from_every_thread():
    assert statement_timeline.active() is None
    with statement_timeline.timed():  # nothing records: nothing kept, nothing fails
        pass
    with statement_timeline.recording() as timeline:
        done = []

        def send():
            with statement_timeline.timed():
                done.append(1)

        threads = [threading.Thread(target=send) for _ in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        with statement_timeline.timed(ddl=True):
            pass
    assert statement_timeline.active() is None
    assert len(timeline.statements) == 4 and len(timeline.ddls) == 1
    assert all(a <= b for a, b in timeline.statements + timeline.ddls)


def _spin(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_each_segment_says_what_it_cost_this_process_in_cpu():
    with statement_timeline.recording() as timeline:
        _spin(0.06)  # the first segment: this process's core busy
        with statement_timeline.timed(ddl=True):
            pass
        time.sleep(0.06)  # the second: it waits, as on the downstream's answers
        s = timeline.summary()
    first, second = s["cpu_s_by_segment"]
    assert first >= 0.05 and second < 0.03
    assert len(s["ddl_ms"]) == 1 and 0 <= s["ddl_ms"][0] < 30  # the DDL's own time, from its send to its answer
    assert Timeline(started=0.0, ddls=[(0.1, 0.25), (0.5, 0.52)]).summary(1.0)["ddl_ms"] == [150.0, 20.0]
    # a window of more segments than SEGMENTS_TOLD leaves them out of its summary (and its log line)
    told = Timeline(cpu=[0.0] * statement_timeline.SEGMENTS_TOLD)
    assert len(told.summary(cpu_ended=1.0)["cpu_s_by_segment"]) == statement_timeline.SEGMENTS_TOLD
    assert "cpu_s_by_segment" not in Timeline(cpu=[0.0] * (statement_timeline.SEGMENTS_TOLD + 1)).summary()
