"""The bodies of the DAG's cycle tasks, without Airflow: what a run's trigger parameters ask
for (launch.modes), the cycle's id, and what the prepare, pull, Spark stage, wait_index, finish,
follow and failure-callback tasks do, as plain values.  The plugin's task callables
(plugins/cdcflow_airflow/cycle_tasks.py) keep what is Airflow's — XCom, task states, Airflow's
exceptions, its connections — and hand each body the task's home (core.home.Home: its
CDCFLOW_HOME and credential lookup), which the body runs in.

The plugin imports this module when a task runs, never while Airflow parses DAGs: it loads the
cycle runner and the stages.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from cdcflow.changefeed import commands, feed_state, states
from cdcflow.core.errors import TASK_FAILED, CdcflowError
from cdcflow.core.home import Home
from cdcflow.config.spec_store import load_spec, spec_exists
from cdcflow.core.stage_names import SPARK_STAGES, STAGES
from cdcflow.launch.cycle_runner import (
    index_wait_needed,
    needs_spark,
    pull_and_settle,
    run_spark_stage,
    run_spark_stages,
    run_stage,
)
from cdcflow.launch.follow import Followed
from cdcflow.launch.follow import follow as follow_binlog
from cdcflow.launch.in_process import run_cycle
from cdcflow.launch.modes import cycle_request, follows
from cdcflow.launch.sessions import command_sessions
from cdcflow.snapshot.chunk_copies import progress_line
from cdcflow.spark.place import SparkPlace
from cdcflow.stages.cycle import Cycle
from cdcflow.stages.finish import finish as finish_stage
from cdcflow.stages.prepare import prepare as prepare_stage
from cdcflow.store import metastore

CYCLE_TASKS = ("prepare", *STAGES, "wait_index")
REMOVED_REASON = "it was removed (its spec is gone); this DAG disappears at the next DAG parse"
# The tasks whose failure nothing else records: finish records the other tasks' failures.
RECORDING_TASKS = ("prepare", "finish")


def cycle_run_id() -> str:
    """A new cycle's id in the CLI's shape, saying the cycle came from Airflow.

    Not Airflow's own run id: a retried prepare must open a new cycle, and
    ids with ':' and '+' make poor folder names in the event store.
    """
    return time.strftime("airflow__%Y%m%dT%H%M%S", time.gmtime()) + "_" + uuid.uuid4().hex[:6]


@dataclass(frozen=True)
class Opened:
    """What the prepare task tells the DAG: the cycle's id (None when none was opened), why the
    Spark stages do not run (None when they do), the mode to run instead of a cycle, for a
    cycle skipped for the changefeed's sake the word its run is shown by (skip_word), and
    whether the run's cycles are its follow task's (prepare skips the stages, not that task)."""

    run_id: str | None = None
    skip_reason: str | None = None
    instead: str | None = None
    skipped: str | None = None
    follows: bool = False


def skip_word(state: str) -> str:
    """Why stages.prepare skipped a cycle, in a word or two for the run's status ("skipped
    (stopped)"): the state that idles the changefeed, else what the cycle waits for (a warning's
    backoff, an initial copy not finished)."""
    if state in states.IDLE_REASONS:
        return state
    return "retry backoff" if state == states.WARNING else "copy unfinished"


def prepare(changefeed_id: str, params, manual: bool, home: Home = Home()) -> Opened:
    """Open the cycle the trigger parameters ask for, in `home`.  A run a person triggered
    (`manual`) runs through a warning's backoff; a scheduled one waits it out."""
    with home.entered():
        return _prepare(changefeed_id, params, manual)


