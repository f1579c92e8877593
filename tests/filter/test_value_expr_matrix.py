"""Value expressions over every column type the type tests cover (type_matrix) and every kind
of literal, judged as TiCDC judges them (TiDB's expression engine, new collations disabled):
each expected keep/drop comes from the real MariaDB upstream evaluating the same expression
(`SELECT (expr) IS TRUE`) over a copy of the rows whose string columns have a NO PAD binary
collation, as TiCDC compares every string, except where TiDB is known to differ from MariaDB
(TIDB_DIFFERS, each with why).  The rows reach cdcflow as the pull stage reads them: from
the binlog of the original table."""

from __future__ import annotations

import json

import pytest
from type_matrix import NAMES, create_types

from cdcflow.core.uri import parse_source_uri
from cdcflow.filter import value_expr as df_
from cdcflow.source.binlog import BinlogReader, Position

S = "vx_matrix"

# one expression per literal kind; {c} is the column
LITERALS = [
    "{c} = 'abc'",                        # a string that is no number: 0 against a number ('abc' = 0 is TRUE)
    "{c} = '1'",                          # a numeric string
    "{c} < '2x'",                         # a string with a numeric prefix: 2 against a number
    "{c} = 'A'",                          # case counts, whatever the column's collation
    "{c} = 'x   '",                       # trailing spaces count: TiCDC compares bytes
    "{c} = 'trailing'",
    "{c} = 'e'",                          # accents count ('é' <> 'e')
    "{c} LIKE 'A%'",
    "{c} = 0",                            # integers
    "{c} > 1",
    "{c} = -1",
    "{c} >= 1.5e0",                       # a float
    "{c} = 1.50",                         # a decimal
    "{c} < 0.5",
    "{c} = '2000-01-01'",                 # date and time strings: compared as time against temporal columns
    "{c} > '2000-01-01'",
    "{c} = '2001-02-03 04:05:06.000007'",
    "{c} < '1970-01-02 00:00:00'",
    "{c} = x'7f'",                        # hex and bit literals
    "{c} = 0x61",
    "{c} = b'1'",
    "{c} = NULL",                         # NULL: never true
    "{c} IS NULL",
    "{c} <=> NULL",
    "{c} <> 'a'",
    "{c} IN ('a', 'b')",                  # functions and operators the filter supports
    "{c} IN (1, 2)",
    "{c} BETWEEN 0 AND 10",
    "{c} LIKE 'a%'",
    "NOT ({c} = 0)",
    "{c} NOT LIKE 'a%'",
    "{c} NOT IN (1, 2)",
    "{c} IS TRUE",
    "{c} IS NOT FALSE",
    "{c} XOR 1",
    "{c} + 0 > 1",
    "{c} / 3 > 0.3333",
    "{c} DIV 2 = 0",
    "{c} % 2 = 1",
    "LENGTH({c}) > 3",
    "CHAR_LENGTH({c}) = 1",
    "UPPER({c}) = 'A'",
    "LOWER({c}) LIKE 'x%'",
    "IFNULL({c}, 'n') = 'n'",
    "IF({c} > 1, 1, 0) = 1",
]

# DIV of the extremes of these is out of BIGINT's range: an error, in TiDB too (the changefeed would stop)
_NO_DIV = ("d65", "f", "db")
CASES = [(c, lit) for c in NAMES[1:] for lit in LITERALS if not (c in _NO_DIV and "DIV" in lit)]

# (column, expression) -> the ids TiDB matches where MariaDB matches others, and why
_HEX_AS_INT = ("TiDB compares a hex literal with a number as an unsigned integer (x'7f' is 127); MariaDB "
               "compares x'..' as a binary string, read as the number 0")
