"""The wait_index sensor: between apply and finish, until TiDB has built the indexes
the cycle stopped for (ADMIN SHOW DDL JOBS).  Reschedule mode: between pokes the
task gives its worker slot back.  It is done at the first poke when nothing waits,
as always on a MySQL/MariaDB downstream."""

from __future__ import annotations

import datetime as dt
import logging
import os

from airflow.providers.standard.sensors.python import PythonSensor
from airflow.sdk import TriggerRule

from cdcflow.runner import airflow_tasks
from cdcflow_airflow.operators import RUN_ID_TEMPLATE

log = logging.getLogger(__name__)

TASK_ID = "wait_index"
POKE_INTERVAL = dt.timedelta(seconds=30)
# After this the task fails, the changefeed goes to warning, and the next cycle stops at
# the same barrier again if the index is still being built.
TIMEOUT = dt.timedelta(hours=6)


def poke_index_jobs(changefeed_id: str, cdcflow_home: str, run_id: str) -> bool:
    from cdcflow_airflow.cycle_tasks import user_errors_fail_the_task

    os.environ["CDCFLOW_HOME"] = cdcflow_home
    with user_errors_fail_the_task():
        result = airflow_tasks.poke_index(changefeed_id, run_id)
    log.info("changefeed %s: cycle %s: %s", changefeed_id, run_id, result)
    return result.done


def wait_index_task(changefeed_id: str, cdcflow_home: str) -> PythonSensor:
    return PythonSensor(
        task_id=TASK_ID,
        python_callable=poke_index_jobs,
        op_kwargs={"changefeed_id": changefeed_id, "cdcflow_home": cdcflow_home, "run_id": RUN_ID_TEMPLATE},
        mode="reschedule",
        poke_interval=POKE_INTERVAL,
        timeout=TIMEOUT,
        # after apply, or straight after pull when the window was empty (the Spark stages
        # skipped); not when prepare skipped the cycle or a stage failed
        trigger_rule=TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS,
        doc_md=__doc__,
    )
