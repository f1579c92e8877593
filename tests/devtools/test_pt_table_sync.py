"""pt-table-sync's printed statements read back, without servers."""

from __future__ import annotations

from cdcflow_devtools.pt_table_sync import Change, changed_keys, parse

TAIL = " /*percona-toolkit src_db:s src_tbl:t src_dsn:P=1,h=127.0.0.1,p=...,u=root lock:0 transaction:1*/;"
PRINTED = "\n".join([
    "DELETE FROM `s`.`t` WHERE `a`='777' AND `b`='k9' LIMIT 1" + TAIL,
    "UPDATE `s`.`t` SET `v`='x WHERE \\'y\\' LIMIT', `n`=NULL, `f`=1333.333 WHERE `a`='1' AND `b`='it\\'s' LIMIT 1"
    + TAIL,
    "INSERT INTO `s`.`t`(`a`, `b`, `v`) VALUES ('2000', 'k,1', NULL)" + TAIL,
    "REPLACE INTO `s`.`u`(`id`, `v`) VALUES ('5', '')" + TAIL,
    "",
])


def test_each_verb_names_its_table_key_and_row():
    assert parse(PRINTED) == [
        Change("DELETE", "s.t", {"a": "777", "b": "k9"}, {}),
        Change("UPDATE", "s.t", {"a": "1", "b": "it's"}, {"v": "x WHERE 'y' LIMIT", "n": None, "f": "1333.333"}),
        Change("INSERT", "s.t", {}, {"a": "2000", "b": "k,1", "v": None}),
        Change("REPLACE", "s.u", {}, {"id": "5", "v": ""}),
    ]


def test_changed_keys_take_the_key_from_the_where_or_the_row():
    assert changed_keys(parse(PRINTED), {"s.t": ["a", "b"], "s.u": ["id"]}) == {
        ("s.t", ("777", "k9")), ("s.t", ("1", "it's")), ("s.t", ("2000", "k,1")), ("s.u", ("5",))}
