"""The task of one Spark stage, by one of two launchers the changefeed's config chooses:

- Spark Connect (the default): a Python task in the worker that opens a session on the
  `spark_connect_default` connection (or the config's `cdcflow.spark-remote`) and runs the
  stage there: one warm server, no JVM per task.
- spark-submit (`cdcflow.spark-master` set: a cluster, or a local master of its own): a
  spark-submit job (jobs/stage.py <stage>) on the master the `spark_default` connection
  names, while the Airflow worker only waits for it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.providers.standard.operators.python import PythonOperator

from cdcflow.core.errors import CdcflowError
from cdcflow.core.home import Home
from cdcflow.spark.session import driver_java_options
from cdcflow_airflow.cycle_tasks import spark_stage

SPARK_CONN_ID = "spark_default"
SPARK_POOL = "cdcflow_spark"

# jobs/ sits next to plugins/ in the project (and in an Astro image).
STAGE_JOB = Path(__file__).resolve().parents[2] / "jobs" / "stage.py"

RUN_ID_TEMPLATE = "{{ ti.xcom_pull(task_ids='prepare', key='run_id') }}"


def interpreter_bin() -> str:
    # Not resolved: a venv's python is a symlink, and its bin/ (where pip put
    # spark-submit) is the folder the link is in, not the one it points to.
    return str(Path(sys.executable).parent)


def spark_env(cdcflow_home: str) -> dict[str, str]:
    """Environment of the spark-submit process.

    SparkSubmitHook only runs a bare `spark-submit` (spark2-/spark3-submit),
    looked up on the PATH of the environment it passes to Popen; Airflow's own
    PATH need not contain the venv's bin (a service started as
    `.venv/bin/airflow ...`), so it goes first here. The driver and the
    executors must run this interpreter, the one cdcflow is installed in.
    """
    path = os.environ.get("PATH", os.defpath)
    bin_dir = interpreter_bin()
    if bin_dir not in path.split(os.pathsep):
        path = bin_dir + os.pathsep + path
    return {
        **Home(cdcflow_home).child_env({}),  # the job's metadata store and event store are the DAG's
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
        "PATH": path,
    }


def spark_stage_task(stage: str, spec, cdcflow_home: str):
    """The stage's task: spark-submit when the config names a master, else Spark Connect."""
    if spec.config().spark_master:
        return spark_submit_task(stage, spec.id, cdcflow_home)
    return PythonOperator(
        task_id=stage,
        pool=SPARK_POOL,
        python_callable=spark_stage,
        op_kwargs={"stage": stage, "changefeed_id": spec.id, "cdcflow_home": cdcflow_home,
                   "run_id": RUN_ID_TEMPLATE},
        doc_md=f"The {stage} stage of this cycle, in a session on the Spark Connect server.",
    )


class StageSubmitOperator(SparkSubmitOperator):
    """spark-submit of one stage.  Spark logs at WARN from its start, and a failed stage's own
    error (recorded on the run where it was raised: changefeed, commit ts, statement, remedy)
    is the task log's first ERROR, in one line, instead of spark-submit's exit code.  A stage
    of a cycle another cycle replaced ends skipped, saying so, as a Spark Connect stage does."""

    def __init__(self, *, changefeed_id: str, cdcflow_home: str, **kwargs):
        super().__init__(**kwargs)
        self.changefeed_id, self.cdcflow_home = changefeed_id, cdcflow_home

    def execute(self, context):
        from airflow.exceptions import AirflowException  # lazy: task time only
        from airflow.sdk.exceptions import AirflowFailException, AirflowSkipException  # lazy: as above

        try:
            return super().execute(context)
        except AirflowException as e:
            cycle = self._cycle()
            if cycle is not None and cycle["superseded_by"] is not None:  # the job stopped at its lease
                line = (f"changefeed {self.changefeed_id}: stage {self.task_id}: cycle {cycle['run_id']} is no "
                        f"longer this changefeed's cycle: {cycle['superseded_by']} replaced it while it was open, "
                        "so it stops here and changes nothing")
                self.log.warning("%s", line)
                raise AirflowSkipException(line) from None
            recorded = cycle["error"] if cycle is not None else None
            line = recorded or f"changefeed {self.changefeed_id}: stage {self.task_id}: {e}"
            self.log.error("%s", line)
            raise AirflowFailException(line) from None

    def _cycle(self) -> dict | None:
        """This task's cycle as `changefeed query` shows it (changefeed.commands.cycle); None when
        the changefeed has none."""
        from cdcflow.changefeed import commands  # lazy: the metadata store's SQLAlchemy, at task time only

        run_id = self.application_args[self.application_args.index("--run-id") + 1]
        try:
            with Home(self.cdcflow_home).entered():
                return commands.cycle(self.changefeed_id, run_id)
        except CdcflowError:
            return None


def spark_submit_task(stage: str, changefeed_id: str, cdcflow_home: str) -> StageSubmitOperator:
    return StageSubmitOperator(
        task_id=stage,
        changefeed_id=changefeed_id,
        cdcflow_home=cdcflow_home,
        conn_id=SPARK_CONN_ID,
        pool=SPARK_POOL,
        application=str(STAGE_JOB),
        application_args=[stage, "--changefeed-id", changefeed_id, "--run-id", RUN_ID_TEMPLATE],
        name=f"cdcflow-{stage}-{changefeed_id}",
        # Spark's INFO start-up lines would bury the stage's own; the stage's driver lives for one task
        conf={"spark.log.level": "WARN", "spark.driver.defaultJavaOptions": driver_java_options()},
        env_vars=spark_env(cdcflow_home),
        doc_md=f"spark-submit `jobs/stage.py {stage}`: the {stage} stage of this cycle.",
    )
