"""The one value a lax upstream stores that a strict session cannot write as it is.

Rows are written in strict mode (connection.DML_SQL_MODE), so a value the downstream would
alter (a narrower column downstream) fails, naming the row, instead of being cut.  Every other
value an upstream that is not strict stores (clipped numbers, cut strings, zero and invalid
dates, SET values without the unknown members, '?' for characters a charset lacks) is a value
its column holds, and strict mode takes it unchanged (tests/e2e/test_type_fidelity.py walks
them).  The ENUM error value is the exception: for a member the list lacks, `INSERT IGNORE` or
a non-strict session stores '' (index 0), and strict mode refuses '' on input (1265, "Data
truncated").  TiCDC's sink turns strict mode off for everything; here only a statement refused
for that value runs again without it, inside a transaction (a savepoint when one is open), and
is kept only if every warning it raised is that same value going into an ENUM column: the
downstream then holds the upstream's value exactly.  Anything else is undone and refused as
strict mode refused it.  Statements that are not refused pay nothing.
"""

from __future__ import annotations

import re
from functools import partial

import pymysql
from pymysql.constants import SERVER_STATUS

from cdcflow.sink.downstream_errors import error_code

DATA_TRUNCATED = 1265
_COLUMN_AT_ROW = re.compile(r"column '((?:[^']|'')*)' at row (\d+)")
_STRICT = ("STRICT_ALL_TABLES", "STRICT_TRANS_TABLES")
_MAX_WARNINGS = 65535  # the most both MySQL and MariaDB keep for one statement


def _enum_column_at(code: int, message: str, enums: set[str]) -> tuple[str, int] | None:
    """(column, row) of a warning or error that says a value was cut going into an ENUM column
    (code 1265 naming one of `enums`); None for any other."""
    m = _COLUMN_AT_ROW.search(message)
    if code != DATA_TRUNCATED or not m:
        return None
    column = m.group(1).replace("''", "'")
    return (column, int(m.group(2))) if column.lower() in enums else None


def _error_value_row(code: int, message: str, enums: set[str], rows: list) -> bool:
    """Whether a warning or error says no more than "the ENUM error value went into an ENUM
    column": code 1265 on an ENUM column, at a row whose image holds '' there."""
    at = _enum_column_at(code, message, enums)
    return at is not None and 1 <= at[1] <= len(rows) and rows[at[1] - 1][0].get(at[0]) == ""


def _on_enum_column(code: int, message: str, enums: set[str]) -> bool:
    return _enum_column_at(code, message, enums) is not None


def _enum_columns(cur, table: tuple[str, str]) -> set[str]:
    cur.execute("SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s "
                "AND DATA_TYPE = 'enum'", table)
    return {name.lower() for (name,) in cur.fetchall()}


def write_error_values(conn, sql: str, refused: pymysql.MySQLError, rows: list | None,
                       table: tuple[str, str] | None, holds=None) -> pymysql.MySQLError | None:
    """Write `sql`, which strict mode refused with `refused`, if the refusal was only the ENUM
    error value (rows: the statement's (image, commit ts) in VALUES order).  None when it is
    written; else the error that stands, nothing changed: `refused`, or the first warning of
    the non-strict run that was not the ENUM error value.  Without images (a snapshot's rows
    are text the upstream printed), `holds(cursor, enum columns)` proves it instead, in the
    transaction before it commits: the rows holding '' downstream are the upstream's."""
    text = str(refused.args[1]) if len(refused.args) > 1 else ""
    if not (rows or holds) or table is None or error_code(refused) != DATA_TRUNCATED:
        return refused
    is_error_value = _on_enum_column if holds is not None else partial(_error_value_row, rows=rows)
    with conn.cursor() as cur:
        enums = _enum_columns(cur, table)
        if not is_error_value(DATA_TRUNCATED, text, enums):
            return refused
        cur.execute("SELECT @@SESSION.sql_mode, @@SESSION.max_error_count")
        mode, max_errors = cur.fetchone()
        # inside an upstream transaction (transaction-atomicity = table) only this statement is undone
        undo, keep = (("ROLLBACK TO SAVEPOINT cdcflow_enum", "RELEASE SAVEPOINT cdcflow_enum")
                      if conn.server_status & SERVER_STATUS.SERVER_STATUS_IN_TRANS else ("ROLLBACK", "COMMIT"))
        cur.execute("SAVEPOINT cdcflow_enum" if undo.startswith("ROLLBACK TO") else "BEGIN")
        try:
            cur.execute("SET SESSION sql_mode = %s, max_error_count = %s",
                        (",".join(m for m in mode.split(",") if m not in _STRICT), _MAX_WARNINGS))
            try:
                cur.execute(sql)
            except pymysql.MySQLError as e:  # refused for more than the value (a duplicate): that stands
                stands = e
            else:
                stands = _stands(cur, refused, enums, is_error_value, holds)
        except BaseException:
            cur.execute(undo)
            raise
        finally:
            cur.execute("SET SESSION sql_mode = %s, max_error_count = %s", (mode, max_errors))
        cur.execute(undo if stands else keep)
    return stands


def _stands(cur, refused: pymysql.MySQLError, enums: set[str], is_error_value, holds) -> pymysql.MySQLError | None:
    """After the non-strict run: the first warning that is not the ENUM error value, else
    None if every row holding it holds it as the upstream's."""
    cur.execute("SHOW COUNT(*) WARNINGS")  # diagnostics: neither clears the list
    count = cur.fetchone()[0]
    cur.execute("SHOW WARNINGS")
    warnings = cur.fetchall()
    stands = next((pymysql.err.DataError(code, message) for _level, code, message in warnings
                   if not is_error_value(code, message, enums)), None)
    if stands is None and count > len(warnings):
        stands = refused  # more warnings than the server kept: they cannot all be read
    if stands is None and holds is not None and not holds(cur, enums):
        stands = refused
    return stands
