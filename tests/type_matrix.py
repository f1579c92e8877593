"""The type matrix: a table holding every column type, with extreme values, NULL in every
column, zero dates, negative and >24h TIME, TIMESTAMP written under a non-UTC session time
zone, latin1 and arbitrary bytes; and the check that two servers hold exactly the same
values (each value as the server's own text or bytes)."""

from __future__ import annotations

import re

COLUMNS = """
  id INT PRIMARY KEY,
  ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED,
  mi MEDIUMINT, miu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED,
  d65 DECIMAL(65,30), d5 DECIMAL(5,2) UNSIGNED, f FLOAT, db DOUBLE,
  da DATE, dt DATETIME(6), dt0 DATETIME, ts TIMESTAMP(6) NULL DEFAULT NULL, tm TIME(6), tm0 TIME, y YEAR,
  c CHAR(10), vc VARCHAR(40), tx TEXT, l1 VARCHAR(20) CHARACTER SET latin1, l1c CHAR(5) CHARACTER SET latin1,
  bn BINARY(4), vb VARBINARY(300), bl BLOB, lb LONGBLOB,
  e ENUM('a','b','c d'), s SET('a','b','c','d'), b1 BIT(1), b64 BIT(64), b5 BIT(5),
  j JSON
"""

NAMES = ["id", "ti", "tiu", "si", "siu", "mi", "miu", "i", "iu", "bi", "biu", "d65", "d5", "f", "db",
         "da", "dt", "dt0", "ts", "tm", "tm0", "y", "c", "vc", "tx", "l1", "l1c", "bn", "vb", "bl", "lb",
         "e", "s", "b1", "b64", "b5", "j"]

ROWS = [
    # the minimum of everything
    "(1, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, 0,"
    " -99999999999999999999999999999999999.999999999999999999999999999999, 0.00,"
    " -3.40282e38, -1.7976931348623157e308,"
    " '1000-01-01', '1000-01-01 00:00:00.000000', '1000-01-01 00:00:00', '1970-01-01 05:30:01.000000',"
    " '-838:59:59.000000', '-838:59:59', 1901,"
    " '', '', '', '', '', x'00000000', '', '', '', 'a', '', b'0', b'0', b'0', '[]')",
    # the maximum of everything
    "(2, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295, 9223372036854775807,"
    " 18446744073709551615,"
    " 99999999999999999999999999999999999.999999999999999999999999999999, 999.99,"
    " 3.40282e38, 1.7976931348623157e308,"
    " '9999-12-31', '9999-12-31 23:59:59.999999', '9999-12-31 23:59:59', '2038-01-19 08:44:07.999999',"
    " '838:59:59.000000', '838:59:59', 2155,"
    " 'ÿ😀𝄞汉字', 'trailing  ', 'emoji 😀 and \\\\ \\' \" \\n\\t\\0', 'café ÿ ½ €', 'Ñu',"
    " x'ff00ff00', x'00ff7f80fe', x'000102030405060708090a0b0c0d0e0f', REPEAT(x'00ff', 40000),"
    " 'c d', 'a,b,c,d', b'1', b'1111111111111111111111111111111111111111111111111111111111111111', b'10101',"
    " '{\"a\": [1, 2.50, null, \"x😀\"], \"b\": {\"c\": true}, \"d\": 1e400}')",
    # awkward values in the middle
    "(3, 0, 1, -1, 1, -1, 1, -1, 1, -1, 9223372036854775808,"
    " 0.000000000000000000000000000001, 0.01,"
    " 1.17549e-38, 2.2250738585072014e-308,"
    " '0000-00-00', '0000-00-00 00:00:00.000000', '0000-00-00 00:00:00', '0000-00-00 00:00:00',"
    " '-00:00:00.000001', '25:00:00', '0000',"
    " ' lead', 'tab\\there', 'x', 'a\\'b', 'é', x'00', x'00', x'', x'',"
    " 'a', '', b'1', b'1000000000000000000000000000000000000000000000000000000000000001', b'00001',"
    " '\"just a string\"')",
    "(4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
    " NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
    " NULL)",
    # zero-in-date parts, negative zero, fractions that float formatting likes to round
    "(5, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -0.000000000000000000000000000001, 1.50,"
    " 0.1, 0.1, '2000-00-00', '2000-01-00 12:00:00.5', '2000-00-01 00:00:00', '2001-02-03 04:05:06.000007',"
    " '-12:34:56.789', '100:00:00', 2000,"
    " 'x', 'y', 'z', 'w', 'v', x'7f', x'80', x'81', x'8d8f909d',"
    " 'b', 'd,a', b'0', b'0', b'11111', 'null')",
]


