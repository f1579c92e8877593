"""filter.system_versioning: each row event of a versioned table as a replica writes it, walked over
the table of what the binlog holds (MariaDB 10.11, checked with mariadb-binlog): an UPDATE's
current row and the history row it inserts, a DELETE's end-of-period update, DELETE HISTORY."""

from __future__ import annotations

import json

import pytest

from cdcflow.filter.system_versioning import replica_write

OPEN = {"dt": "2038-01-19 03:14:07.999999"}
PAST = {"dt": "2026-11-28 00:10:24.938679"}
START = {"dt": "2026-11-28 00:10:24.937973"}
IMPLICIT = ("row_start", "row_end")
PK = json.dumps(["id", "row_end"])


def _img(x: int, end, start=START, period=IMPLICIT) -> str:
    return json.dumps({"id": 1, "x": x, period[0]: start, period[1]: end}, separators=(",", ":"))


def _plain(x: int) -> str:
    return json.dumps({"id": 1, "x": x}, separators=(",", ":"))


@pytest.mark.parametrize("op, before, after, expected", [
    ("insert", None, _img(1, OPEN), ("insert", None, _plain(1))),
    ("insert", None, _img(1, PAST), None),  # the history row an UPDATE writes
    ("update", _img(1, OPEN), _img(2, OPEN), ("update", _plain(1), _plain(2))),
    ("update", _img(1, OPEN), _img(1, PAST), ("delete", _plain(1), None)),  # a DELETE
    ("update", _img(1, PAST), _img(1, PAST), None),
    ("delete", _img(1, OPEN), None, ("delete", _plain(1), None)),
    ("delete", _img(1, PAST), None, None),  # DELETE HISTORY
], ids=["insert", "history row", "update", "delete", "history changed", "delete current", "delete history"])
def test_each_binlog_write_of_a_versioned_table(op, before, after, expected):
    got = replica_write(op, before, after, PK, IMPLICIT)
    assert (got if got is None else got[:3]) == expected
    if got is not None:
        assert got[3] == json.dumps(["id"], separators=(",", ":"))


def test_named_and_transaction_precise_periods():
    period = ("S", "E")
    ids = lambda end: json.dumps({"id": 1, "x": 1, "s": 47, "e": end})  # noqa: E731 - column names in any case
    assert replica_write("insert", None, ids((1 << 64) - 1), None, period) == ("insert", None, _plain(1), None)
    assert replica_write("update", ids((1 << 64) - 1), ids(52), None, period)[0] == "delete"
    # MariaDB 11.5+ ends open periods in 2106 on 64-bit servers
    assert replica_write("insert", None, _img(1, {"dt": "2106-02-07 06:28:15.999999"}), None, IMPLICIT)[0] == "insert"
