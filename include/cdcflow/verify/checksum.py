"""What each server computes for a chunk, and the text form values are compared in.

A chunk's checksum is COUNT(*), BIT_XOR and SUM of CRC32 over each row's text, computed by
the server (sync-diff-inspector's BIT_XOR(CRC32(CONCAT_WS(...)))); the SUM keeps equal rows
of a keyless table from cancelling out under XOR.  A row's text joins its columns' text
forms, each hex-encoded so the separator cannot occur inside a value, and ends with one
ISNULL flag per column, since CONCAT_WS skips NULLs ('a', NULL and NULL, 'a' would join
alike).  A column's text form is the same on MySQL, MariaDB and TiDB for the same value:
numbers, dates and strings as the server prints them (TIMESTAMPs in a UTC session, so the
same instant prints the same), strings converted to utf8mb4 (a latin1 column and its
utf8mb4 copy hold the same text), binary types as hex, and FLOAT/DOUBLE rounded to the
digits they hold (6 and 15 significant), where servers print more digits differently.
"""

from __future__ import annotations

from cdcflow.core.row_codec import quote_ident

# column data type (COLUMN_TYPE's first word) -> how its text form is computed
_BINARY_TYPES = frozenset("binary varbinary tinyblob blob mediumblob longblob bit geometry point linestring polygon "
                          "multipoint multilinestring multipolygon geometrycollection".split())
_FLOAT_DIGITS = {"float": 6, "double": 15, "real": 15}
SEPARATOR = ","


def data_type(column_type: str) -> str:
    return column_type.lower().split("(")[0].split(" ")[0]


def text_form(column: str, column_type: str) -> str:
    """The SQL expression of a column's text form (NULL for NULL)."""
    c = quote_ident(column)
    kind = data_type(column_type)
    if kind in _BINARY_TYPES:
        return f"HEX({c})"
    if kind in _FLOAT_DIGITS:
        digits = _FLOAT_DIGITS[kind] - 1
        return (f"IF({c} = 0, '0', CONVERT(ROUND({c}, {digits} - FLOOR(LOG10(ABS({c})))) USING utf8mb4))")
    return f"CONVERT({c} USING utf8mb4)"


def row_text(columns: list[str], types: dict[str, str]) -> str:
    """The SQL expression of a row's text, over `columns` typed as `types` (one side's)."""
    parts = [f"HEX({text_form(c, types[c])})" for c in columns]
    flags = "CONCAT(" + ", ".join(f"ISNULL({quote_ident(c)})" for c in columns) + ")"
    return f"CONCAT_WS('{SEPARATOR}', {', '.join(parts)}, {flags})"


def checksum_sql(table: str, columns: list[str], types: dict[str, str], where: str) -> str:
    crc = f"CAST(CRC32({row_text(columns, types)}) AS UNSIGNED)"
    return (f"SELECT COUNT(*), COALESCE(BIT_XOR({crc}), 0), COALESCE(SUM({crc}), 0) FROM {table}"
            + (f" WHERE {where}" if where else ""))


def rows_sql(table: str, columns: list[str], types: dict[str, str], where: str) -> str:
    """Each row's values as they are, then their text forms (for comparing and showing)."""
    raw = [quote_ident(c) for c in columns]
    texts = [text_form(c, types[c]) for c in columns]
    return f"SELECT {', '.join(raw + texts)} FROM {table}" + (f" WHERE {where}" if where else "")


def checksum(conn, table: str, columns: list[str], types: dict[str, str], where: str, args: list) -> list[int]:
    """[rows, xor, sum] of the chunk on one server."""
    with conn.cursor() as cur:
        cur.execute(checksum_sql(table, columns, types, where), args)
        return [int(x) for x in cur.fetchone()]


def fetch_rows(conn, table: str, columns: list[str], types: dict[str, str], where: str,
               args: list) -> list[tuple[dict, tuple]]:
    """The chunk's rows on one server: ({column: value}, (text forms…))."""
    n = len(columns)
    with conn.cursor() as cur:
        cur.execute(rows_sql(table, columns, types, where), args)
        return [(dict(zip(columns, row[:n])), tuple(row[n:])) for row in cur.fetchall()]
