"""TiCDC's DML value-expression filters, evaluated in Spark over each row image.

An event-filter rule's `ignore-insert-value-expr` is tested on an INSERT's new row,
`ignore-delete-value-expr` on a DELETE's old row, and an UPDATE is ignored when
`ignore-update-old-value-expr` matches its old row or `ignore-update-new-value-expr`
its new row.  Expressions are MySQL expressions (parsed with sqlglot's MySQL dialect);
each is rewritten to Spark SQL over the image's typed columns, keeping MySQL's meaning
where Spark's differs:

* NULL: an expression whose value is NULL does not match (as in a WHERE clause).
* strings: columns with a case-insensitive (`_ci`) collation compare ignoring case and
  trailing spaces (PAD SPACE), for =, <>, <, >, <=, >=, <=>, IN and LIKE.  Accents
  stay significant ('é' <> 'e'), which utf8mb4_general_ci would fold.
* implicit casts: a number compared with a string compares both as DOUBLE, as MySQL
  does; a string that is not a number becomes NULL there (MySQL would read its numeric
  prefix), so such a comparison does not match.
* types: integers, DECIMAL up to 38 digits, DOUBLE, DATE and DATETIME are Spark values
  of those types (wider DECIMAL becomes DOUBLE, BIGINT UNSIGNED and BIT DECIMAL(20,0));
  TIMESTAMP is compared in UTC; TIME, ENUM, SET, JSON are their text; a zero date is NULL.

* TRUE and FALSE are the integers 1 and 0, and a number where a condition stands (an
  operand of AND, OR, XOR, NOT, IS TRUE, or the whole expression) is true when non-zero.

A row is read with its table as it was at the row's commit ts: the tracked schema's
version (ddl.tracker), so a table dropped or a column renamed later in the upstream does
not matter; where the tracker does not know the table, the upstream's information_schema.
A string column's collation is the one its definition or its CREATE TABLE names, else its
character set's default (case-insensitive).  `check_expressions` runs at `changefeed
create` over the upstream's catalogue (the tracked schema's start): an expression that
does not parse, or names a column that a matched table lacks, is refused there, naming
the rule, the expression and the column.
"""

from __future__ import annotations

import decimal
import json
from collections.abc import Callable
from dataclasses import dataclass

from cdcflow.core.errors import EXPRESSION_COLUMN_ABSENT, CdcflowError, ConfigError
from cdcflow.core.row_codec import TemporalText, plain_value
from cdcflow.core.system_schemas import sql_not_system

# (op the expression applies to, image it reads, EventFilterRule field, TOML key)
EXPRESSIONS = (
    ("insert", "after", "ignore_insert_value_expr", "ignore-insert-value-expr"),
    ("update", "before", "ignore_update_old_value_expr", "ignore-update-old-value-expr"),
    ("update", "after", "ignore_update_new_value_expr", "ignore-update-new-value-expr"),
    ("delete", "before", "ignore_delete_value_expr", "ignore-delete-value-expr"),
)

