"""TiCDC's DML value-expression filters, evaluated over each row image.

An event-filter rule's `ignore-insert-value-expr` is tested on an INSERT's new row,
`ignore-delete-value-expr` on a DELETE's old row, and an UPDATE is ignored when
`ignore-update-old-value-expr` matches its old row or `ignore-update-new-value-expr`
its new row.  Expressions are MySQL expressions (parsed with sqlglot's MySQL dialect),
evaluated per row by mysql_eval (filter.row_rules: in the stage's process or Spark's tasks) with the comparison rules of
TiDB's expression engine (string against number as DOUBLE, so 'abc' = 0 is true; temporal
columns against strings as time; DECIMAL exactly; strings byte by byte; NULL).  As in TiCDC, a row is
ignored when the expression's value is the integer 1: NULL, 0, or a value that is no
integer (a bare DECIMAL or string column) keeps the row.

A row is read with its table as it was at the row's commit ts: the tracked schema's
version (ddl.tracker), so a table dropped or a column renamed later in the upstream does
not matter; where the tracker does not know the table, the upstream's information_schema.
`check_expressions` runs at `changefeed create` over the upstream's catalogue (the tracked
schema's start): an expression that does not parse, uses a function the evaluator does not
know, or names a column that a matched table lacks, is refused there, naming the rule, the
expression and the column.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cdcflow.core.errors import EXPRESSION_COLUMN_ABSENT, CdcflowError, ConfigError
from cdcflow.core.row_codec import plain_value
from cdcflow.core.system_schemas import sql_not_system
from cdcflow.ddl.table_def import TableInfo
from cdcflow.ddl.tracker import UNKNOWN
from cdcflow.filter.table import TableFilter

if TYPE_CHECKING:  # the evaluator is loaded where a config has expressions (column_of)
    from cdcflow.filter.mysql_eval import Col

# (op the expression applies to, image it reads, EventFilterRule field, TOML key)
EXPRESSIONS = (
    ("insert", "after", "ignore_insert_value_expr", "ignore-insert-value-expr"),
    ("update", "before", "ignore_update_old_value_expr", "ignore-update-old-value-expr"),
    ("update", "after", "ignore_update_new_value_expr", "ignore-update-new-value-expr"),
    ("delete", "before", "ignore_delete_value_expr", "ignore-delete-value-expr"),
)

_INTS = ("tinyint", "smallint", "mediumint", "int", "integer", "bigint")
_BYTES = ("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "geometry")
_KINDS = {"decimal": "decimal", "numeric": "decimal", "float": "float", "double": "float", "real": "float",
          "year": "year", "date": "date", "datetime": "datetime", "timestamp": "datetime", "time": "time",
          "json": "json", "enum": "enum", "set": "set"}


def column_of(name: str, data_type: str, column_type: str) -> Col:
    """A column typed for the evaluator from its information_schema DATA_TYPE and COLUMN_TYPE
    (its collation does not matter: see mysql_eval)."""
    from cdcflow.filter.mysql_eval import Col  # lazy: the evaluator (6 ms) only where a config has expressions

    t, ctype = data_type.lower(), (column_type or "").lower()
    if t == "bit":
        size = re.match(r"bit\((\d+)\)", ctype)
        return Col(name, "bit", length=(int(size.group(1)) + 7) // 8 if size else 1)
    if t == "float":
        return Col(name, "float", length=4)
    if t in _INTS:
        return Col(name, "int")
    if t in _BYTES:
        size = re.match(r"binary\((\d+)\)", ctype)
        return Col(name, "binary", length=int(size.group(1)) if size else 0)
    if t in ("enum", "set"):
        members = re.findall(r"'((?:[^']|'')*)'", column_type)
        return Col(name, t, members=tuple(m.replace("''", "'") for m in members))
    kind = _KINDS.get(t, "text")
    if kind in ("datetime", "time"):  # the fraction digits, for the value's text
        fsp = re.match(r"\w+\((\d+)\)", ctype)
        return Col(name, kind, length=int(fsp.group(1)) if fsp else 0)
    return Col(name, kind)


# DDL spellings of types information_schema names otherwise
_TYPE_ALIASES = {"bool": "tinyint", "boolean": "tinyint", "int1": "tinyint", "int2": "smallint",
                 "int3": "mediumint", "int4": "int", "int8": "bigint", "middleint": "mediumint",
                 "dec": "decimal", "fixed": "decimal", "float4": "float", "float8": "double"}


def tracked_columns(info) -> list[Col]:
    """The columns of a tracked table version (ddl.table_def.TableInfo), typed as column_of
    types information_schema's."""
    cols = []
    for c in info.columns:
        text = c["type"]
        words = text.lower().partition("(")[0].split()
        data_type = _TYPE_ALIASES.get(words[0], words[0]) if words else ""
        cols.append(column_of(c["name"], data_type, text))
    return cols


