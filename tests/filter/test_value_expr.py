"""The four value-expression filters, evaluated in Spark as TiCDC evaluates them (NULL, strings
compared byte by byte, MySQL's implicit casts), and their checks at create.  Every column type
against every kind of literal: test_value_expr_matrix."""

from __future__ import annotations

import datetime as dt
import decimal
import itertools
import re
from pathlib import Path

import pyarrow as pa
import pytest

from cdcflow.config.parsing import parse_config
from cdcflow.core.errors import CdcflowError, ConfigError
from cdcflow.core.row_codec import TemporalText, encode_image
from cdcflow.ddl.table_def import TableInfo
from cdcflow.filter import mysql_eval as m
from cdcflow.filter import value_expr as df_
from cdcflow.filter.mysql_eval import compile_expr, supported_functions
from cdcflow.filter.mysql_eval.tidb_time import datetime_from_number

COLS = [
    df_.column_of("id", "int", "int(11)"),
    df_.column_of("name", "varchar", "varchar(20)"),  # utf8mb4_general_ci upstream: compared as bytes all the same
    df_.column_of("code", "varchar", "varchar(20)"),
    df_.column_of("amount", "decimal", "decimal(10,2)"),
    df_.column_of("big", "bigint", "bigint(20) unsigned"),
    df_.column_of("born", "date", "date"),
    df_.column_of("note", "text", "text"),
]
COLUMNS = {("s", "t"): COLS}
VERSIONS = {("s", "t"): [(0, COLS)]}


def config(**exprs) -> object:
    body = "\n".join(f"{k} = {v!r}" for k, v in exprs.items())
    return parse_config(f"[filter]\nrules = ['s.*']\n[[filter.event-filters]]\nmatcher = ['s.t']\n{body}\n")


def events(rows) -> pa.RecordBatch:
    """rows: (seq, op, before dict, after dict), of s.t at commit ts 100"""
    return pa.RecordBatch.from_pydict({
        "schema": ["s"] * len(rows), "table": ["t"] * len(rows), "commit_ts": [100] * len(rows),
        "seq": [seq for seq, *_ in rows], "op": [op for _, op, *_ in rows],
        "before": [encode_image(b) for *_, b, _a in rows], "after": [encode_image(a) for *_, a in rows]})


def ignored_events(batch: pa.RecordBatch, cfg, versions, changefeed: str | None = None) -> list[int] | None:
    """The seqs of `batch`'s rows the value expressions ignore, as the filter stage's row rules
    judge them (value_tests on the driver, ignored_mask over the batch); None where no expression
    applies."""
    tests = df_.value_tests(cfg, versions, changefeed, dt.datetime(2030, 1, 1), lambda *span: True)
    if not tests:
        return None
    hit = df_.ignored_mask(batch, [(t, t.compiled()) for t in tests])
    return sorted(seq for seq, h in zip(batch["seq"].to_pylist(), hit) if h)


def row(id=1, name="x", code="x", amount="1.00", big=1, born=dt.date(2000, 1, 1), note=None):
    return {"id": id, "name": name, "code": code, "amount": decimal.Decimal(amount), "big": big, "born": born,
            "note": note}


def ignored(spark, cfg, rows) -> list[int]:
    return ignored_events(events(rows), cfg, VERSIONS) or []


def inserts(*imgs):
    return [(i, "insert", None, img) for i, img in enumerate(imgs)]


@pytest.mark.parametrize("expr, matched", [
    ("id > 1", [1, 2, 3]),
    # TiCDC runs TiDB's expressions with new collations disabled: case and trailing spaces count
    # whatever the column's collation
    ("name = 'ABC'", []),
    ("name = 'abc   '", []),
    ("name IN ('ABC', 'zz')", []),
    ("name IN ('abc', 'zz')", [1]),
    ("name LIKE 'A%'", []),
    ("name LIKE 'a%'", [1]),
    ("code = 'ABC'", []),
    ("code = 'abc'", [1]),
    ("note IS NULL", [0, 1, 3]),
    ("note = 'n'", [2]),                         # NULL = 'n' is NULL: not matched
    ("NOT (note = 'n')", []),                    # NOT NULL is NULL too
    ("note <=> NULL", [0, 1, 3]),
    ("amount = '1.5'", [2]),                     # decimal vs string: compared as numbers
    ("amount >= 1.5", [2, 3]),
    ("name = 0", [0, 1, 3]),                     # compared as DOUBLE: 'abc' is 0 ('abc' = 0 is TRUE), '7x' 7
    ("name = 7", [2]),
    ("id = '3'", [2]),
    ("big = 18446744073709551615", [3]),
    ("born < '2000-01-01'", [1]),
    ("id = 1 OR note = 'n'", [0, 2]),
    ("amount * 2 >= 3 AND name <> 'abc'", [2, 3]),
])
def test_insert_expression_semantics(spark, expr, matched):
    rows = inserts(row(id=1, name="0", code="x"),
                   row(id=2, name="abc", code="abc", born=dt.date(1999, 12, 31)),
                   row(id=3, name="7x", amount="1.50", note="n"),
                   row(id=4, name="000", amount="9.99", big=2**64 - 1))
    assert ignored(spark, config(**{"ignore-insert-value-expr": expr}), rows) == matched


