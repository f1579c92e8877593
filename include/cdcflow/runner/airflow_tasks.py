"""The DAG's cycle tasks without Airflow: what the trigger form's modes ask for, the cycle's
id, and what the prepare, pull, Spark stage, wait_index, finish and failure-callback tasks do,
as plain values.  The plugin's task callables (plugins/cdcflow_airflow/cycle_tasks.py) keep
what is Airflow's — XCom, task states, Airflow's exceptions, its connections — and call these.

The DAG factory reads MODES while Airflow parses DAGs, so the runner and the stages are
imported by the task bodies, when a task runs, never at parse time.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from cdcflow.core import ts_input
from cdcflow.core.errors import TASK_FAILED, CdcflowError, ConfigError
from cdcflow.core.spec_store import spec_exists
from cdcflow.core.stage_names import SPARK_STAGES, STAGES


class ModeRule(NamedTuple):
    """What a trigger-form mode does: its start_ts ("required", "optional", "not allowed"), whether
    it only reports, the task that runs instead of a cycle (a mode the plugin runs instead), and
    what it does in words (the trigger form's and the DAG's Docs' one text)."""

    start_ts: str
    dry_run: bool
    instead: str | None
    what: str


_MODE_RULES = {
    "catch-up": ModeRule("not allowed", False, None, "from the checkpoint to what the upstream has committed"),
    "backfill": ModeRule("required", False, None, "replay from start_ts"),
    "dry-run": ModeRule("optional", True, None, "plan the window and apply nothing"),
    "verify": ModeRule("not allowed", False, "verify",
                       "compare the downstream with the upstream (no cycle; the run fails if they differ)"),
    "snapshot": ModeRule("not allowed", False, "snapshot", "copy the tables of a stopped changefeed from a new "
                         "consistent point, then resume it from there (no cycle)"),
}
MODES = tuple(_MODE_RULES)  # the trigger form's choices, default first


def modes_in_words(mode_style: str = "{}", sep: str = "; ") -> str:
    """Every mode and what it does, `mode_style` formatting each mode's name, `sep` between them."""
    return sep.join(f"{mode_style.format(mode)}: {rule.what}" for mode, rule in _MODE_RULES.items())


CYCLE_TASKS = ("prepare", *STAGES, "wait_index")
REMOVED_REASON = "it was removed (its spec is gone); this DAG disappears at the next DAG parse"
# The tasks whose failure nothing else records: finish records the other tasks' failures.
RECORDING_TASKS = ("prepare", "finish")

# The Spark Connect server of a task's session for a config (None: as the config says).
SparkRemote = Callable[[object], "str | None"]


def modes_for(state: str) -> list[str]:
    """The trigger modes that do something for a changefeed in `state`: a cycle's modes unless
    the state idles its cycles (states.IDLE_REASONS), a snapshot of a stopped or failed one
    (commands.SNAPSHOT_STATES), a verify whatever the state."""
    from cdcflow.changefeed import commands, states  # not at DAG parse time (module docstring)

    def does_something(mode: str) -> bool:
        instead = _MODE_RULES[mode][2]
        if instead == "snapshot":
            return state in commands.SNAPSHOT_STATES
        return instead == "verify" or state not in states.IDLE_REASONS

    return [mode for mode in MODES if does_something(mode)]


def _ts_param(changefeed_id: str, name: str, value) -> int | None:
    return ts_input.parse(value, f"trigger parameter {name}", changefeed_id)


def cycle_request(changefeed_id: str, params) -> dict:
    """The keyword arguments of stages.prepare for a run's trigger parameters."""
    mode = (params.get("mode") or "catch-up").strip()
    if mode not in _MODE_RULES:
        raise ConfigError(
            f"trigger parameter mode={mode!r} is not one of {', '.join(MODES)}", changefeed=changefeed_id
        )
    start_rule, dry_run, instead, _ = _MODE_RULES[mode]
    start_ts = _ts_param(changefeed_id, "start_ts", params.get("start_ts"))
    target_ts = _ts_param(changefeed_id, "target_ts", params.get("target_ts"))
    if start_rule == "required" and start_ts is None:
        raise ConfigError(
            "mode backfill needs start_ts", changefeed=changefeed_id, hint="give the TSO or date-time to replay from"
        )
    if start_rule == "not allowed" and start_ts is not None:
        raise ConfigError(
            "start_ts is only used by mode backfill or dry-run; a catch-up starts at the checkpoint",
            changefeed=changefeed_id,
            hint="choose mode backfill to replay from start_ts, or clear start_ts",
        )
    if start_ts is not None:  # prepare checks again: a run a trigger slipped past changes nothing either
        ts_input.not_in_future(start_ts, "start_ts", changefeed_id)
        if spec_exists(changefeed_id):  # a removed changefeed's run does nothing anyway
            _check_held(changefeed_id, start_ts)
    return {"start_ts": start_ts, "target_ts": target_ts, "dry_run": dry_run, "instead": instead}


def _check_held(changefeed_id: str, start_ts: int) -> None:
    """A start_ts before the upstream's oldest binlog is refused (ts_input.not_before_gc)."""
    from cdcflow.core.spec_store import load_spec  # task time, not parse time (module docstring)
    from cdcflow.core.uri import default_server_id, parse_source_uri
    from cdcflow.source.binlog import check_ts_held

    source = parse_source_uri(load_spec(changefeed_id).source_uri)
    check_ts_held(source, source.server_id or default_server_id(changefeed_id), start_ts, "start_ts", changefeed_id)


def cycle_run_id() -> str:
    """A new cycle's id in the CLI's shape, saying the cycle came from Airflow.

    Not Airflow's own run id: a retried prepare must open a new cycle, and
    ids with ':' and '+' make poor folder names in the event store.
    """
    return time.strftime("airflow__%Y%m%dT%H%M%S", time.gmtime()) + "_" + uuid.uuid4().hex[:6]


def task_spark_remote(cfg, connect_url: Callable[[], str]) -> str | None:
    """The Spark Connect server a task's session goes to: the config's cdcflow.spark-remote, else
    `connect_url()` (the Airflow connection's); None when the config names a master (an embedded
    session on it)."""
    return cfg.spark_remote or (None if cfg.spark_master else connect_url())


@dataclass(frozen=True)
class Opened:
    """What the prepare task tells the DAG: the cycle's id (None when none was opened), why the
    Spark stages do not run (None when they do), and the mode to run instead of a cycle."""

    run_id: str | None = None
    skip_reason: str | None = None
    instead: str | None = None


def prepare(changefeed_id: str, params, manual: bool) -> Opened:
    """Open the cycle the trigger parameters ask for.  A run a person triggered (`manual`) runs
    through a warning's backoff; a scheduled one waits it out."""
    from cdcflow.stages.cycle import Cycle  # task time, not parse time (module docstring)
    from cdcflow.stages.prepare import prepare as prepare_stage

    request = cycle_request(changefeed_id, params)
    instead = request.pop("instead")
    if not spec_exists(changefeed_id):  # a run Airflow scheduled before the DAG went away
        return Opened(skip_reason=f"changefeed {changefeed_id} does nothing this cycle: {REMOVED_REASON}")
    if instead:
        return Opened(skip_reason=f"mode {instead}: no cycle", instead=instead)
    # an unset bound is left out, so stages.prepare applies its own default
    result = prepare_stage(Cycle.load(changefeed_id, cycle_run_id()), manual=manual,
                           **{k: v for k, v in request.items() if v is not None})
    return Opened(run_id=result.run_id, skip_reason=result.reason if result.skip else None)


def verify(changefeed_id: str) -> dict:
    """Trigger mode verify: `cdcflow changefeed verify` in the task (its queries need no
    Spark); its result (the changefeed's state does not change)."""
    from cdcflow.changefeed import commands  # task time, not parse time (module docstring)

    return commands.verify(changefeed_id)


def snapshot(changefeed_id: str, spark_remote: SparkRemote, report: Callable[[str], None]) -> dict:
    """Trigger mode snapshot: copy the tables of the stopped changefeed from a new consistent
    point (or continue its unfinished copy) on the stages' Spark, `report` hearing the
    progress as chunks end; the changefeed then resumes from the point."""
    from cdcflow.changefeed import commands  # task time, not parse time (module docstring)
    from cdcflow.runner.sessions import command_sessions
    from cdcflow.snapshot.runner import progress_line

    with command_sessions(changefeed_id, spark_remote) as spark_for:
        return commands.snapshot(changefeed_id, spark_for, report=lambda p: report(progress_line(changefeed_id, p)))


def fused(cfg, pulled) -> bool:
    """Whether the pull task runs the Spark stages itself (the fast path): on Spark Connect
    (the config names no master) with a window of at most `fast-path-max-events` events,
    however pull read it.  A task per stage costs a process, a DAG parse, a session and a
    scheduler hop each, which only a window far larger than a fresh changefeed's dwarfs.  The
    bound is on events (what the stages' work grows with), not on pull-parallel-min-bytes:
    with that one, a slow run could make the next window large enough to be read in ranges,
    which sent it down the slower staged path, which made the window after it larger still."""
    return not cfg.spark_master and pulled.pulled <= cfg.fast_path_max_events


def pull(changefeed_id: str, run_id: str, spark_remote: SparkRemote) -> tuple[dict, list[str]]:
    """Pull the window and choose the tasks that follow, as the CLI's cycle does.  An empty
    window is settled by pull_and_settle (the checkpoint moves).  A window with events goes on
    to the Spark stage tasks, unless `fused`: then this task runs them in one session on the
    Spark Connect server.  wait_index follows the stage tasks, or, without them, only when an
    index build is pending (index_wait_needed): an idle run or a fast one ends with finish.
    Pull takes no Spark, unless the config turns its parallel path on and the window is large:
    then its ranges are read by tasks on the Spark Connect server the stages use (`spark_remote`),
    or, with an embedded Spark, in child processes of this task.
    Returns the results and the next tasks."""
    from cdcflow.runner.cycle_runner import (  # task time, not parse time (module docstring)
        index_wait_needed,
        needs_spark,
        pull_and_settle,
        run_spark_stages,
    )
    from cdcflow.stages.cycle import Cycle

    cycle = Cycle.load(changefeed_id, run_id)
    remote = lambda: spark_remote(cycle.config)  # noqa: E731 - asked once a session is wanted
    results = pull_and_settle(cycle, spark_remote=remote)
    if needs_spark(results):
        if not fused(cycle.config, results["pull"]):
            return results, [SPARK_STAGES[0], "wait_index"]
        run_spark_stages(cycle, results, remote)
    return results, ["wait_index"] if index_wait_needed(cycle) else []


def spark_stage(stage: str, changefeed_id: str, run_id: str, spark_remote: SparkRemote):
    """A Spark stage in the worker: a session on `spark_remote(config)`, the stage, the session
    closed.  Returns the stage's result."""
    from cdcflow.runner.cycle_runner import run_spark_stage  # task time, not parse time (module docstring)
    from cdcflow.stages.cycle import Cycle

    cycle = Cycle.load(changefeed_id, run_id)
    return run_spark_stage(stage, cycle, spark_remote=lambda: spark_remote(cycle.config))


def poke_index(changefeed_id: str, run_id: str):
    """One look at the index builds the cycle stopped for (the wait_index stage)."""
    from cdcflow.runner.cycle_runner import run_stage  # task time, not parse time (module docstring)
    from cdcflow.stages.cycle import Cycle

    return run_stage("wait_index", None, Cycle.load(changefeed_id, run_id))


def failure_message(task_states: dict) -> str | None:
    """None when every task of the cycle succeeded or was skipped, else which failed."""
    failed = [task for task in CYCLE_TASKS if task_states.get(task) == "failed"]
    if not failed:
        return None
    noun = "task" if len(failed) == 1 else "tasks"
    return f"{noun} {', '.join(failed)} failed (its Airflow task log has the error)"


def finish(changefeed_id: str, run_id: str, error: str | None):
    """Close the cycle whatever happened (`error`: which tasks failed).  Returns finish's result."""
    from cdcflow.stages.cycle import Cycle  # task time, not parse time (module docstring)
    from cdcflow.stages.finish import finish as finish_stage

    return finish_stage(Cycle.load(changefeed_id, run_id), error=error)


def record_failure(changefeed_id: str, task_id: str, run_id: str, exc: BaseException | None) -> str | None:
    """A task that died of something cdcflow did not record (killed, timed out, a crash outside
    cdcflow's code) puts the changefeed in warning (③), so its next cycles retry with backoff.
    Returns the changefeed's state, None when the changefeed is gone."""
    from cdcflow.changefeed import feed_state  # task time, not parse time (module docstring)

    if not spec_exists(changefeed_id):
        return None
    # no exception: Airflow ended the task from outside (killed, timed out, or it never started)
    what = f"{type(exc).__name__}: {exc}" if exc is not None else "it ended without an exception (killed, " \
        "timed out, or never started)"
    err = CdcflowError(f"Airflow task {task_id} of run {run_id} failed: {what}", changefeed=changefeed_id,
                       code=TASK_FAILED,
                       hint="its Airflow task log has the details; the next cycle retries")
    return feed_state.record_error(changefeed_id, err)
