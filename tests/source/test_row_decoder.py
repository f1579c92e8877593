"""Row images decoded with per-table plans equal mysql-replication's own decoding, value for
value, for every type with a fast reader (and the types around them that keep the original
path), NULLs, extremes, charsets and both string length sizes; read from a real binlog."""

from __future__ import annotations

import json

from cdcflow.core.uri import parse_source_uri
from cdcflow.source import row_decoder
from cdcflow.source.binlog import BinlogReader, Position

S = "row_plans"
COLUMNS = """id INT PRIMARY KEY, ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, su SMALLINT UNSIGNED,
    mi MEDIUMINT, mu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, bu BIGINT UNSIGNED,
    f FLOAT, d DOUBLE, c CHAR(4), vc VARCHAR(20), vl VARCHAR(300), l1 VARCHAR(10) CHARACTER SET latin1,
    vb VARBINARY(10), tt TINYTEXT, mt MEDIUMTEXT, lb LONGBLOB, de DECIMAL(65,30), dt DATETIME(6),
    e ENUM('a','b'), j JSON, d2 DECIMAL(10,2), d5 DECIMAL(5,5), d0 DECIMAL(12,0), d19 DECIMAL(19,9),
    da DATE, dt3 DATETIME(3), ts2 TIMESTAMP(2) NULL, ts TIMESTAMP NULL"""
ROWS = [
    "(1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295, -9223372036854775808, "
    "18446744073709551615, -1.5, 2.2250738585072014e-308, 'ab', '', REPEAT('é', 300), 'Ünï', X'00FF', "
    "'😀', REPEAT('m', 70000), X'DEADBEEF', '-1.000000000000000000000000000001', '2026-11-23 12:00:00.000001', "
    "'b', '{\"k\": [1, 2]}', -12345678.99, -0.00001, -999999999999, -1234567890.123456789, "
    "'9999-12-31', '2026-11-24 23:59:59.999', '2038-01-19 03:14:07.99', '1970-01-01 00:00:01')",
    "(2, 127, 0, 32767, 0, 8388607, 0, 2147483647, 0, 9223372036854775807, 0, 3.4e38, -1e308, 'abcd', "
    "'x', CONCAT('y\"', CHAR(92), CHAR(10), CHAR(9), CHAR(1), CHAR(127), '\u2028/'), 'z', '', '', '', '', 0, '1000-01-01 00:00:00', 'a', 'null', 0.01, 0.99999, 7, "
    "9999999999.999999999, '0000-00-00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '2000-06-15 12:00:00')",
    "(3" + ", NULL" * 32 + ")",
]


# every column with a reader here, seven of them (the NULL bitmap's last bits unused): rows
# without a NULL take the plan's shortest path
FAST_COLUMNS = "id INT PRIMARY KEY, v VARCHAR(20), b BIGINT UNSIGNED, de DECIMAL(10,2), dt DATETIME(6), d DOUBLE, da DATE"
FAST_ROWS = ["(1, 'a\\\\b', 18446744073709551615, -1.5, '2026-11-27 01:02:03.5', 1e300, '2026-11-27')",
             "(2, '', 0, 0, '1000-01-01 00:00:00', -0.0, '0000-00-00')",
             "(3, 'x', 1, 99999999.99, NULL, 2.5, '9999-12-31')"]


def _read(up, start, head):
    events = []
    BinlogReader(parse_source_uri(up.uri), 9393, start, head, prev_ts=1).read(events.append)
    return [(e.op, e.before, e.after) for e in events if e.op != "ddl"]