def test_update_is_ignored_when_either_image_matches(spark):
    cfg = config(**{"ignore-update-old-value-expr": "id = 1", "ignore-update-new-value-expr": "name = 'new'"})
    rows = [(0, "update", row(id=1), row(id=1, name="other")),  # old matches
            (1, "update", row(id=2), row(id=2, name="new")),    # new matches
            (2, "update", row(id=3), row(id=3, name="x")),      # neither
            (3, "insert", None, row(id=1)),                      # the update expressions do not apply
            (4, "delete", row(id=1), None)]
    assert ignored(spark, cfg, rows) == [0, 1]


def test_delete_expression_reads_the_old_row(spark):
    cfg = config(**{"ignore-delete-value-expr": "amount > 5"})
    rows = [(0, "delete", row(amount="9.00"), None), (1, "delete", row(amount="1.00"), None),
            (2, "insert", None, row(amount="9.00")), (3, "update", row(amount="9.00"), row(amount="9.00"))]
    assert ignored(spark, cfg, rows) == [0]


def test_null_never_matches_and_a_zero_date_is_a_date(spark):
    cfg = config(**{"ignore-insert-value-expr": "born <> '2000-01-01' OR amount <> 0"})
    rows = inserts(row(born=None, amount="0"), row(born=TemporalText("0000-00-00"), amount="0"),
                   row(born=dt.date(2001, 1, 1), amount="0"), row(born=dt.date(2000, 1, 1), amount="0"))
    assert ignored(spark, cfg, rows) == [1, 2]
    cfg = config(**{"ignore-insert-value-expr": "born = '0000-00-00'"})
    assert ignored(spark, cfg, rows) == [1]


def test_rules_only_apply_to_matched_tables(spark):
    cfg = parse_config("[filter]\nrules = ['*.*']\n[[filter.event-filters]]\nmatcher = ['s.other']\n"
                       "ignore-insert-value-expr = 'id > 0'\n")
    assert ignored(spark, cfg, inserts(row())) == []
    assert ignored_events(events(inserts(row())), parse_config(""), VERSIONS) is None


@pytest.mark.parametrize("expr", ["id >", "id = = 1", "SELECT 1", "id AS x", "id IN (SELECT id FROM t)"])
def test_expressions_that_do_not_parse_are_refused_naming_them(expr):
    with pytest.raises(ConfigError) as e:
        df_.check_expressions(config(**{"ignore-delete-value-expr": expr}), COLUMNS, "cf1")
    assert "filter.event-filters[0].ignore-delete-value-expr" in str(e.value) and repr(expr) in str(e.value)
    assert "changefeed cf1" in str(e.value) and not e.value.retryable


def test_a_column_the_table_lacks_is_refused_naming_it():
    cfg = config(**{"ignore-update-new-value-expr": "id > 1 AND colour = 'red'"})
    with pytest.raises(ConfigError) as e:
        df_.check_expressions(cfg, COLUMNS, "cf1")
    msg = str(e.value)
    assert "colour" in msg and "s.t" in msg and "ignore-update-new-value-expr" in msg
    # column names ignore case, and tables the matcher does not match are not checked
    df_.check_expressions(config(**{"ignore-update-new-value-expr": "ID > 1 AND Name = 'x'"}), COLUMNS)
    df_.check_expressions(config(**{"ignore-update-new-value-expr": "colour = 1"}), {("s", "u"): COLS})


def test_a_column_missing_at_run_time_fails_the_cycle(spark):
    cfg = config(**{"ignore-insert-value-expr": "colour = 'red'"})
    with pytest.raises(CdcflowError) as e:
        ignored_events(events(inserts(row())), cfg, VERSIONS, "cf1")
    assert "colour" in str(e.value) and not e.value.retryable


