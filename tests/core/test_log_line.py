"""cdcflow's structured log lines say the event and the changefeed in words first, the JSON after."""

from __future__ import annotations

import json
import logging

from cdcflow.core import log_line
from cdcflow.config.spec_store import Spec
from cdcflow.stages.cycle import Cycle


def test_words_first_then_the_whole_event_as_json():
    line = log_line.event_line("applied", "demo", run="r1", rows_in=3, at={"file": "binlog.000001"})
    assert line.startswith("applied · changefeed demo · {")
    assert json.loads(line.split(" · ", 2)[2]) == {"changefeed": "demo", "event": "applied", "run": "r1",
                                                   "rows_in": 3, "at": {"file": "binlog.000001"}}
    assert log_line.parse(line) == json.loads(line.split(" · ", 2)[2])


def test_parse_reads_the_event_inside_a_longer_line_and_nothing_else():
    line = log_line.event_line("ddl kept", "a-b_1", run="r", why="x · y [z] {w}")
    framed = f"2026-11-24T13:56:43Z [info     ] {line} [cdcflow] loc=cycle.py:109"
    assert log_line.parse(framed)["why"] == "x · y [z] {w}"
    for other in ("changefeed demo: cycle r1 prepared", '{"event": "applied"}', "applied · changefeed demo · {bad",
                  "applied · changefeed demo · [1]", "other · changefeed demo · " + line.split(" · ", 2)[2]):
        assert log_line.parse(other) is None, other


def test_a_stage_logs_through_it(caplog):
    cycle = Cycle(Spec(id="demo", source_uri="", sink_uri=""), "r1")
    with caplog.at_level(logging.INFO, logger="cdcflow"):
        cycle.log_event("pulled", events=2)
    assert caplog.messages[-1].startswith("pulled · changefeed demo · {")
    assert log_line.parse(caplog.messages[-1]) == {"changefeed": "demo", "event": "pulled", "run": "r1", "events": 2}
