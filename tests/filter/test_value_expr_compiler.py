"""The value-expression compiler's table of node compilers (filter/mysql_eval/compiler.py): every
kind of node the evaluator admits at create compiles, by a compiler of its own, as a call, or as a
part of the node that holds it; a node is compiled by the compiler of its most specific class."""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from cdcflow.filter.mysql_eval import Col, compile_expr, dialect, typed_value
from cdcflow.filter.mysql_eval.compiler import node_compilers
from cdcflow.filter.mysql_eval.supported import call_of, known_nodes, unsupported

# compiled by the node that holds them: a column's name, CAST's type, an INTERVAL's amount and unit
PARTS = {exp.Identifier, exp.DataType, exp.DataTypeParam, exp.Var, exp.Interval}
# compiled as a call (supported.call_of reads IF(c, a, b) from it)
CALLS = {exp.If}


def _where(text: str):
    return sqlglot.parse_one(f"SELECT * FROM t WHERE {text}", read=dialect()).args["where"].this


def test_every_node_the_evaluator_admits_compiles():
    assert call_of(exp.If(this=exp.true(), true=exp.Literal.number(1))) is not None
    table = node_compilers()
    lacking = [kind.__name__ for kind in known_nodes() if kind not in PARTS | CALLS and kind not in table]
    assert not lacking, f"admitted by supported.unsupported() but without a compiler: {lacking}"


def test_a_node_of_a_subclass_takes_its_class_compiler():
    # TRY_CAST is a Cast to sqlglot: the CAST compiler takes it, as the isinstance chain did
    tree = exp.TryCast(this=exp.Literal.string("12abc"), to=exp.DataType.build("SIGNED", dialect="mysql"))
    assert not unsupported(tree)
    assert compile_expr(tree, [])([]) == 12


def test_calls_negations_and_interval_arithmetic_compile_through_the_table():
    cols = [Col("a", "int"), Col("d", "date"), Col("s", "text")]
    row = [typed_value(c, v) for c, v in zip(cols, (7, "2021-03-04", "abc"))]
    checks = {"a + 1 = 8": 1, "s NOT LIKE 'a%'": 0, "UPPER(s) = 'ABC'": 1, "IF(a > 5, 'big', 'small')": "big",
              "DATE_ADD(d, INTERVAL 1 DAY) = '2021-03-05'": 1, "d - INTERVAL 1 MONTH = '2021-02-04'": 1,
              "INTERVAL 1 YEAR + d = '2022-03-04'": 1}
    for text, want in checks.items():
        assert compile_expr(_where(text), cols)(row) == want, text