@pytest.mark.parametrize("expr, matched", [
    ("flag = true AND big = FALSE", [1]),
    ("flag", [1]),                     # as TiCDC: the row goes when the value is the integer 1, not 2
    ("big", []),
    ("NOT flag OR TRUE", [0, 1, 2, 3]),
    ("flag IS TRUE", [1, 2]),          # IS TRUE: any non-zero
    ("amount", []),                    # a DECIMAL 1.00 is no integer 1
    ("name", []),
])
def test_what_the_whole_expression_must_be_for_the_row_to_go(spark, expr, matched):
    cols = [df_.column_of("flag", "tinyint", "tinyint(1)"), df_.column_of("big", "bigint", "bigint(20)"),
            df_.column_of("amount", "decimal", "decimal(10,2)"), df_.column_of("name", "varchar", "varchar(9)")]
    rows = [(0, "insert", None, {"flag": 0, "big": 3, "amount": decimal.Decimal("1.00"), "name": "1"}),
            (1, "insert", None, {"flag": 1, "big": 0, "amount": decimal.Decimal("1.00"), "name": "1"}),
            (2, "insert", None, {"flag": 2, "big": 2, "amount": decimal.Decimal("1.00"), "name": "1"}),
            (3, "insert", None, {"flag": None, "big": None, "amount": None, "name": None})]
    out = ignored_events(events(rows), config(**{"ignore-insert-value-expr": expr}), {("s", "t"): [(0, cols)]})
    assert out == matched


def test_a_function_the_filter_does_not_evaluate_is_refused_at_create():
    with pytest.raises(ConfigError) as e:
        df_.check_expressions(config(**{"ignore-insert-value-expr": "id > 1 AND SHA2(name, 256) = 'x'"}),
                              COLUMNS, "cf1")
    assert "SHA2" in str(e.value) and "ignore-insert-value-expr" in str(e.value) and "changefeed cf1" in str(e.value)
    df_.check_expressions(config(**{"ignore-insert-value-expr": "LENGTH(UPPER(name)) > 1 OR IFNULL(note, 'x') = 'x'"}),
                          COLUMNS, "cf1")


def test_tracked_columns_type_like_information_schema():
    info = TableInfo([{"name": "a", "type": "int(11) unsigned", "nullable": True},
                      {"name": "b", "type": "decimal(12,3)", "nullable": True},
                      {"name": "c", "type": "varchar(10)", "nullable": True},
                      {"name": "d", "type": "binary(4)", "nullable": True},
                      {"name": "e", "type": "boolean", "nullable": True},
                      {"name": "f", "type": "enum('x','it''s')", "nullable": True},
                      {"name": "g", "type": "year(4)", "nullable": True},
                      {"name": "h", "type": "timestamp(6)", "nullable": True},
                      {"name": "i", "type": "bit(9)", "nullable": True},
                      {"name": "j", "type": "float", "nullable": True}])
    assert [(c.kind, c.length, c.members) for c in df_.tracked_columns(info)] == [
        ("int", 0, ()), ("decimal", 0, ()), ("text", 0, ()), ("binary", 4, ()), ("int", 0, ()),
        ("enum", 0, ("x", "it's")), ("year", 0, ()), ("datetime", 6, ()), ("bit", 2, ()), ("float", 4, ())]


@pytest.mark.parametrize("expr, names", [
    ("SHA2(name, 256) = 'x'", ["SHA2"]),
    ("SOUNDEX(name) = 'x' OR LEFT(name) = 'a'", ["LEFT with 1 arguments (it takes 2)", "SOUNDEX"]),
    ("CAST(name AS YEAR) = 1", ["CAST AS YEAR"]),
    ("born + INTERVAL 1 FORTNIGHT > '2000-01-01'", ["FORTNIGHT"]),
    ("name REGEXP '(' OR name = 'x'", ["REGEXP '('"]),
])
def test_an_unknown_function_or_arity_is_refused_at_create_by_name(expr, names):
    with pytest.raises(ConfigError) as e:
        df_.check_expressions(config(**{"ignore-delete-value-expr": expr}), COLUMNS, "cf1")
    msg = str(e.value)
    assert all(n in msg for n in names), msg
    assert "filter.event-filters[0].ignore-delete-value-expr" in msg and "changefeed cf1" in msg


