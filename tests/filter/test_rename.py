"""Both RENAME TABLE tables of seed 000/003, row by row, with the seed's filter ['test.t*']:
the statements go through the real DDL classifier and the real table filter."""

from __future__ import annotations

import pytest

from cdcflow.ddl.classify import classify
from cdcflow.filter.rename import IGNORE, REPLICATE, RenameRuleError, rename_decision
from cdcflow.filter.table import TableFilter
from cdcflow.stages.filter import ddl_decision

SEED_FILTER = TableFilter(["test.t*"])
ERROR = "error"

SINGLE_TABLE = [  # seed 000, first RENAME table
    ("RENAME TABLE test.t1 TO test.t2", REPLICATE),
    ("RENAME TABLE test.t1 TO ignore.t1", REPLICATE),
    ("RENAME TABLE ignore.t1 TO ignore.t2", IGNORE),
    ("RENAME TABLE test.n1 TO test.t1", ERROR),
    ("RENAME TABLE ignore.t1 TO test.t1", ERROR),
]
MULTI_TABLE = [  # seed 000, second RENAME table
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
