"""pull_ranges.session_first: the GIL handed over often only while the session starts."""

from __future__ import annotations

import sys
from concurrent.futures import Future

import pytest

from cdcflow.stages.pull_ranges import STARTING_SWITCH_INTERVAL, SparkLater, session_first


def test_short_switch_interval_only_until_the_session_is_up():
    default = sys.getswitchinterval()
    starting: Future = Future()
    with session_first(SparkLater(starting)):
        assert sys.getswitchinterval() == pytest.approx(STARTING_SWITCH_INTERVAL)
        starting.set_result("session")  # up: the default is back while the read goes on
        assert sys.getswitchinterval() == default
    assert sys.getswitchinterval() == default


def test_default_back_when_the_read_ends_first_or_fails():
    default = sys.getswitchinterval()
    try:
        with session_first(SparkLater(Future())):
            raise RuntimeError("the read failed")
    except RuntimeError:
        pass
    assert sys.getswitchinterval() == default
    with session_first(SparkLater("a session already up")):
        assert sys.getswitchinterval() == default
    with session_first(None):  # no Spark for this window
        assert sys.getswitchinterval() == default
