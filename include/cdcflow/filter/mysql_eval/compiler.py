"""Compiling a parsed expression into a function of a row's values: `compile_expr` looks each node
up in a table of small compilers by its sqlglot class (`node_compilers`, the most specific class
first); a node of none of them is a function call (a function of FUNCTIONS, or DATE_ADD and its
kin).  Each compiler takes the node and the Scope (the row's columns, the instant NOW() reads, and
`compile` for the node's parts) and returns the node's value as a function of the row."""

from __future__ import annotations

import datetime as dt
import decimal
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from cdcflow.core.errors import ConfigError
from cdcflow.filter.mysql_eval.casting import CAST_TO, cast
from cdcflow.filter.mysql_eval.conversions import as_text, compare, number, truth
from cdcflow.filter.mysql_eval.date_time import date_add, interval_of, timestampdiff
from cdcflow.filter.mysql_eval.functions import DATE_ARITH, FUNCTIONS, RESULT_ARGS
from cdcflow.filter.mysql_eval.numeric import arithmetic
from cdcflow.filter.mysql_eval.strings import trim
from cdcflow.filter.mysql_eval.supported import UNSUPPORTED_HINT, call_of, unsupported
from cdcflow.filter.mysql_eval.values import Col, Hex

# a compiled node: the node's value as a function of the row's typed values
Compiled = Callable[[list], object]

_CMP = {"EQ": lambda c: c == 0, "NEQ": lambda c: c != 0, "GT": lambda c: c > 0, "GTE": lambda c: c >= 0,
        "LT": lambda c: c < 0, "LTE": lambda c: c <= 0}


def compile_expr(tree, cols: list[Col], now: dt.datetime | None = None) -> Compiled:
    """`tree` as a function of a row's typed values (cols order); see the package docstring.
    `now`: the instant NOW() and its kin read (naive UTC); the wall clock if None."""
    bad = unsupported(tree)
    if bad:
        raise ConfigError(f"the value expression {tree.sql(dialect='mysql')!r} uses {', '.join(bad)}, "
                          "which cdcflow's value filter does not evaluate", hint=UNSUPPORTED_HINT)
    clock = now or dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    scope = Scope({c.name.lower(): i for i, c in enumerate(cols)}, {c.name.lower(): c for c in cols}, clock)
    return scope.compile(tree)


@dataclass(frozen=True)
class Scope:
    """What a node's compiler reads besides the node: each column's place in the row and the column
    (by lower-case name), and the instant NOW() reads."""
    index: dict[str, int]
    cols: dict[str, Col]
    clock: dt.datetime

    def compile(self, node) -> Compiled:
        if node.args.get("negate"):  # `x NOT LIKE p` and the like: the node's value negated
            return _negated(node, self)
        compilers = node_compilers()
        for kind in type(node).__mro__:
            if kind in compilers:
                return compilers[kind](node, self)
        return _call(node, self)


@functools.cache
def node_compilers() -> dict[type, Callable[[object, Scope], Compiled]]:
    """The compiler of each kind of node, by sqlglot class (built at the first compile: sqlglot
    loads only where a config has expressions)."""
    from sqlglot import exp  # lazy: sqlglot only where a config has expressions (filter.value_expr)

    return {
        exp.Column: _column, exp.Paren: _paren,
        exp.Literal: _constant, exp.Null: _constant, exp.Boolean: _constant, exp.HexString: _constant,
        exp.BitString: _constant,
        **{getattr(exp, name): _comparison for name in _CMP}, exp.NullSafeEQ: _null_safe_eq,
        exp.Not: _not_of, exp.And: _logic, exp.Or: _logic, exp.Xor: _logic,
        exp.Is: _is, exp.In: _in, exp.Between: _between, exp.Like: _like_of,
        exp.Neg: _neg, exp.Add: _add, exp.Sub: _sub, exp.Mul: _arith, exp.Div: _arith, exp.IntDiv: _arith,
        exp.Mod: _arith,
        exp.Case: _case, exp.Cast: _cast_of, exp.Trim: _trim, exp.TimestampDiff: _timestampdiff,
    }


# --- the node compilers ---------------------------------------------------------------------

def _negated(node, scope: Scope) -> Compiled:
    plain = node.copy()
    plain.set("negate", None)
    inner = scope.compile(plain)
    return lambda row: _not(truth(inner(row)))


def _column(node, scope: Scope) -> Compiled:
    i = scope.index[node.name.lower()]
    return lambda row: row[i]


def _constant(node, scope: Scope) -> Compiled:
    v = _literal(node)
    return lambda row: v


def _paren(node, scope: Scope) -> Compiled:
    return scope.compile(node.this)


