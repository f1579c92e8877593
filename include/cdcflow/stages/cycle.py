"""What every stage of one cycle needs: the spec, its config, the state, the run and its folder."""

from __future__ import annotations

import contextlib
import json
import logging
import time
import traceback
from dataclasses import dataclass
from functools import cached_property

from cdcflow.core.errors import CYCLE_INTERRUPTED, CYCLE_SUPERSEDED, LEASE_HELD, CdcflowError, classify
from cdcflow.core.log_line import event_line
from cdcflow.core.sink_params import merge_sink_options
from cdcflow.config.spec_store import Spec, load_spec
from cdcflow.core.uri import parse_sink_uri, parse_source_uri
from cdcflow.stages.engine import Engine
from cdcflow.store import metastore
from cdcflow.store.events import RunFolder

# a cycle renews its hour-long lease (metastore.LEASE_SECONDS) when it last did so this long ago
LEASE_RENEWAL_SECONDS = 30.0

log = logging.getLogger("cdcflow")


@dataclass
class Cycle:
    spec: Spec
    run_id: str

    @classmethod
    def load(cls, changefeed_id: str, run_id: str) -> "Cycle":
        return cls(load_spec(changefeed_id), run_id)

    @property
    def changefeed_id(self) -> str:
        return self.spec.id

    @cached_property
    def config(self):
        return self.spec.config()

    @cached_property
    def source(self):
        return parse_source_uri(self.spec.source_uri)

    @cached_property
    def sink(self):
        return parse_sink_uri(self.spec.sink_uri)

    @cached_property
    def sink_options(self):
        return merge_sink_options(self.config.sink, dict(self.sink.params))

    @cached_property
    def engine(self) -> Engine:
        """Where this cycle's row steps run (stages.engine), asked by every stage."""
        return Engine.of(self.config)

    @cached_property
    def folder(self) -> RunFolder:
        return RunFolder(self.config.event_store, self.changefeed_id, self.run_id)

    def feed(self) -> metastore.FeedState:
        return metastore.get_feed(self.changefeed_id)

    def run(self) -> metastore.RunState:
        return metastore.get_run(self.changefeed_id, self.run_id)

    def renew_lease(self, conn=None) -> None:
        """Take the changefeed's lease for prepare (in `conn`'s transaction where given); prepare
        refuses while another cycle holds it."""
        owner = metastore.lease_owner_for(self.run_id)
        if not metastore.acquire_lease(self.changefeed_id, owner, self.run_id, conn=conn):
            raise CdcflowError(
                f"another cycle holds the lease ({metastore.lease_holder(self.changefeed_id)})",
                changefeed=self.changefeed_id, code=LEASE_HELD,
                hint="two cycles of one changefeed never overlap: this one stops without changing anything; "
                     "run it again once the other has ended (a schedule's next run does)",
            )

    def keep_lease(self, stage: str) -> None:
        """Renew the lease for a later stage of this cycle.  A cycle is the changefeed's only while
        no other took over: between the tasks of a DAG run no process holds the lease (a DAG paused
        in Airflow leaves its run open for as long as it stays paused), and a cycle started then
        (`cdcflow changefeed run`, a new DAG run) replaces this one.  Its stages then stop here,
        changing nothing: ErrCycleSuperseded."""
        run, owner = self.run(), metastore.lease_owner_for(self.run_id)
        # where this process took or renewed the lease moments ago (its prepare, its last stage)
        # a read is enough: renewing it at every stage was a commit of the store each, for nothing
        if run.status != metastore.SUPERSEDED and (
                metastore.holds_fresh_lease(self.changefeed_id, owner, LEASE_RENEWAL_SECONDS)
                or metastore.acquire_lease(self.changefeed_id, owner, self.run_id)):
            return
        by = run.stats.get("superseded_by") or metastore.lease_holder(self.changefeed_id)
        raise CdcflowError(
            f"stage {stage}: cycle {self.run_id} is no longer this changefeed's cycle: {by} replaced it "
            f"while it was open, so it stops here and changes nothing", changefeed=self.changefeed_id,
            code=CYCLE_SUPERSEDED,
            hint="nothing is lost: the changefeed goes on from its checkpoint in the cycle that replaced "
                 "this one. (Pausing a DAG in Airflow only holds its runs; `cdcflow changefeed pause` "
                 "stops the changefeed for every launcher.)")

    def log_event(self, what: str, **fields) -> None:
        """A structured log line (core.log_line): what moved, with numbers."""
        log.info("%s", event_line(what, self.changefeed_id, run=self.run_id, **fields))


def _interrupted(cycle: Cycle, stage: str) -> CdcflowError:
    return CdcflowError(f"stage {stage}: cycle {cycle.run_id} interrupted by its operator (Ctrl-C or SIGINT)",
                        changefeed=cycle.changefeed_id, code=CYCLE_INTERRUPTED,
                        hint="nothing is lost: the changefeed's state is as it was, and the next run goes on "
                             "from its checkpoint")


@contextlib.contextmanager
def recording(cycle: Cycle, stage: str):
    """Time a stage, and record any error on the run before it propagates.  Yields a dict: the
    stats the block puts in it are recorded with the stage's time, in the same transaction."""
    t0 = time.time()
    stats: dict = {}
    try:
        yield stats
    except BaseException as e:  # noqa: BLE001 - re-raised as the one error type
        if getattr(e, "code", None) == CYCLE_SUPERSEDED:
            raise  # not this cycle's failure to record: the run already says it was replaced
        # an operator's Ctrl-C is not the changefeed's failure: recorded as such (finish leaves the
        # changefeed's state as it was), and the interruption goes on to the command as it is
        interrupted = isinstance(e, KeyboardInterrupt)
        err = _interrupted(cycle, stage) if interrupted else classify(e, stage, cycle.changefeed_id)
        metastore.update_run(cycle.changefeed_id, cycle.run_id, error=json.dumps(err.to_dict()),
                             stats={f"{stage}_seconds": round(time.time() - t0, 3),
                                    "failed_stage": stage, "trace": traceback.format_exc()[-4000:]})
        if interrupted or err is e:
            raise
        raise err from e
    metastore.update_run(cycle.changefeed_id, cycle.run_id,
                         stats={f"{stage}_seconds": round(time.time() - t0, 3), **stats})
