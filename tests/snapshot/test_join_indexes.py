"""The deferred indexes of a table that joined a running changefeed (snapshot/table_join.py),
against a real MariaDB downstream and the metadata store: recorded with the table's copy, built
by the next cycle's table-copy step when a cycle was killed between the copy's end and the
build (or during the build), a failure recorded and named, then retried; and which DDLs of a
joining table run as replays (filter.table_joins.ddl_in_copy)."""

from __future__ import annotations

import pytest

from cdcflow.core.config import ChangefeedConfig
from cdcflow.core.errors import TABLE_COPY_INDEX_FAILED, CdcflowError
from cdcflow.core.uri import parse_sink_uri
from cdcflow.filter.table_joins import ddl_in_copy
from cdcflow.snapshot import table_join
from cdcflow.store import table_copies

pytestmark = pytest.mark.e2e

S, CID = "joinix", "jix"
UK, KW = "UNIQUE KEY `uk` (`u`)", "KEY `kw` (`w`)"
POINT = {"file": "mysql-bin.000001", "pos": 4}


@pytest.fixture
def joined(mariadb_pair, cdcflow_home):
    """joinix.t downstream as a join created it (its primary key only, rows copied) and its copy
    recorded done with uk and kw deferred: what a cycle killed right after `table copy done` leaves."""
    _, down = mariadb_pair
    down.execute(f"DROP DATABASE IF EXISTS {S}", f"CREATE DATABASE {S}",
                 f"CREATE TABLE {S}.t (id INT PRIMARY KEY, u VARCHAR(10), w INT)",
                 f"INSERT INTO {S}.t SELECT seq, CONCAT('u', seq), seq % 3 FROM {S}.seq_1_to_50")
    table_copies.request(CID, [f"{S}.t"], table_copies.ADD)
    table_copies.joined(CID, f"{S}.t", POINT, [], [UK, KW])
    assert table_copies.deferring(CID) == {(S, "t"): None}  # its DDLs run as replays while it copies
    table_copies.copied(CID, f"{S}.t", POINT)
    assert table_copies.deferring(CID) == {(S, "t"): ("mysql-bin.000001", 4)}
    table_copies.done(CID, f"{S}.t")
    assert table_copies.deferring(CID) == {}
    return down


def _step(mariadb_pair) -> tuple[bool, list]:
    """The table-copy step of the next cycle (after its apply), the events it logged."""
    up, down = mariadb_pair
    events = []
    args = [parse_sink_uri(s.uri).connection_args() for s in (up, down)]
    ran = table_join.step(CID, ChangefeedConfig(), *args, "mysql", POINT, 1, lambda what, **kw: events.append((what, kw)))
    return ran, events


def _indexes(down) -> list[str]:
    return sorted({r[0] for r in down.query("SELECT INDEX_NAME FROM information_schema.STATISTICS "
                                            "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = 't'", (S,))})


def _progress() -> dict:
    (copy,) = table_copies.progress(CID)
    return copy


def test_a_cycle_killed_between_the_copys_end_and_the_build_leaves_it_to_the_next(mariadb_pair, joined):
    down = joined
    assert (_progress()["status"], _progress()["indexes"], _progress()["indexes_deferred"]) == \
        ("done", "pending", [UK, KW])
    assert table_copies.busy(CID) and not table_copies.active(CID)  # the step runs for the build alone
    ran, events = _step(mariadb_pair)
    assert ran and ("table indexes", {"table": f"{S}.t", "status": "built"}) in events, events
    assert _indexes(down) == ["PRIMARY", "kw", "uk"]
    assert _progress()["indexes"] == "built" and not table_copies.busy(CID)
    assert _step(mariadb_pair) == (False, [])  # nothing left: no downstream session


def test_a_build_killed_after_one_index_was_added_adds_only_the_other(mariadb_pair, joined):
    down = joined
    table_copies.index_phase(CID, f"{S}.t", table_copies.BUILDING)
    down.execute(f"ALTER TABLE {S}.t ADD {UK}")  # the killed cycle's ALTER, ended after it
    _step(mariadb_pair)
    assert _indexes(down) == ["PRIMARY", "kw", "uk"] and _progress()["indexes"] == "built"


def test_a_build_that_fails_is_recorded_named_and_built_by_a_later_cycle(mariadb_pair, joined):
    down = joined
    down.execute(f"UPDATE {S}.t SET u = 'u1' WHERE id = 2")  # written downstream: uk cannot be built
    with pytest.raises(CdcflowError) as failed:
        _step(mariadb_pair)
    e = failed.value
    text = str(e)
    assert e.code == TABLE_COPY_INDEX_FAILED and not e.retryable, e.code
    for part in (f"changefeed {CID}", f"{S}.t", UK, KW, "Duplicate entry 'u1'", f"resume -c {CID}",
                 f"resync-tables -c {CID} --tables {S}.t"):
        assert part in text, (part, text)
    assert (_progress()["indexes"], _progress()["index_error"]) == ("failed", text)
    assert _indexes(down) == ["PRIMARY"]

    down.execute(f"UPDATE {S}.t SET u = 'u2' WHERE id = 2")
    _step(mariadb_pair)
    assert _indexes(down) == ["PRIMARY", "kw", "uk"] and _progress()["indexes"] == "built"


def test_a_table_dropped_before_its_build_is_recorded_built_without_one(mariadb_pair, joined):
    down = joined
    down.execute(f"DROP TABLE {S}.t")  # the replicated DROP TABLE ran before the build
    _step(mariadb_pair)
    assert _progress()["indexes"] == "built"


B, C = ("app", "b"), ("app", "c")


@pytest.mark.parametrize("tables, start, replay", [
    ([B], ("mysql-bin.000002", 10), True),  # b copies, no last read yet
    ([C], ("mysql-bin.000002", 10), True),  # before c's last read
    ([C], ("mysql-bin.000003", 10), False),  # after it: the build may already have run
    ([C], ("mysql-bin.000003", 4), False),  # exactly at it
    ([B, ("app", "other")], ("mysql-bin.000002", 10), False),  # a RENAME to a table not copying
    ([("app", "other")], ("mysql-bin.000002", 10), False),
    ([], ("mysql-bin.000002", 10), False),
])
def test_the_ddls_of_a_joining_table_before_its_copys_last_read_are_replays(tables, start, replay):
    assert ddl_in_copy({B: None, C: ("mysql-bin.000003", 4)}, tables, start) is replay