def test_dm_s_own_expression_filters_pass_create():
    """DM's expression-filter tests filter on a JSON path and on NOW(); `create` refused both."""
    cols = {("s", "t"): COLS + [df_.column_of("c_json", "json", "json"), df_.column_of("ts", "timestamp",
                                                                                        "timestamp")]}
    df_.check_expressions(config(**{"ignore-insert-value-expr": 'c_json->"$.id" = 2',
                                    "ignore-update-new-value-expr": "ts > NOW()",
                                    "ignore-delete-value-expr": "c_json->>'$.name' = 'x' AND DATE(ts) < CURDATE()"}),
                          cols, "cf1")


def test_now_is_one_instant_for_the_cycle_in_utc():
    """Every row of a cycle reads the NOW the driver took (as TiDB's statement-cached now), in UTC."""
    cols = [df_.column_of("ts", "timestamp", "timestamp(6)"), df_.column_of("d", "datetime", "datetime")]
    now = dt.datetime(2030, 5, 6, 7, 8, 9, 123456)
    images = [encode_image({"ts": "2030-05-06 07:08:09.123455", "d": "2030-05-06 07:08:10"}),
              encode_image({"ts": "2030-05-06 07:08:09.123456", "d": "2030-05-06 07:08:09"})]
    batch = pa.RecordBatch.from_pydict({"commit_ts": [1, 1], "seq": [0, 1], "op": ["insert"] * 2,
                                        "before": [None] * 2, "after": images})
    for expr, want in [("ts < NOW(6)", [0]), ("d > CURRENT_TIMESTAMP", [0]), ("d = UTC_TIMESTAMP()", [1]),
                       ("DATE(d) = CURDATE() AND UNIX_TIMESTAMP() = 1904281689", [0, 1])]:
        found = df_.matches(batch["op"].to_pylist(), batch["before"].to_pylist(), batch["after"].to_pylist(),
                            df_.compiled_conds(cols, [("insert", "after", df_.parse(expr, "k"))], now))
        assert [s for s, hit in zip(batch["seq"].to_pylist(), found) if hit] == want, expr
    # without an instant given, the wall clock's (UTC): a row of the year 3000 is after it
    assert compile_expr(df_.parse("ts > NOW()", "k"), cols)([m.typed_value(cols[0], "3000-01-01 00:00:00"), None]) == 1


def test_the_filters_guide_lists_exactly_the_functions_the_filter_evaluates():
    guide = (Path(__file__).resolve().parents[2] / "docs" / "guides" / "filters.md").read_text()
    listed = re.search(r"Value-expression functions: ([^.]*)\.", guide)
    assert listed, "docs/guides/filters.md has no 'Value-expression functions:' list"
    names = [n.strip() for n in listed.group(1).replace("\n", " ").split(",")]
    assert names == supported_functions(), "the guide's list of value-expression functions differs from mysql_eval's table"


def test_no_function_raises_on_any_value_a_row_can_hold():
    """A worker that raised would fail the cycle with a bare Python error: every function of the
    table over extremes of every kind of value (and huge or negative lengths, precisions, paths)
    gives a value or NULL, as TiDB gives a value or NULL with a warning."""
    bit = m.Bit(5)
    bit.size = 1
    member = m.Member("a")
    member.number = 1
    values = [None, 0, -1, 2 ** 64 - 1, -2 ** 63, decimal.Decimal("-" + "9" * 35 + "." + "9" * 30),
              decimal.Decimal("1e-30"), 1.7976931348623157e308, -3.4e38, "", "abc", "2x", "2000-01-01",
              "9999-12-31 23:59:59.999999", "0000-00-00", "-838:59:59", '{"a": [1, 2]}', "$[*]", "%Y %W %j", "(",
              b"", b"\x00\xff", m.Hex(b"\x7f"), m.Temporal((0,) * 7, "date"), m.Temporal((2000, 0, 0, 0, 0, 0, 0), "date"),
              m.Temporal((9999, 12, 31, 23, 59, 59, 999999), "datetime", 6), m.Temporal((-3020399000000,), "time"),
              m.Year(1901), m.Json({"a": 1}), m.Json("s"), bit, member]
    now = dt.datetime(2026, 1, 2, 3, 4, 5)
    failed = {}
    for name, fn in m.FUNCTIONS.items():
        least, most = fn.arity
        for n in range(least, min(3 if most is None else most, 3) + 1):
            pool = [values, values[:20], values[:10]][:n]
            for args in itertools.product(*pool):
                args = (now, *args) if fn.now else args
                try:
                    fn.impl(*args)
                except Exception as e:  # noqa: BLE001 - any exception is the failure reported
                    failed.setdefault(name, f"{type(e).__name__}: {e} for {args!r}"[:200])
    assert not failed, failed


