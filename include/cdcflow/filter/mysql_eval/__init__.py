"""MySQL expressions evaluated over one row, with the comparison rules of TiDB's expression
engine (which TiCDC's value filters run on), in Python.

`compile_expr(tree, cols)` turns a parsed expression (sqlglot, MySQL dialect) into a function
of a row's values (in `cols` order, as `typed_value` makes them) returning its MySQL value:
None for NULL, 1/0 for a condition.  The rules, as MySQL's manual ("Type Conversion in
Expression Evaluation") and TiDB state them:

* NULL in, NULL out (except `<=>`, IS [NOT] NULL, and AND/OR where one side decides).
* two strings compare as strings, byte by byte (UTF-8 for text), case and trailing spaces
  significant whatever the column's collation: TiCDC runs TiDB's expression engine with the
  new collation framework disabled (cmd/cdc/main.go in pingcap/tiflow and pingcap/ticdc), so
  every collation compares as the binary collator.  ENUM and SET compare by their text.
* a temporal column against a string compares as time, the string read as TiDB's ParseTime
  and ParseDuration read it (tidb_datetime, tidb_duration): a trailing zone offset ('+08:00',
  '+0800', '+08', 'Z') converts the value to the session's zone, UTC (the zone TIMESTAMP
  columns are read in: '2021-01-01 12:34:56.5678+08:00' is the TIMESTAMP 04:34:56.5678 UTC),
  fraction digits past the sixth round half up, 'T' may separate date and time, two-digit
  years are 20xx (00-69) or 19xx; a string that is no date/time makes the comparison NULL
  (TiDB fails the event: TiCDC's filter session is strict).  Against a number: a DATE as
  numbers (YYYYMMDD); a DATETIME/TIMESTAMP as the DATETIME TiDB converts an integer or
  decimal to (YYYYMMDDhhmmss, YYMMDD...; a decimal's fraction rounded to the second), as
  numbers where it converts none and for a DOUBLE; a TIME as the TIME it reads (hhmmss).  A
  YEAR reads a constant as TiDB's refineArgs does (_year_operand: 21 and '21' are 2021).
* two integers compare as integers, integers and decimals exactly as decimals, anything
  else numeric as DOUBLE; a string read as a number takes its numeric prefix ('abc' is 0,
  '2x' is 2); an ENUM against a number is its index, a SET its bit mask, a hex or bit literal
  its unsigned integer.

Functions are a table, FUNCTIONS (name -> implementation, arity); CASE, CAST/CONVERT,
DATE_ADD/DATE_SUB/`+ INTERVAL` and TIMESTAMPDIFF, which have their own syntax, are compiled
by the compiler itself.  `unsupported` names what is outside both, and value_expr refuses it at
`create`.  The expression is parsed as TiCDC parses it (the WHERE clause of
`SELECT * FROM t WHERE <expr>`) in `dialect()`, sqlglot's MySQL dialect keeping function calls
as written.  JSON values (`->`,
JSON_EXTRACT) compare as JSON with MySQL's type order; a JSON column read directly is its text.

NOW() as TiCDC evaluates it.  pkg/filter/expr_filter.go (pingcap/tiflow): newExprFilter(tz, ...)
builds one session per changefeed filter with utils.NewSessionCtx({"time_zone": tz})
(dm/pkg/utils), and each expression is evaluated in that session's expression context;
cdc/processor/processor.go passes the capture's time zone (the server's `tz`, the zone the
mounter also reads TIMESTAMP columns in).  TiDB's NOW() (pkg/expression/builtin_time.go,
evalNowWithFsp -> getStmtTimestamp -> the `timestamp` session variable) is the statement's
cached time (StmtCtx's StmtNowTsCacheKey, pkg/sessionctx/variable/sysvar.go), taken at the
first evaluation and, since the filter's session never starts a new statement, kept until the
processor restarts; it is shown in the session's zone.  cdcflow does the same per cycle: the
filter stage takes the wall clock once (value_expr.value_rules) and every row of the cycle
reads that instant, in UTC, the zone the evaluator reads TIMESTAMP columns in (a TiCDC capture
with tz = UTC).  CURRENT_TIMESTAMP, LOCALTIMESTAMP, UTC_TIMESTAMP, CURDATE/CURRENT_DATE,
UTC_DATE and UNIX_TIMESTAMP() read the same instant.

The modules, lowest first (each imports only those before it): `values` (the value types, a
row's values read as them), `tidb_time` (strings and numbers read as date/time values, as TiDB
reads them), `conversions` (a value as a number, text, JSON or a temporal value; the comparison),
`json_functions`, `date_time`, `strings`, `numeric` (arithmetic and the numeric functions),
`casting` (CAST), `functions` (the function table), `supported` (what the evaluator knows),
`compiler` (compile_expr: a table of node compilers), `parsing` (the dialect).
"""

from __future__ import annotations

from cdcflow.filter.mysql_eval.casting import cast
from cdcflow.filter.mysql_eval.compiler import compile_expr
from cdcflow.filter.mysql_eval.conversions import number, truth
from cdcflow.filter.mysql_eval.date_time import (
    date_add,
    date_format,
    date_of,
    datediff,
    from_unixtime,
    hour,
    timestampdiff,
    unix_timestamp,
)
from cdcflow.filter.mysql_eval.functions import FUNCTIONS, SYNTAX, Fn, supported_functions
from cdcflow.filter.mysql_eval.json_functions import json_contains, json_extract, json_length, json_type, json_unquote
from cdcflow.filter.mysql_eval.numeric import power
from cdcflow.filter.mysql_eval.parsing import dialect
from cdcflow.filter.mysql_eval.strings import (
    concat,
    concat_sep,
    concat_ws,
    hex_of,
    left,
    locate,
    regexp,
    replace,
    right,
    substring,
    trim,
)
from cdcflow.filter.mysql_eval.supported import UNSUPPORTED_HINT, unsupported
from cdcflow.filter.mysql_eval.tidb_time import tidb_datetime, tidb_duration
from cdcflow.filter.mysql_eval.values import Bit, Col, Float32, Hex, Json, Member, Temporal, Year
from cdcflow.filter.mysql_eval.values import parse_temporal, typed_value

__all__ = [
    "FUNCTIONS", "SYNTAX", "UNSUPPORTED_HINT", "Bit", "Col", "Float32", "Fn", "Hex", "Json", "Member", "Temporal",
    "Year", "cast", "compile_expr", "concat", "concat_sep", "concat_ws", "date_add", "date_format", "date_of",
    "datediff", "dialect", "from_unixtime", "hex_of", "hour", "json_contains", "json_extract", "json_length",
    "json_type", "json_unquote", "left", "locate", "number", "parse_temporal", "power", "regexp", "replace",
    "right", "substring", "supported_functions", "tidb_datetime", "tidb_duration", "timestampdiff", "trim",
    "truth", "typed_value", "unix_timestamp", "unsupported",
]
