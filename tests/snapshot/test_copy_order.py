"""copy_order: which tables a snapshot reads at its point and which after which, from the
upstream's foreign keys (rows as sink.foreign_keys.read_keys gives them)."""

from __future__ import annotations

from cdcflow.snapshot.copy_order import cascade_parents, plan


def key(child: str, parent: str, delete: str = "CASCADE", update: str = "RESTRICT") -> tuple:
    return ("s", child, "s", parent, delete, update)


TABLES = {f"s.{t}" for t in ("gp", "p", "c", "n", "r", "emp", "a", "b", "kl", "kp", "kgp", "plain")}
KEYS = [
    key("p", "gp"), key("c", "p", "RESTRICT", "CASCADE"), key("n", "p", "SET NULL"),  # a chain of three levels
    key("r", "p", "RESTRICT", "NO ACTION"),  # no action changes rows: no order
    key("emp", "emp"),  # keyed to itself
    key("a", "b"), key("b", "a", "SET NULL"),  # a cycle of two
    key("kl", "kp"), key("kp", "kgp", "RESTRICT", "SET DEFAULT"),  # a keyless child, its parent and grandparent
    key("plain", "elsewhere"),  # a parent the snapshot does not copy
]


def test_only_keys_whose_actions_change_rows_between_copied_tables_order_the_copy():
    assert cascade_parents(KEYS, TABLES) == {
        "s.p": {"s.gp"}, "s.c": {"s.p"}, "s.n": {"s.p"}, "s.emp": {"s.emp"}, "s.a": {"s.b"}, "s.b": {"s.a"},
        "s.kl": {"s.kp"}, "s.kp": {"s.kgp"}}


def test_parents_come_first_and_what_no_order_serves_is_read_at_the_point():
    at_point, after = plan(TABLES, {"s.kl"}, cascade_parents(KEYS, TABLES))
    # a table keyed to itself, a cycle, and a keyless child with every parent above it
    assert at_point == {"s.emp", "s.a", "s.b", "s.kl", "s.kp", "s.kgp"}
    # each waits for its direct parents; the grandparent comes first through the parent
    assert after == {"s.p": ["s.gp"], "s.c": ["s.p"], "s.n": ["s.p"]}


def test_a_child_whose_parents_are_read_at_the_point_waits_for_nothing():
    tables = {"s.top", "s.mid", "s.low", "s.kl"}
    keys = [key("mid", "top"), key("low", "mid"), key("kl", "mid")]
    at_point, after = plan(tables, {"s.kl"}, cascade_parents(keys, tables))
    assert at_point == {"s.kl", "s.mid", "s.top"} and after == {}


def test_without_cascading_keys_nothing_changes():
    tables = {"s.x", "s.y", "s.k"}
    assert plan(tables, {"s.k"}, cascade_parents([key("x", "y", "RESTRICT")], tables)) == ({"s.k"}, {})
