"""The test servers and the consistency check the other tests rely on."""

from __future__ import annotations

import datetime as dt
import re
import socket
from decimal import Decimal

import pymysql
import pytest

from cdcflow.core.errors import CdcflowError
from cdcflow_devtools.compare import TableDiff, compare, format_report, table_checksums
from cdcflow_devtools.mariadb import ROOT_PASSWORD, MariaDB


@pytest.fixture
def schema(request, mariadb_pair):
    """A schema of this test's own, created on both servers and dropped after."""
    name = "tm_" + re.sub(r"\W", "_", request.node.name)[:50]
    for server in mariadb_pair:
        server.execute(f"DROP DATABASE IF EXISTS `{name}`", f"CREATE DATABASE `{name}`")
    yield name
    for server in mariadb_pair:
        server.execute(f"DROP DATABASE IF EXISTS `{name}`")


def _copy_rows(src: MariaDB, dst: MariaDB, schema: str, table: str) -> None:
    rows = src.query(f"SELECT * FROM `{table}`", database=schema)
    if not rows:
        return
    marks = ",".join(["%s"] * len(rows[0]))
    conn = dst.connect(schema)
    try:
        with conn.cursor() as cur:
            cur.execute("SET time_zone = '+00:00'")
            cur.executemany(f"INSERT INTO `{table}` VALUES ({marks})", rows)
    finally:
        conn.close()


def _diffs(up: MariaDB, down: MariaDB, schemas) -> list[TableDiff]:
    uc, dc = up.connect(), down.connect()
    try:
        return compare(uc, dc, schemas)
    finally:
        uc.close()
        dc.close()


# ---- the servers -----------------------------------------------------------


def test_upstream_writes_full_row_binlog_and_downstream_none(mariadb_pair):
    up, down = mariadb_pair
    variables = dict(
        up.query(
            "SHOW GLOBAL VARIABLES WHERE Variable_name IN"
            " ('log_bin', 'binlog_format', 'binlog_row_image', 'binlog_row_metadata', 'server_id')"
        )
    )
    assert variables == {
        "log_bin": "ON",
        "binlog_format": "ROW",
        "binlog_row_image": "FULL",
        "binlog_row_metadata": "FULL",
        "server_id": "1",
    }
    assert down.query("SELECT @@log_bin, @@server_id") == [(0, 2)]
    assert up.port != down.port


def test_a_running_pair_is_known_as_running(mariadb_pair, tmp_path):
    """make airflow and make demo say whether they start the local pair or use the one running."""
    from cdcflow_devtools.mariadb import pair_running

    up, down = mariadb_pair
    assert up.dir.parent == down.dir.parent and pair_running(up.dir.parent)
    assert not pair_running(tmp_path)


def test_root_connects_over_tcp_with_all_privileges(mariadb_pair):
    up, _ = mariadb_pair
    assert up.uri == f"mysql://root:{ROOT_PASSWORD}@127.0.0.1:{up.port}/"
    conn = pymysql.connect(host="127.0.0.1", port=up.port, user="root", password=ROOT_PASSWORD)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT CURRENT_USER(), @@character_set_server")
            assert cur.fetchone() == ("root@127.0.0.1", "utf8mb4")
            cur.execute("SHOW GRANTS")
            grants = " ".join(r[0] for r in cur.fetchall())
    finally:
        conn.close()
    assert "GRANT ALL PRIVILEGES ON *.* TO `root`@`127.0.0.1`" in grants
    with pytest.raises(pymysql.err.OperationalError):
        pymysql.connect(host="127.0.0.1", port=up.port, user="root", password="")


def test_connect_is_autocommit_utf8mb4(mariadb_pair, schema):
    up, _ = mariadb_pair
    conn = up.connect(schema)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT @@autocommit, @@character_set_client, DATABASE()")
            assert cur.fetchone() == (1, "utf8mb4", schema)
            cur.execute("CREATE TABLE t (s VARCHAR(10))")
            cur.execute("INSERT INTO t VALUES ('日本😀')")
    finally:
        conn.close()
    # visible from another connection without a COMMIT
    assert up.query("SELECT s FROM t", database=schema) == [("日本😀",)]


def test_binlog_head_advances_with_writes(mariadb_pair, schema):
    up, down = mariadb_pair
    file0, pos0 = up.binlog_head()
    assert file0.startswith("binlog.")
    up.execute("CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)", database=schema)
    file1, pos1 = up.binlog_head()
    assert (file1, pos1) > (file0, pos0)
    with pytest.raises(CdcflowError, match="writes no binlog"):
        down.binlog_head()


