"""DDL from a session whose character set is not UTF-8 (issue 42, item 1): the binlog holds the
statement in the session's character set, and the downstream must get the same identifiers,
comments, defaults and ENUM members — the whole definition compared with SHOW CREATE TABLE —
and the rows written afterwards into the columns so named."""

from __future__ import annotations

import pytest
from e2e_helpers import assert_consistent, cli_run, schema_changefeed

pytestmark = pytest.mark.e2e

# (session character set, table, its statements); each a statement pymysql sends in that
# character set (bytes: sent as they are).  sjis's ソ ends in 0x5C (a backslash byte),
# latin1's ï is one byte; the literals of another character set than the session's keep their
# bytes (C3A9 is a GBK character too, and é in UTF-8)
SESSIONS = [
    ("gbk", "g", [
        "CREATE TABLE g (id INT PRIMARY KEY, `名字` VARCHAR(20) DEFAULT '默认', e ENUM('红','绿') DEFAULT '绿', "
        "s SET('甲','乙'), b BINARY(2) DEFAULT X'6100') COMMENT '你好'",
        "ALTER TABLE g ADD COLUMN `备注` TEXT COMMENT '说明', ADD INDEX `索引` (`名字`)",
        "INSERT INTO g (id, `名字`, e, s, `备注`) VALUES (1, '张三', '红', '甲,乙', '好'), (2, DEFAULT, DEFAULT, '', NULL)",
    ]),
    ("gbk", "gb", [
        b"CREATE TABLE gb (id INT PRIMARY KEY, b VARBINARY(4) DEFAULT _binary'\xc3\xa9', "
        b"c VARCHAR(4) CHARACTER SET latin1 DEFAULT _latin1'\xe9', x VARBINARY(4) DEFAULT X'C3A9') COMMENT '"
        + "二进制".encode("gbk") + b"'",
        "INSERT INTO gb (id) VALUES (1)",
    ]),
    ("sjis", "j", [
        "CREATE TABLE j (id INT PRIMARY KEY, `表` VARCHAR(20) DEFAULT 'ソ表', e ENUM('予','定')) COMMENT '予定ソ'",
        "INSERT INTO j (id, `表`, e) VALUES (1, 'ソ', '定'), (2, DEFAULT, NULL)",
    ]),
    ("latin1", "l", [
        "CREATE TABLE l (id INT PRIMARY KEY, `café` VARCHAR(20) DEFAULT 'naïve', e ENUM('ä','ö')) COMMENT 'über'",
        "INSERT INTO l (id, `café`, e) VALUES (1, 'crème', 'ö'), (2, DEFAULT, 'ä')",
    ]),
    ("cp1251", "r", [
        "CREATE TABLE r (id INT PRIMARY KEY, `имя` VARCHAR(20) DEFAULT 'Привет', e ENUM('да','нет')) COMMENT 'мир'",
        "ALTER TABLE r CHANGE `имя` `фамилия` VARCHAR(30) DEFAULT 'Ёж' COMMENT 'поле'",
        "INSERT INTO r (id, `фамилия`, e) VALUES (1, 'Иванов', 'нет'), (2, DEFAULT, 'да')",
    ]),
]


def test_ddl_of_non_utf8_sessions_arrives_as_the_session_meant_it(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    schema_changefeed(capsys, up, down, "e2e-session-charset", "scs", "CREATE DATABASE scs")
    for charset, _table, statements in SESSIONS:
        with up.connect("scs", charset=charset) as conn, conn.cursor() as cur:
            for sql in statements:
                conn.query(sql) if isinstance(sql, bytes) else cur.execute(sql)
    rc, err = cli_run(capsys, "e2e-session-charset")
    assert rc == 0, err
    for _charset, table, _statements in SESSIONS:
        assert down.query(f"SHOW CREATE TABLE scs.{table}") == up.query(f"SHOW CREATE TABLE scs.{table}")
        assert down.query(f"SELECT * FROM scs.{table} ORDER BY id") == up.query(f"SELECT * FROM scs.{table} ORDER BY id")
    assert down.query("SELECT `名字`, e FROM scs.g WHERE id = 2") == [("默认", "绿")]
    assert down.query("SELECT HEX(b), HEX(c), HEX(x) FROM scs.gb") == [("C3A9", "E9", "C3A9")]
    assert_consistent(up, down, ["scs"])
