"""Chunk boundaries and conditions, column comparison and the fix SQL, without servers."""

from __future__ import annotations

import datetime as dt
import decimal

from cdcflow.core.row_codec import encode_image
from cdcflow.verify.catalogue import TablePlan, column_problems
from cdcflow.verify.chunks import Chunk, chunks_from_bounds, next_bound_sql
from cdcflow.verify.fixsql import fix_file, statements
from cdcflow.verify.rowdiff import DIFFERENT, EXTRA, MISSING, keyed_diff, multiset_diff


def test_bounds_make_open_ended_chunks_that_cover_every_key():
    chunks = chunks_from_bounds([{"id": 3}, {"id": 6}])
    assert [(c.index, c.lo, c.hi) for c in chunks] == [(0, None, '{"id":3}'), (1, '{"id":3}', '{"id":6}'),
                                                       (2, '{"id":6}', None)]
    assert chunks[0].where(["id"]) == ("`id` <= %s", [3])
    assert chunks[1].where(["id"]) == ("`id` > %s AND `id` <= %s", [3, 6])
    assert chunks[2].where(["id"]) == ("`id` > %s", [6])
    assert chunks_from_bounds([]) == [Chunk(0)] and Chunk(0).where(["id"]) == ("", [])


def test_a_composite_key_compares_as_a_tuple_with_its_values_kept_exact():
    lo = {"day": dt.date(2024, 1, 2), "code": b"\x00\xff", "amount": decimal.Decimal("1.50")}
    (first, second) = chunks_from_bounds([lo])
    sql, args = second.where(["day", "code", "amount"])
    # the first column's own bound too: MariaDB reads a range for it, not for the row comparison
    assert sql == "`day` >= %s AND (`day`, `code`, `amount`) > (%s, %s, %s)"
    assert args == [dt.date(2024, 1, 2), dt.date(2024, 1, 2), b"\x00\xff", decimal.Decimal("1.50")]
    assert first.where(["day", "code", "amount"]) == ("`day` <= %s AND (`day`, `code`, `amount`) <= (%s, %s, %s)",
                                                      args)


def test_boundaries_are_every_nth_key_in_key_order():
    assert next_bound_sql("`s`.`t`", ["a", "b"], "`a` >= %s", 500) == (
        "SELECT `a`, `b` FROM `s`.`t` WHERE `a` >= %s ORDER BY `a`, `b` LIMIT 1 OFFSET 499")


def test_a_chunk_cut_into_sub_chunks_keeps_its_own_bounds():
    parent = Chunk(7, '{"id":10}', '{"id":40}')
    subs = chunks_from_bounds([{"id": 20}, {"id": 30}], parent)
    assert [(c.lo, c.hi) for c in subs] == [('{"id":10}', '{"id":20}'), ('{"id":20}', '{"id":30}'),
                                            ('{"id":30}', '{"id":40}')]


def test_columns_missing_or_of_another_type_are_named():
    up = {"id": "int(11)", "v": "varchar(20)", "d": "decimal(10,2)"}
    down = {"ID": "int", "d": "decimal(12,2)", "x": "int(11)"}
    assert column_problems(up, down) == [
        {"column": "v", "problem": "missing downstream", "upstream": "varchar(20)", "downstream": None},
        {"column": "d", "problem": "different type", "upstream": "decimal(10,2)", "downstream": "decimal(12,2)"},
        {"column": "x", "problem": "extra downstream", "upstream": None, "downstream": "int(11)"},
    ]


def _plan(key):
    types = {"id": "int(11)", "v": "varchar(10)", "ts": "timestamp(6)"}
    return TablePlan("s", "t", types, dict(types), ["id", "v", "ts"], key)


def _row(id_, v, ts=None):
    values = {"id": id_, "v": v, "ts": ts}
    return values, (str(id_), v, None if ts is None else str(ts))


def test_keyed_rows_are_matched_by_key_and_fixed_with_replace_and_delete():
    plan = _plan(["id"])
    up = [_row(1, "a"), _row(2, "it's", dt.datetime(2024, 1, 1, 12, 0, 0, 5)), _row(3, "c")]
    down = [_row(1, "a"), _row(2, "b"), _row(4, None)]
    diffs = keyed_diff(plan.name, plan.columns, plan.key, up, down, lambda v: encode_image({"id": v["id"]}))
    assert [(d["kind"], d["key"]) for d in diffs] == [
        (DIFFERENT, {"id": "2"}), (MISSING, {"id": "3"}), (EXTRA, {"id": "4"})]
    assert diffs[0]["columns"] == ["v", "ts"]
    assert statements(plan, diffs) == [
        "REPLACE INTO `s`.`t` (`id`, `v`, `ts`) VALUES (2, 'it\\'s', '2024-01-01 12:00:00.000005');",
        "REPLACE INTO `s`.`t` (`id`, `v`, `ts`) VALUES (3, 'c', NULL);",
        "DELETE FROM `s`.`t` WHERE `id` = 4 LIMIT 1;",
    ]


def test_a_keyless_table_is_a_multiset_fixed_one_copy_at_a_time():
    plan = _plan(None)
    up = [_row(1, "x"), _row(1, "x"), _row(1, "x")]
    down = [_row(1, "x"), _row(1, "X"), _row(1, None)]
    diffs = multiset_diff(plan.name, plan.columns, up, down)
    assert [(d["kind"], d["key"]["v"]) for d in diffs] == [(MISSING, "x"), (MISSING, "x"), (EXTRA, "X"),
                                                           (EXTRA, None)]
    fix = statements(plan, diffs)
    assert fix[:2] == ["INSERT INTO `s`.`t` (`id`, `v`, `ts`) VALUES (1, 'x', NULL);"] * 2
    # byte for byte (the text, hex-encoded): a _ci column's 'X' must not delete an 'x'
    assert fix[2] == ("DELETE FROM `s`.`t` WHERE HEX(CONVERT(`id` USING utf8mb4)) <=> '31' AND "
                      "HEX(CONVERT(`v` USING utf8mb4)) <=> '58' AND HEX(CONVERT(`ts` USING utf8mb4)) <=> NULL LIMIT 1;")
    assert "HEX(CONVERT(`v` USING utf8mb4)) <=> NULL" in fix[3]


def test_the_fix_file_runs_in_the_sinks_session():
    text = fix_file([(_plan(["id"]), [])])
    lines = text.splitlines()
    assert lines[0].startswith("--") and "SET SESSION time_zone = '+00:00';" in lines
    assert not any(line.startswith(("REPLACE", "DELETE", "INSERT")) for line in lines)
