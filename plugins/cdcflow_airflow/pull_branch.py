"""pull's operator: a branch that skips every stage task it does not follow when it ends.

Airflow's branch skips only the tasks right after it (filter, and wait_index on the fast path);
the scheduler then skips each later stage in a pass of its own (barrier, then apply), and finish,
the teardown, waits for all of them: about 0.2 s a stage between pull's end and finish's start on
every fast-path run, a third of a run at 1,000 changes/s (docs/performance.md).  Here the stages
after the ones it skips, up to the teardown, are skipped with them, in the same call.
"""

from __future__ import annotations

from airflow.providers.standard.operators.python import BranchPythonOperator
from airflow.sdk.exceptions import DownstreamTasksSkipped


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
        """The tasks after the `skipped` ones that no `followed` task leads to, in the DAG's order;
        not the teardowns (they run whatever the stages did), nor what comes after a teardown
        (the follow task: its own trigger rule decides, on finish's outcome)."""
        dag = self.dag
        kept = set(followed or ())
        for task_id in list(kept):
            kept |= dag.get_task(task_id).get_flat_relative_ids(upstream=False)
        for teardown in (t for t in dag.tasks if t.is_teardown):
            kept |= teardown.get_flat_relative_ids(upstream=False)
        later = set().union(*(dag.get_task(t).get_flat_relative_ids(upstream=False) for t in skipped))
        return [t.task_id for t in dag.tasks
                if t.task_id in later - kept - skipped and not t.is_teardown]
