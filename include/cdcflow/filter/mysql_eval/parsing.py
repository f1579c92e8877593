"""How a value expression is parsed: sqlglot's MySQL dialect, with the calls the evaluator
knows kept as written."""

from __future__ import annotations

import functools

from cdcflow.filter.mysql_eval.functions import DATE_ARITH, FUNCTIONS


@functools.cache
def dialect():
    """sqlglot's MySQL dialect with every function of FUNCTIONS left a plain call (sqlglot would
    rewrite some: YEAR(d) into YEAR(DATE(d)), MOD into %, `->` into its own JSON path), so the
    compiler sees the calls as written."""
    from sqlglot import exp  # lazy: sqlglot loads only where an expression is parsed
    from sqlglot.dialects.mysql import MySQL  # lazy: as above
    from sqlglot.tokens import TokenType  # lazy: as above

    def call(name, *args):
        return exp.Anonymous(this=name, expressions=list(args))

    class CallsAsWritten(MySQL.Parser):
        FUNCTIONS = {k: v for k, v in MySQL.Parser.FUNCTIONS.items() if k not in FUNCTIONS and k not in DATE_ARITH}
        FUNCTION_PARSERS = {k: v for k, v in MySQL.Parser.FUNCTION_PARSERS.items() if k not in ("CEIL", "FLOOR")}
        COLUMN_OPERATORS = {**MySQL.Parser.COLUMN_OPERATORS,
                            TokenType.ARROW: lambda self, this, path: call("JSON_EXTRACT", this, path),
                            TokenType.DARROW: lambda self, this, path: call(
                                "JSON_UNQUOTE", call("JSON_EXTRACT", this, path))}

    class CdcflowMySQL(MySQL):
        Parser = CallsAsWritten
    return CdcflowMySQL
