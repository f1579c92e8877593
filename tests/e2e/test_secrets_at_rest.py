"""Secrets at rest, through the CLI: everything under CDCFLOW_HOME is private to its owner
(folders 0700, files 0600, SQLite's and the event store's later files too; an older home is
tightened when cdcflow opens it), and a password given by reference (`?password-env=NAME`,
`?airflow-conn-id=ID`) is never written to the spec, resolves at every cycle, and is refused
with one line when it names nothing."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from e2e_helpers import assert_consistent, backdate, cli_run, query

from cdcflow import cli
from cdcflow_devtools.mariadb import ROOT_PASSWORD

pytestmark = pytest.mark.e2e

DB = "secrets_rest"


def loose_paths(root: Path) -> list[str]:
    """What under `root` (itself included) a group or other user could read, write or enter."""
    found = []
    for folder, _dirs, files in os.walk(root):
        for p in [folder, *(os.path.join(folder, f) for f in files)]:
            mode = stat.S_IMODE(os.lstat(p).st_mode)
            if mode & 0o077:
                found.append(f"{p} {oct(mode)}")
    return found


def stored_passwords(spec: Path) -> dict:
    """The password each URI of a spec file holds."""
    data = json.loads(spec.read_text())
    return {k: urlsplit(data[k]).password for k in ("source_uri", "sink_uri")}


def without_password(uri: str, ref: str) -> str:
    """The server's URI with no password and a reference instead."""
    parts = urlsplit(uri)
    return f"mysql://{parts.username}@{parts.hostname}:{parts.port}/?{ref}"


def create(capsys, changefeed_id: str, source: str, sink: str, home: Path) -> tuple[int, str]:
    config = home / f"{changefeed_id}.toml"
    config.write_text(f"[filter]\nrules = ['{DB}.*']\n")
    capsys.readouterr()
    rc = cli.main(["changefeed", "create", "-c", changefeed_id, "--source-uri", source, "--sink-uri", sink,
                   "--config", str(config)])
    return rc, capsys.readouterr().err


@pytest.fixture
def tables(mariadb_pair):
    up, down = mariadb_pair
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {DB}", f"CREATE DATABASE {DB}",
                  f"CREATE TABLE {DB}.t (id INT PRIMARY KEY, v VARCHAR(20))")
    yield up, down
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {DB}")


def test_passwords_by_env_stay_out_of_a_private_home(tables, spark, cdcflow_home, capsys, monkeypatch):
    up, down = tables
    monkeypatch.setenv("CDCFLOW_TEST_SOURCE_PW", ROOT_PASSWORD)
    monkeypatch.setenv("CDCFLOW_TEST_SINK_PW", ROOT_PASSWORD)
    rc, err = create(capsys, "sec-env", without_password(up.uri, "password-env=CDCFLOW_TEST_SOURCE_PW"),
                     without_password(down.uri, "password-env=CDCFLOW_TEST_SINK_PW"), cdcflow_home)
    assert rc == 0, err
    spec = cdcflow_home / "changefeeds" / "sec-env.json"
    assert stored_passwords(spec) == {"source_uri": None, "sink_uri": None}
    assert f":{ROOT_PASSWORD}@" not in spec.read_text()
    assert (cdcflow_home / "metadata.db").exists()
    assert loose_paths(cdcflow_home) == []

    up.execute(f"INSERT INTO {DB}.t VALUES (1, 'a'), (2, 'b')")
    rc, err = cli_run(capsys, "sec-env")  # both passwords come from the environment
    assert rc == 0, err
    assert_consistent(up, down, [DB])
    assert loose_paths(cdcflow_home) == []  # the event store's and SQLite's files written by the cycle

    # a home an older cdcflow left readable is tightened when cdcflow opens it
    for p in (cdcflow_home, cdcflow_home / "changefeeds", spec, cdcflow_home / "metadata.db"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    proc = subprocess.run([sys.executable, "-m", "cdcflow.cli", "changefeed", "list"], capture_output=True,
                          text=True, timeout=300, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    assert loose_paths(cdcflow_home) == []


def test_a_missing_password_env_is_one_line_at_create_and_at_run(tables, spark, cdcflow_home, capsys,
                                                                   monkeypatch):
    up, down = tables
    monkeypatch.delenv("CDCFLOW_TEST_NO_SUCH_PW", raising=False)
    rc, err = create(capsys, "sec-missing", up.uri, without_password(down.uri, "password-env=CDCFLOW_TEST_NO_SUCH_PW"),
                     cdcflow_home)
    assert rc == 1
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert "CDCFLOW_TEST_NO_SUCH_PW" in err and "not set" in err, err
    assert not (cdcflow_home / "changefeeds" / "sec-missing.json").exists()

    monkeypatch.setenv("CDCFLOW_TEST_NO_SUCH_PW", ROOT_PASSWORD)
    rc, err = create(capsys, "sec-missing", up.uri, without_password(down.uri, "password-env=CDCFLOW_TEST_NO_SUCH_PW"),
                     cdcflow_home)
    assert rc == 0, err
    up.execute(f"INSERT INTO {DB}.t VALUES (1, 'a')")
    monkeypatch.delenv("CDCFLOW_TEST_NO_SUCH_PW")  # e.g. a worker whose environment lacks it
    rc, err = cli_run(capsys, "sec-missing")
    assert rc == 1
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[-1].startswith("Error: changefeed sec-missing") and "CDCFLOW_TEST_NO_SUCH_PW" in lines[-1], err
    status = query(capsys, "sec-missing")
    assert status["state"] == "warning"  # fixing the environment is enough: the next cycle retries
    assert status["error"]["code"] == "CDCFLOW:ErrCredentialUnresolved"

    monkeypatch.setenv("CDCFLOW_TEST_NO_SUCH_PW", ROOT_PASSWORD)
    backdate("sec-missing", 3600, "next_retry_at")  # the backoff has passed
    rc, err = cli_run(capsys, "sec-missing")
    assert rc == 0, err
    assert_consistent(up, down, [DB])


def test_an_airflow_connection_supplies_the_password(tables, spark, cdcflow_home, capsys, monkeypatch):
    """Outside Airflow, as Airflow hands a connection to a process: AIRFLOW_CONN_<ID>."""
    up, down = tables
    parts = urlsplit(down.uri)
    rc, err = create(capsys, "sec-airflow", up.uri, without_password(down.uri, "airflow-conn-id=cdcflow_test_sink"),
                     cdcflow_home)
    assert rc == 1 and "cdcflow_test_sink" in err and "AIRFLOW_CONN_CDCFLOW_TEST_SINK" in err, err
    assert len(err.strip().splitlines()) == 1, err

    monkeypatch.setenv("AIRFLOW_CONN_CDCFLOW_TEST_SINK",
                       f"mysql://{parts.username}:{ROOT_PASSWORD}@{parts.hostname}:{parts.port}")
    rc, err = create(capsys, "sec-airflow", up.uri, without_password(down.uri, "airflow-conn-id=cdcflow_test_sink"),
                     cdcflow_home)
    assert rc == 0, err
    assert stored_passwords(cdcflow_home / "changefeeds" / "sec-airflow.json")["sink_uri"] is None
    up.execute(f"INSERT INTO {DB}.t VALUES (1, 'a')")
    rc, err = cli_run(capsys, "sec-airflow")
    assert rc == 0, err
    assert_consistent(up, down, [DB])
