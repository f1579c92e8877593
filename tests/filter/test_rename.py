"""Both RENAME TABLE tables of TiCDC's DDL-replication doc, row by row, with the seed's filter ['test.t*']:
the statements go through the real DDL classifier and the real table filter."""

from __future__ import annotations

import pytest

from cdcflow.ddl.classify import classify
from cdcflow.ddl.table_def import TableInfo
from cdcflow.ddl.tracker import SchemaTracker
from cdcflow.filter.ddl_gate import decide
from cdcflow.filter.event_filter import EventFilter
from cdcflow.filter.rename import IGNORE, REPLICATE, RenameRuleError, rename_decision
from cdcflow.filter.table import TableFilter
from cdcflow.filter.assembled import ddl_decision

SEED_FILTER = TableFilter(["test.t*"])
ERROR = "error"

SINGLE_TABLE = [  # TiCDC's DDL-replication doc, first RENAME table
    ("RENAME TABLE test.t1 TO test.t2", REPLICATE),
    ("RENAME TABLE test.t1 TO ignore.t1", REPLICATE),
    ("RENAME TABLE ignore.t1 TO ignore.t2", IGNORE),
    ("RENAME TABLE test.n1 TO test.t1", ERROR),
    ("RENAME TABLE ignore.t1 TO test.t1", ERROR),
]
MULTI_TABLE = [  # TiCDC's DDL-replication doc, second RENAME table
    ("RENAME TABLE test.t1 TO test.t2, test.t3 TO test.t4", REPLICATE),
    ("RENAME TABLE test.t1 TO test.ignore1, test.t3 TO test.ignore2", REPLICATE),
    ("RENAME TABLE test.t1 TO ignore.t1, test.t2 TO test.t22;", ERROR),
    ("RENAME TABLE test.t1 TO test.t4, test.t3 TO test.t1, test.t4 TO test.t3;", ERROR),
]


@pytest.mark.parametrize("statement, expected", SINGLE_TABLE + MULTI_TABLE)
def test_seed_rename_tables(statement, expected):
    info = classify(statement, "test")
    if expected == ERROR:
        with pytest.raises(RenameRuleError) as e:
            rename_decision(info.renames, SEED_FILTER)
        assert e.value.retryable is False and e.value.code == "CDCFLOW:ErrSyncRenameTableFailed"
        assert "skip-ddl" in str(e.value)
    else:
        assert rename_decision(info.renames, SEED_FILTER)[0] == expected
        assert ddl_decision(info, SEED_FILTER)[0] is (expected == REPLICATE)


def test_error_messages_name_the_rule_broken():
    with pytest.raises(RenameRuleError, match="old name test.n1 does not match.*new name test.t1 does"):
        rename_decision(classify("RENAME TABLE test.n1 TO test.t1", None).renames, SEED_FILTER)
    with pytest.raises(RenameRuleError, match="new schema ignore does not"):
        rename_decision(classify("RENAME TABLE test.t1 TO ignore.t1, test.t2 TO test.t22", None).renames,
                        SEED_FILTER)
    with pytest.raises(RenameRuleError, match="swaps names"):
        rename_decision(classify("RENAME TABLE test.t1 TO test.t4, test.t3 TO test.t1, test.t4 TO test.t3",
                                 None).renames, SEED_FILTER)


def test_alter_table_rename_follows_the_single_table_rule():
    info = classify("ALTER TABLE n1 RENAME TO t1", "test")
    with pytest.raises(RenameRuleError):
        ddl_decision(info, SEED_FILTER)
    assert ddl_decision(classify("ALTER TABLE t1 RENAME TO t9", "test"), SEED_FILTER)[0] is True


def test_multi_rename_outside_the_filter_is_ignored():
    info = classify("RENAME TABLE ignore.a TO ignore.b, ignore.c TO ignore.d", None)
    assert rename_decision(info.renames, SEED_FILTER)[0] == IGNORE


# -- which statements swap: the clauses replayed in order, each table followed to its last name

def _verdict(statement, tf=SEED_FILTER, tracker=None, force_replicate=False):
    """The DDL gate's verdict on one statement, as the filter stage reaches it: classified,
    applied to the tracked schema, decided."""
    info = classify(statement, "test")
    tracker = tracker or SchemaTracker()
    changes = tracker.apply(info, statement, "", 100)
    return decide(info, statement, 100, changes, tf, EventFilter([], False), force_replicate,
                  ddl_decision(info, tf), tracker.current)


def _tracker(*tables):
    """A tracked schema holding `tables` (schema.table), each with a primary key."""
    tracker = SchemaTracker()
    for name in tables:
        stmt = f"CREATE TABLE {name} (id INT PRIMARY KEY)"
        tracker.apply(classify(stmt, "test"), stmt, "", 1)
    return tracker


@pytest.mark.parametrize("statement", [
    "RENAME TABLE test.t1 TO test.t4, test.t2 TO test.t1, test.t3 TO test.t2",  # a chain: t4 is new
    "RENAME TABLE test.t1 TO test.tx, test.tx TO test.t2",  # one table through a name it leaves again
    "RENAME TABLE test.t1 TO test.tx, test.tx TO test.t1",  # away and back: exchanges nothing
    "RENAME TABLE test.t1 TO test.t2, test.t2 TO test.t3, test.t4 TO test.t1",  # t1 twice, then t4 takes t1
])
def test_a_chain_is_no_swap_and_runs_as_written(statement):
    assert rename_decision(classify(statement, None).renames, SEED_FILTER)[0] == REPLICATE
    verdict = _verdict(statement, force_replicate=True)
    assert verdict.keep and verdict.error is None and verdict.query == statement


