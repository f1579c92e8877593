"""The GTID position of a binlog position, read from a real binlog: MariaDB's own BINLOG_GTID_POS
and the scan of SHOW BINLOG EVENTS (MySQL's path, and MariaDB's fallback) agree at every
transaction boundary, a file's start included, with two GTID domains."""

from __future__ import annotations

from cdcflow.source import gtid_locate
from cdcflow.source.position import Position


class _AsIfNotMariaDB:
    """A connection whose server does not say MariaDB: gtid_at takes the scan."""

    def __init__(self, conn):
        self.conn = conn

    def cursor(self):
        conn = self.conn

        class Cursor:
            def __init__(self):
                self.cur = conn.cursor()

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.cur.close()

            def execute(self, sql, args=None):
                return self.cur.execute("SELECT 'MySQL'" if sql == "SELECT @@version" else sql, args)

            def fetchone(self):
                return self.cur.fetchone()

            def fetchall(self):
                return self.cur.fetchall()

        return Cursor()


def test_gtid_at_every_boundary_by_the_server_and_by_the_scan(mariadb_pair):
    up, _ = mariadb_pair
    up.execute("FLUSH BINARY LOGS", "DROP DATABASE IF EXISTS gl", "CREATE DATABASE gl",
               "CREATE TABLE gl.t (id INT PRIMARY KEY)", "INSERT INTO gl.t VALUES (1)",
               "SET SESSION gtid_domain_id = 7", "INSERT INTO gl.t VALUES (2)", "SET SESSION gtid_domain_id = 0")
    first = up.query("SHOW MASTER STATUS")[0][0]
    up.execute("FLUSH BINARY LOGS", "INSERT INTO gl.t VALUES (3)", "ALTER TABLE gl.t ADD COLUMN v INT")
    last = up.query("SHOW MASTER STATUS")[0][0]
    head = up.query("SELECT @@GLOBAL.gtid_binlog_pos")[0][0]
    seen = []
    with up.connect() as conn:
        for file in (first, last):
            ends = [r[4] for r in up.query("SHOW BINLOG EVENTS IN %s", (file,)) if r[2] in ("Xid", "Query")]
            for pos in [4, *ends]:
                by_server = gtid_locate.gtid_at(conn, Position(file, pos))
                by_scan = gtid_locate.gtid_at(_AsIfNotMariaDB(conn), Position(file, pos))
                assert by_server == by_scan, (file, pos)
                seen.append(by_server.gtid)
    assert "7-" in seen[-1] and seen[-1] == ",".join(sorted(head.split(","), key=lambda g: int(g.split("-")[0])))
    assert len(set(seen)) > 4  # the position moves with every transaction


def test_the_scan_reads_a_binlog_whose_statements_are_not_utf8(mariadb_pair):
    # a session in latin1 or gbk writes its statements' bytes as they are (a DDL's text, a
    # statement-format event): SHOW BINLOG EVENTS then holds bytes that are not UTF-8, which
    # the failover check read as UTF-8 and stopped on (UnicodeDecodeError)
    up, _ = mariadb_pair
    up.execute("FLUSH BINARY LOGS", "DROP DATABASE IF EXISTS gl8", "CREATE DATABASE gl8")
    file = up.query("SHOW MASTER STATUS")[0][0]
    with up.connect() as conn, conn.cursor() as cur:
        cur.execute("SET NAMES latin1")
        cur.execute("CREATE TABLE gl8.t (id INT PRIMARY KEY, v VARCHAR(8) DEFAULT 'd\xe9j\xe0') CHARSET latin1"
                    .encode("latin1"))
        cur.execute("SET NAMES gbk")
        cur.execute("ALTER TABLE gl8.t COMMENT '中文'".encode("gbk"))
        cur.execute("SET NAMES latin1")
        # a row event's statement is written as its session sent it (MariaDB's Annotate_rows)
        cur.execute("INSERT INTO gl8.t VALUES (1, 'gar\xe7on')".encode("latin1"))
        conn.commit()
    with up.connect() as conn:
        kinds = [kind for kind, _at, _end, _info in gtid_locate.events(conn, file)]
        last = list(gtid_locate.events(conn, file))[-1][2]
        by_scan = gtid_locate.gtid_at(_AsIfNotMariaDB(conn), Position(file, last))
        by_server = gtid_locate.gtid_at(conn, Position(file, last))
    assert "Query" in kinds
    assert by_scan == by_server
    assert up.query("SELECT v FROM gl8.t")[0][0] == "gar\xe7on"  # the statements ran as written


def test_the_scan_leaves_the_session_s_result_charset_as_it_was(mariadb_pair):
    up, _ = mariadb_pair
    file = up.query("SHOW MASTER STATUS")[0][0]
    with up.connect() as conn, conn.cursor() as cur:
        for charset in ("latin1", None):
            cur.execute("SET SESSION character_set_results = %s", (charset,))
            list(gtid_locate.events(conn, file))
            cur.execute("SELECT @@SESSION.character_set_results")
            assert cur.fetchone()[0] == charset
