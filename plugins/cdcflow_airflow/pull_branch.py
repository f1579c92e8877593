"""The operators of prepare and pull, whose skips reach past the tasks right after them.

Airflow's branch (pull's) and short circuit (prepare's, which leaves the trigger rules of the
tasks after it alone) skip only the tasks right after them: filter, and wait_index on the fast
path; pull, when prepare opens no cycle.  The scheduler then skips each later stage in a pass of
its own, and finish, the teardown, waits for all of them: about 0.2 s a stage between the
skipping task's end and finish's start (docs/performance.md), a third of a run at 1,000
changes/s.  Here the stages after the ones skipped, up to the teardown, are skipped with them,
in the same call.
"""

from __future__ import annotations

from airflow.providers.standard.operators.python import BranchPythonOperator, ShortCircuitOperator
from airflow.sdk.exceptions import DownstreamTasksSkipped

from cdcflow.core.stage_names import FOLLOW_TASK


def beyond(dag, skipped: set[str], followed) -> list[str]:
    """The tasks after the `skipped` ones that no `followed` task leads to, in the DAG's order;
    not the teardowns (they run whatever the stages did)."""
    kept = set(followed or ())
    for task_id in list(kept):
        kept |= dag.get_task(task_id).get_flat_relative_ids(upstream=False)
    later = set().union(*(dag.get_task(t).get_flat_relative_ids(upstream=False) for t in skipped))
    return [t.task_id for t in dag.tasks
            if t.task_id in later - kept - skipped and not t.is_teardown]


class PullBranchOperator(BranchPythonOperator):
    """BranchPythonOperator whose skip reaches past the tasks right after it (module docstring)."""

    def skip_all_except(self, ti, branch_task_ids) -> None:
        try:
            super().skip_all_except(ti, branch_task_ids)
        except DownstreamTasksSkipped as skipped:
            named = {t if isinstance(t, str) else t[0] for t in skipped.tasks}
            more = [(task_id, ti.map_index) for task_id in self.beyond(named, branch_task_ids)]
            raise DownstreamTasksSkipped(tasks=[*skipped.tasks, *more]) from None

    def beyond(self, skipped: set[str], followed) -> list[str]:
        return beyond(self.dag, skipped, followed)


class PrepareShortCircuitOperator(ShortCircuitOperator):
    """ShortCircuitOperator (the tasks after it keep their trigger rules) whose skip reaches past
    the tasks right after it (module docstring), and spares the follow task of a run whose
    cycles are that task's (prepare says so in XCom: `follows`)."""

    def skip(self, ti, tasks) -> None:
        tasks = list(tasks)
        if ti.xcom_pull(task_ids=self.task_id, key="follows"):
            tasks = [t for t in tasks if t.task_id != FOLLOW_TASK]
        more = beyond(self.dag, {t.task_id for t in tasks}, ())
        super().skip(ti, [*tasks, *(self.dag.get_task(task_id) for task_id in more)])
