"""The `@binlog` schedule: a changefeed's DAG runs when its upstream's binlog moves past what
the changefeed applied, not on a clock.

The DAG is scheduled on an Asset of its own, `changefeed__<id>__binlog`, that an AssetWatcher
watches with BinlogHeadTrigger on Airflow's triggerer: every `poll_interval` seconds the trigger
looks at the upstream's head and the changefeed's checkpoint (cdcflow.changefeed.head_watch, a
blocking call run in a thread so the triggerer's event loop never waits on the upstream) and
yields an event when there is news (one per checkpoint the head is ahead of: a run asked for
and not yet applied is not asked for again); the triggerer turns it into an asset event and
the scheduler queues a DAG run.  An event that arrives while a run is going is kept by Airflow
as a queued request (max_active_runs=1: never two runs at once), so a busy binlog gives runs
back to back, as @continuous does, and a quiet one gives none.

An upstream the trigger cannot read (down, restarting, a wrong password) is no event and no
crash: the trigger logs it, waits (doubling from `poll_interval` up to `max_backoff`) and
looks again on a new connection.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from airflow.sdk import Asset, AssetWatcher
from airflow.triggers.base import BaseEventTrigger, TriggerEvent

from cdcflow_airflow.cycle_tasks import task_home

POLL_INTERVAL_S = 0.25  # one SHOW MASTER STATUS and one metadata-store read a poll
MAX_BACKOFF_S = 30.0


def binlog_asset(changefeed_id: str, cdcflow_home: str, poll_interval: float = POLL_INTERVAL_S) -> Asset:
    """The Asset a changefeed's DAG on `@binlog` is scheduled on, with its watcher."""
    name = f"changefeed__{changefeed_id}__binlog"
    trigger = BinlogHeadTrigger(changefeed_id, cdcflow_home, poll_interval=poll_interval)
    # x-: a scheme of cdcflow's own, which Airflow leaves as it is
    return Asset(name=name, uri=f"x-cdcflow://changefeed/{changefeed_id}/binlog",
                 watchers=[AssetWatcher(name=name, trigger=trigger)])


class BinlogHeadTrigger(BaseEventTrigger):
    def __init__(self, changefeed_id: str, cdcflow_home: str, poll_interval: float = POLL_INTERVAL_S,
                 max_backoff: float = MAX_BACKOFF_S):
        super().__init__()
        self.changefeed_id, self.cdcflow_home = changefeed_id, cdcflow_home
        self.poll_interval, self.max_backoff = poll_interval, max_backoff

    def serialize(self) -> tuple[str, dict]:
        return (f"{type(self).__module__}.{type(self).__qualname__}",
                {"changefeed_id": self.changefeed_id, "cdcflow_home": self.cdcflow_home,
                 "poll_interval": self.poll_interval, "max_backoff": self.max_backoff})

    def backoff(self, failures: int) -> float:
        """The wait after `failures` looks in a row failed."""
        return min(self.max_backoff, self.poll_interval * 2 ** failures)

    async def run(self) -> AsyncIterator[TriggerEvent]:
        from cdcflow.changefeed.head_watch import HeadWatch  # lazy: the DAG file imports this module to parse

        watch = HeadWatch(self.changefeed_id, task_home(self.cdcflow_home))
        failures = 0
        try:
            while True:
                try:
                    news = await asyncio.to_thread(watch.news)
                except Exception as e:  # noqa: BLE001 - an upstream down or a store locked: look again later
                    failures += 1
                    self.log.warning("changefeed %s: cannot look at the upstream's binlog head (%s in a row), "
                                     "looking again in %.1f s: %s", self.changefeed_id, failures,
                                     self.backoff(failures), e)
                    await asyncio.sleep(self.backoff(failures))
                    continue
                if failures:
                    self.log.info("changefeed %s: the upstream's binlog head is readable again", self.changefeed_id)
                    failures = 0
                if news is not None:
                    yield TriggerEvent({"changefeed": self.changefeed_id, **news.to_dict()})
                await asyncio.sleep(self.poll_interval)
        finally:
            await asyncio.to_thread(watch.close)
