"""What the evaluator knows of a parsed expression: `unsupported` names the operators and functions
outside it (value_expr refuses them at `create`), and `call_of` reads a function call whatever node
sqlglot made of it."""

from __future__ import annotations

import re

from cdcflow.filter.mysql_eval.casting import CAST_TO
from cdcflow.filter.mysql_eval.date_time import TIMESTAMPDIFF_UNITS, UNITS
from cdcflow.filter.mysql_eval.functions import DATE_ARITH, FUNCTIONS

UNSUPPORTED_HINT = ("use comparisons, IN, BETWEEN, LIKE, REGEXP, IS [NOT] NULL, AND/OR/XOR/NOT, + - * / DIV %, "
                    "CASE, CAST/CONVERT, INTERVAL arithmetic and the functions docs/guides/filters.md lists")


def unsupported(tree) -> list[str]:
    """The operators and functions of `tree` the evaluator does not know, by SQL name."""
    return sorted({p for n in tree.walk() if (p := _problem(n)) is not None})


def known_nodes() -> tuple[type, ...]:
    """The sqlglot node classes the evaluator compiles, or compiles as part of their parent (a
    DATA TYPE, an INTERVAL), besides the function calls."""
    from sqlglot import exp  # lazy: sqlglot only where a config has expressions (filter.value_expr)

    return (exp.Column, exp.Identifier, exp.Literal, exp.Null, exp.Boolean, exp.HexString, exp.BitString,
            exp.Paren, exp.Neg, exp.Not, exp.And, exp.Or, exp.Xor, exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT,
            exp.LTE, exp.NullSafeEQ, exp.Is, exp.In, exp.Between, exp.Like, exp.Add, exp.Sub, exp.Mul,
            exp.Div, exp.IntDiv, exp.Mod, exp.Case, exp.If, exp.Cast, exp.DataType, exp.DataTypeParam, exp.Var,
            exp.Interval, exp.Trim, exp.TimestampDiff)


def call_of(node):
    """(NAME, argument nodes) of a function call written as one, whatever node sqlglot made of it."""
    from sqlglot import exp  # lazy: sqlglot loads only where an expression is parsed or compiled

    if isinstance(node, exp.Anonymous):
        return node.name.upper(), list(node.expressions)
    if isinstance(node, exp.Substring):
        return "SUBSTRING", [a for a in (node.this, node.args.get("start"), node.args.get("length")) if a]
    if isinstance(node, exp.RegexpLike):
        return "REGEXP", [node.this, node.expression]
    if isinstance(node, exp.StrPosition):  # POSITION(sub IN s)
        return "POSITION", [node.args["substr"], node.this]
    if isinstance(node, (exp.CurrentTimestamp, exp.Localtimestamp)):
        return "NOW", [node.this] if node.this else []
    if isinstance(node, exp.CurrentDate):
        return "CURDATE", []
    if isinstance(node, exp.If):  # IF(c, a, b); a CASE's arms are If nodes too, compiled by the CASE
        return "IF", [node.this, node.args["true"], node.args.get("false") or exp.Null()]
    return None


def _problem(node) -> str | None:
    """What the evaluator does not know about this node itself (its children are walked apart)."""
    from sqlglot import exp  # lazy: sqlglot loads only where an expression is parsed or compiled

    call = call_of(node)
    if call is not None:
        name, args = call
        if name in DATE_ARITH:
            ok = len(args) == 2 and isinstance(args[1], exp.Interval)
            return None if ok else f"{name} (written {name}(date, INTERVAL n unit))"
        if name not in FUNCTIONS:
            return name
        least, most = FUNCTIONS[name].arity
        if len(args) < least or (most is not None and len(args) > most):
            given = f"{least}" if least == most else f"{least} or more" if most is None else f"{least} to {most}"
            return f"{name} with {len(args)} arguments (it takes {given})"
        if name == "REGEXP" and isinstance(args[1], exp.Literal):
            try:
                re.compile(args[1].name)
            except re.error as e:
                return f"REGEXP {args[1].sql(dialect='mysql')} ({e})"
        return None
    if isinstance(node, exp.Interval):
        unit = node.args.get("unit")
        return None if unit is not None and unit.name.upper() in UNITS else f"INTERVAL {node.sql(dialect='mysql')}"
    if isinstance(node, exp.TimestampDiff):
        unit = node.args.get("unit")
        return None if unit is not None and unit.name.upper() in TIMESTAMPDIFF_UNITS else "TIMESTAMPDIFF unit"
    if isinstance(node, exp.Cast):
        to = node.args["to"].this.name
        return None if to in CAST_TO else f"CAST AS {node.args['to'].sql(dialect='mysql')}"
    if isinstance(node, exp.Like) and node.args.get("escape"):
        return "LIKE ... ESCAPE"
    if isinstance(node, known_nodes()):
        return None
    return node.sql_name() if isinstance(node, exp.Func) else node.key.upper()