def test_plans_decode_exactly_what_mysql_replication_decodes(mariadb_pair, monkeypatch):
    up, _ = mariadb_pair
    up.execute(f"DROP DATABASE IF EXISTS {S}", f"CREATE DATABASE {S}", f"CREATE TABLE {S}.t ({COLUMNS})",
               f"CREATE TABLE {S}.fast ({FAST_COLUMNS})")
    start = Position(*up.binlog_head())
    up.execute("SET SESSION sql_mode = ''", *[f"INSERT INTO {S}.t VALUES {r}" for r in ROWS],
               f"UPDATE {S}.t SET vc = CONCAT(vc, '!'), bu = 1, f = NULL WHERE id IN (1, 3)",
               f"DELETE FROM {S}.t WHERE id = 2", f"INSERT INTO {S}.fast VALUES {', '.join(FAST_ROWS)}",
               f"UPDATE {S}.fast SET v = NULL WHERE id = 1", f"UPDATE {S}.fast SET v = 'back', de = -de")
    head = Position(*up.binlog_head())

    with monkeypatch.context() as m:  # the reference: mysql-replication's own decoding
        row_decoder.uninstall()
        m.setattr(row_decoder, "install", lambda: None)
        reference = _read(up, start, head)
    row_decoder.install()
    planned = _read(up, start, head)

    assert [op for op, _, _ in planned] == ["insert"] * 3 + ["update"] * 2 + ["delete"] + \
        ["insert"] * 3 + ["update"] + ["update"] * 3
    assert planned == reference
    fast = [json.loads(after) for op, _, after in planned[6:9]]
    assert fast[0]["v"] == "a\\b" and fast[2]["dt"] is None and fast[1]["de"] == {"d": "0.00"}
    first = json.loads(planned[0][2])
    assert (first["mi"], first["bu"], first["vl"], first["l1"], first["tt"]) == \
        (-8388608, 18446744073709551615, "é" * 300, "Ünï", "😀")
    assert first["vb"] == {"b": "AP8="} and len(first["mt"]) == 70000
    assert set(json.loads(planned[2][2]).values()) == {3, None}
    assert (first["d2"], first["d5"], first["d0"], first["d19"]) == \
        ({"d": "-12345678.99"}, {"d": "-0.00001"}, {"d": "-999999999999"}, {"d": "-1234567890.123456789"})
    assert (first["dt3"], first["ts2"]) == ({"dt": "2026-11-24 23:59:59.999000"}, {"dt": "2038-01-19 03:14:07.990000"})
    second = json.loads(planned[1][2])
    assert second["vl"] == 'y"\\\n\t\x01\x7f\u2028/'  # every character JSON escapes, and some it does not
    assert (second["d5"], second["da"], second["dt3"]) == ({"d": "0.99999"}, {"tt": "0000-00-00"},
                                                           {"tt": "0000-00-00 00:00:00.000000"})


def test_strings_are_quoted_as_msgspec_quotes_them_for_every_code_point():
    import msgspec

    for c in [*range(0xD800), *range(0xE000, 0x110000)]:
        ch = chr(c)
        assert row_decoder.json_string("a" + ch) == msgspec.json.encode("a" + ch).decode(), hex(c)


# fixed-size binaries whose stored bytes end in zeros (the server leaves them out of the image),
# and the pre-5.6 temporal formats MariaDB writes for a table created with
# mysql56_temporal_format=OFF: every fraction width, zero dates, negative and extreme times
FIXED_COLUMNS = "id INT PRIMARY KEY, u UUID, i6 INET6, i4 INET4, bn BINARY(3), vb VARBINARY(3)"
FIXED_ROWS = ["(1, '123e4567-e89b-12d3-a456-426655440000', '::', '0.0.0.0', X'610000', X'610000')",
              "(2, '00000000-0000-0000-0000-000000000000', '1::', '10.0.0.0', X'000000', X'00')",
              "(3, NULL, NULL, NULL, NULL, NULL)"]
OLD_COLUMNS = ("id INT PRIMARY KEY, dt DATETIME, dt1 DATETIME(1), dt4 DATETIME(4), dt6 DATETIME(6), tm TIME, "
               "tm1 TIME(1), tm3 TIME(3), tm6 TIME(6), ts TIMESTAMP NULL, ts2 TIMESTAMP(2) NULL, "
               "ts5 TIMESTAMP(5) NULL, i INT")
OLD_ROWS = ["(1, '2024-02-29 23:59:58', '2024-02-29 23:59:58.9', '1000-01-01 00:00:00.0001', "
            "'9999-12-31 23:59:59.999999', '-838:59:59', '-00:00:00.1', '123:45:06.789', '-838:59:58.999999', "
            "'2038-01-19 03:14:07', '1970-01-01 00:00:01.01', '2001-02-03 04:05:06.12345', -7)",
            "(2, '0000-00-00 00:00:00', '2024-00-05 00:00:00.5', '0000-00-00 00:00:00', '2000-01-01', "
            "'00:00:00', '838:59:59.9', '-01:00:00.001', '00:00:00.000001', '0000-00-00 00:00:00', NULL, "
            "'1970-01-01 00:00:01', 8)"]
