"""The two errors a first changefeed meets (issue 58), followed as they say: a table missing
downstream (ErrTableNotExists) mended by the CLI command its hint gives, and a downstream user
without rights on a new schema (ErrDownstreamPrivilege) mended by the GRANT its hint gives; each
time the next run goes on and the downstream equals the upstream."""

from __future__ import annotations

import re
import shlex

import pytest
from e2e_helpers import assert_consistent, backdate, cli_ok, cli_run, create_changefeed, query

from cdcflow.core.errors import DOWNSTREAM_PRIVILEGE, TABLE_NOT_EXISTS

pytestmark = pytest.mark.e2e

S = "first_hour"


def failed_with(capsys, changefeed_id: str, code: str) -> dict:
    rc, err = cli_run(capsys, changefeed_id)
    error = query(capsys, changefeed_id)["error"]
    assert rc == 1 and error["code"] == code, err
    return error


def test_a_table_missing_downstream_is_mended_by_the_command_its_error_gives(mariadb_pair, cdcflow_home, capsys):
    up, down = mariadb_pair
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {S}")
    up.execute(f"CREATE DATABASE {S}", f"CREATE TABLE {S}.t (id INT PRIMARY KEY, v VARCHAR(20))")
    try:
        create_changefeed(capsys, up, down, "first-missing", f"[filter]\nrules = ['{S}.*']\n")
        up.execute(f"INSERT INTO {S}.t VALUES (1, 'one'), (2, 'two')")
        error = failed_with(capsys, "first-missing", TABLE_NOT_EXISTS)
        assert "DELETE" not in error["message"], error["message"]  # the rows were inserted
        command = re.search(r"`cdcflow (changefeed resync-tables [^`]+)`", error["message"]).group(1)
        cli_ok(capsys, *shlex.split(command))
        backdate("first-missing", 11, "next_retry_at")  # the warning's first backoff (10 s) runs out
        rc, err = cli_run(capsys, "first-missing")
        assert rc == 0, err
        up.execute(f"INSERT INTO {S}.t VALUES (3, 'three')")
        rc, err = cli_run(capsys, "first-missing")
        assert rc == 0, err
        assert_consistent(up, down, [S])
    finally:
        for s in (up, down):
            s.execute(f"DROP DATABASE IF EXISTS {S}")


def test_a_user_without_rights_on_a_new_schema_is_told_the_grant(mariadb_pair, cdcflow_home, capsys):
    up, down = mariadb_pair
    new = f"{S}_new"
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {S}", f"DROP DATABASE IF EXISTS {new}", f"CREATE DATABASE {S}")
    down.execute("DROP USER IF EXISTS 'fh_writer'@'%'", "CREATE USER 'fh_writer'@'%' IDENTIFIED BY 'fh-pw'",
                 f"GRANT ALL ON {S}.* TO 'fh_writer'@'%'")
    sink = f"mysql://fh_writer:fh-pw@127.0.0.1:{down.port}/"
    try:
        capsys.readouterr()
        cli_ok(capsys, "changefeed", "create", "-c", "first-grant", "--source-uri", up.uri, "--sink-uri", sink)
        up.execute(f"CREATE DATABASE {new}", f"CREATE TABLE {new}.t (id INT PRIMARY KEY)", f"INSERT INTO {new}.t VALUES (1)")
        error = failed_with(capsys, "first-grant", DOWNSTREAM_PRIVILEGE)
        assert f"database `{new}`" in error["message"], error["message"]
        grant = re.search(r"`(GRANT [^`]+)`", error["message"]).group(1)
        assert grant.endswith(f"ON {new}.* TO 'fh_writer'@'%'"), grant
        down.execute(grant)
        backdate("first-grant", 11, "next_retry_at")  # the warning's first backoff (10 s) runs out
        rc, err = cli_run(capsys, "first-grant")
        assert rc == 0, err
        assert_consistent(up, down, [new])
    finally:
        for s in (up, down):
            s.execute(f"DROP DATABASE IF EXISTS {S}", f"DROP DATABASE IF EXISTS {new}")
        down.execute("DROP USER IF EXISTS 'fh_writer'@'%'")
