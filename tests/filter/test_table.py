import warnings

import pytest

from cdcflow.core.errors import ConfigError
from cdcflow.core.system_schemas import SYSTEM_SCHEMAS
from cdcflow.filter.table import TableFilter


def accepted(f: TableFilter, names):
    return [f.match_table(s, t) for s, t in names]


# --- the seed's rule: [filter] rules = ['test.t*'] -------------------------

@pytest.mark.parametrize("schema,table,expected", [
    ("test", "t1", True),
    ("test", "t22", True),
    ("test", "t", True),
    ("test", "n1", False),
    ("ignore", "t1", False),
    ("test", "ignore", False),  # 't*' needs a leading t
    ("test", "ignore1", False),
    ("TEST", "T1", True),       # case-insensitive by default, as in TiCDC
])
def test_seed_rule_tables(schema, table, expected):
    assert TableFilter(["test.t*"]).match_table(schema, table) is expected


def test_seed_rule_schemas():
    f = TableFilter(["test.t*"])
    assert f.match_schema("test")
    assert not f.match_schema("ignore")  # the seed's "new database name ignore does not match"
    assert not f.match_schema("test2")


# --- defaults, comments, the rules property --------------------------------

@pytest.mark.parametrize("rules", [None, []])
def test_no_rules_means_everything(rules):
    f = TableFilter(rules)
    assert f.rules == ["*.*"]
    assert f.match_table("any", "thing") and f.match_schema("any")


def test_rules_property_is_a_copy_of_what_was_written():
    written = ["db.*", "!db.tmp"]
    f = TableFilter(written)
    got = f.rules
    got.append("x.y")
    assert f.rules == ["db.*", "!db.tmp"] and written == ["db.*", "!db.tmp"]


def test_comments_and_blank_rules_are_skipped():
    f = TableFilter(["# comment", "x.y", "   \t", "  a.b  "])
    assert accepted(f, [("x", "y"), ("y", "y"), ("a", "b")]) == [True, False, True]


def test_only_comments_selects_nothing():
    # A non-empty list is parsed as is (TiCDC substitutes *.* only for an empty list).
    f = TableFilter(["# nothing yet"])
    assert not f.match_table("db", "t") and not f.match_schema("db")


# --- wildcards --------------------------------------------------------------

@pytest.mark.parametrize("rule,yes,no", [
    ("db.*", [("db", "a"), ("db", "")], [("db1", "a")]),
    ("db.t?", [("db", "t1"), ("db", "tx")], [("db", "t"), ("db", "t12")]),
    ("db?.t", [("db1", "t")], [("db", "t"), ("db12", "t")]),
    ("db.t[0-3]", [("db", "t0"), ("db", "t3")], [("db", "t4"), ("db", "t33"), ("db", "ta")]),
    ("db.t[!0-3]", [("db", "t4"), ("db", "ta")], [("db", "t0"), ("db", "t")]),
    ("db.[^a]", [("db", "^"), ("db", "a")], [("db", "b")]),   # '^' is not a negation in a wildcard
    ("db.[^]", [("db", "^")], [("db", "a")]),
    ("db.[!!]", [("db", "x")], [("db", "!")]),
    ("db.[a[]", [("db", "["), ("db", "a")], [("db", "b")]),
    ("*.*_log", [("a", "x_log"), ("b", "_log")], [("a", "x_logs")]),
    ("p_123$.45", [("p_123$", "45")], [("p_123", "45")]),
    ("中文.表*", [("中文", "表名")], [("英文", "表名")]),
    ("db.a*b*c", [("db", "abc"), ("db", "axxbyyc")], [("db", "abcd")]),
])
def test_wildcards(rule, yes, no):
    f = TableFilter([rule], case_sensitive=True)
    assert all(accepted(f, yes)), yes
    assert not any(accepted(f, no)), no


def test_class_characters_python_reads_as_set_syntax_stay_literal():
    # '[', '&&', '~~', '||' inside a class are plain characters for TiDB; Python would warn
    # (and a future Python would read them as nested sets), so they must be escaped.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = TableFilter(["db.[a[]", "db.x[&&~~||]", "/^[b[]$/.t"], case_sensitive=True)
    assert f.match_table("db", "[") and f.match_table("db", "x&") and f.match_table("db", "x|")
    assert f.match_table("[", "t") and not f.match_table("c", "t")


