"""Two things a person meets in a DAG run's task logs, through Airflow's dag.test(), real MariaDB
servers and the session's Spark Connect server:

- a DAG run left open between its tasks (its DAG paused in Airflow after pull) while another
  cycle ran: its later tasks see that they are no longer the changefeed's cycle, end skipped
  and say so, and change nothing (they failed on the other cycle's garbage collection and put
  the changefeed in warning).  On the fast path (the small window's stages inside pull) the
  task that finds the cycle replaced is finish; on the staged path (a task per stage: on Spark
  Connect with `fast-path-max-events = 0`, or spark-submit jobs) it is filter, the first stage;
- a stage that fails: its one line (changefeed, commit ts, statement, remedy) is the task
  log's first ERROR, ahead of Airflow's own error block.
"""

from __future__ import annotations

import logging
import re

import pytest

try:
    from airflow_env import parsed_changefeed_dag
except ImportError:  # tests/ imported as a package
    from tests.airflow_env import parsed_changefeed_dag

from e2e_helpers import assert_consistent, cli_run, create_changefeed, orphan_lease

from cdcflow.store import metastore

pytestmark = [pytest.mark.e2e, pytest.mark.airflow]

CATCH_UP = {"mode": "catch-up", "start_ts": None, "target_ts": None}


def _state(ti) -> str:
    return str(ti.state).removeprefix("TaskInstanceState.").lower()


def _error_lines(capsys, caplog) -> list[str]:
    """The ERROR lines of the run's task logs, in order.  dag.test() writes them to stdout
    (structlog's console lines), unless an earlier test of the session configured logging so
    that they reach the log handlers."""
    records = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    console = [m.group(1) for m in map(ERROR_LINE.match, capsys.readouterr().out.splitlines()) if m]
    return records or console


ERROR_LINE = re.compile(r"\S+ \[error\s*\] (.*) \[[\w.]+\] loc=\S+$")


STAGED = {"fast": "", "staged": "fast-path-max-events = 0", "spark-submit": 'spark-master = "local[1]"'}


@pytest.mark.parametrize("path", list(STAGED))
def test_a_dag_run_left_open_while_another_cycle_ran_stops_cleanly(mariadb_pair, airflow_home, spark, capsys,
                                                                    caplog, path):
    up, down = mariadb_pair
    for s in (up, down):
        s.execute("DROP DATABASE IF EXISTS dag_stale")
    create_changefeed(capsys, up, down, "dag-stale", f"[filter]\nrules = ['dag_stale.*']\n[cdcflow]\n{STAGED[path]}\n")
    up.execute("CREATE DATABASE dag_stale", "CREATE TABLE dag_stale.t (id INT PRIMARY KEY, v VARCHAR(20))",
               "INSERT INTO dag_stale.t VALUES (1, 'one'), (2, 'two')")
    dag = parsed_changefeed_dag("dag-stale")
    other = {}

    def paused_after_pull(context):
        # In a deployment each task is a process of its own: once pull's has ended, nothing holds
        # the lease until the next task starts, for as long as the DAG stays paused.  dag.test()
        # runs every task in this process, so the lease is handed back as that exit would leave
        # it (its owner a process that no longer exists), and a cycle runs meanwhile.
        orphan_lease("dag-stale")
        up.execute("INSERT INTO dag_stale.t VALUES (3, 'while paused')")
        other["rc"], other["err"] = cli_run(capsys, "dag-stale")
        other["run"] = metastore.recent_runs("dag-stale", limit=1)[0]

    dag.get_task("pull").on_success_callback = [paused_after_pull]
    caplog.clear()
    with caplog.at_level(logging.INFO):
        run = dag.test(run_conf=CATCH_UP)
    log_text = capsys.readouterr().out + caplog.text

    assert other["rc"] == 0, other["err"]
    assert other["run"].status == "done"
    assert str(run.state) in ("success", "DagRunState.SUCCESS"), run.state
    tasks = ("pull", "filter", "barrier", "apply", "wait_index", "finish")
    states = {t: _state(run.get_task_instance(t)) for t in tasks}
    assert states == {"pull": "success", **{t: "skipped" for t in tasks[1:]}}, states
    stale = [r for r in metastore.recent_runs("dag-stale") if r.run_id.startswith("airflow__")][0]
    assert stale.status == "superseded" and stale.stats["superseded_by"] == other["run"].run_id
    assert stale.error is None
    assert f"was replaced by cycle {other['run'].run_id} while it was open: nothing to finish" in log_text
    # the stage task of the staged path stops before it reads anything; the fast path's ran inside pull
    replaced = f"stage filter: cycle {stale.run_id} is no longer this changefeed's cycle: {other['run'].run_id}"
    assert (replaced in log_text) == (path != "fast")
    assert ("filter" in stale.stats) == (path == "fast"), stale.stats  # a stage's result: it ran
    assert stale.stats.get("filter_task") == ("in pull's task" if path == "fast" else None), stale.stats
    assert other["run"].stats["apply_task"] == "in the cycle's process"
    feed = metastore.get_feed("dag-stale")
    assert feed.state == "normal" and feed.error is None and feed.lease_owner is None
    assert_consistent(up, down, ["dag_stale"])
    for s in (up, down):
        s.execute("DROP DATABASE dag_stale")