TIDB_DIFFERS: dict[tuple[str, str], tuple[list[int], str]] = {
    **{(c, "{c} = x'7f'"): ([2] if c == "ti" else [], _HEX_AS_INT)
       for c in ("ti", "tiu", "siu", "miu", "iu", "biu", "d5", "y", "b1", "b64", "b5")},
    ("b64", "{c} >= 1.5e0"): ([2, 3], "TiDB reads BIT(64) as an unsigned integer; MariaDB reads values of "
                                      "2**63 and up as negative against a DOUBLE"),
}


# the string columns of type_matrix, and their collations as TiCDC compares them
NO_PAD_BIN = ("c CHAR(10) COLLATE utf8mb4_nopad_bin", "vc VARCHAR(40) COLLATE utf8mb4_nopad_bin",
              "tx TEXT COLLATE utf8mb4_nopad_bin", "l1 VARCHAR(20) CHARACTER SET latin1 COLLATE latin1_nopad_bin",
              "l1c CHAR(5) CHARACTER SET latin1 COLLATE latin1_nopad_bin",
              "e ENUM('a','b','c d') COLLATE utf8mb4_nopad_bin", "s SET('a','b','c','d') COLLATE utf8mb4_nopad_bin")


@pytest.fixture(scope="module")
def matrix(mariadb_pair):
    """(columns of S.t, binlog images of its rows, MariaDB's matches by expression over S.bin)."""
    up, _ = mariadb_pair
    up.execute(f"DROP DATABASE IF EXISTS {S}")
    start = Position(*up.binlog_head())
    create_types(up, S)
    head = Position(*up.binlog_head())
    events = []
    BinlogReader(parse_source_uri(up.uri), 9494, start, head, prev_ts=1).read(events.append)
    images = [e.after for e in events if e.op == "insert" and e.table == "t"]
    up.execute("SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION'", f"CREATE TABLE {S}.bin LIKE {S}.t",
               f"ALTER TABLE {S}.bin " + ", ".join(f"MODIFY {c}" for c in NO_PAD_BIN),
               f"INSERT INTO {S}.bin SELECT * FROM {S}.t")
    with up.connect() as conn:
        cols = df_.upstream_columns(conn, [(S, "t")])[(S, "t")]
    exprs = [lit.format(c=c) for c, lit in CASES]
    expected = {}
    with up.connect() as conn, conn.cursor() as cur:
        cur.execute("SET SESSION time_zone = '+00:00'")  # TIMESTAMP compares in UTC
        for i in range(0, len(exprs), 50):
            part = exprs[i:i + 50]
            cur.execute(f"SELECT id, {', '.join(f'({e}) IS TRUE' for e in part)} FROM {S}.bin ORDER BY id")
            rows = cur.fetchall()
            for j, e in enumerate(part):
                expected[e] = [r[0] for r in rows if r[j + 1]]
    return cols, images, expected


def cdcflow_matches(cols, images, exprs) -> dict[str, list[int]]:
    """The ids whose insert image each expression ignores, as the filter stage's Spark workers
    judge them (matching_rows, here over one Arrow batch)."""
    import pyarrow as pa

    batch = pa.RecordBatch.from_pydict({"commit_ts": [100] * len(images), "seq": list(range(len(images))),
                                        "op": ["insert"] * len(images), "before": [None] * len(images),
                                        "after": images})
    ids = [json.loads(img)["id"] for img in images]
    out = {}
    for e in exprs:
        found = df_.matching_rows([batch], cols, [("insert", "after", df_.parse(e, "k"))])
        out[e] = sorted(ids[s] for b in found for s in b.to_pydict()["seq"])
    return out


def test_every_type_against_every_literal_as_tidb_judges(matrix):
    cols, images, expected = matrix
    got = cdcflow_matches(cols, images, list(expected))
    wrong = []
    for c, lit in CASES:
        e = lit.format(c=c)
        want = TIDB_DIFFERS[c, lit][0] if (c, lit) in TIDB_DIFFERS else expected[e]
        if got[e] != want:
            wrong.append(f"{e}: cdcflow {got[e]}, expected {want}")
    assert not wrong, f"{len(wrong)} of {len(expected)} cases differ:\n" + "\n".join(wrong)