def _prepare(changefeed_id: str, params, manual: bool) -> Opened:
    request = cycle_request(changefeed_id, params)
    instead = request.pop("instead")
    if not spec_exists(changefeed_id):  # a run Airflow scheduled before the DAG went away
        return Opened(skip_reason=f"changefeed {changefeed_id} does nothing this cycle: {REMOVED_REASON}",
                      skipped=states.REMOVED)
    if instead:
        return Opened(skip_reason=f"mode {instead}: no cycle", instead=instead)
    if follow_seconds(changefeed_id, params) and metastore.get_feed(changefeed_id).state in states.RUNNING_STATES:
        # the follow task's first cycle is this run's (a person's run's first, through a warning's
        # backoff): the hand-off from one run to the next costs prepare's process alone.  A
        # changefeed whose state idles its cycles goes to stages.prepare, whose skip says why.
        return Opened(skip_reason=f"changefeed {changefeed_id}: this run's cycles are its follow task's "
                                  "(follow-seconds)", follows=True)
    copy = request.pop("copy")
    if copy:  # recorded before the cycle: its apply joins the tables and begins their copy
        from cdcflow.changefeed import table_commands  # lazy: only a run that asks for a table copy

        table_commands.BY_KIND[copy["kind"]](changefeed_id, copy["tables"])
    # an unset bound is left out, so stages.prepare applies its own default
    result = prepare_stage(Cycle.load(changefeed_id, cycle_run_id()), manual=manual,
                           **{k: v for k, v in request.items() if v is not None})
    if copy and not result.skip:  # the run is shown by the mode it was triggered with (status_view.run_mode)
        metastore.update_run(changefeed_id, result.run_id, stats={metastore.RUN_TABLE_COPY: copy})
    return Opened(run_id=result.run_id, skip_reason=result.reason if result.skip else None,
                  skipped=skip_word(result.state) if result.skip else None)


def verify(changefeed_id: str, connection: Callable[[], str] | None = None, home: Home = Home()) -> dict:
    """Trigger mode verify: `cdcflow changefeed verify` in the task (its queries need no
    Spark), catching up first within its own run: the DAG runs one run at a time, so a
    scheduled catch-up cannot start while this run waits for one.  Its cycles are the CLI's
    in-process cycle (their Spark stages on the launcher's `connection` unless the config
    says otherwise).  Returns the result (the changefeed's state does not change)."""
    with home.entered():
        return commands.verify(changefeed_id, catch_up=lambda: run_cycle(
            changefeed_id, connection=connection, run_id=cycle_run_id()))


def snapshot(changefeed_id: str, report: Callable[[str], None], connection: Callable[[], str] | None = None,
             home: Home = Home()) -> dict:
    """Trigger mode snapshot: copy the tables of the stopped changefeed from a new consistent
    point (or continue its unfinished copy) on the stages' Spark (SparkPlace.resolve: the
    config's, else the launcher's `connection`), `report` hearing the progress as chunks end;
    the changefeed then resumes from the point."""
    with home.entered(), command_sessions(changefeed_id, connection) as spark_for:
        return commands.snapshot(changefeed_id, spark_for, report=lambda p: report(progress_line(changefeed_id, p)))


def fast_path(cfg, result) -> bool:
    """Whether the pull task runs the Spark stages itself, after pull's `result` (PullResult): on
    Spark Connect (the config names no master) with a window of at most `fast-path-max-events`
    events, however pull read it.  A task per stage costs a process, a DAG parse, a session and a
    scheduler hop each, which only a window far larger than a fresh changefeed's dwarfs.  The
    bound is on events (what the stages' work grows with), not on pull-parallel-min-bytes:
    with that one, a slow run could make the next window large enough to be read in ranges,
    which sent it down the slower staged path, which made the window after it larger still."""
    return not cfg.spark_master and result.pulled <= cfg.fast_path_max_events


def pull(changefeed_id: str, run_id: str, connection: Callable[[], str] | None = None,
         home: Home = Home()) -> tuple[dict, list[str]]:
    """Pull the window and choose the tasks that follow, as the CLI's cycle does.  An empty
    window is settled by pull_and_settle (the checkpoint moves).  A window with events goes on
    to the Spark stage tasks, unless it takes the `fast_path`: then this task runs them in one
    session on the Spark Connect server.  wait_index follows the stage tasks, or, without them,
    only when an index build is pending (index_wait_needed): an idle run or a fast one ends with
    finish.
    Pull takes no Spark, unless the config turns its parallel path on and the window is large:
    then its ranges are read by tasks on the Spark Connect server the stages use (the config's,
    else the launcher's `connection`, asked only once a session is wanted), or, with an embedded
    Spark, in child processes of this task.  Runs in `home`.
    Returns the results and the next tasks."""
    with home.entered():
        cycle = Cycle.load(changefeed_id, run_id)
        place = SparkPlace.resolve(cycle.config, connection=connection)
        results = pull_and_settle(cycle, place)
        if needs_spark(results):
            if not fast_path(cycle.config, results["pull"]):
                cycle.folder.persist()  # the stage tasks read the window pull kept unwritten in their own processes
                return results, [SPARK_STAGES[0], "wait_index"]
            run_spark_stages(cycle, results, place)
        return results, ["wait_index"] if index_wait_needed(cycle) else []