def exact_values(server, db: str) -> list[tuple]:
    """Each value as the server's own text or bytes, and FLOAT widened to DOUBLE, so no
    client-side rounding can hide a difference."""
    exprs = []
    for n in NAMES:
        if n in ("f",):
            exprs.append(f"CAST({n} AS DOUBLE)")
        elif n in ("db",):
            exprs.append(f"HEX(CAST({n} AS CHAR))")
        else:
            exprs.append(f"HEX({n})" if n in ("bn", "vb", "bl", "lb", "b1", "b64", "b5", "l1", "l1c", "c", "vc",
                                                  "tx") else f"CAST({n} AS CHAR)")
    with server.connect() as c, c.cursor() as cur:
        cur.execute("SET SESSION time_zone = '+00:00'")
        cur.execute(f"SELECT {', '.join(exprs)} FROM {db}.t ORDER BY id")
        return list(cur.fetchall())


def assert_same_values(up, down, db: str = "types") -> None:
    got, want = exact_values(down, db), exact_values(up, db)
    diffs = [f"id {w[0]} {n}: up {wv!r} down {gv!r}"
             for w, g in zip(want, got) for n, wv, gv in zip(NAMES, w, g) if wv != gv]
    assert len(got) == len(want) and not diffs, "\n".join(diffs)
    fixed = f"SELECT id, {', '.join(f'HEX({c})' for c in FIXED_NAMES)} FROM {db}.fb ORDER BY id"
    assert down.query(fixed) == up.query(fixed)


# The fixed-size binary kinds (MariaDB's UUID, INET6, INET4, and BINARY(n)): the binlog leaves a
# value's trailing zero bytes out.  Values ending in zeros, in every position, NULL in each
FIXED_NAMES = ["u", "i6", "i4", "bn", "un"]
FIXED_COLUMNS = "id INT PRIMARY KEY, u UUID, i6 INET6, i4 INET4, bn BINARY(4), un UUID NOT NULL"
_FIXED_VALUES = ["'123e4567-e89b-12d3-a456-426655440000'", "'::'", "'0.0.0.0'", "x'61000000'",
                 "'00000000-0000-0000-0000-000000000000'"]
FIXED_ROWS = [
    "(1, " + ", ".join(_FIXED_VALUES) + ")",
    "(2, '123e4567-e89b-12d3-a456-426655440001', 'fe80::1', '1.2.3.4', x'01020304', "
    "'ffffffff-ffff-ffff-ffff-ffffffffff00')",
    "(3, '00000000-0000-0000-0000-000000000000', '2001:db8::', '10.0.0.0', x'00000000', "
    "'123e4567-e89b-12d3-a456-000000000000')",
    # NULL in each nullable column in turn, the others ending in zeros
    *[f"({10 + i}, " + ", ".join("NULL" if j == i else v for j, v in enumerate(_FIXED_VALUES)) + ")"
      for i in range(len(FIXED_NAMES) - 1)],
    "(20, NULL, NULL, NULL, NULL, '00000000-0000-0000-0000-000000000001')",
]



