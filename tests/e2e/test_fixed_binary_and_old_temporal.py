"""Values the binlog holds in forms mysql-replication misreads (issue 42, item 3): a fixed-size
binary value (UUID, INET6, INET4, BINARY(n)) whose last bytes are zero, which the server leaves
out of the row image, and the pre-5.6 temporal formats (DATETIME, TIME, TIMESTAMP as MariaDB
writes them for a table created with mysql56_temporal_format=OFF, fractions included)."""

from __future__ import annotations

import pytest
from e2e_helpers import assert_consistent, cli_run, schema_changefeed

pytestmark = pytest.mark.e2e

ZEROS_UUID = "123e4567-e89b-12d3-a456-426655440000"


def test_fixed_size_binary_values_ending_in_zero_bytes(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    schema_changefeed(capsys, up, down, "e2e-fixed-binary", "fxb", "CREATE DATABASE fxb")
    up.execute(
        "CREATE TABLE u (id UUID PRIMARY KEY, a INET6, b INET4, c BINARY(4), d UUID, n INT)",
        "CREATE TABLE k (a INET6 NOT NULL, b BINARY(3) NOT NULL, v INT, PRIMARY KEY (a, b))",
        # one insert of three rows: every value ends in zero bytes somewhere
        f"INSERT INTO u VALUES ('{ZEROS_UUID}', '::', '0.0.0.0', X'61620000', NULL, 1), "
        "('00000000-0000-0000-0000-000000000000', '1::', '10.0.0.0', X'00000000', "
        f"'{ZEROS_UUID}', 2), ('123e4567-e89b-12d3-a456-426655440001', 'fe80::1', '1.2.3.4', X'01020304', "
        "'00000000-0000-0000-0000-000000000001', 3)",
        "INSERT INTO k VALUES ('::', X'000000', 1), ('2001:db8::', X'610000', 2), ('::1', X'616263', 3)",
        # the keys read back from before images must find their rows
        f"UPDATE u SET n = n + 10, a = '::ffff:0.0.0.0' WHERE id = '{ZEROS_UUID}'",
        "UPDATE k SET v = 20 WHERE a = '2001:db8::'",
        "DELETE FROM u WHERE id = '00000000-0000-0000-0000-000000000000'",
        "DELETE FROM k WHERE a = '::'",
        database="fxb")
    rc, err = cli_run(capsys, "e2e-fixed-binary")
    assert rc == 0, err
    for table in ("u", "k"):
        rows = f"SELECT * FROM fxb.{table} ORDER BY 1"
        assert down.query(rows) == up.query(rows)
    assert down.query(f"SELECT CAST(id AS CHAR), CAST(a AS CHAR), n FROM fxb.u WHERE id = '{ZEROS_UUID}'") == [
        (ZEROS_UUID, "::ffff:0.0.0.0", 11)]
    assert_consistent(up, down, ["fxb"])


OLD_TEMPORAL = ("CREATE TABLE t (id INT PRIMARY KEY, dt DATETIME, dt1 DATETIME(1), dt3 DATETIME(3), "
                "dt6 DATETIME(6), tm TIME, tm2 TIME(2), tm5 TIME(5), tm6 TIME(6), ts TIMESTAMP NULL, "
                "ts1 TIMESTAMP(1) NULL, ts4 TIMESTAMP(4) NULL, ts6 TIMESTAMP(6) NULL, n INT)")
OLD_ROWS = [
    "(1, '2024-02-29 23:59:58', '2024-02-29 23:59:58.9', '2024-02-29 23:59:58.123', '1000-01-01 00:00:00.000001', "
    "'-838:59:59', '-12:34:56.78', '00:00:00.00001', '838:59:59', '2038-01-19 03:14:07', "
    "'1970-01-01 00:00:01.5', '2000-01-01 00:00:00.0001', '2020-02-02 02:02:02.999999', 1)",
    "(2, '0000-00-00 00:00:00', '2024-00-00 00:00:00.5', '9999-12-31 23:59:59.999', '9999-12-31 23:59:59.999999', "
    "'00:00:00', '-00:00:00.01', '-838:59:58.99999', '-838:59:58.999999', '0000-00-00 00:00:00', "
    "NULL, '1999-12-31 23:59:59.9999', '1970-01-01 00:00:01.000001', 2)",
    "(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 3)",
]


def test_pre_5_6_temporal_formats(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    schema_changefeed(capsys, up, down, "e2e-old-temporal", "fxt", "CREATE DATABASE fxt")
    # both servers create the table in the old format (the downstream runs the replicated
    # CREATE TABLE during the cycle), so the whole definitions compare equal
    for s in (up, down):
        s.execute("SET GLOBAL mysql56_temporal_format = OFF")
    try:
        up.execute("SET SESSION sql_mode = ''", "SET SESSION time_zone = '+00:00'", OLD_TEMPORAL,
                   f"INSERT INTO t VALUES {', '.join(OLD_ROWS)}",
                   "UPDATE t SET dt3 = '2001-01-01 01:01:01.001', tm5 = '-01:00:00.5', ts6 = '2030-01-01' WHERE id = 1",
                   "DELETE FROM t WHERE id = 3", database="fxt")
        assert "mariadb-5.3" in up.query("SHOW CREATE TABLE fxt.t")[0][1]
        rc, err = cli_run(capsys, "e2e-old-temporal")
    finally:
        for s in (up, down):
            s.execute("SET GLOBAL mysql56_temporal_format = ON")
    assert rc == 0, err
    rows = "SELECT * FROM fxt.t ORDER BY id"
    assert down.query(rows) == up.query(rows)
    assert_consistent(up, down, ["fxt"])
