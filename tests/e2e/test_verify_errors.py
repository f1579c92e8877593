"""`cdcflow changefeed verify` in a process of its own when the downstream fails it in the
middle of the comparison (its session killed, the table gone): the chunk threads' server
error becomes one line naming the changefeed, the side, the table and chunk and what to do;
no trace, no raw client error."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable

import pytest
from e2e_helpers import create_changefeed

pytestmark = pytest.mark.e2e

S = "vfy_lost"


def _verify_while(up, down, capsys, changefeed_id: str, act: Callable[[int], None]) -> tuple[int, list[str]]:
    """verify of equal tables large enough that the checksums run while the test watches;
    `act(connection id)` runs on the downstream once a chunk's checksum query is seen there.
    Returns verify's exit code and its stderr's lines (stdout must be empty)."""
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {S}", f"CREATE DATABASE {S}",
                  f"CREATE TABLE {S}.t (id INT PRIMARY KEY, v VARCHAR(200))",
                  f"INSERT INTO {S}.t SELECT seq, REPEAT(MD5(seq), 6) FROM {S}.seq_1_to_600000")
    create_changefeed(capsys, up, down, changefeed_id, f"[filter]\nrules = ['{S}.*']\n")
    # only this verify's sessions: a checksum query of an earlier test's verify (one killed, or
    # ended by an error while its other sessions' queries ran on) may still be running on the
    # server, and acting on it before this verify had planned its tables made it find the table
    # gone at its start ("different") instead of mid-chunk (MariaDB's connection ids only grow)
    (before,) = down.query("SELECT CONNECTION_ID()")[0]
    proc = subprocess.Popen([sys.executable, "-m", "cdcflow.cli", "changefeed", "verify", "-c", changefeed_id,
                             "--chunk-size", "20000", "--wait", "0s"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        acted = False
        while proc.poll() is None and not acted:
            for (pid,) in down.query("SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE '%CRC32%' "
                                     f"AND ID <> CONNECTION_ID() AND ID > {before} LIMIT 1"):
                act(pid)
                acted = True
            time.sleep(0.01)
        out, err = proc.communicate(timeout=600)
        assert acted, "verify ended before a checksum query was seen"
        assert out == "" and "Traceback" not in err, err[-3000:]
        return proc.returncode, [line for line in err.splitlines() if line.strip()]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for s in (up, down):
            s.execute(f"DROP DATABASE IF EXISTS {S}")


@pytest.mark.parametrize("act, raw, says", [
    ("KILL CONNECTION {pid}", "OperationalError", "verify lost the downstream at "),
    (f"RENAME TABLE {S}.t TO {S}.gone", "ProgrammingError", "the downstream at "),
], ids=["session-killed", "table-gone"])
def test_a_downstream_failing_mid_verify_is_one_line_naming_the_chunk(mariadb_pair, cdcflow_home, capsys, act,
                                                                      raw, says):
    up, down = mariadb_pair
    rc, lines = _verify_while(up, down, capsys, "vfy-lost", lambda pid: down.execute(act.format(pid=pid)))
    assert rc == 1 and len(lines) == 1 and raw not in lines[0], lines
    assert lines[0].startswith(f"Error: changefeed vfy-lost: {says}"), lines[0]
    assert f"{S}.t chunk " in lines[0] and "verify again" in lines[0], lines[0]
    assert ("lost" in says) != ("refused verify's query" in lines[0]), lines[0]