# ---- compare ---------------------------------------------------------------


def test_missing_and_extra_tables(mariadb_pair, schema):
    up, down = mariadb_pair
    up.execute("CREATE TABLE only_up (id INT PRIMARY KEY)", database=schema)
    down.execute("CREATE TABLE only_down (id INT PRIMARY KEY)", database=schema)
    up.execute("CREATE TABLE both_sides (id INT PRIMARY KEY)", database=schema)
    down.execute("CREATE TABLE both_sides (id INT PRIMARY KEY)", database=schema)
    assert _diffs(up, down, [schema]) == [
        TableDiff(schema, "only_down", "extra downstream"),
        TableDiff(schema, "only_up", "missing downstream"),
    ]


TYPED_TABLE = """CREATE TABLE t (
    id INT PRIMARY KEY,
    s VARCHAR(20),
    b VARBINARY(8),
    d DECIMAL(10, 2),
    f DOUBLE,
    dtm DATETIME(6),
    ts TIMESTAMP(3) NULL,
    tm TIME(1),
    bits BIT(8),
    e ENUM('a', 'b'),
    st SET('x', 'y', 'z'),
    j JSON
)"""


def test_rows_with_exact_values_then_equal_after_copy(mariadb_pair, schema):
    up, down = mariadb_pair
    up.execute(TYPED_TABLE, database=schema)
    down.execute(TYPED_TABLE, database=schema)
    up.execute(
        "INSERT INTO t VALUES"
        " (1, 'a', x'00ff', 1.50, 0.1, '2024-01-02 03:04:05.123456', '2024-01-02 03:04:05.5', '-01:02:03.4',"
        "  b'101', 'a', 'x,z', '{\"k\": [1, 2]}'),"
        " (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),"
        " (3, '', x'', 0, -0.0, '1000-01-01 00:00:00', NULL, '838:59:59', b'0', 'b', '', 'null')",
        database=schema,
    )
    assert _diffs(up, down, [schema]) == [TableDiff(schema, "t", "rows differ (up 3, down 0)")]

    _copy_rows(up, down, schema, "t")
    assert _diffs(up, down, [schema]) == []

    # one byte of one binary value
    down.execute("UPDATE t SET b = x'00fe' WHERE id = 1", database=schema)
    assert _diffs(up, down, [schema]) == [TableDiff(schema, "t", "rows differ (up 3, down 3)")]
    down.execute("UPDATE t SET b = x'00ff' WHERE id = 1", database=schema)
    # a fraction of a second
    down.execute("UPDATE t SET dtm = '2024-01-02 03:04:05.123457' WHERE id = 1", database=schema)
    assert _diffs(up, down, [schema]) == [TableDiff(schema, "t", "rows differ (up 3, down 3)")]
    down.execute("UPDATE t SET dtm = '2024-01-02 03:04:05.123456' WHERE id = 1", database=schema)
    # NULL versus empty string
    down.execute("UPDATE t SET s = NULL WHERE id = 3", database=schema)
    assert _diffs(up, down, [schema]) == [TableDiff(schema, "t", "rows differ (up 3, down 3)")]
    down.execute("UPDATE t SET s = '' WHERE id = 3", database=schema)
    assert _diffs(up, down, [schema]) == []

    rows = up.query("SELECT b, d, dtm FROM t WHERE id = 1", database=schema)
    assert rows == [(b"\x00\xff", Decimal("1.50"), dt.datetime(2024, 1, 2, 3, 4, 5, 123456))]


def test_rows_compare_as_multisets_in_any_order(mariadb_pair, schema):
    up, down = mariadb_pair
    for server in (up, down):
        server.execute("CREATE TABLE nokey (v INT)", database=schema)
    up.execute("INSERT INTO nokey VALUES (1), (1), (2), (3)", database=schema)
    # same count; pairs of duplicates would cancel out under an XOR of hashes
    down.execute("INSERT INTO nokey VALUES (2), (3), (4), (4)", database=schema)
    assert _diffs(up, down, [schema]) == [TableDiff(schema, "nokey", "rows differ (up 4, down 4)")]
    down.execute("DELETE FROM nokey", "INSERT INTO nokey VALUES (3), (1), (2), (1)", database=schema)
    assert _diffs(up, down, [schema]) == []


