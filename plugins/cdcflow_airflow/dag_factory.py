"""One changefeed spec -> one Airflow DAG: one DAG run is one catch-up cycle.

    prepare ─► pull ─► filter ─► barrier ─► apply ─► wait_index ─► finish
    (python)  (python,  (Spark Connect sessions,     (sensor,      (python,
       │       branch,   or spark-submit jobs;        deferrable)   all_done,
       │       pool)     pool cdcflow_spark)                        asset events)
       │         └──────────── empty window ──────────►┘
       └─► [follow]  (python, pool; where follow-seconds asks: a catch-up run's cycles)

`prepare` may decide the changefeed does nothing this cycle (stopped, failed,
finished, removed, or waiting for its next retry): every later task but `finish`
is then skipped, and `finish` still runs, as it does when a stage fails.  `pull`
reads the binlog in the worker (it needs no Spark) and, as `cdcflow changefeed
run` does, settles a window without events itself: the Spark stages are skipped
and no JVM starts.  On Spark Connect, a window of at most `fast-path-max-events`
events has its Spark stages run in the pull task, in one session (the fast path: a
task costs more than such a stage); their tasks are then skipped, and so is
wait_index when no index build is pending (cdcflow.launch.dag_tasks.pull).
pull is in the `cdcflow_spark` pool as the stage tasks are: it may run the stages
(the fast path) or read a large window's ranges on Spark, so the pool's slots bound
the Spark work of every changefeed whichever path a run takes; a fast-path run holds
its one slot for the whole cycle, an idle run's pull for its short read.
With `[cdcflow] follow-seconds` set, a catch-up run's prepare opens no cycle and skips the
stages (finish closes nothing), and `follow` runs the run's cycles back to back in that one task
for that long (follow_task.py), its pool slot held throughout; a run of another mode runs its
cycle as above and its follow task ends at once.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
import os
from collections.abc import Iterable, Iterator

from airflow.sdk import DAG, Param, Variable, chain, get_parsing_context

from cdcflow.core.stage_names import FOLLOW_TASK, SPARK_STAGES
from cdcflow.core.errors import CdcflowError
from cdcflow.core.home import Home
from cdcflow.config.checks import BINLOG_SCHEDULE
from cdcflow.config.spec_store import home, list_specs, load_spec, spec_exists
from cdcflow.launch import oldest_start
from cdcflow.launch.modes import MODES, TS_PATTERN, modes_in_words
from cdcflow_airflow.binlog_trigger import binlog_asset
from cdcflow_airflow.cycle_tasks import (
    finish_cycle,
    prepare_cycle,
    pull_cycle,
    record_task_failure,
)
from cdcflow_airflow.dag_doc import dag_doc
from cdcflow_airflow.finish_task import FinishOperator
from cdcflow_airflow.follow_task import FollowOperator
from cdcflow_airflow.index_sensor import wait_index_task
from cdcflow_airflow.operators import RUN_ID_TEMPLATE, SPARK_POOL, spark_stage_task
from cdcflow_airflow.pull_branch import PrepareShortCircuitOperator, PullBranchOperator

log = logging.getLogger(__name__)

DAG_ID_PREFIX = "changefeed__"
HOME_VARIABLE = "cdcflow_home"
TAGS = ["cdcflow"]

# A prepare try Airflow itself could not start (the task's first call to the API server, PATCH
# .../run, timed out while `make airflow` was still starting on a loaded machine; a worker lost
# before the task ran) is tried again: prepare opens a new cycle per try and takes over the
# lease of a try whose process is gone, so a second try is the first one done right.  Its own
# refusals (a CdcflowError) fail without a retry (cycle_tasks.user_errors_fail_the_task); the
# later tasks are not retried: a stage that ran halfway is the cycle's to record, as finish does.
PREPARE_RETRIES = 3
PREPARE_RETRY_DELAY = dt.timedelta(seconds=20)

TS_HELP = "a TSO (e.g. 450000000000000000), a UTC date-time (e.g. 2026-11-22 10:00:00) or now"


def dag_id_for(changefeed_id: str) -> str:
    return f"{DAG_ID_PREFIX}{changefeed_id}"


def changefeed_of(dag_id: str | None) -> str | None:
    """The changefeed of a DAG this factory builds (dag_id_for), else None."""
    if dag_id and dag_id.startswith(DAG_ID_PREFIX):
        return dag_id[len(DAG_ID_PREFIX):]
    return None


def specs_to_build() -> list:
    """The specs whose DAGs a parse of the DAG file builds: every changefeed's, except where
    Airflow parses the file to run a task (its parsing context names the task's DAG, Airflow's
    documented way for a file of many DAGs): that changefeed's alone.  Building every
    changefeed's DAG cost each task of each run 4-10 ms per changefeed here (a task's parse
    0.062 s with 11 changefeeds, 0.018 s with its own only); a run is three tasks at least."""
    changefeed_id = changefeed_of(get_parsing_context().dag_id)
    if changefeed_id is None:
        return list_specs()
    return [load_spec(changefeed_id)] if spec_exists(changefeed_id) else []


def use_cdcflow_home() -> str:
    """The CDCFLOW_HOME the DAGs are built from, and the one their tasks are handed (made as
    core.spec_store makes a home).

    The environment wins; without it the Airflow Variable `cdcflow_home`
    (airflow_settings.yaml) says where the specs are.  The process's environment is left as it
    is: the DAG file and the HTTP API work inside `Home(this).entered()`, and each task is
    handed it (cycle_tasks.task_home).
    """
    with Home(os.environ.get("CDCFLOW_HOME") or _variable(HOME_VARIABLE) or None).entered():
        return str(home())


def _variable(key: str) -> str | None:
    try:
        return Variable.get(key, default=None)
    except Exception as e:  # noqa: BLE001 - no Variable store reachable: fall back to the default home
        log.debug("Airflow Variable %s not readable: %s", key, e)
        return None


def trigger_params(changefeed_id: str) -> dict[str, Param]:
    """The trigger form: a JSON schema per field, so Airflow refuses a conf that does not match
    (a mode not listed, a ts of no known shape) before a run exists, from the form and the REST
    API alike; keys it does not list, and what only the upstream knows (a ts in the future, one
    already purged), airflow_api_guard refuses there too, in cycle_request's words."""
    oldest = oldest_start.in_words(oldest_start.recorded(changefeed_id))
    ts_field = {"type": ["null", "string"], "pattern": TS_PATTERN}
    return {
        "mode": Param(
            MODES[0],
            type="string",
            enum=list(MODES),
            title="Mode",
            description=f"{modes_in_words()}. "
            "(Airflow's own date-range Backfill is not this: to replay, trigger one run with backfill.)",
        ),
        "start_ts": Param(
            None,
            **ts_field,
            title="Start ts",
            description=f"Where a backfill or dry run starts: {TS_HELP}. The oldest the upstream still holds: "
                        f"{oldest}.",
        ),
        "target_ts": Param(
            None,
            **ts_field,
            title="Target ts",
            description=f"Stop at this ts instead of the changefeed's target-ts: {TS_HELP}.",
        ),
        "tables": Param(
            None,
            type=["null", "string"],
            title="Tables",
            description="The tables of mode add-tables or resync-tables: schema.table, commas between them.",
        ),
    }


