"""ddl.index_edits: the parts of a DDL that drop, rename or hide an index by name, and the
statement without some of them (what sink/pending_indexes.py runs of a DDL that touches an
index a table has not built yet)."""

from __future__ import annotations

import pytest

from cdcflow.ddl.index_edits import (DROP, RENAME, VISIBILITY, IndexPart, index_parts, renamed, with_visibility,
                                     without_parts)


def test_the_parts_that_touch_an_index_by_name():
    query = ("ALTER TABLE s.t RENAME INDEX k TO k2, ADD COLUMN x INT, ALTER INDEX j IGNORED, "
             "ALTER KEY z NOT IGNORED, DROP CONSTRAINT IF EXISTS u, DROP KEY `w``q`, DROP COLUMN y")
    assert index_parts(query, "") == [
        IndexPart(RENAME, "k", new="k2", at=0), IndexPart(VISIBILITY, "j", hidden="IGNORED", at=2),
        IndexPart(VISIBILITY, "z", at=3), IndexPart(DROP, "u", constraint=True, at=4), IndexPart(DROP, "w`q", at=5)]
    assert index_parts("DROP INDEX IF EXISTS k ON s.t", "") == [IndexPart(DROP, "k")]
    assert index_parts("CREATE INDEX k ON s.t (a)", "") == []


@pytest.mark.parametrize("query, gone, rest", [
    ("ALTER TABLE t DROP INDEX k, ADD COLUMN x INT", {"k"}, "ALTER TABLE t ADD COLUMN x INT"),
    ("ALTER TABLE t ADD COLUMN x INT, DROP INDEX k", {"k"}, "ALTER TABLE t ADD COLUMN x INT"),
    # a leading run of parts taken out leaves no comma before the first one kept
    ("ALTER TABLE t DROP INDEX k, DROP INDEX j, ADD c INT, DROP INDEX z", {"k", "j", "z"}, "ALTER TABLE t ADD c INT"),
    ("ALTER TABLE t ADD c INT, DROP INDEX k, DROP INDEX j", {"k", "j"}, "ALTER TABLE t ADD c INT"),
    ("ALTER TABLE t DROP INDEX k, DROP INDEX j", {"k"}, "ALTER TABLE t DROP INDEX j"),
    ("ALTER TABLE t DROP INDEX k, ALGORITHM=INPLACE, LOCK=NONE", {"k"}, None),  # how it runs is nothing to run
    ("ALTER TABLE t DROP INDEX k", {"k"}, None),
    ("DROP INDEX k ON t ALGORITHM=INPLACE", {"k"}, None),
    ("ALTER TABLE t DROP INDEX k", set(), "ALTER TABLE t DROP INDEX k"),
])
def test_a_statement_without_some_of_its_parts(query, gone, rest):
    assert without_parts(query, "", [p for p in index_parts(query, "") if p.index in gone]) == rest


def test_a_kept_clause_renamed_or_hidden_as_show_create_table_prints_it():
    assert renamed("UNIQUE KEY `k` (`k`) COMMENT 'k'", "k2") == "UNIQUE KEY `k2` (`k`) COMMENT 'k'"
    assert with_visibility("KEY `k` (`b`) COMMENT 'x'", "IGNORED") == "KEY `k` (`b`) COMMENT 'x' IGNORED"
    assert with_visibility("KEY `k` (`b`) COMMENT 'x' IGNORED", None) == "KEY `k` (`b`) COMMENT 'x'"
    assert with_visibility("KEY `k` (`b`) IGNORED", "INVISIBLE") == "KEY `k` (`b`) /*!80000 INVISIBLE */"
