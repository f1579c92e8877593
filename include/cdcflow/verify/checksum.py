"""What each server computes for a chunk, and the text form values are compared in.

A chunk's checksum is COUNT(*), BIT_XOR and SUM of CRC32 over each row's text, computed by
the server (sync-diff-inspector's BIT_XOR(CRC32(CONCAT_WS(...)))); the SUM keeps equal rows
of a keyless table from cancelling out under XOR, and two rows changed alike (CRC32 is linear:
the same edit at the same place of two rows of one length changes both CRCs by the same bits)
from cancelling out too.  The CRC is computed once per row, in a derived table the server
materializes (a LIMIT keeps it from merging it into the outer query, which would compute the
expression once per aggregate).

A column's text form is the same on MySQL, MariaDB and TiDB for the same value: numbers,
dates and strings as the server prints them (TIMESTAMPs in a UTC session, so the same instant
prints the same), strings converted to utf8mb4 (a latin1 column and its utf8mb4 copy hold the
same text), binary types as hex, and FLOAT/DOUBLE rounded to the digits they hold (6 and 15
significant), where servers print more digits differently.  A row's text joins its columns'
text forms so that no two rows join alike: numbers, dates and hex never hold the separator, a
string is preceded by its length in characters (so a `,` inside it cannot shift the columns
after it), and the text ends with one ISNULL flag per column, since CONCAT_WS skips NULLs.
"""

from __future__ import annotations

from cdcflow.core.row_codec import quote_ident

# column data type (COLUMN_TYPE's first word) -> how its text form is computed
_BINARY_TYPES = frozenset("binary varbinary tinyblob blob mediumblob longblob bit geometry point linestring polygon "
                          "multipoint multilinestring multipolygon geometrycollection".split())
_FLOAT_DIGITS = {"float": 6, "double": 15, "real": 15}
# types whose text is digits, signs, points, dashes, colons and spaces: never the separator
_PLAIN_TYPES = frozenset("tinyint smallint mediumint int integer bigint decimal numeric dec fixed "
                         "date datetime timestamp time year".split())
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


def _separator_free(column_type: str) -> bool:
    """Whether the column's text form can never hold the separator."""
    kind = data_type(column_type)
    return kind in _PLAIN_TYPES or kind in _BINARY_TYPES or kind in _FLOAT_DIGITS


def length_prefixed(columns: list[str], up_types: dict[str, str], down_types: dict[str, str]) -> set[str]:
    """The columns whose row-text part carries its length: those whose text form may hold
    the separator on either side (both sides' row texts must be built alike)."""
    return {c for c in columns if not (_separator_free(up_types[c]) and _separator_free(down_types[c]))}


def _row_part(column: str, column_type: str, prefixed: bool) -> str:
    """A column's part of the row text (NULL for NULL): its text form, preceded by its length
    in characters when `prefixed`."""
    c = quote_ident(column)
    form = c if data_type(column_type) in _PLAIN_TYPES else text_form(column, column_type)  # printed alike
    if not prefixed:
        return form
    # a string's characters are its text form's (CONVERT keeps them); other types' forms are measured
    return f"CHAR_LENGTH({c if not _separator_free(column_type) else form}), {form}"


def row_text(columns: list[str], types: dict[str, str], prefixed: set[str]) -> str:
    """The SQL expression of a row's text, over `columns` typed as `types` (one side's), the
    `prefixed` ones preceded by their length."""
    parts = [_row_part(c, types[c], c in prefixed) for c in columns]
    flags = "CONCAT(" + ", ".join(f"ISNULL({quote_ident(c)})" for c in columns) + ")"
    return f"CONCAT_WS('{SEPARATOR}', {', '.join(parts)}, {flags})"


def checksum_sql(table: str, columns: list[str], types: dict[str, str], prefixed: set[str], where: str,
                 bucket: str = "0") -> str:
    """[bucket, rows, xor, sum] per value of the `bucket` expression (one row for the default)."""
    crc = f"CAST(CRC32({row_text(columns, types, prefixed)}) AS UNSIGNED)"
    rows = f"SELECT {bucket} AS b, {crc} AS crc FROM {table}" + (f" WHERE {where}" if where else "")
    return (f"SELECT b, COUNT(*), COALESCE(BIT_XOR(crc), 0), COALESCE(SUM(crc), 0) "
            f"FROM ({rows} LIMIT 18446744073709551615) AS r GROUP BY b")


def rows_sql(table: str, columns: list[str], types: dict[str, str], where: str) -> str:
    """Each row's values as they are, then their text forms (for comparing and showing)."""
    raw = [quote_ident(c) for c in columns]
    texts = [text_form(c, types[c]) for c in columns]
    return f"SELECT {', '.join(raw + texts)} FROM {table}" + (f" WHERE {where}" if where else "")


def checksums(conn, table: str, columns: list[str], types: dict[str, str], prefixed: set[str], where: str,
              args: list, bucket: str = "0", bucket_args: tuple = ()) -> dict[int, list[int]]:
    """{bucket: [rows, xor, sum]} of the rows `where` keeps on one server (a bucket without
    rows is left out)."""
    with conn.cursor() as cur:
        cur.execute(checksum_sql(table, columns, types, prefixed, where, bucket), [*bucket_args, *args])
        return {int(b): [int(x) for x in rest] for b, *rest in cur.fetchall()}


def fetch_rows(conn, table: str, columns: list[str], types: dict[str, str], where: str,
               args: list) -> list[tuple[dict, tuple]]:
    """The chunk's rows on one server: ({column: value}, (text forms…))."""
    n = len(columns)
    with conn.cursor() as cur:
        cur.execute(rows_sql(table, columns, types, where), args)
        return [(dict(zip(columns, row[:n])), tuple(row[n:])) for row in cur.fetchall()]
