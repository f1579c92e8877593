"""SQL modes: the names a config may give, and the bit set the binlog records each statement's
sql_mode as (DDL must run downstream under it)."""

from __future__ import annotations

# Bit order of MySQL/MariaDB's sql_mode (sql_class.h / sql_mode names), lowest bit first.
SQL_MODE_BITS = (
    "REAL_AS_FLOAT", "PIPES_AS_CONCAT", "ANSI_QUOTES", "IGNORE_SPACE", "IGNORE_BAD_TABLE_OPTIONS",
    "ONLY_FULL_GROUP_BY", "NO_UNSIGNED_SUBTRACTION", "NO_DIR_IN_CREATE", "POSTGRESQL", "ORACLE",
    "MSSQL", "DB2", "MAXDB", "NO_KEY_OPTIONS", "NO_TABLE_OPTIONS", "NO_FIELD_OPTIONS", "MYSQL323",
    "MYSQL40", "ANSI", "NO_AUTO_VALUE_ON_ZERO", "NO_BACKSLASH_ESCAPES", "STRICT_TRANS_TABLES",
    "STRICT_ALL_TABLES", "NO_ZERO_IN_DATE", "NO_ZERO_DATE", "INVALID_DATES", "ERROR_FOR_DIVISION_BY_ZERO",
    "TRADITIONAL", "NO_AUTO_CREATE_USER", "HIGH_NOT_PRECEDENCE", "NO_ENGINE_SUBSTITUTION",
    "PAD_CHAR_TO_FULL_LENGTH", "EMPTY_STRING_IS_NULL", "SIMULTANEOUS_ASSIGNMENT", "TIME_ROUND_FRACTIONAL",
)
# Names TiDB (Str2SQLMode) or MySQL 8 accept that no MariaDB bit carries.
_NAMES_WITHOUT_BIT = ("NOT_USED", "ALLOW_INVALID_DATES", "TIME_TRUNCATE_FRACTIONAL")
# Every mode a config's sql-mode may name.
SQL_MODES: frozenset[str] = frozenset(SQL_MODE_BITS + _NAMES_WITHOUT_BIT)
# TiDB's default sql_mode (mysql.DefaultSQLMode), TiCDC's default for parsing DDL.
TIDB_DEFAULT_SQL_MODE = ("ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
                         "ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION")
# Modes that only name a combination of others (the component bits are set too) or that
# change the dialect of a whole server; they are not sent downstream.
_COMBINATIONS = {"POSTGRESQL", "ORACLE", "MSSQL", "DB2", "MAXDB", "MYSQL323", "MYSQL40", "ANSI", "TRADITIONAL"}


def from_bits(bits: int | None) -> str | None:
    if bits is None:
        return None
    names = [n for i, n in enumerate(SQL_MODE_BITS) if bits & (1 << i) and n not in _COMBINATIONS]
    return ",".join(names)
