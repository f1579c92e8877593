"""The trigger form's rules that need no server: the ts fields' pattern accepts exactly what
tso.parse reads (Airflow checks the pattern before a run exists, prepare parses), and a conf with
a key the form does not have is refused, naming the known ones."""

from __future__ import annotations

import re

import pytest

from cdcflow.core import tso
from cdcflow.core.errors import CdcflowError
from cdcflow.launch.modes import TRIGGER_KEYS, TS_PATTERN, cycle_request

ACCEPTED = ["450000000000000000", " 450000000000000000 ", "now", "NOW", "2026-11-22", "2026-11-22 10:00",
            "2026-11-22 10:00:00", "2026-11-22T10:00:00", "2026-11-22T10:00:00.123", "2026-11-22T10:00:00Z",
            "2026-11-22 10:00:00+02:00", "2026-11-22T10:00:00.5-05:30"]
REFUSED = ["yesterday-ish", "1 hour ago", "2026-11-22 10", "22/11/2026", "-5", "450000000000000000x", "", "now-1h"]


@pytest.mark.parametrize("text", ACCEPTED)
def test_what_the_pattern_accepts_parses(text):
    assert re.match(TS_PATTERN, text)
    assert tso.parse(text) > 0


@pytest.mark.parametrize("text", REFUSED)
def test_what_the_pattern_refuses(text):
    assert not re.match(TS_PATTERN, text)


def test_an_unknown_key_is_refused_with_the_known_ones():
    with pytest.raises(CdcflowError) as refused:
        cycle_request("cf", {"mode": "backfill", "start-ts": "now"})
    text = str(refused.value)
    assert "unknown trigger parameter 'start-ts' (did you mean start_ts?)" in text
    assert f"a run takes only {', '.join(TRIGGER_KEYS)}" in text and "changefeed cf" in text
    with pytest.raises(CdcflowError, match="unknown trigger parameters 'a', 'b'"):
        cycle_request("cf", {"a": 1, "b": 2})


def test_the_forms_oldest_start_ts_changes_only_with_the_oldest_binlog():
    """The form is part of the DAG: a text that changed with every look would make Airflow store
    a new DAG version at every parse."""
    from cdcflow.launch.oldest_start import in_words

    seen = {"ts": 470000000000000000, "time": tso.to_text(470000000000000000), "binlog": "binlog.000007"}
    first, later = in_words({**seen, "seen": "2026-11-28 01:00:00 UTC"}), in_words({**seen, "seen": "02:00"})
    assert first == later and "470000000000000000" in first and "binlog.000007" in first
    assert in_words({**seen, "binlog": "binlog.000008"}) != first
