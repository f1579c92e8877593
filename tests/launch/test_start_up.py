"""What a process running `cdcflow changefeed run` loads before its cycle starts: the cycle's
modules, without the libraries only some paths use (each costs 0.1-0.5 s of every CLI cycle's
start).  tests/e2e/test_cycle_start_up.py follows whole cycles in processes of their own."""

from __future__ import annotations

import json
import subprocess
import sys

# loaded where a path needs them, never at start-up: Spark (a stage that runs in Spark), the
# binlog library (pull's reader, only for a window with events), pandas (pyarrow's dataset module
# loads it: a stage that scans the event store), croniter (a config with a cron schedule), sqlglot
# (value expressions)
NOT_AT_START = ("pyspark", "py4j", "grpc", "pymysqlreplication", "pandas", "pyarrow.dataset", "croniter", "sqlglot")


def _loaded_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, check=True, timeout=120)
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_the_cli_and_its_cycle_load_none_of_the_libraries_only_some_paths_use():
    loaded = _loaded_after("from cdcflow import cli\nfrom cdcflow.launch import in_process")
    assert "cdcflow.launch.in_process" in loaded and "cdcflow.stages.prepare" in loaded
    assert not loaded & set(NOT_AT_START), sorted(loaded & set(NOT_AT_START))
