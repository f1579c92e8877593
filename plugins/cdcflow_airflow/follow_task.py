"""The follow task: where the changefeed's `[cdcflow] follow-seconds` asks, a catch-up run's
cycles, back to back in this one task process as the binlog moves (cdcflow.launch.dag_tasks.follow),
until the time is up or the changefeed stops; then the run ends and the schedule starts the next.

A run's three task processes (prepare, pull, finish) are the floor of a run-per-cycle DAG's lag
(docs/performance.md): following pays them once per run instead of once per cycle.  The task
follows prepare, beside the cycle's tasks, which prepare skips for such a run (finish closes
nothing), so from one run to the next a change waits for prepare's process and this one's
start; a person's run has its first cycle run through a warning's backoff.  Each cycle
is recorded as its own (an Airflow cycle id, its stages' figures); the task log has a line per
cycle.  When the run's task is stopped from outside (marked, or the run deleted), Airflow sends
SIGTERM: `on_kill` asks the follow to end after the cycle under way, which a cycle cut short would
leave to the next cycle's lease takeover.  At its end the task announces the tables its cycles
changed (assets.py), as finish does for one cycle, and fails where the changefeed ended failed.
A run of another mode (and a catch-up to a target of its own) runs its cycle in the cycle's
tasks; its follow task ends at once.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import replace

from airflow.sdk import BaseOperator

from cdcflow.changefeed.states import FAILED
from cdcflow.core.errors import CdcflowError
from cdcflow.core.log_line import event_line
from cdcflow_airflow.assets import alias_for, emit_table_events
from cdcflow_airflow.cycle_tasks import (
    bodies,
    launcher_connection,
    task_home,
    triggered_by_a_person,
    user_errors_fail_the_task,
)

log = logging.getLogger(__name__)


def cycle_line(changefeed_id: str, result: dict) -> str:
    """A followed cycle in the task log: its id, events read, rows written and the checkpoint."""
    if result.get("skipped"):
        return event_line("cycle skipped", changefeed_id, reason=result.get("reason"), state=result.get("state"))
    return event_line("cycle done", changefeed_id, run=result.get("run_id"),
                      pulled=(result.get("pull") or {}).get("pulled", 0),
                      rows_written=(result.get("apply") or {}).get("rows_written", 0),
                      checkpoint_ts=(result.get("finish") or {}).get("checkpoint_ts"), seconds=result.get("seconds"))


class FollowOperator(BaseOperator):
    """Runs dag_tasks.follow for the run's trigger parameters (module docstring)."""

    def __init__(self, *, changefeed_id: str, cdcflow_home: str, **kwargs):
        super().__init__(outlets=[alias_for(changefeed_id)], **kwargs)
        self.changefeed_id, self.cdcflow_home = changefeed_id, cdcflow_home
        self._stopping: threading.Event | None = None

    def on_kill(self) -> None:
        if self._stopping is not None:
            log.warning("changefeed %s: asked to stop: the follow ends after the cycle under way", self.changefeed_id)
            self._stopping.set()

    def execute(self, context):
        from airflow.sdk.exceptions import AirflowFailException  # lazy: task time only

        self._stopping = stopping = threading.Event()
        cid, home = self.changefeed_id, task_home(self.cdcflow_home)
        with user_errors_fail_the_task():
            done = bodies().follow(
                cid, context["params"], launcher_connection(cid), home,
                manual=triggered_by_a_person(context.get("dag_run")), stop=stopping.is_set,
                on_cycle=lambda result: log.info("%s", cycle_line(cid, result)),
                on_error=lambda e: log.warning("%s", e))
        if done is None:
            log.info("changefeed %s: this run does not follow the binlog (its mode or target_ts, or "
                     "follow-seconds 0)", cid)
            return None
        self._announce(context, done, home)
        line = f"changefeed {cid}: followed the binlog: {done.cycles} cycle(s), {done.errors} error(s); {done.ended}"
        if done.state not in done.ended:
            line += f"; the changefeed is {done.state}"
        if done.state == FAILED:
            log.error("%s", line)
            raise AirflowFailException(line)
        log.info("%s", line)
        return {"cycles": done.cycles, "errors": done.errors, "ended": done.ended, "state": done.state}

    def _announce(self, context, done, home) -> None:
        """An asset event per table the follow's cycles changed (their results said which, as they
        ended: reading each cycle's record back took a second at the run's end, a hand-off's
        lag), the last cycle's checkpoint in each."""
        from cdcflow.launch.cycle_tables import cycle_tables, table_pairs  # lazy: task time, not DAG parse time

        if done.last_cycle is None:
            return
        try:
            with home.entered():
                last = cycle_tables(self.changefeed_id, done.last_cycle)
        except CdcflowError as e:  # the changefeed was removed meanwhile
            log.warning("changefeed %s: no asset events: %s", self.changefeed_id, e)
            return
        uris = emit_table_events(context["outlet_events"], replace(last, changed=table_pairs(done.changed_tables)))
        log.info("changefeed %s: asset events for %s", self.changefeed_id,
                 ", ".join(uris) or "no table (the cycles changed none)")