def test_wildcard_question_mark_matches_one_character_even_newline():
    f = TableFilter(["db.a?b"], case_sensitive=True)
    assert f.match_table("db", "a\nb") and f.match_table("db", "aéb")


# --- escapes and quoting ----------------------------------------------------

def test_backslash_escapes_dot_and_special_characters():
    f = TableFilter([r"my\.db.t\-1", r"a\*.b\?", r"\\\..*"], case_sensitive=True)
    assert f.match_table("my.db", "t-1")
    assert not f.match_table("myxdb", "t-1")
    assert f.match_table("a*", "b?") and not f.match_table("ab", "bc")
    assert f.match_table("\\.", "z") and not f.match_table("\\a", "z")


def test_backquoted_and_double_quoted_names_are_literal():
    f = TableFilter(["`my.db`.`t*`", '"a ""b""".`c``d`'], case_sensitive=True)
    assert f.match_table("my.db", "t*")
    assert not f.match_table("my.db", "t1")  # no wildcard inside quotes
    assert not f.match_table("myxdb", "t*")
    assert f.match_table('a "b"', "c`d")
    assert not f.match_table('a ""b""', "c`d")


def test_quoted_names_follow_case_sensitivity():
    rule = ['"some ""quoted""".`identifiers?`']
    names = [('some "quoted"', "identifiers?"), ('SOME "QUOTED"', "IDENTIFIERS?"), ('some "quoted"', "identifiers!")]
    assert accepted(TableFilter(rule, case_sensitive=True), names) == [True, False, False]
    assert accepted(TableFilter(rule, case_sensitive=False), names) == [True, True, False]


# --- regular expressions ----------------------------------------------------

def test_regex_in_either_part_is_searched_not_anchored():
    f = TableFilter(["/^foo/.*", r"!/^foo/./^sbtest-\d/", "bar./log/"], case_sensitive=True)
    assert f.match_table("foo", "sbtest")
    assert f.match_table("foo1", "x")
    assert not f.match_table("foo1", "sbtest-1")
    assert not f.match_table("afoo", "x")
    assert f.match_table("bar", "access_logs")  # unanchored: 'log' anywhere
    assert not f.match_table("bar", "lo")


def test_regex_may_contain_escaped_slash_and_dot():
    f = TableFilter([r"/a\/b/./x\.y/"], case_sensitive=True)
    assert f.match_table("za/b", "x.y") and not f.match_table("za/b", "xzy")


def test_regex_re2_spellings_are_translated():
    f = TableFilter([r"/^[[:digit:]_]+x\z/.*", "/[[:upper:]]/.t"], case_sensitive=True)
    assert f.match_table("12_x", "t")
    assert not f.match_table("12_xy", "t") and not f.match_table("a1x", "t")
    assert f.match_table("aBc", "t") and not f.match_table("abc", "t")


def test_regex_is_go_re2_syntax():
    # constructs Go's regexp (TiCDC) reads and Python's re does not: Unicode scripts,
    # quoted literals, negated POSIX classes
    f = TableFilter([r"/\p{Han}/.*", r"/^\Qa.b*\E$/.t", "db./^[[:^alpha:]]+$/"], case_sensitive=True)
    assert f.match_table("订单", "x") and f.match_table("app_日志", "x") and not f.match_table("app", "x")
    assert f.match_table("a.b*", "t") and not f.match_table("axbb", "t") and not f.match_table("a.b*c", "t")
    assert f.match_table("db", "_1") and not f.match_table("db", "_a")
    assert TableFilter([r"/^\QAB\E$/.*"]).match_table("ab", "t")  # case-insensitive by default


# --- rule order and negation ------------------------------------------------

def test_last_matching_rule_decides():
    f = TableFilter(["*.*", "!test.*", "test.keep"])
    assert f.match_table("test", "keep")
    assert not f.match_table("test", "other")
    assert f.match_table("prod", "other")
    # the same rules in another order give another answer
    g = TableFilter(["*.*", "test.keep", "!test.*"])
    assert not g.match_table("test", "keep")