def upstream_columns(conn, tables: list[tuple[str, str]] | None = None) -> dict[tuple[str, str], list[Col]]:
    """Columns of the upstream's tables (all user tables, or the ones given), in order."""
    user_tables, args = sql_not_system("TABLE_SCHEMA")
    sql = ("SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE "
           "FROM information_schema.COLUMNS WHERE " + user_tables)
    if tables is not None:
        if not tables:
            return {}
        sql += " AND (" + " OR ".join(["(TABLE_SCHEMA = %s AND TABLE_NAME = %s)"] * len(tables)) + ")"
        args += [x for t in tables for x in t]
    out: dict[tuple[str, str], list[Col]] = {}
    with conn.cursor() as cur:
        cur.execute(sql + " ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION", args)
        for s, t, name, dtype, ctype in cur.fetchall():
            out.setdefault((s, t), []).append(column_of(name, dtype, ctype))
    return out


# --- parsing -------------------------------------------------------------

def parse(text: str, where: str):
    """The expression's syntax tree; a ConfigError naming `where` if it is not one.  As TiCDC
    (pkg/filter/expr_filter.go, completeExpression), the text is read as the WHERE clause of
    `SELECT * FROM t WHERE <text>`, in mysql_eval's dialect (function calls kept as written)."""
    # lazy: sqlglot only where a config has expressions; the CLI loads this module to check configs
    import sqlglot
    from sqlglot import exp

    from cdcflow.filter.mysql_eval import dialect  # lazy: as sqlglot

    head = "SELECT * FROM t WHERE "
    try:
        stmt = sqlglot.parse_one(head + text, read=dialect())
    except sqlglot.errors.SqlglotError as e:
        first = re.sub(r"Col: (\d+)", lambda m: f"Col: {max(1, int(m.group(1)) - len(head))}", str(e).splitlines()[0])
        raise ConfigError(f"{where} = {text!r} is not a valid SQL expression: {first}",
                          hint="write a MySQL expression over the row's columns, e.g. \"id > 100 AND name = 'x'\"") \
            from None
    clause = stmt.args.get("where") if isinstance(stmt, exp.Select) else None
    extra = [k for k, v in stmt.args.items() if v and k not in ("expressions", "from_", "where")]
    if clause is None or extra or clause.this.find(exp.Query, exp.Alias) is not None:
        raise ConfigError(f"{where} = {text!r} is not a valid SQL expression over one row",
                          hint="no statements, aliases, subqueries or clauses: e.g. \"id > 100 AND name = 'x'\"")
    return clause.this.pop()


def column_names(tree) -> set[str]:
    from sqlglot import exp  # lazy: sqlglot only where a config has expressions (filter.value_expr)

    return {c.name for c in tree.find_all(exp.Column)}


def missing_columns(tree, cols: list[Col]) -> list[str]:
    have = {c.name.lower() for c in cols}  # MySQL column names ignore case
    return sorted(n for n in column_names(tree) if n.lower() not in have)


# --- the rules of one changefeed --------------------------------------------------------

def _rule_exprs(rule):
    for op, side, field, key in EXPRESSIONS:
        text = getattr(rule, field)
        if text:
            yield op, side, key, text


def _matcher(rule, case_sensitive: bool):
    return TableFilter(list(rule.matcher), case_sensitive=case_sensitive)


def has_expressions(cfg) -> bool:
    return any(True for r in cfg.event_filters for _ in _rule_exprs(r))