def _comparison(node, scope: Scope) -> Compiled:
    name = type(node).__name__
    test, left, right = _CMP[name], scope.compile(node.left), scope.compile(node.right)

    def run(row):
        a, b = left(row), right(row)
        if a is None or b is None:
            return None
        c = compare(a, b, name)
        return None if c is None else int(test(c))
    return run


def _null_safe_eq(node, scope: Scope) -> Compiled:
    left, right = scope.compile(node.left), scope.compile(node.right)

    def run(row):
        a, b = left(row), right(row)
        if a is None or b is None:
            return int(a is None and b is None)
        c = compare(a, b)
        return None if c is None else int(c == 0)
    return run


def _not_of(node, scope: Scope) -> Compiled:
    inner = scope.compile(node.this)
    return lambda row: _not(truth(inner(row)))


def _logic(node, scope: Scope) -> Compiled:
    op, left, right = type(node).__name__, scope.compile(node.left), scope.compile(node.right)

    def run(row):
        a, b = truth(left(row)), truth(right(row))
        if op == "And":
            return 0 if a is False or b is False else None if a is None or b is None else 1
        if op == "Or":
            return 1 if a or b else None if a is None or b is None else 0
        return None if a is None or b is None else int(a != b)
    return run


def _is(node, scope: Scope) -> Compiled:
    from sqlglot import exp  # lazy: sqlglot only where a config has expressions (filter.value_expr)

    inner, what = scope.compile(node.this), node.expression
    if isinstance(what, exp.Null):
        return lambda row: int(inner(row) is None)
    want = bool(what.this)
    return lambda row: int(truth(inner(row)) is want)


def _in(node, scope: Scope) -> Compiled:
    left, options = scope.compile(node.this), [scope.compile(e) for e in node.expressions]

    def run(row):
        a = left(row)
        if a is None:
            return None
        unknown = False
        for o in options:
            b = o(row)
            if b is None:
                unknown = True
            else:
                c = compare(a, b)
                if c is None:
                    unknown = True
                elif c == 0:
                    return 1
        return None if unknown else 0
    return run


def _between(node, scope: Scope) -> Compiled:
    this, low, high = scope.compile(node.this), scope.compile(node.args["low"]), scope.compile(node.args["high"])

    def run(row):
        v, lo, hi = this(row), low(row), high(row)
        a = None if v is None or lo is None else compare(v, lo, "GTE")  # TiDB: v >= lo AND v <= hi
        b = None if v is None or hi is None else compare(v, hi, "LTE")
        if (a is not None and a < 0) or (b is not None and b > 0):
            return 0
        return None if a is None or b is None else 1
    return run


def _like_of(node, scope: Scope) -> Compiled:
    this, pattern = scope.compile(node.this), scope.compile(node.expression)
    cache: dict = {}

    def run(row):
        v, p = this(row), pattern(row)
        if v is None or p is None:
            return None
        key = as_text(p)
        if key not in cache:
            cache[key] = _like(key)
        return int(cache[key].fullmatch(as_text(v)) is not None)
    return run


def _neg(node, scope: Scope) -> Compiled:
    inner = scope.compile(node.this)
    return lambda row: None if (v := inner(row)) is None else -number(v)


def _add(node, scope: Scope) -> Compiled:
    from sqlglot import exp  # lazy: sqlglot only where a config has expressions (filter.value_expr)

    if isinstance(node.expression, exp.Interval):  # date + INTERVAL n unit
        return _date_arith(node.this, node.expression, scope, 1)
    if isinstance(node.this, exp.Interval):  # INTERVAL n unit + date
        return _date_arith(node.expression, node.this, scope, 1)
    return _arith(node, scope)


def _sub(node, scope: Scope) -> Compiled:
    from sqlglot import exp  # lazy: sqlglot only where a config has expressions (filter.value_expr)

    if isinstance(node.expression, exp.Interval):  # date - INTERVAL n unit
        return _date_arith(node.this, node.expression, scope, -1)
    return _arith(node, scope)


def _arith(node, scope: Scope) -> Compiled:
    op, left, right = type(node).__name__, scope.compile(node.left), scope.compile(node.right)

    def run(row):
        a, b = left(row), right(row)
        return None if a is None or b is None else arithmetic(op, a, b)
    return run


def _date_arith(date_node, interval, scope: Scope, sign: int) -> Compiled:
    unit = interval.args["unit"].name.upper()
    date, amount = scope.compile(date_node), scope.compile(interval.this)

    def run(row):
        v = date(row)
        return None if v is None else date_add(v, interval_of(amount(row), unit), unit, sign)
    return run


