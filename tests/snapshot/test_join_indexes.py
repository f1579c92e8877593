"""The deferred indexes of a table that joined a running changefeed (snapshot/table_join.py),
against a real MariaDB downstream and the metadata store: recorded with the table's copy, built
by the next cycle's table-copy step when a cycle was killed between the copy's end and the
build (or during the build), a failure recorded and named, then retried; and what a replicated
DDL that touches an index not built yet does (sink/pending_indexes.py): run through the DDL sink
on the real downstream, the same DDLs on an upstream table that has every index, and the
definitions compared whole once the build ran."""

from __future__ import annotations

import pytest

from cdcflow.config.keys import ChangefeedConfig
from cdcflow.core.errors import TABLE_COPY_INDEX_FAILED, CdcflowError
from cdcflow.core.sink_params import SinkOptions
from cdcflow.core.uri import parse_sink_uri
from cdcflow.ddl.classify import classify
from cdcflow.sink.ddl_sink import DdlSink
from cdcflow.snapshot import table_join
from cdcflow.source.binlog import Position
from cdcflow.stages.contracts import DdlEntry
from cdcflow.store import metastore, table_copies

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
    table_copies.copied(CID, f"{S}.t", POINT)
    table_copies.done(CID, f"{S}.t")
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


COMMENTED = "KEY `kc` (`c`) COMMENT 'c'"


@pytest.fixture
def copying(mariadb_pair, cdcflow_home):
    """joinix.t upstream with every index, downstream as a join created it (its primary key only)
    while its copy replays (every chunk copied, the checkpoint not past the last read): uk, kw
    and kc deferred."""
    up, down = mariadb_pair
    for server, indexes in ((up, f", {UK}, {KW}, {COMMENTED}"), (down, "")):
        server.execute(f"DROP DATABASE IF EXISTS {S}", f"CREATE DATABASE {S}",
                       f"CREATE TABLE {S}.t (id INT PRIMARY KEY, u VARCHAR(10), w INT, c INT{indexes})",
                       f"INSERT INTO {S}.t SELECT seq, CONCAT('u', seq), seq % 3, seq FROM {S}.seq_1_to_50")
    metastore.create_feed(CID, 1, POINT)
    table_copies.request(CID, [f"{S}.t"], table_copies.ADD)
    table_copies.joined(CID, f"{S}.t", POINT, [], [UK, KW, COMMENTED])
    table_copies.copied(CID, f"{S}.t", POINT)
    return up, down


def _replicate(mariadb_pair, *queries: str, replay: bool = True) -> list[str]:
    """Each query upstream, then through the DDL sink downstream as a cycle's apply runs it
    (`replay`: as a snapshot's DDLs up to its copy's end run); the outcomes."""
    up, down = mariadb_pair
    sink = DdlSink.open(CID, parse_sink_uri(down.uri), SinkOptions(), lambda what, **kw: None)
    pos = Position(file="mysql-bin.000001", pos=4)
    outcomes = []
    try:
        for ts, query in enumerate(queries, 100):
            up.execute(query)
            info = classify(query, S)
            entry = DdlEntry(commit_ts=ts, query=query, default_schema=S, sql_mode=None, start_pos=pos, end_pos=pos,
                             type=info.type, sub_types=list(info.sub_types), name=info.statement_name,
                             tables=[(t.schema, t.table) for t in info.tables])
            outcomes.append(sink.execute(entry, replay))
    finally:
        sink.close()
    return outcomes


def _definition(server, table: str) -> str:
    return server.query(f"SHOW CREATE TABLE {S}.{table}")[0][1]


def test_an_alter_that_drops_a_pending_index_runs_its_other_parts_and_the_build_skips_the_index(
        mariadb_pair, copying):
    """Run as a replay (a 1091 "can't drop" accepted) the whole ALTER would be taken as applied
    and the column lost; its DROP part is taken out instead, the clause with it."""
    up, down = copying
    outcomes = _replicate(mariadb_pair, f"ALTER TABLE {S}.t DROP INDEX kw, ADD COLUMN x INT",
                          f"DROP INDEX uk ON {S}.t", f"ALTER TABLE {S}.t DROP KEY kc, ALGORITHM=INPLACE")
    assert outcomes[0].startswith("applied (drop of index kw"), outcomes
    assert all(o.startswith("not run downstream: drop of index") for o in outcomes[1:]), outcomes
    assert "x" in [r[0] for r in down.query(f"SHOW COLUMNS FROM {S}.t")]
    assert _progress()["indexes_deferred"] == []
    _step(mariadb_pair)
    assert _progress()["indexes"] == "built"
    assert _definition(down, "t") == _definition(up, "t")