def check_expressions(cfg, columns: dict[tuple[str, str], list[Col]], changefeed: str | None = None) -> None:
    """Refuse expressions that do not parse, or that name a column a matched table lacks."""
    from cdcflow.filter.mysql_eval import UNSUPPORTED_HINT, unsupported  # lazy: as in column_of

    replicated = TableFilter(list(cfg.rules), case_sensitive=cfg.case_sensitive)
    for i, rule in enumerate(cfg.event_filters):
        m = _matcher(rule, cfg.case_sensitive)
        for _op, _side, key, text in _rule_exprs(rule):
            where = f"filter.event-filters[{i}].{key}"
            try:
                tree = parse(text, where)
            except ConfigError as e:
                raise e.with_context(changefeed=changefeed)
            bad = unsupported(tree)
            if bad:
                raise ConfigError(f"{where} = {text!r} uses {', '.join(bad)}, which cdcflow's value filter does "
                                  "not evaluate", changefeed=changefeed, hint=UNSUPPORTED_HINT)
            for (s, t), cols in sorted(columns.items()):
                if not (m.match_table(s, t) and replicated.match_table(s, t)):
                    continue
                missing = missing_columns(tree, cols)
                if missing:
                    raise ConfigError(
                        f"{where} = {text!r} names column {', '.join(missing)}, which table {s}.{t} "
                        f"(matched by {list(rule.matcher)}) does not have",
                        changefeed=changefeed,
                        hint=f"{s}.{t} has columns {', '.join(c.name for c in cols)}; fix the expression "
                             "or narrow the rule's matcher")


def matches(ops, befores, afters, tests) -> list[bool]:
    """Whether an expression ignores each row event (its op, old and new images as
    core.row_codec encodes them), all of them reading one table version.  `tests`: [(op, side,
    compiled expression)] (compile_expr).  As TiCDC's filter, an event is ignored when an
    expression's value is the integer 1."""
    from cdcflow.filter.mysql_eval import typed_value  # lazy: as in column_of

    out = []
    for op, before, after in zip(ops, befores, afters):
        images, hit = {}, False
        for t_op, side, test in tests:
            if t_op != op:
                continue
            if side not in images:
                low = {k.lower(): v for k, v in json.loads(before if side == "before" else after).items()}
                images[side] = [typed_value(c, plain_value(low.get(c.name.lower()))) for c in test.cols]
            v = test(images[side])
            if type(v) is int and v == 1:
                hit = True
                break
        out.append(hit)
    return out


class _Compiled:
    """A compiled expression with the columns it reads."""

    __slots__ = ("cols", "run")

    def __init__(self, cols: list[Col], run):
        self.cols, self.run = cols, run

    def __call__(self, values):
        return self.run(values)


@dataclass(frozen=True)
class ValueTest:
    """The value expressions of one version of one table: the rows of `schema`.`table` committed in
    (lo, hi] (hi None: no end) read it, with its columns `cols`; `conds` [(op, side, parsed
    tree)]; `now` the instant NOW() reads, one for the whole cycle (mysql_eval)."""

    schema: str
    table: str
    lo: int
    hi: int | None
    cols: tuple[Col, ...]
    conds: tuple
    now: dt.datetime

    def compiled(self) -> list[tuple[str, str, _Compiled]]:
        return compiled_conds(list(self.cols), self.conds, self.now)


def compiled_conds(cols: list[Col], conds, now: dt.datetime | None = None) -> list[tuple[str, str, _Compiled]]:
    """[(op, side, parsed tree)] of one table version (`cols`) compiled for `matches`; `now` the
    instant NOW() reads (mysql_eval: the wall clock's where None)."""
    from cdcflow.filter.mysql_eval import compile_expr  # lazy: as in column_of

    return [(op, side, _Compiled(cols, compile_expr(tree, cols, now))) for op, side, tree in conds]


def value_tests(cfg, versions: dict[tuple[str, str], list[tuple[int, list[Col] | None]]], changefeed: str | None,
                now: dt.datetime, has_rows: Callable[[str, str, int, int | None], bool]) -> list[ValueTest]:
    """The value expressions of the window's tables, one ValueTest per table version some rule's
    expressions apply to.  `versions` a table's columns by version: [(from_ts, columns or None: no
    table)], ascending, each read by the rows committed above from_ts up to the next.  An
    expression a version cannot evaluate (a column it lacks) fails the cycle where a row reads that
    version (`has_rows(schema, table, lo, hi)`), and is passed over where none does (the columns
    after a later rename)."""
    rules = [(r, _matcher(r, cfg.case_sensitive), list(_rule_exprs(r))) for r in cfg.event_filters]
    rules = [x for x in rules if x[2]]
    out = []
    for (s, t), spans in sorted(versions.items()):
        exprs = [(op, side, key, text) for _r, m, ex in rules if m.match_table(s, t) for op, side, key, text in ex]
        if not exprs:
            continue
        spans = spans or [(0, [])]
        for i, (lo, cols) in enumerate(spans):
            if cols is None:
                continue  # the table did not exist then: no row reads this version
            hi = spans[i + 1][0] if i + 1 < len(spans) else None
            try:
                conds = _conds(s, t, lo, list(cols), exprs, now, changefeed)
            except CdcflowError:
                if len(spans) > 1 and not has_rows(s, t, lo, hi):
                    continue  # no row reads this version
                raise
            out.append(ValueTest(s, t, lo, hi, tuple(cols), tuple(conds), now))
    return out