@pytest.mark.parametrize("statement, cycle", [
    ("RENAME TABLE test.ta TO test.tmp, test.tb TO test.ta, test.tmp TO test.tb",
     "test.ta ends as test.tb and test.tb as test.ta"),
    ("RENAME TABLE test.t1 TO test.t4, test.t3 TO test.t1, test.t4 TO test.t3",  # TiCDC's DDL-replication doc's row
     "test.t1 ends as test.t3 and test.t3 as test.t1"),
    ("RENAME TABLE test.t1 TO test.tx, test.t2 TO test.t1, test.t3 TO test.t2, test.tx TO test.t3",  # three
     "test.t1 ends as test.t3, test.t3 as test.t2 and test.t2 as test.t1"),
    # the swap passes through a name outside the filter: still a swap of two tables inside it
    ("RENAME TABLE test.t1 TO test.n9, test.t2 TO test.t1, test.n9 TO test.t2",
     "test.t1 ends as test.t2 and test.t2 as test.t1"),
])
def test_a_true_exchange_is_a_swap_naming_its_clauses(statement, cycle):
    renames = classify(statement, None).renames
    with pytest.raises(RenameRuleError, match="swaps names") as e:
        rename_decision(renames, SEED_FILTER)
    assert cycle in e.value.message
    for old, new in renames:  # the clauses of the exchange
        assert f"{old.schema}.{old.table} TO {new.schema}.{new.table}" in e.value.message
    assert "skip-ddl" in e.value.hint


def test_a_swap_only_among_tables_the_filter_leaves_out_fails_nothing():
    swap = "ignore.a TO ignore.tmp, ignore.b TO ignore.a, ignore.tmp TO ignore.b"
    assert rename_decision(classify(f"RENAME TABLE {swap}", None).renames, SEED_FILTER)[0] == IGNORE
    verdict = _verdict(f"RENAME TABLE test.t1 TO test.t2, {swap}", force_replicate=True)
    assert verdict.keep and verdict.error is None
    assert verdict.query == "RENAME TABLE `test`.`t1` TO `test`.`t2`"
    # a table in the filter taking part in the exchange makes it a swap again
    with pytest.raises(RenameRuleError, match="swaps names"):
        rename_decision(classify("RENAME TABLE test.t1 TO ignore.x, ignore.b TO test.t1, ignore.x TO ignore.b",
                                 None).renames, SEED_FILTER)


# -- a multi-table rename partly outside the filter (TiCDC's ddl puller, handleRenameTables)

ISSUE_FILTER = TableFilter(["test.t6*", "test.t7*", "test.t8*"])


def test_clauses_outside_the_filter_are_left_out_of_a_multi_table_rename():
    statement = "RENAME TABLE t7 TO t77, t555 TO t55"
    assert rename_decision(classify(statement, "test").renames, ISSUE_FILTER)[0] == REPLICATE
    verdict = _verdict(statement, ISSUE_FILTER, force_replicate=True)
    assert verdict.keep and verdict.query == "RENAME TABLE `test`.`t7` TO `test`.`t77`"
    assert "test.t555 TO test.t55 is filtered out" in verdict.why
    # the seed's filter, a left-out clause in a schema the filter selects and one in another
    verdict = _verdict("RENAME TABLE test.t1 TO test.t2, test.n1 TO test.n2, ignore.a TO ignore.b",
                       force_replicate=True)
    assert verdict.query == "RENAME TABLE `test`.`t1` TO `test`.`t2`"


def test_a_clause_across_the_filters_edge_still_fails_naming_it():
    with pytest.raises(RenameRuleError, match=r"test\.n1 TO test\.t5: the old name test\.n1 does not match but "
                                              r"the new name test\.t5 does"):
        rename_decision(classify("RENAME TABLE test.t1 TO test.t2, test.n1 TO test.t5", None).renames,
                        SEED_FILTER)
    with pytest.raises(RenameRuleError, match=r"test\.t3 TO ignore\.t3: the new schema ignore does not match"):
        rename_decision(classify("RENAME TABLE test.n1 TO test.n2, test.t3 TO ignore.t3", None).renames,
                        SEED_FILTER)


def test_the_tracked_schema_follows_every_clause_filtered_or_not():
    tracker = _tracker("test.t7", "test.t555")
    verdict = _verdict("RENAME TABLE t7 TO t77, t555 TO t55", ISSUE_FILTER, tracker)
    assert verdict.query == "RENAME TABLE `test`.`t7` TO `test`.`t77`"
    assert tracker.current("test", "t7") is None and tracker.current("test", "t555") is None
    assert isinstance(tracker.current("test", "t77"), TableInfo)
    assert isinstance(tracker.current("test", "t55"), TableInfo)


def test_each_clause_is_decided_on_the_table_it_moves():
    # ta (a primary key) goes through tn to tz; tb (no valid index) then takes tn: tb's clause
    # is left out by the valid-index matrix, ta's two run, and nothing mistakes tb for ta
    tracker = _tracker("test.ta")
    tracker.apply(classify("CREATE TABLE test.tb (id INT)", None), "CREATE TABLE test.tb (id INT)", "", 2)
    verdict = _verdict("RENAME TABLE test.ta TO test.tn, test.tn TO test.tz, test.tb TO test.tn", tracker=tracker)
    assert verdict.error is None and verdict.keep
    assert verdict.query == "RENAME TABLE `test`.`ta` TO `test`.`tn`, `test`.`tn` TO `test`.`tz`"
    assert "test.tb TO test.tn has no valid index" in verdict.why