def test_a_renamed_or_hidden_pending_index_is_built_under_its_new_name_and_visibility(mariadb_pair, copying):
    up, down = copying
    outcomes = _replicate(mariadb_pair, f"ALTER TABLE {S}.t RENAME INDEX kw TO kw2, ADD COLUMN x INT",
                          f"ALTER TABLE {S}.t ALTER INDEX kc IGNORED", f"ALTER TABLE {S}.t ALTER INDEX kw2 IGNORED",
                          f"ALTER TABLE {S}.t ALTER INDEX kw2 NOT IGNORED", replay=False)
    assert outcomes[0].startswith("applied (rename of index kw"), outcomes
    assert _progress()["indexes_deferred"] == [UK, "KEY `kw2` (`w`)", COMMENTED + " IGNORED"]
    _step(mariadb_pair)
    assert _definition(down, "t") == _definition(up, "t")


def test_a_drop_of_a_pending_index_in_the_cycle_that_builds_is_not_run(mariadb_pair, copying):
    """Past the copy's last read a DDL is no replay: a DROP INDEX of an index not built yet
    would fail downstream (1091); it only removes the clause, whatever the cycle."""
    up, down = copying
    assert _replicate(mariadb_pair, f"ALTER TABLE {S}.t DROP INDEX kw", replay=False)[0].startswith("not run")
    _step(mariadb_pair)
    assert _definition(down, "t") == _definition(up, "t")


def test_a_pending_index_a_killed_build_added_is_dropped_downstream_as_any(mariadb_pair, copying):
    up, down = copying
    down.execute(f"ALTER TABLE {S}.t ADD {KW}")  # a build killed after its ALTER ran
    table_copies.index_phase(CID, f"{S}.t", table_copies.BUILDING)
    assert _replicate(mariadb_pair, f"ALTER TABLE {S}.t DROP INDEX kw", replay=False)[0].startswith("applied")
    assert _progress()["indexes_deferred"] == [UK, COMMENTED]
    _step(mariadb_pair)
    assert _definition(down, "t") == _definition(up, "t")


def test_a_renamed_table_takes_its_copy_and_pending_indexes_along(mariadb_pair, copying):
    """The build runs on the new name (before, it found no table under the old one, recorded the
    indexes built and the renamed table never got them)."""
    up, down = copying
    _replicate(mariadb_pair, f"RENAME TABLE {S}.t TO {S}.t2", f"ALTER TABLE {S}.t2 DROP INDEX kc, RENAME TO {S}.t3",
               replay=False)
    (copy,) = table_copies.progress(CID)
    assert (copy["table"], copy["indexes_deferred"]) == (f"{S}.t3", [UK, KW])
    _step(mariadb_pair)
    assert table_copies.progress(CID)[0]["indexes"] == "built"
    assert _definition(down, "t3") == _definition(up, "t3")


def test_a_rename_mid_copy_moves_the_chunks_not_copied_and_what_waits_for_them(cdcflow_home):
    """The chunks of a renamed table left to copy read it under its new name; a table whose
    chunks wait for it (copy_order) waits for the new name."""
    def task(table: str, index: int, after=()) -> dict:
        schema, name = table.split(".")
        return {"table": table, "schema": schema, "name": name, "key": ["id"], "chunk": {"index": index},
                "after": list(after)}

    table_copies.request(CID, [f"{S}.p", f"{S}.c"], table_copies.ADD)
    table_copies.joined(CID, f"{S}.p", POINT, [task(f"{S}.p", 0), task(f"{S}.p", 1)], [KW])
    table_copies.joined(CID, f"{S}.c", POINT, [task(f"{S}.c", 0, [f"{S}.p"])])
    table_copies.chunk_done(CID, f"{S}.p", 0, 10, 0.1)
    table_copies.rename_table(CID, f"{S}.p", f"{S}.p2")
    assert sorted((t["table"], t["name"], t["chunk"]["index"], t["after"])
                  for t in table_copies.pending_chunks(CID)) == [
        (f"{S}.c", "c", 0, [f"{S}.p2"]), (f"{S}.p2", "p2", 1, [])]
    assert {p["table"]: (p["chunks_done"], p["chunks_total"], p["indexes_deferred"])
            for p in table_copies.progress(CID)} == {f"{S}.p2": (1, 2, [KW]), f"{S}.c": (0, 1, [])}
