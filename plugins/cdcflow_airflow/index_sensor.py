"""The wait_index sensor: between apply and finish, until TiDB has built the indexes the cycle
stopped for (ADMIN SHOW DDL JOBS).  It looks once in the worker: done at once when nothing
waits, as always on a MySQL/MariaDB downstream.  Else, as the config's `[cdcflow] index-wait`
says:

- `deferrable` (the default): the task defers to IndexJobsTrigger (index_trigger.py), which
  keeps looking on Airflow's triggerer; no worker slot is held while TiDB builds.
- `reschedule`: the task gives its worker slot back between pokes and a worker pokes again
  every POKE_INTERVAL (for an Airflow without a triggerer).
"""

from __future__ import annotations

import datetime as dt
import logging

from airflow.sdk import BaseSensorOperator, TriggerRule

from cdcflow_airflow.cycle_tasks import bodies, task_home, user_errors_fail_the_task
from cdcflow_airflow.index_trigger import FAILED, IndexJobsTrigger
from cdcflow_airflow.operators import RUN_ID_TEMPLATE

log = logging.getLogger(__name__)

TASK_ID = "wait_index"
POKE_INTERVAL = dt.timedelta(seconds=30)
# After this the task fails, the changefeed goes to warning, and the next cycle stops at
# the same barrier again if the index is still being built.
TIMEOUT = dt.timedelta(hours=6)


def poke_index_jobs(changefeed_id: str, cdcflow_home: str, run_id: str) -> bool:
    with user_errors_fail_the_task():
        result = bodies().poke_index(changefeed_id, run_id, task_home(cdcflow_home))
    log.info("changefeed %s: cycle %s: %s", changefeed_id, run_id, result)
    return result.done


class IndexWaitSensor(BaseSensorOperator):
    template_fields = ("run_id",)

    def __init__(self, *, changefeed_id: str, cdcflow_home: str, run_id: str, index_wait: str, **kwargs):
        super().__init__(mode="reschedule", **kwargs)
        self.changefeed_id, self.cdcflow_home, self.run_id = changefeed_id, cdcflow_home, run_id
        self.index_wait = index_wait

    def poke(self, context) -> bool:
        return poke_index_jobs(self.changefeed_id, self.cdcflow_home, self.run_id)

    def execute(self, context):
        if self.index_wait != "deferrable":
            return super().execute(context)
        if self.poke(context):
            return None
        self.defer(trigger=IndexJobsTrigger(self.changefeed_id, self.cdcflow_home, self.run_id,
                                            self.poke_interval),
                   method_name="execute_complete", timeout=self.timeout)

    def execute_complete(self, context, event: dict) -> None:
        """The trigger's event: the builds are done, or one failed (its error already recorded)."""
        from airflow.sdk.exceptions import AirflowFailException  # lazy: task time only

        if event["status"] == FAILED:
            log.error("%s", event["message"])
            raise AirflowFailException(event["message"])
        log.info("changefeed %s: cycle %s: %s", self.changefeed_id, self.run_id, event)


def wait_index_task(changefeed_id: str, cdcflow_home: str, index_wait: str = "deferrable",
                    run_id: str = RUN_ID_TEMPLATE) -> IndexWaitSensor:
    return IndexWaitSensor(
        task_id=TASK_ID,
        changefeed_id=changefeed_id,
        cdcflow_home=cdcflow_home,
        run_id=run_id,
        index_wait=index_wait,
        poke_interval=POKE_INTERVAL,
        timeout=TIMEOUT,
        # after apply, or straight after pull when the window was empty (the Spark stages
        # skipped); not when prepare skipped the cycle or a stage failed
        trigger_rule=TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS,
        doc_md=__doc__,
    )
