"""`cdcflow changefeed run` in a process of its own: when a cycle fails in Spark's tasks, the
one-line error is the last line on stderr (the command stops Spark before writing it)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from e2e_helpers import create_changefeed

pytestmark = pytest.mark.e2e

S = "cli_err"


def test_the_error_is_the_last_line_when_spark_tasks_fail(mariadb_pair, cdcflow_home, capsys):
    up, down = mariadb_pair
    db = f"{S}_rows"
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}",
                  f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v VARCHAR(20))")
    down.execute(f"ALTER TABLE {db}.t MODIFY v VARCHAR(2)")  # narrowed by hand: the write fails in a Spark task
    create_changefeed(capsys, up, down, "cli-err-rows", f"[filter]\nrules = ['{db}.*']\n")
    up.execute(f"INSERT INTO {db}.t VALUES (1, 'longer than two')")
    try:
        proc = subprocess.run([sys.executable, "-m", "cdcflow.cli", "changefeed", "run", "-c", "cli-err-rows"],
                              capture_output=True, text=True, timeout=600, env=dict(os.environ))
        assert proc.returncode == 1
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        assert lines[-1].startswith("Error: changefeed cli-err-rows"), proc.stderr[-3000:]
    finally:
        for s in (up, down):
            s.execute(f"DROP DATABASE IF EXISTS {db}")
