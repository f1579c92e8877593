"""The filter stage's entry for one DDL event (stages.filter_stage.gate_ddl): SQL mode fallback,
the unclassifiable statement's hint, and operator skips that still evolve the schema."""

from __future__ import annotations

from cdcflow.core.event import Event
from cdcflow.config.spec_store import Spec
from cdcflow.core.sql_mode import TIDB_DEFAULT_SQL_MODE
from cdcflow.ddl.tracker import SchemaTracker
from cdcflow.filter.assembled import Filter
from cdcflow.stages.cycle import Cycle
from cdcflow.stages.filter_stage import gate_ddl

ANSI = 'CREATE TABLE "q1" ("a" INT PRIMARY KEY)'


def _cycle(config: str = "") -> Cycle:
    return Cycle(Spec(id="cf-gate", source_uri="mysql://u@h:1/", sink_uri="mysql://u@h:2/", config_text=config),
                 "run-1")


def _row(query: str, sql_mode: str | None, ts: int = 77) -> Event:
    return Event(commit_ts=ts, seq=0, schema="d", table="", op="ddl", ddl_query=query, ddl_schema="d",
                 sql_mode=sql_mode, start_file="b.1", start_pos=4, end_file="b.1", end_pos=90)


def _entry(cycle, query, sql_mode, tracker=None, skipped=False):
    return gate_ddl(cycle, _row(query, sql_mode), Filter.build(cycle.config), tracker or SchemaTracker(), skipped)


def test_the_binlog_sql_mode_wins_and_the_config_is_the_fallback():
    assert _entry(_cycle(), ANSI, "ANSI_QUOTES").keep is True  # as the upstream ran it
    # no mode recorded: TiCDC's sql-mode key applies (TiCDC's DDL-replication doc's ANSI_QUOTES example)
    cycle = _cycle(f'sql-mode = "{TIDB_DEFAULT_SQL_MODE},ANSI_QUOTES"\n')
    entry = _entry(cycle, ANSI, None)
    assert entry.keep is True and entry.error is None and entry.sql_mode.endswith("ANSI_QUOTES")
    # ... and without it the statement cannot be read: a failing barrier with the exact command
    entry = _entry(_cycle(), ANSI, None)
    assert entry.keep is True and "ANSI_QUOTES" in entry.error.message
    assert "cdcflow changefeed skip-ddl -c cf-gate --commit-ts 77" in entry.error.hint


def test_an_operator_skip_still_evolves_the_tracked_schema():
    tr = SchemaTracker()
    entry = _entry(_cycle(), ANSI, "ANSI_QUOTES", tr, skipped=True)
    assert entry.why == "skipped by operator (skip-ddl)"
    assert entry.keep is True and entry.schema_only is True  # a key appeared: segments split here
    assert tr.current("d", "q1").valid_key() == ["a"]


def test_a_row_change_logged_as_a_statement_stops_unless_its_table_is_filtered_out():
    cycle = _cycle("[filter]\nrules = ['d.*']\n")
    entry = _entry(cycle, "INSERT INTO t VALUES (1)", "")
    assert entry.keep is True and entry.error.code == "CDCFLOW:ErrRowChangeAsStatement"
    assert "INSERT on d.t" in entry.error.message and "binlog_format=ROW" in entry.error.hint
    assert "cdcflow changefeed skip-ddl -c cf-gate --commit-ts 77" in entry.error.hint
    assert "cannot be read" in _entry(cycle, "UPDATE t JOIN u USING (a) SET b = 1", "").error.message
    entry = _entry(cycle, "DELETE FROM other.t", "")
    assert entry.keep is False and entry.error is None and "other.t is filtered out" in entry.why
    assert _entry(cycle, "INSERT INTO t VALUES (1)", "", skipped=True).keep is False  # skip-ddl gets past it
    assert _entry(cycle, "SAVEPOINT a", "").why == "not a DDL"  # harmless: as before