FIXED_EXPECTED = [
    {"id": 1, "u": {"b": "Ej5FZ+ibEtOkVkJmVUQAAA=="}, "i6": {"b": "A" * 22 + "=="}, "i4": {"b": "AAAAAA=="},
     "bn": {"b": "YQAA"}, "vb": {"b": "YQAA"}},
    {"id": 2, "u": {"b": "A" * 22 + "=="}, "i6": {"b": "AAEAAAAAAAAAAAAAAAAAAA=="}, "i4": {"b": "CgAAAA=="},
     "bn": {"b": "AAAA"}, "vb": {"b": "AA=="}},
    {"id": 3, "u": None, "i6": None, "i4": None, "bn": None, "vb": None},
]
OLD_EXPECTED = [
    {"id": 1, "dt": {"dt": "2024-02-29 23:59:58.000000"}, "dt1": {"dt": "2024-02-29 23:59:58.900000"},
     "dt4": {"dt": "1000-01-01 00:00:00.000100"}, "dt6": {"dt": "9999-12-31 23:59:59.999999"},
     "tm": {"t": "-838:59:59.000000"}, "tm1": {"t": "-00:00:00.100000"}, "tm3": {"t": "123:45:06.789000"},
     "tm6": {"t": "-838:59:58.999999"}, "ts": {"dt": "2038-01-19 03:14:07.000000"},
     "ts2": {"dt": "1970-01-01 00:00:01.010000"}, "ts5": {"dt": "2001-02-03 04:05:06.123450"}, "i": -7},
    {"id": 2, "dt": {"tt": "0000-00-00 00:00:00.000000"}, "dt1": {"tt": "2024-00-05 00:00:00.500000"},
     "dt4": {"tt": "0000-00-00 00:00:00.000000"}, "dt6": {"dt": "2000-01-01 00:00:00.000000"},
     "tm": {"t": "00:00:00.000000"}, "tm1": {"t": "838:59:59.900000"}, "tm3": {"t": "-01:00:00.001000"},
     "tm6": {"t": "00:00:00.000001"}, "ts": {"tt": "0000-00-00 00:00:00"}, "ts2": None,
     "ts5": {"dt": "1970-01-01 00:00:01.000000"}, "i": 8},
]


def _in_old_format(up, create: str) -> None:
    """`create` run with the pre-5.6 temporal formats (a global variable: set back at once)."""
    up.execute("SET GLOBAL mysql56_temporal_format = OFF")
    try:
        up.execute(create)
    finally:
        up.execute("SET GLOBAL mysql56_temporal_format = ON")


def test_fixed_binaries_and_old_temporal_formats_decode_exactly(mariadb_pair, monkeypatch):
    up, _ = mariadb_pair
    up.execute(f"DROP DATABASE IF EXISTS {S}_x", f"CREATE DATABASE {S}_x", f"CREATE TABLE {S}_x.f ({FIXED_COLUMNS})")
    _in_old_format(up, f"CREATE TABLE {S}_x.o ({OLD_COLUMNS})")
    start = Position(*up.binlog_head())
    up.execute("SET SESSION sql_mode = ''", "SET SESSION time_zone = '+00:00'",
               f"INSERT INTO {S}_x.f VALUES {', '.join(FIXED_ROWS)}", f"INSERT INTO {S}_x.o VALUES {', '.join(OLD_ROWS)}",
               f"UPDATE {S}_x.f SET vb = NULL WHERE u = '123e4567-e89b-12d3-a456-426655440000'")
    head = Position(*up.binlog_head())

    with monkeypatch.context() as m:  # mysql-replication's own path, with column_types' decoders
        row_decoder.uninstall()
        m.setattr(row_decoder, "install", lambda: None)
        reference = _read(up, start, head)
    row_decoder.install()
    planned = _read(up, start, head)
    assert planned == reference
    assert [json.loads(after) for _op, _before, after in planned[:5]] == FIXED_EXPECTED[:3] + OLD_EXPECTED
    assert json.loads(planned[5][1]) == FIXED_EXPECTED[0]  # the before image of the UPDATE, padded too


def test_an_old_temporal_column_whose_definition_changed_since_is_refused_by_name(mariadb_pair):
    import pytest

    from cdcflow.core.errors import CdcflowError

    up, _ = mariadb_pair
    up.execute(f"DROP DATABASE IF EXISTS {S}_y", f"CREATE DATABASE {S}_y")
    _in_old_format(up, f"CREATE TABLE {S}_y.o (id INT PRIMARY KEY, dt DATETIME(3))")
    start = Position(*up.binlog_head())
    up.execute(f"INSERT INTO {S}_y.o VALUES (1, '2024-01-01 00:00:00.5')")
    head = Position(*up.binlog_head())
    up.execute(f"ALTER TABLE {S}_y.o MODIFY dt DATETIME(3)")  # now in the new format: its digits no longer tell
    with pytest.raises(CdcflowError) as e:
        _read(up, start, head)
    assert "'dt'" in str(e.value) and "pre-5.6" in str(e.value) and "datetime(3)" in str(e.value)
    assert f"{S}_y.o at {start.file}:" in str(e.value)  # the table and the event's position