def _case(node, scope: Scope) -> Compiled:
    c = scope.compile
    subject = c(node.this) if node.this else None
    ifs = node.args.get("ifs") or []
    arms = [(c(i.this), c(i.args["true"])) for i in ifs]
    default = c(node.args["default"]) if node.args.get("default") else (lambda row: None)
    typed = _stringly([i.args["true"] for i in ifs] + [node.args.get("default")], scope.cols)

    def run(row):
        s = subject(row) if subject else None
        for cond, value in arms:
            v = cond(row)
            hit = (s is not None and v is not None and compare(s, v) == 0) if subject else truth(v)
            if hit:
                return typed(value(row))
        return typed(default(row))
    return run


def _cast_of(node, scope: Scope) -> Compiled:
    to = node.args["to"]
    params = [int(p.this.this) for p in to.expressions if hasattr(p.this, "this")]
    target = CAST_TO[to.this.name]
    length = params[0] if params else None
    scale = params[1] if len(params) > 1 else None
    inner, clock = scope.compile(node.this), scope.clock
    return lambda row: None if (v := inner(row)) is None else cast(v, target, length, scale, clock)


def _trim(node, scope: Scope) -> Compiled:
    where = (node.args.get("position") or "BOTH").upper()
    rem = scope.compile(node.expression) if node.expression else (lambda row: " ")
    return _strict(lambda s, r: trim(s, r, where), [scope.compile(node.this), rem])


def _timestampdiff(node, scope: Scope) -> Compiled:
    unit = node.args["unit"].name.upper()
    return _strict(lambda a, b: timestampdiff(unit, a, b), [scope.compile(node.expression), scope.compile(node.this)])


def _call(node, scope: Scope) -> Compiled:
    """A function call: DATE_ADD and its kin, or a function of FUNCTIONS."""
    name, arg_nodes = call_of(node)
    if name in DATE_ARITH:
        return _date_arith(arg_nodes[0], arg_nodes[1], scope, DATE_ARITH[name])
    fn = FUNCTIONS[name]
    args = [scope.compile(a) for a in arg_nodes]
    impl = functools.partial(fn.impl, scope.clock) if fn.now else fn.impl
    if not fn.nulls:
        typed = _stringly(arg_nodes[RESULT_ARGS[name]], scope.cols) if name in RESULT_ARGS else (lambda v: v)
        return lambda row: typed(impl(*[a(row) for a in args]))
    return _strict(impl, args)


# --- what the compilers share ---------------------------------------------------------------

def _literal(node):
    from sqlglot import exp  # lazy: sqlglot only where a config has expressions (filter.value_expr)

    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Boolean):
        return 1 if node.this else 0
    if isinstance(node, exp.HexString):
        h = node.this if len(node.this) % 2 == 0 else "0" + node.this
        return Hex(bytes.fromhex(h))
    if isinstance(node, exp.BitString):
        n = int(node.this or "0", 2)
        return Hex(n.to_bytes(max(1, (len(node.this) + 7) // 8), "big"))
    text = node.this
    if node.is_string:
        return text
    if "e" in text.lower():
        return float(text)
    if "." in text:
        return decimal.Decimal(text)
    return int(text)


def _like(pattern: str, escape: str = "\\") -> re.Pattern:
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == escape and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
        i += 1
    return re.compile("".join(out), re.S)


def _strict(f, args):
    """f of the arguments' values; NULL if any is NULL."""
    def run(row):
        vs = [a(row) for a in args]
        return None if any(v is None for v in vs) else f(*vs)
    return run


def _not(t):
    return None if t is None else int(not t)


def _static_kind(node, cols: dict[str, Col]) -> str | None:
    """string, temporal or number: what a literal or column is before any row is read (None: unknown)."""
    from sqlglot import exp  # lazy: sqlglot loads only where an expression is parsed or compiled

    if isinstance(node, exp.Literal):
        return "string" if node.is_string else "number"
    if isinstance(node, exp.Column) and node.name.lower() in cols:
        kind = cols[node.name.lower()].kind
        return "string" if kind in ("text", "binary", "enum", "set", "json") else \
            "temporal" if kind in ("date", "datetime", "time") else "number"
    return None


def _stringly(results, cols: dict[str, Col]) -> Callable:
    """MySQL's type of IF/IFNULL/COALESCE/CASE: a string among the results, or temporal values
    mixed with numbers, make the result a string (COALESCE(time_col, 0) is the TIME's text)."""
    kinds = {_static_kind(r, cols) for r in results if r is not None}
    if "string" in kinds or {"temporal", "number"} <= kinds:
        return lambda v: as_text(v) if v is not None and not isinstance(v, (str, bytes)) else v
    return lambda v: v