def _conds(s: str, t: str, version_ts: int, cols: list[Col], exprs, now: dt.datetime, changefeed) -> list[tuple]:
    """[(op, side, tree)] of the expressions `exprs` on one version of s.t (`cols`), checked on
    the driver: a column it lacks, or what the evaluator cannot evaluate, is refused here."""
    from cdcflow.filter.mysql_eval import compile_expr  # lazy: as in column_of

    conds = []
    for op, side, key, text in exprs:
        tree = parse(text, key)
        missing = missing_columns(tree, cols)
        if missing:
            raise CdcflowError(
                f"{key} = {text!r} names column {', '.join(missing)}, which table {s}.{t} does not have "
                f"in its version read by the rows committed after ts {version_ts}",
                changefeed=changefeed, code=EXPRESSION_COLUMN_ABSENT,
                hint="fix the expression in the changefeed's config and re-create the changefeed, or narrow "
                     "the rule's matcher")
        compile_expr(tree, cols, now)  # refuses what it cannot evaluate here, on the driver
        conds.append((op, side, tree))
    return conds


def ignored_mask(batch, tests: list[tuple[ValueTest, list]]):
    """Which row events of `batch` (schema, table, commit_ts, op, before, after) a value
    expression ignores: one numpy bool per row.  `tests`: each ValueTest with its compiled
    expressions (ValueTest.compiled, compiled once per task)."""
    import numpy as np  # lazy: in the Spark worker's body; the CLI loads this module to check configs
    import pyarrow.compute as pc  # lazy: as numpy

    hit = np.zeros(batch.num_rows, dtype=bool)
    if not batch.num_rows:
        return hit
    for test, compiled in tests:
        sel = pc.and_(pc.equal(batch["schema"], test.schema), pc.equal(batch["table"], test.table))
        sel = pc.and_(sel, pc.greater(batch["commit_ts"], test.lo))
        if test.hi is not None:
            sel = pc.and_(sel, pc.less_equal(batch["commit_ts"], test.hi))
        rows = np.flatnonzero(sel.to_numpy(zero_copy_only=False))
        if not len(rows):
            continue
        mine = batch.select(["op", "before", "after"]).take(rows)
        found = matches(mine["op"].to_pylist(), mine["before"].to_pylist(), mine["after"].to_pylist(), compiled)
        hit[rows[np.array(found, dtype=bool)]] = True
    return hit


def value_rules(cfg, tracker, lo: int, hi: int, connect: Callable[[], object], changefeed: str | None,
                tables: list[tuple[str, str]], has_rows: Callable[[str, str, int, int | None], bool]) \
        -> list[ValueTest]:
    """The filter stage's value expressions for a window (lo, hi] of `tables`: each row is read
    with the tracked version of its table at its commit ts; the upstream's catalogue (a
    connection from `connect`) stands in for versions the tracker does not know.  Empty where no
    expression matches any of the tables."""
    if not has_expressions(cfg):
        return []
    tables = [t for t in tables if any(_matcher(r, cfg.case_sensitive).match_table(*t)
                                       for r in cfg.event_filters if any(True for _ in _rule_exprs(r)))]
    if not tables:
        return []
    tracked = {t: tracker.versions_in(*t, lo, hi) for t in tables}
    unknown = [t for t, vs in tracked.items() if any(info is UNKNOWN for _, info in vs)]
    catalogue = {}
    if unknown:
        conn = connect()
        try:
            catalogue = upstream_columns(conn, unknown)
        finally:
            conn.close()
    versions = {t: [(ts, tracked_columns(info) if isinstance(info, TableInfo)
                     else catalogue.get(t, []) if info is UNKNOWN else None) for ts, info in vs]
                for t, vs in tracked.items()}
    # NOW() is one instant for the whole cycle, as TiDB's statement-cached now (mysql_eval)
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    return value_tests(cfg, versions, changefeed, now, has_rows)