@pytest.mark.parametrize("rules,names,expected", [
    (["*.*", "!foo1.*"], [("foo", "bar"), ("foo1", "bar"), ("foo2", "bar")], [True, False, True]),
    (["*.*", "!foo.bar"], [("foo", "bar"), ("foo", "bar1"), ("fff", "bar1")], [False, True, True]),
    (["db*.*", "!*.cfg*", "*.cfgsample"],
     [("irrelevant", "table"), ("db1", "tbl1"), ("db1", "cfg1"), ("db1", "cfgsample"), ("else", "cfgsample")],
     [False, True, False, True, True]),
    (["*.*", "!a?b?./f[0-9]/"], [("abbd", "f1"), ("aaaa", "f2"), ("abbc", "fa")], [False, True, True]),
    (["*.*", "!S.D[!a-d]"], [("S", "D1"), ("S", "Da"), ("S", "Daa")], [False, True, True]),
])
def test_negation_table(rules, names, expected):
    assert accepted(TableFilter(rules, case_sensitive=True), names) == expected


def test_unmatched_table_is_excluded():
    assert not TableFilter(["a.b"]).match_table("a", "c")


# --- case sensitivity -------------------------------------------------------

@pytest.mark.parametrize("rules,names,cs,ci", [
    (["BAR.*"], [("bar", "a"), ("BAR", "a")], [False, True], [True, True]),
    (["*.*", "!a*.A*"], [("aB", "Ab"), ("AaB", "aab"), ("acB", "Afb")], [False, True, False], [False, False, False]),
    (["*.*", "!/^FOO/.*", "!*./FoO$/"],
     [("FOO1", "a"), ("foo2", "b"), ("BoO3", "cFoO"), ("Foo4", "dfoo"), ("5", "5")],
     [False, True, False, True, True], [False, False, False, False, True]),
    (["Db.T[A-B]"], [("db", "ta"), ("Db", "TA"), ("Db", "Ta"), ("Db", "Tc")],
     [False, True, False, False], [True, True, True, False]),
])
def test_case_sensitivity(rules, names, cs, ci):
    assert accepted(TableFilter(rules, case_sensitive=True), names) == cs
    assert accepted(TableFilter(rules, case_sensitive=False), names) == ci
    assert accepted(TableFilter(rules), names) == ci  # the default is case-insensitive


# --- system schemas ---------------------------------------------------------

def test_system_schema_set():
    # TiCDC's isSysSchema: TiDB's IsSystemSchema, Lightning's and the workload repository's
    # schemas, and the replicator's own (tidb_cdc; cdcflow for cdcflow)
    assert SYSTEM_SCHEMAS == {"mysql", "sys", "information_schema", "performance_schema", "metrics_schema",
                              "inspection_schema", "dm_heartbeat", "lightning_task_info", "workload_schema",
                              "tidb_cdc", "cdcflow"}


@pytest.mark.parametrize("schema", sorted(SYSTEM_SCHEMAS) + ["MySQL", "INFORMATION_SCHEMA"])
@pytest.mark.parametrize("rules,case_sensitive", [
    (["*.*"], False), (["*.*"], True), (["mysql.*", "MySQL.*", "/./.*"], True), (None, False),
])
def test_system_schemas_always_excluded(schema, rules, case_sensitive):
    f = TableFilter(rules + [f"`{schema}`.*"] if rules else rules, case_sensitive=case_sensitive)
    assert not f.match_table(schema, "user")
    assert not f.match_schema(schema)


def test_explicit_mysql_rule_selects_nothing():
    f = TableFilter(["mysql.*"])
    assert not f.match_table("mysql", "user") and not f.match_schema("mysql")
    assert not f.match_table("other", "user")


def test_names_close_to_system_schemas_are_not_system():
    f = TableFilter(["*.*"])
    assert f.match_table("mysql2", "t") and f.match_table("my_sys", "t") and f.match_schema("cdcflow_app")


# --- match_schema: TiDB's MatchSchema ----------------------------------------