# MySQL DATA_TYPE -> (Spark type, how a value is compared).  Kinds: num, str (case
# matters), ci (case-insensitive string: decided by the collation), other.
_INTS = ("tinyint", "smallint", "mediumint", "int", "integer", "year")
_TEXT = ("char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set")
_BYTES = ("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "geometry")


@dataclass(frozen=True)
class Col:
    name: str
    spark_type: str  # as in a DDL schema string
    kind: str


def column_of(name: str, data_type: str, column_type: str, collation: str | None, precision, scale) -> Col:
    t, unsigned = data_type.lower(), "unsigned" in (column_type or "").lower()
    if t in _INTS:
        return Col(name, "bigint", "num")
    if t == "bigint":
        return Col(name, "decimal(20,0)" if unsigned else "bigint", "num")
    if t == "bit":
        return Col(name, "decimal(20,0)", "num")
    if t in ("decimal", "numeric"):
        p, s = int(precision or 10), int(scale or 0)
        return Col(name, f"decimal({p},{s})" if p <= 38 else "double", "num")
    if t in ("float", "double", "real"):
        return Col(name, "double", "num")
    if t == "date":
        return Col(name, "date", "other")
    if t in ("datetime", "timestamp"):
        return Col(name, "timestamp_ntz", "other")
    if t in _BYTES:
        return Col(name, "binary", "str")
    if t in _TEXT:
        return Col(name, "string", "ci" if (collation or "").lower().endswith("_ci") else "str")
    return Col(name, "string", "str")  # time, json, anything newer


# DDL spellings of types information_schema names otherwise
_TYPE_ALIASES = {"bool": "tinyint", "boolean": "tinyint", "int1": "tinyint", "int2": "smallint",
                 "int3": "mediumint", "int4": "int", "int8": "bigint", "middleint": "mediumint",
                 "dec": "decimal", "fixed": "decimal", "float4": "float", "float8": "double"}


def tracked_columns(info) -> list[Col]:
    """The columns of a tracked table version (ddl.table_def.TableInfo), typed as column_of
    types information_schema's."""
    cols = []
    for c in info.columns:
        text = c["type"].lower()
        head, _, args = text.partition("(")
        words = head.split()
        data_type = _TYPE_ALIASES.get(words[0], words[0]) if words else ""
        nums = [a.strip() for a in args.split(")")[0].split(",")] if args else []
        precision, scale = (nums + [None, None])[:2] if all(n.isdigit() for n in nums) else (None, None)
        collation = c.get("collation") or ("binary" if " binary" in f" {text}" else "default_ci")
        cols.append(column_of(c["name"], data_type, text, collation, precision, scale))
    return cols


def upstream_columns(conn, tables: list[tuple[str, str]] | None = None) -> dict[tuple[str, str], list[Col]]:
    """Columns of the upstream's tables (all user tables, or the ones given), in order."""
    user_tables, args = sql_not_system("TABLE_SCHEMA")
    sql = ("SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, COLLATION_NAME, "
           "NUMERIC_PRECISION, NUMERIC_SCALE FROM information_schema.COLUMNS WHERE " + user_tables)
    if tables is not None:
        if not tables:
            return {}
        sql += " AND (" + " OR ".join(["(TABLE_SCHEMA = %s AND TABLE_NAME = %s)"] * len(tables)) + ")"
        args += [x for t in tables for x in t]
    out: dict[tuple[str, str], list[Col]] = {}
    with conn.cursor() as cur:
        cur.execute(sql + " ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION", args)
        for s, t, name, dtype, ctype, coll, prec, scale in cur.fetchall():
            out.setdefault((s, t), []).append(column_of(name, dtype, ctype, coll, prec, scale))
    return out


# --- parsing and rewriting -------------------------------------------------------------

def parse(text: str, where: str):
    """The expression's syntax tree; a ConfigError naming `where` if it is not one."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(text, read="mysql")
    except sqlglot.errors.SqlglotError as e:
        raise ConfigError(f"{where} = {text!r} is not a valid SQL expression: {str(e).splitlines()[0]}",
                          hint="write a MySQL expression over the row's columns, e.g. \"id > 100 AND name = 'x'\"") \
            from None
    if isinstance(tree, (exp.Query, exp.Alias, exp.Command, exp.DDL)) or tree.find(exp.Query) is not None:
        raise ConfigError(f"{where} = {text!r} is not a valid SQL expression over one row",
                          hint="no statements, aliases or subqueries: e.g. \"id > 100 AND name = 'x'\"")
    return tree


def column_names(tree) -> set[str]:
    from sqlglot import exp

    return {c.name for c in tree.find_all(exp.Column)}


def missing_columns(tree, cols: list[Col]) -> list[str]:
    have = {c.name.lower() for c in cols}  # MySQL column names ignore case
    return sorted(n for n in column_names(tree) if n.lower() not in have)


def to_spark(tree, cols: list[Col]) -> str:
    """The expression as Spark SQL over columns c0, c1, ... (the image's columns in `cols`
    order), rewritten for MySQL's comparison semantics (see the module's docstring)."""
    from sqlglot import exp

    index = {c.name.lower(): i for i, c in enumerate(cols)}
    # MySQL's TRUE and FALSE are 1 and 0 (`x IS TRUE` keeps its own meaning, below)
    tree = tree.copy().transform(lambda n: exp.Literal.number(int(n.this)) if isinstance(n, exp.Boolean)
                                 and not isinstance(n.parent, exp.Is) else n)

    def kind(node) -> str | None:
        if isinstance(node, exp.Column):
            return cols[index[node.name.lower()]].kind
        if isinstance(node, exp.Literal):
            return "lit" if node.is_string else "num"
        if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
            return "num"
        return None

    def as_double(node):
        return exp.TryCast(this=node, to=exp.DataType.build("double"), safe=True)

    def folded(node):
        return exp.Lower(this=exp.Anonymous(this="rtrim", expressions=[node]))

    def rewrite(node):
        if isinstance(node, (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ)):
            kinds = {kind(node.left), kind(node.right)}
            if "num" in kinds and kinds & {"str", "ci", "lit"}:
                return node.__class__(this=as_double(node.left), expression=as_double(node.right))
            if "ci" in kinds and kinds <= {"ci", "str", "lit", None}:
                return node.__class__(this=folded(node.left), expression=folded(node.right))
        elif isinstance(node, exp.In) and kind(node.this) == "ci":
            return exp.In(this=folded(node.this), expressions=[folded(e) for e in node.expressions])
        elif isinstance(node, exp.In) and kind(node.this) in ("str", "lit") and any(
                kind(e) == "num" for e in node.expressions):
            return exp.In(this=as_double(node.this), expressions=[as_double(e) for e in node.expressions])
        elif isinstance(node, (exp.Like, exp.ILike)) and kind(node.this) == "ci":
            return exp.Like(this=exp.Lower(this=node.this), expression=exp.Lower(this=node.expression))
        return node

    def truth(node):
        """A condition of MySQL's where `node` stands as one: a number is true when non-zero."""
        if isinstance(node.unnest(), (exp.Predicate, exp.Connector, exp.Not, exp.Boolean)):
            return node
        return exp.Paren(this=exp.NEQ(this=as_double(node), expression=exp.Literal.number(0)))

    def conditions(node):
        if isinstance(node, exp.Connector):
            return node.__class__(this=truth(node.left), expression=truth(node.right))
        if isinstance(node, exp.Not):
            return exp.Not(this=truth(node.this))
        if isinstance(node, exp.Is) and isinstance(node.expression, exp.Boolean):  # x IS [NOT] TRUE/FALSE
            cond = truth(node.this)
            known = exp.Not(this=exp.Is(this=cond.copy(), expression=exp.Null()))
            return exp.Paren(this=exp.And(this=known, expression=cond if node.expression.this else exp.Not(this=cond)))
        return node

    root = exp.Paren(this=tree.transform(rewrite))
    for node in reversed(list(root.this.dfs())):  # innermost first: each sees its operands rewritten
        new = conditions(node)
        if new is not node:
            node.replace(new)
    tree = truth(root.this)
    tree = tree.transform(lambda n: exp.column(f"c{index[n.name.lower()]}") if isinstance(n, exp.Column) else n)
    return tree.sql(dialect="spark")


