"""Airflow's local settings for cdcflow: every Airflow process imports this module first, while
`import airflow` runs (so it imports nothing of Airflow's, nor the cdcflow_airflow package).

In the scheduler it imports what a cycle's tasks import when they run: cdcflow's launchers and
stages (pyarrow, SQLAlchemy, pymysql, mysql-replication) and pyspark's Spark Connect client
(pandas, gRPC), 1.5-2 s a task on a loaded 2-core machine, paid by every task of every run.
The LocalExecutor's workers are forked from the scheduler and each task process is forked from
a worker (Linux: a bare fork), so what the scheduler imported once every task finds imported.
No other Airflow process starts tasks: elsewhere this does nothing.  Nothing here opens a
connection, a session or a thread.  A deployment with an airflow_local_settings.py of its own
(in $AIRFLOW_HOME/config, first on the path) calls `preload()` from it.  Airflow's plugin
loader imports this file too: it defines no plugin.
"""

from __future__ import annotations

import importlib
import logging
import sys
import time

# Airflow copies each name listed here (every public name without __all__) into airflow.settings
__all__: list[str] = []

log = logging.getLogger("cdcflow")

# what the task callables import at task time, heaviest first: the task bodies import the
# cycle runner, the stages and the changefeed's commands at their top
TASK_TIME_MODULES = (
    "pyspark.sql.connect.session",
    "cdcflow.launch.dag_tasks",
)


def starts_tasks(argv: list[str]) -> bool:
    """Whether this Airflow process is the one whose forks run tasks: `airflow scheduler`."""
    return argv[1:2] == ["scheduler"]


def preload(argv: list[str] | None = None) -> float | None:
    """Import TASK_TIME_MODULES when this process is the scheduler; returns the seconds it
    took (None elsewhere).  A module that fails to import is left to the task, which says why."""
    if not starts_tasks(sys.argv if argv is None else argv):
        return None
    t0 = time.perf_counter()
    for name in TASK_TIME_MODULES:
        try:
            importlib.import_module(name)
        except Exception as e:  # noqa: BLE001 - the task importing it reports the error in context
            log.warning("cdcflow: %s not preloaded in the scheduler: %s", name, e)
    return time.perf_counter() - t0


preload()