def test_column_differences(mariadb_pair, schema):
    up, down = mariadb_pair
    up.execute(
        "CREATE TABLE ty (id INT PRIMARY KEY, v VARCHAR(10))",
        "CREATE TABLE nul (id INT PRIMARY KEY, v INT NOT NULL)",
        "CREATE TABLE ord (id INT PRIMARY KEY, a INT, b INT)",
        "CREATE TABLE names (id INT PRIMARY KEY, a INT)",
        "CREATE TABLE width (id INT(11) PRIMARY KEY)",
        database=schema,
    )
    down.execute(
        "CREATE TABLE ty (id INT PRIMARY KEY, v VARCHAR(20))",
        "CREATE TABLE nul (id INT PRIMARY KEY, v INT NULL)",
        "CREATE TABLE ord (id INT PRIMARY KEY, b INT, a INT)",
        "CREATE TABLE names (id INT PRIMARY KEY, z INT)",
        # display width is cosmetic: not a difference
        "CREATE TABLE width (id INT(5) PRIMARY KEY)",
        database=schema,
    )
    got = {d.table: d.problem for d in _diffs(up, down, [schema])}
    assert got == {
        "ty": "columns differ: v varchar(10) NULL up, v varchar(20) NULL down",
        "nul": "columns differ: v int NOT NULL up, v int NULL down",
        "ord": "columns differ: order up (id, a, b) down (id, b, a)",
        "names": "columns differ: missing downstream a; extra downstream z",
    }


def test_checksums_stable_across_servers_and_skip_system_schemas(mariadb_pair, schema):
    up, down = mariadb_pair
    for server in (up, down):
        server.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARBINARY(4))", database=schema)
    up.execute("INSERT INTO t VALUES (1, 'a'), (2, x'00'), (3, NULL)", database=schema)
    down.execute("INSERT INTO t VALUES (3, NULL), (2, x'00'), (1, 'a')", database=schema)
    uc, dc = up.connect(), down.connect()
    try:
        sums_up = table_checksums(uc, [schema])
        assert sums_up == table_checksums(dc, [schema])
        assert list(sums_up) == [(schema, "t")]
        count, digest = sums_up[(schema, "t")]
        assert count == 3 and re.fullmatch(r"[0-9a-f]{32}", digest)

        everything = table_checksums(uc)
        assert (schema, "t") in everything
        assert not {s for s, _ in everything} & {"mysql", "information_schema", "performance_schema", "sys"}
        # even when asked for by name
        assert table_checksums(uc, ["mysql"]) == {}
        assert table_checksums(uc, []) == {}
    finally:
        uc.close()
        dc.close()


def test_ignored_schemas_are_not_compared(mariadb_pair, schema):
    up, down = mariadb_pair
    ignored = schema + "_meta"
    up.execute(f"CREATE DATABASE `{ignored}`", f"CREATE TABLE `{ignored}`.state (id INT)")
    try:
        uc, dc = up.connect(), down.connect()
        try:
            assert compare(uc, dc, [schema, ignored], ignore_schemas=(ignored,)) == []
            assert compare(uc, dc, [schema, ignored], ignore_schemas=()) == [
                TableDiff(ignored, "state", "missing downstream")
            ]
        finally:
            uc.close()
            dc.close()
    finally:
        up.execute(f"DROP DATABASE `{ignored}`")


def test_format_report(mariadb_pair, schema):
    up, down = mariadb_pair
    for server in (up, down):
        server.execute("CREATE TABLE good (id INT PRIMARY KEY)", "CREATE TABLE bad (id INT PRIMARY KEY)", database=schema)
    up.execute("INSERT INTO good VALUES (1), (2)", "INSERT INTO bad VALUES (1), (2)", database=schema)
    down.execute("INSERT INTO good VALUES (1), (2)", "INSERT INTO bad VALUES (1), (3)", database=schema)
    uc, dc = up.connect(), down.connect()
    try:
        report = format_report(uc, dc, [schema])
        down.execute("UPDATE bad SET id = 2 WHERE id = 3", database=schema)
        fixed = format_report(uc, dc, [schema])
        down.execute("UPDATE bad SET id = 3 WHERE id = 2", database=schema)
        filtered = format_report(uc, dc, [schema], replicated=lambda s, table: table != "bad")
    finally:
        uc.close()
        dc.close()
    assert report.splitlines() == [
        f"{schema}.bad  DIFF: rows differ (up 2, down 2)",
        "    only up:   (2,)",
        "    only down: (3,)",
        f"{schema}.good  rows=2  ok",
        "1 of 2 tables differ",
    ]
    assert fixed.splitlines() == [
        f"{schema}.bad  rows=2  ok",
        f"{schema}.good  rows=2  ok",
        "2 tables consistent",
    ]
    # a table the changefeed's filter leaves out is said to be so, and neither compared nor counted
    assert filtered.splitlines() == [
        f"{schema}.bad  left out by the changefeed's filter (not compared)",
        f"{schema}.good  rows=2  ok",
        "1 tables consistent",
    ]


