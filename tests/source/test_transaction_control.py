"""The Query events that steer a transaction, and savepoints undone as the server undoes them."""

from __future__ import annotations

import pytest

from cdcflow.source.transaction_control import Savepoints, kind, savepoint_name


@pytest.mark.parametrize("query, what, name", [
    ("BEGIN", "begin", None), ("START TRANSACTION", "begin", None), ("XA START X'31'", "begin", None),
    ("COMMIT", "commit", None), ("commit work;", "commit", None), ("XA COMMIT X'31'", "commit", None),
    ("XA END X'31'", "inside", None), ("XA PREPARE X'31'", "inside", None),
    ("ROLLBACK", "rollback", None), ("ROLLBACK WORK", "rollback", None), ("XA ROLLBACK X'31'", "rollback", None),
    ("SAVEPOINT `s1`", "savepoint", "s1"), ("savepoint Sp", "savepoint", "sp"), ("SAVEPOINT`a b`", "savepoint", "a b"),
    ("ROLLBACK TO `s1`", "rollback_to", "s1"), ("ROLLBACK WORK TO SAVEPOINT `x``y`", "rollback_to", "x`y"),
    ("rollback  to\nsavepoint q;", "rollback_to", "q"), ("RELEASE SAVEPOINT `r`", "release", "r"),
    ("CREATE TABLE savepoint_log (a INT)", None, None), ("ROLLBACKS", None, None),
])
def test_each_statement_is_classed(query, what, name):
    assert kind(query) == what
    if name is not None:
        assert savepoint_name(query) == name


def test_rollback_to_undoes_rows_after_the_savepoint_and_drops_later_savepoints():
    sp = Savepoints()
    sp.set("a", 1)
    sp.set("b", 3)
    assert sp.rollback_to("b", 5) == (3, 5)
    assert sp.rollback_to("b", 6) == (3, 6)  # b stays where it was set
    assert Savepoints().rollback_to("nothing", 4) is None
    sp = Savepoints()
    sp.set("a", 1)
    sp.set("b", 3)
    assert sp.rollback_to("a", 4) == (1, 4)
    assert sp.rollback_to("b", 6) is None  # gone with the rollback to a
    sp.set("a", 7)  # set again: moves
    assert sp.rollback_to("a", 9) == (7, 9)
    sp.release("a")
    assert sp.rollback_to("a", 10) is None
    sp.set("c", 10)
    assert sp.rollback_to("c", 10) is None  # nothing after it
