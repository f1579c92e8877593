"""`cdcflow changefeed run --follow`: cycles back to back in one process, each started as soon
as the upstream's binlog has moved past the checkpoint, for a given time or until stopped.

A cycle is the same as `changefeed run`'s (its own run id, its log, its record in the metadata
store); what following saves is the process's start (0.6 s of imports, most of a small window's
cycle) and the wait for a schedule.  Between cycles the upstream's head is read every
`POLL_S` over one kept connection (changefeed.head_watch, the `@binlog` trigger's look), so a
change is picked up within that time of its commit and nothing runs while nothing is written.

Following stops when the changefeed is no longer in a state whose cycles replicate (stopped,
failed, finished, removed: what a person or an error decided), when the time is up, or when
`stop()` says so (the CLI's SIGTERM or Ctrl-C): after the cycle under way, never inside it.
A cycle's error is recorded as a single run records it (retryable: warning, with the backoff;
otherwise failed) and reported; a warning's backoff is waited out here, not turned into
skipped cycles; a cycle that moved the checkpoint nowhere (an index build still running
downstream, another runner holding the lease) is followed by a pause of `STALLED_S`."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from cdcflow.changefeed import lifecycle, states
from cdcflow.changefeed.head_watch import HeadWatch
from cdcflow.core.errors import CdcflowError
from cdcflow.launch.in_process import run_cycle
from cdcflow.store import metastore

POLL_S = 0.1  # between cycles: one SHOW MASTER STATUS and one read of the metadata store
STALLED_S = 1.0  # after a cycle that moved nothing, before the next
LOOK_FAILED_S = 1.0  # after a look that could not read the upstream: the next cycle records why


@dataclass
class Followed:
    """What a follow did: its cycles, those that ended in an error, why it stopped, and what its
    cycles that ended done wrote (the tables, schema.table, and the last such cycle's id)."""

    cycles: int = 0
    errors: int = 0
    ended: str = ""
    state: str = ""  # the changefeed's state at the end
    changed_tables: set[str] = field(default_factory=set)
    last_cycle: str | None = None


def follow(changefeed_id: str, seconds: float | None, *, spark_remote: str | None = None,
           connection: Callable[[], str] | None = None, new_run_id: Callable[[], str] | None = None,
           on_cycle: Callable[[dict], None] = lambda result: None,
           on_error: Callable[[CdcflowError], None] = lambda error: None, stop: Callable[[], bool] = lambda: False,
           clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
           out: Followed | None = None, first_manual: bool = False) -> Followed:
    """Cycles of `changefeed_id` while its binlog moves, for `seconds` (None: until `stop()`);
    each cycle's result to `on_cycle`, each cycle's error to `on_error`; counted in `out` as they
    end (a caller interrupted meanwhile still has them).  Each cycle's Spark is run_cycle's
    (`spark_remote`, else the config's, else a launcher's `connection`) and its id `new_run_id()`'s
    (the CLI's by default).  `first_manual`: the first cycle is a person's (an Airflow run they
    triggered): it runs through a warning's backoff, as their own cycle would."""
    deadline = None if seconds is None else clock() + seconds
    out, watch = out or Followed(), HeadWatch(changefeed_id)

    def pause(wanted: float) -> None:
        until = clock() + wanted if deadline is None else min(clock() + wanted, deadline)
        while not stop() and clock() < until:  # in steps of POLL_S at most: a stop is seen within one
            sleep(max(0.0, min(POLL_S, until - clock())))

    try:
        while not stop() and (deadline is None or clock() < deadline):
            try:
                look = watch.look()
            except Exception:  # noqa: BLE001 - the upstream or the store unreadable: a cycle says why, in the record
                look = None
            if look is not None and look.state not in states.RUNNING_STATES:
                out.ended = f"changefeed {changefeed_id} is {look.state}"
                break
            feed = metastore.get_feed(changefeed_id)
            manual = first_manual and out.cycles + out.errors == 0
            backoff = 0 if manual else lifecycle.retry_wait_left(feed)
            if backoff > 0 or (look is not None and not look.behind):
                pause(backoff if backoff > 0 else POLL_S)
                continue
            before = feed.checkpoint_ts
            _one_cycle(lambda: run_cycle(changefeed_id, spark_remote=spark_remote, connection=connection,
                                         run_id=new_run_id() if new_run_id else None, manual=manual),
                       out, on_cycle, on_error)
            if look is None:
                pause(LOOK_FAILED_S)
            elif metastore.get_feed(changefeed_id).checkpoint_ts == before:
                pause(STALLED_S)
        else:
            out.ended = "stopped as asked" if stop() else f"followed for {seconds:g} s"
    finally:
        watch.close()
    out.state = metastore.get_feed(changefeed_id).state
    return out


def _one_cycle(cycle: Callable[[], dict], out: Followed, on_cycle: Callable[[dict], None],
               on_error: Callable[[CdcflowError], None]) -> None:
    """Run `cycle`, counting it in `out` with what it wrote, its result to `on_cycle` or its error
    to `on_error`."""
    try:
        result = cycle()
    except CdcflowError as e:
        out.errors += 1
        on_error(e)
        return
    out.cycles += 1
    if result.get("run_id"):  # not a cycle prepare skipped
        out.last_cycle = result["run_id"]
        out.changed_tables.update((result.get("apply") or {}).get("changed_tables") or ())
    on_cycle(result)
