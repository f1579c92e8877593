import pytest

from cdcflow.ddl.classify import classify
from cdcflow.filter.cascade_fk import actions_in_ddl, check_ddl
from cdcflow.filter.table import TableFilter


def test_row_changing_actions_are_read_from_the_statement():
    assert actions_in_ddl("CREATE TABLE c (p INT, FOREIGN KEY (p) REFERENCES p (id) ON UPDATE CASCADE "
                          "ON DELETE SET NULL)", "") == ["ON UPDATE CASCADE", "ON DELETE SET NULL"]
    assert actions_in_ddl("ALTER TABLE c ADD FOREIGN KEY (p) REFERENCES p (id) ON DELETE RESTRICT, "
                          "COMMENT 'ON DELETE CASCADE'", "") == []


def test_only_a_replicated_child_is_refused():
    q = "ALTER TABLE c ADD FOREIGN KEY (p) REFERENCES p (id) ON DELETE CASCADE"
    check_ddl(classify(q, "d"), q, "", TableFilter(["d.*", "!d.c"]))
    with pytest.raises(Exception, match="d.c a foreign key ON DELETE CASCADE"):
        check_ddl(classify(q, "d"), q, "", TableFilter(["d.*"]))
