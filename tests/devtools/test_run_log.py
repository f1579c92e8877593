"""`make demo` and `make dag-test` keep Airflow's and Spark's output in a log file and show a
person the run's progress: which task runs, what each stage moved, warnings and errors."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cdcflow_devtools.checkout import PROJECT
from cdcflow_devtools.mariadb import MariaDB
from cdcflow_devtools.run_log import progress_line, run_logged

# lines as `airflow dags test` prints them (structlog's console renderer)
RECORDED = [
    "2026-11-24T13:54:30.431383Z [info     ] Filling up the DagBag from /p/dags [airflow.dag_processing.dagbag."
    "BundleDagBag] loc=dagbag.py:460",
    "2026-11-24T13:56:27.348308Z [info     ] [DAG TEST] starting task_id=pull map_index=-1 [airflow.sdk.definitions"
    ".dag] loc=dag.py:1501",
    '2026-11-24T13:56:29.607617Z [info     ] pulled · changefeed demo · {"changefeed": "demo", "event": "pulled", '
    '"run": "r1", "events": 42083, "transactions": 24, "seconds": 2.151, "end_pos": {"file": "binlog.000001"}} '
    '[cdcflow] loc=cycle.py:100',
    '2026-11-24T13:56:43.135641Z [info     ] ddl kept · changefeed demo · {"changefeed": "demo", "event": "ddl kept", '
    '"run": "r1", "commit_ts": 1, "name": "CREATE TABLE", "why": "shop.t matches the filter"} [cdcflow] '
    'loc=cycle.py:109',
    "2026-11-24T13:56:29.706364Z [info     ] [DAG TEST] end task task_id=pull map_index=-1 [airflow.sdk.definitions"
    ".dag] loc=dag.py:1563",
    "2026-11-24T13:44:22.265087Z [error    ] changefeed demo, commit ts 7: the downstream rejected DDL CREATE "
    "DATABASE [statement: CREATE DATABASE d] — skip it [cdcflow_airflow.cycle_tasks] loc=cycle_tasks.py:219",
    "2026-11-24T13:54:29.405572Z [warning  ] Could not import graphviz. [py.warnings] category=UserWarning",
    "Traceback (most recent call last):",
    "2026-11-24T13:57:04.119277Z [info     ] DagRun Finished: dag_id=changefeed__demo, run_duration=59.9, "
    "state=success, run_type=manual, [airflow.models.dagrun.DagRun] loc=dagrun.py:1315",
]


def test_progress_lines_say_tasks_what_moved_and_errors_only():
    shown = [progress_line(line) for line in RECORDED]
    assert shown == [
        None,
        "  task pull ...",
        "    pulled: events 42083, transactions 24, seconds 2.151",
        None,  # a kept DDL is in the log; the stage's summary says how many
        None,
        "  ERROR: changefeed demo, commit ts 7: the downstream rejected DDL CREATE DATABASE "
        "[statement: CREATE DATABASE d] — skip it",
        None,  # Airflow's own warnings stay in the log
        None,
        "  DAG run success",
    ]


def test_the_whole_output_goes_to_the_log_and_only_progress_to_the_screen(tmp_path):
    script = "import sys\n" + "".join(f"print({line!r})\n" for line in RECORDED)
    shown = []
    rc = run_logged([sys.executable, "-c", script], tmp_path / "logs" / "run.log", show=shown.append)
    assert rc == 0
    assert (tmp_path / "logs" / "run.log").read_text().splitlines() == RECORDED
    assert shown == [s for s in map(progress_line, RECORDED) if s]


@pytest.mark.e2e
@pytest.mark.airflow
def test_make_demo_shows_progress_and_names_its_log(tmp_path):
    """The demo as `make demo` runs it, in a .local of its own (CDCFLOW_LOCAL)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "CDCFLOW"))}
    env["CDCFLOW_LOCAL"] = str(tmp_path / "local")
    try:
        done = subprocess.run([sys.executable, "-m", "cdcflow_devtools.demo"], cwd=PROJECT, env=env,
                              capture_output=True, text=True, timeout=900)
    finally:  # the demo leaves its servers running for the person who ran it
        for name in ("upstream", "downstream"):
            MariaDB(tmp_path / "local" / "mariadb", name=name).stop()
    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    lines = out.splitlines()
    assert len(lines) < 60, out  # was about 200 lines of Airflow's and Spark's logging
    assert not [line for line in lines if re.match(r"^\S+Z \[\w+\s*\]", line)], out  # no raw log line
    log = Path(re.search(r"the whole output in (\S+)", out).group(1))
    assert log.is_file() and "DagRun Finished" in log.read_text()
    assert "    pulled: events " in out and "  DAG run success" in out
    # the table the filter leaves out is said to be left out, and the result agrees
    assert "crm.audit_log  left out by the changefeed's filter (not compared)" in out
    assert "RESULT: every replicated table is consistent" in out and '{"demo_ok": true}' in out
    assert not done.stderr.strip() or "Error" not in done.stderr, done.stderr[-2000:]