def schedule_of(spec) -> str | None:
    """The config's schedule: a cron string or an @preset; None/'none' = triggered only."""
    schedule = spec.config().schedule
    if schedule is None or not str(schedule).strip() or str(schedule).strip().lower() == "none":
        return None
    return str(schedule).strip()


def dag_schedule(spec, cdcflow_home: str) -> str | list | None:
    """What the DAG is given: the schedule, or for `@binlog` the asset its binlog trigger
    watches (binlog_trigger.py)."""
    schedule = schedule_of(spec)
    if schedule == BINLOG_SCHEDULE:
        return [binlog_asset(spec.id, cdcflow_home)]
    return schedule


def _start_date(spec) -> dt.datetime:
    # Fixed per spec (parsing must give the same DAG every time); with
    # catchup=False the first scheduled run is the next one after creation.
    created = dt.datetime.fromtimestamp(spec.created_at or 0, tz=dt.timezone.utc)
    return created.replace(second=0, microsecond=0)


def changefeed_dag(spec, cdcflow_home: str | None = None) -> DAG:
    cdcflow_home = cdcflow_home or use_cdcflow_home()
    task_kwargs = {"changefeed_id": spec.id, "cdcflow_home": cdcflow_home}
    on_failure = functools.partial(record_task_failure, spec.id, cdcflow_home)
    with DAG(
        dag_id=dag_id_for(spec.id),
        description=f"cdcflow changefeed {spec.id}: one run is one catch-up cycle",
        schedule=dag_schedule(spec, cdcflow_home),
        start_date=_start_date(spec),
        catchup=False,
        # one run at a time: a scheduled catch-up and a triggered run never overlap (they queue; on
        # @binlog the asset events that come meanwhile are one queued request)
        max_active_runs=1,
        # The changefeed's state is its one pause (docs/guides/airflow-pause.md): its DAG starts
        # unpaused, so a triggered run starts, and a stopped changefeed's scheduled runs do nothing.
        is_paused_upon_creation=False,
        tags=TAGS,
        params=trigger_params(spec.id),
        default_args={"owner": "cdcflow", "retries": 0},
        doc_md=dag_doc(spec, schedule_of(spec)),
    ) as dag:
        prepare = PrepareShortCircuitOperator(
            task_id="prepare",
            python_callable=prepare_cycle,
            op_kwargs=task_kwargs,
            on_failure_callback=on_failure,
            retries=PREPARE_RETRIES,
            retry_delay=PREPARE_RETRY_DELAY,
            # skip only the stages; finish keeps its all_done rule
            ignore_downstream_trigger_rules=False,
        )
        pull = PullBranchOperator(
            task_id="pull",
            pool=SPARK_POOL,  # it may run the Spark stages itself (module docstring)
            python_callable=pull_cycle,
            op_kwargs={**task_kwargs, "run_id": RUN_ID_TEMPLATE},
            doc_md="Reads the binlog window into the event store; an empty window skips the Spark stages, and "
                   "on Spark Connect a window of at most `fast-path-max-events` events has them run here.",
        )
        stages = [spark_stage_task(stage, spec, cdcflow_home) for stage in SPARK_STAGES]
        wait_index = wait_index_task(spec.id, cdcflow_home, spec.config().index_wait)
        finish = FinishOperator(  # also emits the changed tables' asset events (assets.py)
            task_id="finish",
            python_callable=finish_cycle,
            op_kwargs=task_kwargs,
            **task_kwargs,
            on_failure_callback=on_failure,
        )
        chain(prepare, pull, *stages, wait_index, finish)
        follow_seconds = spec.config().follow_seconds
        if follow_seconds:
            # beside the cycle's tasks: a run whose cycles are the follow's skips them (prepare's
            # skip spares this task), finish then closing nothing; a run of another mode ends it at once
            prepare >> FollowOperator(
                task_id=FOLLOW_TASK,
                pool=SPARK_POOL,  # its cycles may run Spark stages, as pull's fast path does
                doc_md=f"Runs a catch-up run's cycles for {follow_seconds} s (`follow-seconds`): back to back in "
                       "this task, each as soon as the binlog moves; a run of another mode ends it at once.",
                **task_kwargs,
            )
        pull >> wait_index  # the empty window's way, past the skipped Spark stages
        # finish closes what prepare opened, as a teardown of its setup: it runs whatever the stages
        # did (prepare's skip skips no teardown), and when prepare failed there is nothing to close:
        # finish is then upstream_failed, so a refused run has one failure, prepare's, in its words
        finish.as_teardown(setups=prepare, on_failure_fail_dagrun=True)
    return dag


def changefeed_dags(specs: Iterable, cdcflow_home: str | None = None) -> Iterator[DAG]:
    """The DAG of every spec that builds; a broken spec is logged and left out."""
    cdcflow_home = cdcflow_home or use_cdcflow_home()
    for spec in specs:
        try:
            yield changefeed_dag(spec, cdcflow_home)
        except CdcflowError as e:  # the user's to fix: the message says what, no traceback
            log.error("changefeed %s: no DAG: %s", spec.id, e)
        except Exception:  # noqa: BLE001 - one broken spec must not hide the other changefeeds
            log.exception("changefeed %s: no DAG built from its spec under %s", spec.id, cdcflow_home)
