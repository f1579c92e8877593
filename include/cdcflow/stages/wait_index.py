"""wait_index: between apply and finish, until the index builds this cycle stopped for are done.

One call is one poke of the DAG's sensor (reschedule mode, so no worker slot is
held between pokes) and one look from `cdcflow changefeed run`.  With no pending
index job it is done at once without touching the downstream: always so on
MySQL/MariaDB, where index DDL is synchronous.  Every pending job is polled, so a
build that failed fails the changefeed even when no DDL waits for it; only the
jobs the stopped barrier waits for keep the sensor waiting (the others are waited
for by the DDL that touches their table next).
"""

from __future__ import annotations

from cdcflow.core.errors import DOWNSTREAM_UNREACHABLE, CdcflowError
from cdcflow.sink.async_index import poll_downstream
from cdcflow.stages import contracts
from cdcflow.stages.contracts import WaitIndexResult
from cdcflow.stages.cycle import Cycle
from cdcflow.store import index_jobs


def wait_index(spark, cycle: Cycle) -> WaitIndexResult:
    run = cycle.run()
    pending = index_jobs.pending(cycle.changefeed_id)
    applied = contracts.recorded(run.stats, "apply", contracts.ApplyResult)
    barrier = applied.index_wait if applied else None
    if not pending or run.dry_run:
        return WaitIndexResult(done=True, pending=[], waiting_at=None)
    try:
        still = poll_downstream(cycle.sink.redacted(), cycle.sink.connection_args(cycle.sink_options),
                                cycle.changefeed_id, pending)
    except CdcflowError as e:
        if e.code != DOWNSTREAM_UNREACHABLE:  # a build that failed; a password reference that does not resolve
            raise e.with_context(changefeed=cycle.changefeed_id)
        cycle.log_event("index wait", done=False, why=e.message)  # unreachable: keep waiting, say why
        return WaitIndexResult(done=False, pending=[j.job_id for j in pending],
                               waiting_at=barrier.commit_ts if barrier else None)
    blocking = [j for j in still if barrier and j.job_id in barrier.jobs]
    result = WaitIndexResult(done=not blocking, pending=[j.job_id for j in still],
                             waiting_at=barrier.commit_ts if blocking else None,
                             waiting_for=[j.what() for j in blocking])
    cycle.log_event("index wait", **contracts.plain(result))
    return result