# --- the rules of one changefeed --------------------------------------------------------

def _rule_exprs(rule):
    for op, side, field, key in EXPRESSIONS:
        text = getattr(rule, field)
        if text:
            yield op, side, key, text


def _matcher(rule, case_sensitive: bool):
    from cdcflow.filter.table import TableFilter

    return TableFilter(list(rule.matcher), case_sensitive=case_sensitive)


def has_expressions(cfg) -> bool:
    return any(True for r in cfg.event_filters for _ in _rule_exprs(r))


def check_expressions(cfg, columns: dict[tuple[str, str], list[Col]], changefeed: str | None = None) -> None:
    """Refuse expressions that do not parse, or that name a column a matched table lacks."""
    from cdcflow.filter.table import TableFilter

    replicated = TableFilter(list(cfg.rules), case_sensitive=cfg.case_sensitive)
    for i, rule in enumerate(cfg.event_filters):
        m = _matcher(rule, cfg.case_sensitive)
        for _op, _side, key, text in _rule_exprs(rule):
            where = f"filter.event-filters[{i}].{key}"
            try:
                tree = parse(text, where)
            except ConfigError as e:
                raise e.with_context(changefeed=changefeed)
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


def _plain(v):
    v = plain_value(v)
    return None if isinstance(v, TemporalText) else v  # a zero date has no Spark value


def _arrow_value(v, spark_type: str):
    if v is None:
        return None
    if spark_type.startswith("decimal"):
        scale = int(spark_type.rstrip(")").split(",")[1])
        return decimal.Decimal(v).quantize(decimal.Decimal(1).scaleb(-scale))
    if spark_type == "double":
        return float(v)
    if spark_type == "string" and isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8", "replace")
    return v


def typed_images(batches, cols: list[Col], sides: dict[str, set[str]], schema):
    """mapInArrow body: events of one table in; one row per image an expression reads out:
    (commit_ts, seq, op, side, c0, c1, ...) with the columns typed as `cols` says and
    `schema` (the Arrow form of image_schema(cols)) lays out."""
    import pyarrow as pa

    for b in batches:
        d = b.to_pydict()
        out = {f: [] for f in schema.names}
        for ts, seq, op, before, after in zip(d["commit_ts"], d["seq"], d["op"], d["before"], d["after"]):
            for side in sides.get(op, ()):
                img = json.loads(before if side == "before" else after)
                low = {k.lower(): v for k, v in img.items()}
                out["commit_ts"].append(ts)
                out["seq"].append(seq)
                out["op"].append(op)
                out["side"].append(side)
                for i, c in enumerate(cols):
                    out[f"c{i}"].append(_arrow_value(_plain(low.get(c.name.lower())), c.spark_type))
        yield pa.RecordBatch.from_pydict(out, schema=schema)