def test_a_zone_offset_in_a_literal_is_read_as_tidb_reads_it():
    """Issue 55: `c_timestamp = '2021-01-01 12:34:56.5678+08:00'` over a row written as
    '2021-01-01 12:34:56.5678' from a session in +08:00.  The binlog holds the TIMESTAMP's instant,
    04:34:56.5678 UTC, the zone cdcflow reads TIMESTAMP columns in; TiDB (and MySQL 8.0.19+) reads
    the offset and converts the literal to the session's zone, so the row is ignored.  A DATETIME
    holds the wall clock, 12:34:56.5678, which the converted literal is not."""
    cols = [df_.column_of("c_timestamp", "timestamp", "timestamp(4)"),
            df_.column_of("c_datetime", "datetime", "datetime(4)")]
    images = [encode_image({"c_timestamp": dt.datetime(2021, 1, 1, 4, 34, 56, 567800),
                            "c_datetime": dt.datetime(2021, 1, 1, 12, 34, 56, 567800)})]
    for expr, ignored_ in [("c_timestamp = '2021-01-01 12:34:56.5678+08:00'", True),
                           ("c_timestamp = '2021-01-01 12:34:56.5678'", False),   # read in UTC: 8 hours later
                           ("c_timestamp = '2021-01-01 04:34:56.5678'", True),
                           ("c_timestamp = '2021-01-01T04:34:56.5678Z'", True),
                           ("c_timestamp = '2020-12-31 23:34:56.5678-05:00'", True),
                           ("c_timestamp = '2021-01-01 12:34:56.5678+0800'", True),
                           ("c_timestamp IN ('x', '2021-01-01 12:34:56.5678+08:00')", True),
                           ("c_timestamp = '2021-01-01 12:34:56.5678+14:30'", False),  # beyond +-14:00: no date
                           ("c_datetime = '2021-01-01 12:34:56.5678+08:00'", False),
                           ("c_datetime = '2021-01-01 12:34:56.5678+00:00'", True)]:
        found = df_.matches(["insert"], [None], images,
                            df_.compiled_conds(cols, [("insert", "after", df_.parse(expr, "k"))]))
        assert found == [ignored_], expr


@pytest.mark.parametrize("text, parts", [
    # pkg/types/time.go's ParseTime, as TiDB casts a string compared with a DATETIME (6 digits)
    ("2021-01-01 12:34:56.5678+08:00", (2021, 1, 1, 4, 34, 56, 567800)),   # to the session's zone, UTC
    ("2021-01-01 04:34:56Z", (2021, 1, 1, 4, 34, 56, 0)),
    ("2021-01-01 12:34:56+08", (2021, 1, 1, 4, 34, 56, 0)),
    ("2021-01-01 00:00:00-00:30", (2021, 1, 1, 0, 30, 0, 0)),
    ("2021-01-01 12:34:56-00:00", None),                                    # TiDB refuses -00:00
    ("2021-01-01 12:34:56+14:01", None),                                    # and beyond +-14:00
    ("2021-01-01+08:00", (2021, 1, 1, 8, 0, 0, 0)),                         # a date's zone is its hh:mm
    ("2021-01-01T12:34:56.5678", (2021, 1, 1, 12, 34, 56, 567800)),
    ("2021-01-01 12:34:56.9999995", (2021, 1, 1, 12, 34, 57, 0)),           # past 6 digits: half up
    ("1999-12-31 23:59:59.9999995", (2000, 1, 1, 0, 0, 0, 0)),
    ("1999-12-31 23:59:59.9999994", (1999, 12, 31, 23, 59, 59, 999999)),
    ("21-01-01 12:34:56", (2021, 1, 1, 12, 34, 56, 0)),                     # two-digit years
    ("70-01-01", (1970, 1, 1, 0, 0, 0, 0)),
    ("00-00-00", (0, 0, 0, 0, 0, 0, 0)),                                    # the zero date stays year 0
    ("20210101123456", (2021, 1, 1, 12, 34, 56, 0)),
    ("210101123456", (2021, 1, 1, 12, 34, 56, 0)),
    ("210101", (2021, 1, 1, 0, 0, 0, 0)),
    ("20170118.123423", (2017, 1, 18, 12, 34, 23, 0)),                      # YYYYMMDD.hhmmss
    ("2021/01/01 12.34.56", (2021, 1, 1, 12, 34, 56, 0)),                   # any punctuation separates
    ("2021-01-01 12:34:56 extra", (2021, 1, 1, 12, 34, 56, 0)),             # a seventh group is dropped
    ("0000-00-00", (0, 0, 0, 0, 0, 0, 0)),
    ("2021-00-01", None),                                                   # zero in a date: strict
    ("2021-02-29", None),
    ("2021", None), ("21", None), ("abc", None), ("", None), ("2x", None),
])
def test_strings_are_read_as_tidb_s_parse_time_reads_them(text, parts):
    got = m.tidb_datetime(text)
    assert (got.parts if got is not None else None) == parts


