"""Whether a changefeed's upstream binlog has moved past what the changefeed applied: the
question the `@binlog` schedule's trigger asks every poll (plugins/cdcflow_airflow/binlog_trigger.py).

One look is `SHOW MASTER STATUS` on the upstream, over a connection kept from one look to the
next, against the checkpoint's binlog position in the metadata store.  A look says there is
news when the changefeed would replicate something no run has been asked for yet:

- the changefeed is in a state whose runs do work (normal, warning): a stopped, failed,
  finished or removed changefeed's run would only say why it does nothing;
- its checkpoint is behind the head (a checkpoint located by GTID only, after `update
  --source-uri`, counts as behind: the next cycle locates it);
- and no ask is outstanding for what is there: the last news was for another head, and since
  it the checkpoint has moved, or a cycle has started (the run asked for, or one the CLI ran)
  and the head has moved past where it was when that cycle was first seen.  A run asked for
  reads up to the head as it is when it starts, so while none has started a second ask would
  only add an asset event to Airflow's database (one a poll at a steady load); what comes
  after a cycle's start is the next run's, and asking for it then queues that run before the
  one going ends: runs follow each other as on @continuous.  Unless `REASK_AFTER_S` passed
  since the last ask with the changefeed still behind: the run asked for may have failed,
  been skipped (a warning's backoff) or been lost, and a cron schedule would have run again
  by then.

A look that cannot read the upstream or the metadata store raises; the connection is dropped
and the next look opens a new one.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

from cdcflow.changefeed import states
from cdcflow.config.spec_store import load_spec
from cdcflow.core.home import Home
from cdcflow.core.uri import parse_source_uri
from cdcflow.source.binlog import Position, head_position
from cdcflow.store import metastore

REASK_AFTER_S = 60.0
CONNECT_TIMEOUT_S = 5  # an upstream that does not answer fails the look quickly: the trigger backs off
READ_TIMEOUT_S = 10


@dataclass(frozen=True)
class Look:
    """One look: the upstream's head, the checkpoint's position, the changefeed's state."""

    head: Position
    applied: Position
    state: str
    cycle: str | None = None  # the changefeed's latest cycle (its run id), None before the first

    @property
    def behind(self) -> bool:
        return self.state in states.RUNNING_STATES and (self.applied.file is None or self.applied.key() < self.head.key())

    def to_dict(self) -> dict:
        return {"head": self.head.to_dict(), "applied": self.applied.to_dict(), "state": self.state,
                "cycle": self.cycle}


class HeadWatch:
    """The looks of one changefeed, in `home`; remembers the last news."""

    def __init__(self, changefeed_id: str, home: Home = Home(), reask_after: float = REASK_AFTER_S):
        self.changefeed_id, self.home, self.reask_after = changefeed_id, home, reask_after
        self._conn = None
        self._asked: tuple[Look, float] | None = None  # the last news, and when
        # the latest cycle seen and the head when it was first seen: about where its window ends
        self._cycle: tuple[str | None, Position | None] = (None, None)

    def look(self) -> Look:
        with self.home.entered():
            feed = metastore.get_feed(self.changefeed_id)
            latest = metastore.recent_runs(self.changefeed_id, limit=1)
            if self._conn is None:
                source = parse_source_uri(load_spec(self.changefeed_id).source_uri)
                self._conn = source.connect(connect_timeout=CONNECT_TIMEOUT_S, read_timeout=READ_TIMEOUT_S)
        try:
            head = head_position(self._conn)
        except Exception:
            self.close()  # a connection the server dropped (a restart) is not used again
            raise
        return Look(head, Position.from_dict(feed.checkpoint_pos), feed.state, latest[0].run_id if latest else None)

    def news(self, now: float | None = None) -> Look | None:
        """A look that asks for a run (module docstring), else None."""
        look = self.look()
        now = time.monotonic() if now is None else now
        if look.cycle != self._cycle[0]:
            self._cycle = (look.cycle, look.head)
        if not look.behind:
            self._asked = None
            return None
        if self._asked is not None and now - self._asked[1] < self.reask_after and not self._new_since(look):
            return None
        self._asked = (look, now)
        return look

    def _new_since(self, look: Look) -> bool:
        """Whether `look` shows what no run has been asked for since the last news (module docstring)."""
        asked = self._asked[0]
        if look.head == asked.head:
            return False
        return look.applied != asked.applied or (look.cycle != asked.cycle and look.head != self._cycle[1])

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):  # a connection already broken has nothing left to close
                conn.close()