# ---- lifecycle of one server -----------------------------------------------


def test_kill_and_restart_keeps_committed_data(tmp_path):
    server = MariaDB(tmp_path, name="crashy", binlog=True, server_id=7).start()
    try:
        port = server.port
        server.execute(
            "CREATE DATABASE d",
            "CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(10))",
            "INSERT INTO d.t VALUES (1, 'one'), (2, 'two')",
        )
        head = server.binlog_head()
        server.kill()
        assert not server.running
        assert server.pid_file.exists()  # a crash leaves its pid file behind

        server.start()
        assert server.running and server.port == port
        assert server.query("SELECT id, v FROM d.t ORDER BY id") == [(1, "one"), (2, "two")]
        # a restart opens a new binlog file after the old one
        assert server.binlog_head()[0] > head[0]
        assert server.query("SELECT @@server_id") == [(7,)]
    finally:
        server.stop()
    assert not server.running and not server.pid_file.exists()


def test_start_attaches_to_running_server_and_reuses_datadir(tmp_path):
    first = MariaDB(tmp_path, name="shared").start()
    try:
        first.execute("CREATE DATABASE kept")
        first_pid = first.pid
        second = MariaDB(tmp_path, name="shared").start()  # no port: found from the folder
        assert (second.port, second.pid) == (first.port, first_pid)
        second.stop()
        assert not first.running

        third = MariaDB(tmp_path, name="shared", port=None).start()
        assert third.pid not in (None, first_pid)  # started anew on the same datadir
        assert third.port == first.port
        assert third.query("SHOW DATABASES LIKE 'kept'") == [("kept",)]
        with pytest.raises(CdcflowError, match="already running on port"):
            MariaDB(tmp_path, name="shared", port=third.port + 1).start()
    finally:
        first.stop()
        MariaDB(tmp_path, name="shared").stop()


def test_start_on_busy_port_fails_with_error_log_tail(tmp_path):
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen(1)
        server = MariaDB(tmp_path, name="blocked", port=blocker.getsockname()[1])
        with pytest.raises(CdcflowError) as err:
            server.start(timeout=30)
    assert "Address already in use" in str(err.value)
    assert not server.running


def test_a_recorded_port_taken_while_the_server_was_down_is_left_for_a_free_one(tmp_path):
    server = MariaDB(tmp_path, name="moved").start()
    try:
        server.execute("CREATE DATABASE kept")
        old = server.port
        server.stop()
        with socket.socket() as holder:  # another process took the port meanwhile
            # over the server's closed connections still in TIME_WAIT, as a server's listener binds
            holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            holder.bind(("127.0.0.1", old))
            holder.listen(1)
            again = MariaDB(tmp_path, name="moved").start()
            assert again.running and again.port != old
            assert again.query("SHOW DATABASES LIKE 'kept'") == [("kept",)]
        assert MariaDB(tmp_path, name="moved").start().port == again.port  # the new one is recorded
    finally:
        MariaDB(tmp_path, name="moved").stop()


def test_a_server_of_another_folder_answering_on_the_port_is_refused_not_taken_for_this_one(tmp_path):
    owner = MariaDB(tmp_path, name="owner").start()
    try:
        owner.execute("CREATE DATABASE owners")
        installed = MariaDB(tmp_path, name="late").start()  # installed: it starts with root's password
        installed.stop()
        late = MariaDB(tmp_path, name="late", port=owner.port)
        with pytest.raises(CdcflowError, match="answered by another server"):
            late.start(timeout=30)
        assert not late.running
        assert owner.running and owner.query("SHOW DATABASES LIKE 'owners'") == [("owners",)]
    finally:
        owner.stop()
        MariaDB(tmp_path, name="late").stop()