@pytest.mark.parametrize("launcher", ["connect", "spark-submit"])
def test_a_failed_stage_says_what_failed_in_its_first_error_line(mariadb_pair, airflow_home, capsys, caplog,
                                                                 launcher):
    up, down = mariadb_pair
    changefeed_id, schema = f"dag-err-{launcher}", f"dag_err_{launcher.replace('-', '_')}"
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {schema}")
    down.execute(f"CREATE DATABASE {schema}")  # the downstream refuses the upstream's CREATE DATABASE
    master = '[cdcflow]\nspark-master = "local[1]"\n' if launcher == "spark-submit" else ""
    create_changefeed(capsys, up, down, changefeed_id, f"[filter]\nrules = ['{schema}.*']\n{master}")
    up.execute(f"CREATE DATABASE {schema}")
    dag = parsed_changefeed_dag(changefeed_id)
    assert (type(dag.get_task("apply")).__name__ == "StageSubmitOperator") == (launcher == "spark-submit")
    caplog.clear()
    with caplog.at_level(logging.INFO):
        run = dag.test(run_conf=CATCH_UP)
    assert str(run.state) in ("failed", "DagRunState.FAILED"), run.state
    # on Spark Connect the small window's stages run inside pull (the fast path): pull is the task that fails
    failing = "pull" if launcher == "connect" else "apply"
    assert _state(run.get_task_instance(failing)) == "failed"

    feed = metastore.get_feed(changefeed_id)
    assert feed.state == "failed"
    errors = _error_lines(capsys, caplog)
    assert errors
    first = errors[0]
    assert "\n" not in first and first == feed.error["message"]
    assert first.startswith(f"changefeed {changefeed_id}, commit ts ")
    assert f"[statement: CREATE DATABASE {schema}] — " in first and "skip-ddl" in first  # statement, remedy
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {schema}")


def test_a_refused_run_fails_once_at_prepare_in_the_pages_words(mariadb_pair, airflow_home, client, airflow_auth,
                                                                 capsys, caplog):
    """A run created where nothing checked its conf first (dag.test(), `airflow dags trigger`):
    prepare refuses it in the words the page's API answers before a run, and is the run's one
    failed task (finish, prepare's teardown, has nothing to close: upstream_failed)."""
    up, down = mariadb_pair
    create_changefeed(capsys, up, down, "dag-refused", "[filter]\nrules = ['dag_refused.*']\n")
    dag = parsed_changefeed_dag("dag-refused")
    conf = {**CATCH_UP, "mode": "backfill", "start_ts": "2999-01-01 00:00:00"}
    page = client.post("/api/v2/changefeeds/dag-refused/runs", headers=airflow_auth["user"], json=conf)
    assert page.status_code == 400 and "is later than the current TSO" in page.json()["error_msg"], page.json()
    caplog.clear()
    with caplog.at_level(logging.INFO):
        run = dag.test(run_conf=conf)
    assert str(run.state) in ("failed", "DagRunState.FAILED"), run.state
    states = {ti.task_id: _state(ti) for ti in run.get_task_instances()}
    assert [t for t, s in states.items() if s == "failed"] == ["prepare"], states
    assert states["finish"] == "upstream_failed", states
    errors = _error_lines(capsys, caplog)
    # the same words as the page's answer (the current TSO they quote moved on meanwhile)
    said, current = page.json()["error_msg"], re.compile(r"current TSO \d+ \([^)]*\)")
    assert errors and current.sub("", errors[0]) == current.sub("", said), (errors, said)
    assert metastore.recent_runs("dag-refused") == []  # no cycle was opened


def test_the_first_cycle_on_a_table_missing_downstream_names_it(mariadb_pair, airflow_home, capsys):
    """Only inserts, on a table the downstream lacks: the safe-mode replay's DELETE is what the
    downstream refuses, but the error names the missing table and offers a copy."""
    up, down = mariadb_pair
    for s in (up, down):
        s.execute("DROP DATABASE IF EXISTS dag_nt", "CREATE DATABASE dag_nt")
    up.execute("CREATE TABLE dag_nt.t1 (id INT PRIMARY KEY, v VARCHAR(20))")
    create_changefeed(capsys, up, down, "dag-nt", "[filter]\nrules = ['dag_nt.*']\n")
    up.execute("INSERT INTO dag_nt.t1 VALUES (1, 'one'), (2, 'two')")
    run = parsed_changefeed_dag("dag-nt").test(run_conf=CATCH_UP)
    assert str(run.state) in ("failed", "DagRunState.FAILED"), run.state
    error = metastore.get_feed("dag-nt").error
    assert error["code"] == "CDCFLOW:ErrTableNotExists", error
    message = error["message"]
    assert "table dag_nt.t1 does not exist downstream, so its row changes cannot be written" in message, message
    assert "`cdcflow changefeed resync-tables -c dag-nt --tables dag_nt.t1`" in message, message
    assert "mode resync-tables" in message and "create dag_nt.t1 downstream" in message
    assert "DELETE" not in message, message  # the rows were inserted: the statement kind is not named
    for s in (up, down):
        s.execute("DROP DATABASE dag_nt")
