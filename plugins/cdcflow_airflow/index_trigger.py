"""The trigger the wait_index sensor defers to: on Airflow's triggerer, it looks at the index
builds the cycle stopped for every `poll_interval` seconds (the wait_index stage: ADMIN SHOW
DDL JOBS on the TiDB downstream) until none blocks the cycle, while no worker slot is held.

Each look is the same blocking library call as a sensor's poke, run in a thread
(asyncio.to_thread) so the triggerer's event loop never waits on the downstream.  It yields one
event: `done` when nothing blocks the cycle any more, or `failed` with the changefeed's error
when a build was cancelled or rolled back (the wait_index stage has marked the job failed and
recorded the error on the cycle, as a poke would).  An unreachable downstream is no event:
the stage reports it as still waiting, and the look is repeated.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from airflow.triggers.base import BaseTrigger, TriggerEvent

from cdcflow.core.errors import CdcflowError
from cdcflow_airflow.cycle_tasks import bodies, task_home

DONE, FAILED = "done", "failed"


def look_once(changefeed_id: str, cdcflow_home: str, run_id: str) -> dict:
    """One look, as the payload of an event when it ends the wait (else its `done` is False)."""
    from cdcflow.stages.contracts import plain  # lazy: run time, not DAG parse time (the DAG imports this module)

    try:  # in the trigger's own home: another trigger of this triggerer may run in another
        result = bodies().poke_index(changefeed_id, run_id, task_home(cdcflow_home))
    except CdcflowError as e:
        return {"status": FAILED, "done": True, "message": str(e)}
    return {"status": DONE, "waiting_for": [], **plain(result)}


class IndexJobsTrigger(BaseTrigger):
    def __init__(self, changefeed_id: str, cdcflow_home: str, run_id: str, poll_interval: float = 30.0):
        super().__init__()
        self.changefeed_id, self.cdcflow_home, self.run_id = changefeed_id, cdcflow_home, run_id
        self.poll_interval = poll_interval

    def serialize(self) -> tuple[str, dict]:
        return (f"{type(self).__module__}.{type(self).__qualname__}",
                {"changefeed_id": self.changefeed_id, "cdcflow_home": self.cdcflow_home, "run_id": self.run_id,
                 "poll_interval": self.poll_interval})

    async def run(self) -> AsyncIterator[TriggerEvent]:
        while True:
            looked = await asyncio.to_thread(look_once, self.changefeed_id, self.cdcflow_home, self.run_id)
            if looked["done"]:
                yield TriggerEvent(looked)
                return
            self.log.info("changefeed %s: cycle %s: still waiting for %s", self.changefeed_id, self.run_id,
                          "; ".join(looked["waiting_for"]) or looked["pending"])
            await asyncio.sleep(self.poll_interval)