# Values an upstream session that is not strict stores for input its columns cannot hold
# (INSERT IGNORE, or sql_mode = ''): clipped numbers, zero and invalid dates, cut strings,
# '?' for characters latin1 lacks, the ENUM error value '' (index 0), SET members dropped,
# YEAR 0000, BIT clipped.  Each column takes what the upstream made of it, exactly.
LAX_ROWS = [
    "(101, 1000, -5, 99999, -1, 9999999, -7, 3000000000, -1, 1e20, -1, 1e70, 12345.678, 1e39, 0, "
    "'2024-13-45', 'not a datetime', '2024-02-30 10:00:00', '2024-02-30 10:00:00', '99:99:99', '900:00:00', 3000, "
    "'longer than ten characters', REPEAT('v', 50), 'x', '汉字 and more', 'Ñu and more', x'0102030405', x'00', "
    "x'', x'', 'not a member', 'a,zz,d', 7, 1, 255, '[]')",
    "(102, 'abc', '12abc', '', ' 7 ', '-', '0x10', '1e3', '-0', 'nan', '', '1.2.3', '-5', 'inf', '1e999', "
    "'0000-00-00', '2024-02-31 25:61:61', '0000-00-00 00:00:00', '1969-12-31 23:59:59', '-900:00:00', 'x', 1900, "
    "'', '', '', '', '', '', '', '', '', '', 'zz', 0, 0, 0, 'null')",
]

def create_types(up, db: str = "types") -> None:
    """Schema `db` upstream: `t` (every type, ROWS), `k` (binary, decimal and timestamp keys) and
    `fb` (the fixed-size binary kinds, FIXED_ROWS)."""
    with up.connect() as c, c.cursor() as cur:
        # zero dates need a mode without NO_ZERO_DATE / NO_ZERO_IN_DATE; TIMESTAMP literals are
        # read in the session's zone, +05:30 here
        cur.execute("SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION'")
        cur.execute("SET SESSION time_zone = '+05:30'")
        cur.execute(f"CREATE DATABASE {db}")
        cur.execute(f"CREATE TABLE {db}.t ({COLUMNS}) DEFAULT CHARSET = utf8mb4")
        cur.execute(f"CREATE TABLE {db}.k (bk VARBINARY(8) PRIMARY KEY, dk DECIMAL(65,30) NOT NULL, "
                    "tk TIMESTAMP(6) NOT NULL DEFAULT '2000-01-01 00:00:00', v INT, UNIQUE KEY u (dk, tk))")
        for row in ROWS:
            cur.execute(f"INSERT INTO {db}.t VALUES {row}")
        cur.execute(f"CREATE TABLE {db}.fb ({FIXED_COLUMNS})")
        cur.execute(f"INSERT INTO {db}.fb VALUES {', '.join(FIXED_ROWS)}")
        cur.execute(f"INSERT INTO {db}.k VALUES (x'00', 1.5, '2001-01-01 00:00:00.000001', 1), "
                    "(x'ff00', -0.000000000000000000000000000001, '2038-01-19 08:44:07.999999', 2), (x'', 0, "
                    "'1970-01-01 05:30:01', 3)")


# the matrix's columns the compiled binlog reader (source/compiled_reader.pyx) has no reader for:
# tables with any of them go to mysql-replication
NOT_COMPILED = {"tm", "tm0", "y", "e", "s", "b1", "b64", "b5", "j"}
_DEFINITIONS = [d.strip() for d in re.split(r",\s*(?=[a-z0-9_]+ [A-Z])", COLUMNS.strip())]
COMPILED_COLUMNS = [d for d in _DEFINITIONS if d.split()[0] not in NOT_COMPILED]


def reader_tables(db: str) -> list[str]:
    """Statements that fill `db` with the binlog readers' tables: t of every column, fast of the
    columns the compiled reader reads (both of every row, strict and lax: sql_mode '', a session
    time zone of +05:30) and fb of the fixed-size binaries."""
    names = ", ".join(d.split()[0] for d in COMPILED_COLUMNS)
    return ["SET SESSION sql_mode = ''", "SET SESSION time_zone = '+05:30'",
            f"CREATE TABLE {db}.t ({COLUMNS}) DEFAULT CHARSET = utf8mb4",
            f"CREATE TABLE {db}.fast ({', '.join(COMPILED_COLUMNS)}) DEFAULT CHARSET = utf8mb4",
            f"CREATE TABLE {db}.fb ({FIXED_COLUMNS})",
            *[f"INSERT INTO {db}.t VALUES {r}" for r in ROWS + LAX_ROWS],
            f"INSERT INTO {db}.fast SELECT {names} FROM {db}.t",
            f"INSERT INTO {db}.fb VALUES {', '.join(FIXED_ROWS)}"]
