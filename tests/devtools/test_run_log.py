"""`make demo` and `make dag-test` keep Airflow's and Spark's output in a log file and show a
person the run's progress: which task runs, what each stage moved, warnings and errors (the demo
itself, as `make demo` runs it: tests/devtools/test_airflow_local.py)."""

from __future__ import annotations

import sys

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
