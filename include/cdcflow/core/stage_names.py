"""The stages of one cycle, in order, and which of them need Spark: the one list behind the
CLI's cycle (launch.in_process.run_cycle), the DAG's tasks and the spark-submit job's choices.  Kept
apart from cdcflow.stages because the DAG factory reads it while Airflow parses DAGs."""

from __future__ import annotations

# prepare, pull and finish run in the launcher's own Python process; wait_index too (the
# DAG's sensor).  Only these read the event store with Spark, and only when pull found events.
SPARK_STAGES = ("filter", "barrier", "apply")
STAGES = ("pull", *SPARK_STAGES)  # the stages between prepare and wait_index, in order

# Which process ran a Spark stage of a cycle (recorded on the run as `<stage>_task`, shown by
# `changefeed query`'s last runs and the Changefeeds page): the whole cycle in one process, the
# DAG's pull task (its fast path), or a task of its own (the DAG's staged path, a spark-submit job).
STAGE_TASKS = {
    "cycle": "in the cycle's process",
    "pull": "in pull's task",
    "own": "in its own task",
}

# The DAG's task after finish where the config's follow-seconds asks: cycles back to back in it
# (launch.dag_tasks.follow).
FOLLOW_TASK = "follow"