def spark_stage(stage: str, changefeed_id: str, run_id: str, connection: Callable[[], str] | None = None,
                home: Home = Home()):
    """A Spark stage in the worker, in `home`: a session where the config says, else on the
    launcher's `connection`, the stage, the session closed.  Returns the stage's result."""
    with home.entered():
        cycle = Cycle.load(changefeed_id, run_id)
        return run_spark_stage(stage, cycle, SparkPlace.resolve(cycle.config, connection=connection))


def poke_index(changefeed_id: str, run_id: str, home: Home = Home()):
    """One look at the index builds the cycle stopped for (the wait_index stage), in `home`."""
    with home.entered():
        return run_stage("wait_index", None, Cycle.load(changefeed_id, run_id))


def follow_seconds(changefeed_id: str, params) -> int:
    """How long a run with these trigger parameters follows the binlog, its follow task running
    its cycles: the config's follow-seconds for a catch-up to no target of its own
    (modes.follows), else 0: prepare opens the run's one cycle (and 0
    for a changefeed set to 0 since Airflow last parsed its DAG: the task goes at the next parse)."""
    if not spec_exists(changefeed_id) or not follows(params):
        return 0
    return load_spec(changefeed_id).config().follow_seconds


def follow(changefeed_id: str, params, connection: Callable[[], str] | None = None, home: Home = Home(), *,
           manual: bool = False, on_cycle: Callable[[dict], None] = lambda result: None,
           on_error: Callable[[CdcflowError], None] = lambda error: None,
           stop: Callable[[], bool] = lambda: False) -> Followed | None:
    """The follow task, after prepare left the run's cycles to it (a person's run, `manual`, has
    its first cycle run through a warning's backoff): where the changefeed's config asks
    (follow-seconds) and the run's trigger parameters allow (follow_seconds),
    cycles back to back in this task as `changefeed run --follow` runs them (launch.follow), each
    with an Airflow cycle id and its Spark where the run's own stages have theirs, until the time
    is up, the changefeed stops or `stop()` says so.  In `home`.  Returns what it did (None: the
    run does not follow)."""
    with home.entered():
        seconds = follow_seconds(changefeed_id, params)
        if not seconds:
            return None
        return follow_binlog(changefeed_id, seconds, connection=connection, new_run_id=cycle_run_id,
                             on_cycle=on_cycle, on_error=on_error, stop=stop, first_manual=manual)


def failure_message(task_states: dict) -> str | None:
    """None when every task of the cycle succeeded or was skipped, else which failed."""
    failed = [task for task in CYCLE_TASKS if task_states.get(task) == "failed"]
    if not failed:
        return None
    noun = "task" if len(failed) == 1 else "tasks"
    return f"{noun} {', '.join(failed)} failed (its Airflow task log has the error)"


def finish(changefeed_id: str, run_id: str, error: str | None, home: Home = Home()):
    """Close the cycle whatever happened (`error`: which tasks failed), in `home`.  Returns
    finish's result."""
    with home.entered():
        return finish_stage(Cycle.load(changefeed_id, run_id), error=error)


def record_failure(changefeed_id: str, task_id: str, run_id: str, exc: BaseException | None,
                   home: Home = Home()) -> str | None:
    """A task that died of something cdcflow did not record (killed, timed out, a crash outside
    cdcflow's code) puts the changefeed in warning (③), so its next cycles retry with backoff.
    Returns the changefeed's state, None when the changefeed is gone."""
    with home.entered():
        return _record_failure(changefeed_id, task_id, run_id, exc)


def _record_failure(changefeed_id: str, task_id: str, run_id: str, exc: BaseException | None) -> str | None:
    if not spec_exists(changefeed_id):
        return None
    # no exception: Airflow ended the task from outside (killed, timed out, or it never started)
    what = f"{type(exc).__name__}: {exc}" if exc is not None else "it ended without an exception (killed, " \
        "timed out, or never started)"
    err = CdcflowError(f"Airflow task {task_id} of run {run_id} failed: {what}", changefeed=changefeed_id,
                       code=TASK_FAILED,
                       hint="its Airflow task log has the details; the next cycle retries")
    return feed_state.record_error(changefeed_id, err)