def image_schema(cols: list[Col]):
    """The StructType of typed_images' rows.  Built here, not parsed from a DDL string:
    the parser needs a JVM, which a Spark Connect client does not have."""
    from pyspark.sql import types as T

    def spark_type(name: str):
        if name.startswith("decimal("):
            p, s = name[len("decimal("):-1].split(",")
            return T.DecimalType(int(p), int(s))
        return {"bigint": T.LongType(), "double": T.DoubleType(), "date": T.DateType(),
                "timestamp_ntz": T.TimestampNTZType(), "binary": T.BinaryType(),
                "string": T.StringType()}[name]

    fixed = [("commit_ts", T.LongType()), ("seq", T.LongType()), ("op", T.StringType()),
             ("side", T.StringType())]
    return T.StructType([T.StructField(n, t) for n, t in fixed]
                        + [T.StructField(f"c{i}", spark_type(c.spark_type)) for i, c in enumerate(cols)])


def ignored_events(spark, dml, cfg, versions: dict[tuple[str, str], list[tuple[int, list[Col]]]],
                   changefeed: str | None = None):
    """(commit_ts, seq) of the row events the value expressions ignore, or None if no rule
    has an expression.  `dml` holds row events (schema, table, commit_ts, seq, op, before, after);
    `versions` a table's columns by version: [(from_ts, columns or None: no table)], ascending,
    each read by the rows committed above from_ts up to the next."""
    from functools import reduce

    from pyspark.sql import functions as F

    rules = [(r, _matcher(r, cfg.case_sensitive), list(_rule_exprs(r))) for r in cfg.event_filters]
    rules = [x for x in rules if x[2]]
    if not rules:
        return None
    tables = [(r["schema"], r["table"]) for r in dml.select("schema", "table").distinct().collect()]
    parts = []
    for s, t in tables:
        exprs = [(op, side, key, text) for _r, m, ex in rules if m.match_table(s, t) for op, side, key, text in ex]
        if not exprs:
            continue
        spans = versions.get((s, t)) or [(0, [])]
        rows = dml.where((F.col("schema") == s) & (F.col("table") == t)).select(
            "commit_ts", "seq", "op", "before", "after")
        for i, (lo, cols) in enumerate(spans):
            if cols is None:
                continue  # the table did not exist then: no row reads this version
            span = rows.where(F.col("commit_ts") > lo)
            if i + 1 < len(spans):
                span = span.where(F.col("commit_ts") <= spans[i + 1][0])
            if len(spans) > 1 and span.limit(1).count() == 0:
                continue  # no row reads this version (e.g. the columns after a later rename)
            parts.append(_ignored_in(span, s, t, lo, list(cols), exprs, changefeed))
    if not parts:
        return None
    return reduce(lambda a, b: a.unionByName(b), parts).distinct()


def _ignored_in(rows, s: str, t: str, version_ts: int, cols: list[Col], exprs, changefeed):
    """(commit_ts, seq) of `rows` (all reading one version of s.t: `cols`) the expressions ignore."""
    from pyspark.sql.pandas.types import to_arrow_schema

    conds, sides = [], {}
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
        sides.setdefault(op, set()).add(side)
        conds.append(f"(op = '{op}' AND side = '{side}' AND coalesce(({to_spark(tree, cols)}), false))")
    spark_schema = image_schema(cols)
    arrow_schema = to_arrow_schema(spark_schema)
    images = rows.mapInArrow(lambda it, c=cols, s=sides, a=arrow_schema: typed_images(it, c, s, a), spark_schema)
    return images.where(" OR ".join(conds)).select("commit_ts", "seq")


def drop_ignored_rows(spark, dml, cfg, tracker, lo: int, hi: int, connect: Callable[[], object],
                      log: Callable[..., None], changefeed: str | None = None):
    """The filter stage's step: `dml` (rows of the window (lo, hi]) without the row events the
    value expressions ignore.  Each row is read with the tracked version of its table at its
    commit ts; the upstream's catalogue (a connection from `connect`) stands in for versions the
    tracker does not know.  `log(what, **fields)` is told how many rows were ignored."""
    from cdcflow.ddl.table_def import TableInfo
    from cdcflow.ddl.tracker import UNKNOWN

    if not has_expressions(cfg):
        return dml
    tables = [(r["schema"], r["table"]) for r in dml.select("schema", "table").distinct().collect()]
    tables = [t for t in tables if any(_matcher(r, cfg.case_sensitive).match_table(*t)
                                       for r in cfg.event_filters if any(True for _ in _rule_exprs(r)))]
    if not tables:
        return dml
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
    ignored = ignored_events(spark, dml, cfg, versions, changefeed)
    if ignored is None:
        return dml
    n = ignored.count()
    log("rows ignored by value expressions", rows=n)
    return dml.join(ignored, ["commit_ts", "seq"], "left_anti") if n else dml
