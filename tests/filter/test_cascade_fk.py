import pytest

from cdcflow.ddl.classify import classify
from cdcflow.filter.cascade_fk import check_ddl, keys_in_ddl, runs_downstream
from cdcflow.filter.table import TableFilter


def test_row_changing_keys_are_read_from_the_statement_with_their_parents():
    assert keys_in_ddl("CREATE TABLE c (p INT, FOREIGN KEY (p) REFERENCES p (id) ON UPDATE CASCADE "
                       "ON DELETE SET NULL)", "") == [(None, "p", ["ON UPDATE CASCADE", "ON DELETE SET NULL"])]
    assert keys_in_ddl("ALTER TABLE c ADD FOREIGN KEY (p) REFERENCES `o`.`p` (id) ON DELETE NO ACTION "
                       "ON UPDATE CASCADE, ADD FOREIGN KEY (q) REFERENCES q (id) ON DELETE RESTRICT", "") \
        == [("o", "p", ["ON UPDATE CASCADE"])]
    assert keys_in_ddl("ALTER TABLE c ADD FOREIGN KEY (p) REFERENCES p (id) ON DELETE RESTRICT, "
                       "COMMENT 'REFERENCES p ON DELETE CASCADE'", "") == []


def test_only_a_replicated_child_of_a_parent_left_out_is_refused():
    q = "ALTER TABLE c ADD FOREIGN KEY (p) REFERENCES p (id) ON DELETE CASCADE"
    check_ddl(classify(q, "d"), q, "", TableFilter(["d.*"]))  # both replicated: the downstream's key redoes it
    check_ddl(classify(q, "d"), q, "", TableFilter(["d.*", "!d.c"]))  # the child left out
    with pytest.raises(Exception, match="d.c a foreign key ON DELETE CASCADE to d.p, which the filter leaves out"):
        check_ddl(classify(q, "d"), q, "", TableFilter(["d.*", "!d.p"]))
    # a parent in another schema, named or not
    q = "CREATE TABLE c (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES o.p (id) ON UPDATE SET NULL)"
    check_ddl(classify(q, "d"), q, "", TableFilter(["d.*", "o.*"]))
    with pytest.raises(Exception, match="to o.p, which the filter leaves out"):
        check_ddl(classify(q, "d"), q, "", TableFilter(["d.*"]))


def test_foreign_key_ddl_the_downstream_needs_runs_outside_the_allow_list():
    tf = TableFilter(["d.*", "!d.x"])

    def runs(q):
        return runs_downstream(classify(q, "d"), q, "", tf)

    assert runs("ALTER TABLE c ADD CONSTRAINT k FOREIGN KEY (p) REFERENCES p (id) ON DELETE CASCADE")
    assert runs("ALTER TABLE c DROP FOREIGN KEY k")
    assert not runs("ALTER TABLE c ADD FOREIGN KEY (p) REFERENCES p (id) ON DELETE RESTRICT")  # as TiCDC
    assert not runs("ALTER TABLE x DROP FOREIGN KEY k")  # not replicated
    assert not runs("ALTER TABLE c ADD COLUMN z INT")  # allow-listed: the gate decides
