"""A DDL runs downstream in the upstream session's time and time zone (issue 16, items 3 and 8):
rows that exist when a column with a current-time or TIMESTAMP default is added are filled
as the upstream filled them, and later rows read the default as the upstream wrote it."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from e2e_helpers import assert_consistent, cli_ok, cli_run, create_changefeed, run_fails

from cdcflow_devtools.mariadb import HOST, ROOT_PASSWORD, ROOT_USER

pytestmark = pytest.mark.e2e


def _fresh(db, *servers):
    for s in servers:
        s.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}")


def test_ddl_runs_at_the_upstream_time_and_zone(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    _fresh("dss", up, down)
    create_changefeed(capsys, up, down, "e2e-ddl-session", "[filter]\nrules = ['dss.*']\n")
    up.execute("CREATE TABLE dss.t (id INT PRIMARY KEY, v INT)", "INSERT INTO dss.t VALUES (1, 1), (2, 2)")
    # the existing rows are filled with the DDL's time, a fixed past one with microseconds
    up.execute("SET timestamp = 1700000000.123456",
               "ALTER TABLE dss.t ADD COLUMN c DATETIME(6) DEFAULT CURRENT_TIMESTAMP(6), "
               "ADD COLUMN d TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6)",
               "SET timestamp = 1700000100",
               "ALTER TABLE dss.t ADD COLUMN e DATETIME DEFAULT NOW()", database="dss")
    # a TIMESTAMP default literal means an instant of the session's time zone
    up.execute("SET time_zone = '+05:00'",
               "ALTER TABLE dss.t ADD COLUMN z TIMESTAMP NOT NULL DEFAULT '2024-01-01 00:00:00'",
               "CREATE TABLE dss.p (id INT PRIMARY KEY, at TIMESTAMP NOT NULL DEFAULT '2024-06-01 12:00:00')",
               database="dss")
    up.execute("INSERT INTO dss.t (id, v, c, d, e) VALUES (3, 3, '2020-01-01', '2020-01-01', '2020-01-01')",
               "INSERT INTO dss.p (id) VALUES (1)")
    rc, err = cli_run(capsys, "e2e-ddl-session")
    assert rc == 0, err
    assert up.query("SELECT CAST(c AS CHAR) FROM dss.t WHERE id = 1") == [("2023-11-14 22:13:20.123456",)]
    assert_consistent(up, down, ["dss"])
    # row writing keeps its UTC session after the DDL ran in +05:00
    up.execute("INSERT INTO dss.p VALUES (2, '2024-02-02 02:02:02')")
    rc, err = cli_run(capsys, "e2e-ddl-session")
    assert rc == 0, err
    assert_consistent(up, down, ["dss"])


def _load_zone(server, zone: str) -> None:
    """The time zone tables of one named zone, as mysql_tzinfo_to_sql writes them."""
    sql = subprocess.run(["mysql_tzinfo_to_sql", f"/usr/share/zoneinfo/{zone}", zone], check=True,
                         capture_output=True, text=True).stdout
    subprocess.run(["mysql", "-h", HOST, "-P", str(server.port), "-u", ROOT_USER, f"-p{ROOT_PASSWORD}", "mysql"],
                   input=sql, check=True, capture_output=True, text=True)


@pytest.mark.skipif(not shutil.which("mysql_tzinfo_to_sql"), reason="no mysql_tzinfo_to_sql to load a zone with")
def test_ddl_in_a_named_zone_the_downstream_lacks(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    _fresh("dsz", up, down)
    _load_zone(up, "Asia/Karachi")  # the downstream knows no named zone (its tables are empty)
    create_changefeed(capsys, up, down, "e2e-ddl-zone", "[filter]\nrules = ['dsz.*']\n")
    up.execute("CREATE TABLE dsz.t (id INT PRIMARY KEY)", "INSERT INTO dsz.t VALUES (1)")
    up.execute("SET time_zone = 'Asia/Karachi'",
               "ALTER TABLE dsz.t ADD COLUMN z TIMESTAMP NOT NULL DEFAULT '2024-01-01 00:00:00'")
    status, message, ts = run_fails(capsys, "e2e-ddl-zone")
    assert "e2e-ddl-zone" in message and "'Asia/Karachi'" in message and "mysql_tzinfo_to_sql" in message
    assert down.query("SELECT * FROM dsz.t") == [(1,)]  # everything before the DDL, not the DDL
    _load_zone(down, "Asia/Karachi")
    cli_ok(capsys, "changefeed", "resume", "-c", "e2e-ddl-zone")
    rc, err = cli_run(capsys, "e2e-ddl-zone")
    assert rc == 0, err
    assert_consistent(up, down, ["dsz"])