@pytest.mark.parametrize("rules,schemas,cs,ci", [
    (["*.*"], ["foo"], [True], [True]),
    (["foo.*"], ["foo", "foo1"], [True, False], [True, False]),
    (["*.*", "!foo1.*"], ["foo", "foo1"], [True, False], [True, False]),
    (["foo.bar1"], ["foo", "foo1"], [True, False], [True, False]),  # some table of foo can match
    (["*.*", "!foo.bar"], ["foo", "foo1"], [True, True], [True, True]),  # !foo.bar leaves foo's others
    (["/^foo/.*", r"!/^foo/./^sbtest-\d/"], ["foo", "foo2"], [True, True], [True, True]),
    (["*.*", "!FOO*.*", "!*.*FoO"], ["foo", "FOO", "foobar", "FOOBAR", "bar", "BAR"],
     [True, False, True, False, True, True], [False, False, False, False, True, True]),
    (["*.*", "!test.t*"], ["test"], [True], [True]),  # only a bare '*' table pattern drops a schema
    (["*.*", "!test./.*/"], ["test"], [True], [True]),
    (["!test.*", "test.keep"], ["test"], [True], [True]),
    (["test.keep", "!test.*"], ["test"], [False], [False]),
])
def test_match_schema(rules, schemas, cs, ci):
    assert [TableFilter(rules, case_sensitive=True).match_schema(s) for s in schemas] == cs
    assert [TableFilter(rules, case_sensitive=False).match_schema(s) for s in schemas] == ci


# --- malformed rules --------------------------------------------------------

@pytest.mark.parametrize("rule,problem", [
    ("db", "missing '.'"),
    ("`db`*.*", "missing '.' between schema and table"),
    ("db.", "missing pattern"),
    (".t", "empty schema or table pattern"),
    ("!", "missing pattern"),
    ("a.b.c", "unexpected characters '.c'"),
    ("[.*", "unbalanced or empty character class"),
    ("db.t[0-9", "unbalanced or empty character class"),
    ("[].*", "unbalanced or empty character class"),
    ("[!].*", "empty character class"),
    ("[z-a].*", "bad character range"),
    (r"[\d\D].*", "unbalanced or empty character class"),
    ("/db.*", "unterminated or empty /regex/"),
    ("//.*", "unterminated or empty /regex/"),
    ("/(a/.*", "invalid pattern /(a/"),
    ("*./[/", "invalid pattern /[/"),
    ("/^t[0-9]+((?!_copy).)*$/.*", "negative lookahead"),
    ("/^t(?=copy)/.*", "lookahead"),
    ("/(?<=a)b/.*", "lookbehind"),
    (r"/(a)\1/.*", "backreference"),
    ("/a*+/.*", "possessive quantifier"),
    ("/(?>a)/.*", "atomic group"),
    ("/a(?#note)/.*", "comment group"),
    (r"/(?P<x>a)(?P=x)/.*", "named backreference"),
    ("/a{2,1}/.*", "invalid pattern /a{2,1}/"),
    ("`db.*", "unterminated or empty quoted name"),
    ('"db.*', "unterminated or empty quoted name"),
    ("``.t", "unterminated or empty quoted name"),
    ("db\\", "cannot end the rule"),
    (r"a\tb.c", "cannot escape a letter or digit"),
    ("a%b.c", "unexpected special character '%'"),
    ("db.tbl#not comment", "unexpected special character '#'"),
    ("db . t", "unexpected special character ' '"),
    ("@rules.txt", "'@file'"),
])
def test_malformed_rule_raises_config_error(rule, problem):
    with pytest.raises(ConfigError) as info:
        TableFilter(["ok.*", rule])
    err = info.value
    assert f"filter.rules[1] {rule!r}" in str(err)  # names the rule and where it is
    assert problem in str(err)
    assert err.code == "CDCFLOW:ErrInvalidConfig" and not err.retryable
    assert err.hint  # says how to write a rule


@pytest.mark.parametrize("rules", ["test.*", ("test.*", 3), {"test.*"}])
def test_rules_must_be_a_list_of_strings(rules):
    with pytest.raises(ConfigError, match="filter.rules"):
        TableFilter(rules)


def test_many_names_against_compiled_rules():
    f = TableFilter(["app_*.*", "!app_*.tmp_*", "/^audit_\\d+$/.events", "`legacy.db`.*"])
    names = [(f"app_{i}", f"t{i}") for i in range(3000)] + [(f"app_{i}", f"tmp_{i}") for i in range(3000)]
    names += [(f"audit_{i}", "events") for i in range(3000)] + [("legacy.db", "x"), ("other", "t")]
    got = accepted(f, names)
    assert got == [True] * 3000 + [False] * 3000 + [True] * 3000 + [True, False]
