"""core.child_calls: calls in child processes give their results in order, raise the
child's own exception here (a CdcflowError with its code and hint), and say which call died
when a child ends without an answer."""

from __future__ import annotations

import os

import pytest

from cdcflow.core import child_calls
from cdcflow.core.errors import SNAPSHOT_LOST_BY_GC, CdcflowError


def _refuse(code: str) -> None:
    raise CdcflowError("the binlog file is gone", code=code, ts=42, hint="start from a snapshot")


def _chatty(n: int) -> int:
    print("a library printing to stdout")  # must not spoil the answer
    return n * 2


def _pid() -> int:
    return os.getpid()


def test_results_come_back_in_order_from_separate_processes():
    assert child_calls.call_all([(int, ("12",)), (str.upper, ("ab",)), (_chatty, (21,))], "a call") == [12, "AB", 42]
    pids = child_calls.call_all([(_pid, ()), (_pid, ())], "a call")
    assert len(set(pids)) == 2 and os.getpid() not in pids


def test_a_childs_error_is_raised_here_as_it_was_raised_there():
    with pytest.raises(CdcflowError) as got:
        child_calls.call_all([(int, ("1",)), (_refuse, (SNAPSHOT_LOST_BY_GC,))], "a call")
    e = got.value
    assert (e.code, e.ts, e.hint, e.message) == (SNAPSHOT_LOST_BY_GC, 42, "start from a snapshot", "the binlog file is gone")
    with pytest.raises(ValueError, match="invalid literal"):
        child_calls.call_all([(int, ("x",))], "a call")


def test_a_child_that_dies_without_an_answer_is_named():
    with pytest.raises(CdcflowError, match=r"the reader 1 ended with exit code 3 before it answered"):
        child_calls.call_all([(int, ("1",)), (os._exit, (3,))], "the reader")