@pytest.mark.parametrize("text, us", [
    # ParseDuration, as TiDB casts a string compared with a TIME
    ("12:34:56.5678", 45296567800),
    ("12:34:56.5669996", 45296567000),                                      # past 6 digits: half up
    ("-00:00:01", -1000000),
    ("1 12:00", 129600000000),                                              # D hh:mm
    ("123456.567", 45296567000),                                            # hhmmss
    ("2021", 1221000000),                                                   # 00:20:21
    ("2021-01-01 12:34:56", 45296000000),                                   # a date and time: its time
    ("2021-01-01T20:34:56+08:00", 45296000000),                             # ... in UTC
    ("21-01-01 12:34:56", 45296000000),
    ("838:59:59", 3020399000000),
    ("839:00:00", None), ("12:34:56.567+08:00", None), ("2000-01-01", None), ("2x", None), ("abc", None),
])
def test_strings_are_read_as_tidb_s_parse_duration_reads_them(text, us):
    got = m.tidb_duration(text)
    assert (got.parts[0] if got is not None else None) == us


@pytest.mark.parametrize("value, parts", [
    # refineNumericConstantCmpDatetime: a number compared with a DATETIME/TIMESTAMP
    (20210101123456, (2021, 1, 1, 12, 34, 56, 0)),
    (210101123456, (2021, 1, 1, 12, 34, 56, 0)),
    (20210101, (2021, 1, 1, 0, 0, 0, 0)),
    (691231, (2069, 12, 31, 0, 0, 0, 0)),
    (700101, (1970, 1, 1, 0, 0, 0, 0)),
    (0, (0, 0, 0, 0, 0, 0, 0)),
    (decimal.Decimal("20210101123456.5678"), (2021, 1, 1, 12, 34, 57, 0)),  # to the second, half up
    (decimal.Decimal("20210101123456.4"), (2021, 1, 1, 12, 34, 56, 0)),
    (1, None), (-1, None), (700000, None), (20211301, None), (decimal.Decimal("1.50"), None), (1.5, None),
])
def test_numbers_against_a_datetime_are_converted_as_tidb_converts_them(value, parts):
    got = datetime_from_number(value)
    assert (got.parts if got is not None else None) == parts


@pytest.mark.parametrize("expr, matched", [
    # refineArgs over a YEAR column holding 2021 (row 0), 1999 (1), 1970 (2), 0000 (3)
    ("y = 21", [0]), ("y = '21'", [0]), ("y = 70", [2]), ("y = '0'", []), ("y = 0", [3]),
    ("y = 2021.0", [0]), ("y = 21.0", []),
    ("y < 21.5", [3]),              # CEIL of a DECIMAL stays the integer 22, not a year
    ("y < '21.5'", [0, 1, 2, 3]),   # CEIL of a string is a DOUBLE, read as the year 2022
    ("y > 20.5", [0, 1, 2]), ("y <> '21'", [0, 1, 2, 3]), ("y = '2021-01-01'", []), ("y = 'abc'", []),
])
def test_constants_against_a_year_are_read_as_tidb_reads_them(expr, matched):
    cols = [df_.column_of("y", "year", "year(4)")]
    images = [encode_image({"y": y}) for y in (2021, 1999, 1970, 0)]
    found = df_.matches(["insert"] * 4, [None] * 4, images,
                        df_.compiled_conds(cols, [("insert", "after", df_.parse(expr, "k"))]))
    assert [i for i, hit in enumerate(found) if hit] == matched
