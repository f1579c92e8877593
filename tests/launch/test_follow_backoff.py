"""launch.follow and a warning's backoff: a follower waits it out between cycles, except for the
first cycle of a run a person triggered in Airflow (`first_manual`), which runs at once and as a
person's (stages.prepare: no backoff), as that run's own cycle would.  The upstream, the store
and the cycle are stood in for: what is asserted is the follower's own decision."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from cdcflow.launch import follow as follow_mod

CF = "f"


@pytest.fixture
def stand_ins(monkeypatch):
    """The follower's world: always behind, in warning with `BACKOFF_S` of backoff left; a clock
    that only sleeps move; each cycle's `manual` and the clock when it ran."""
    now = [0.0]
    cycles: list[tuple[bool, float]] = []

    class Watch:
        def __init__(self, changefeed_id):
            pass

        def look(self):
            return SimpleNamespace(state="warning", behind=True)

        def close(self):
            pass

    def run_cycle(changefeed_id, *, spark_remote, connection, run_id, manual):
        cycles.append((manual, now[0]))
        return {"run_id": run_id}

    feed = SimpleNamespace(checkpoint_ts=1, state="warning")
    monkeypatch.setattr(follow_mod, "HeadWatch", Watch)
    monkeypatch.setattr(follow_mod, "run_cycle", run_cycle)
    monkeypatch.setattr(follow_mod.metastore, "get_feed", lambda changefeed_id: feed)
    # the backoff runs from 0 to BACKOFF_S on the stand-in clock
    monkeypatch.setattr(follow_mod.lifecycle, "retry_wait_left", lambda f: max(0.0, BACKOFF_S - now[0]))

    def sleep(seconds):
        now[0] += seconds

    return SimpleNamespace(clock=lambda: now[0], sleep=sleep, cycles=cycles)


BACKOFF_S = 5.0


@pytest.mark.parametrize("first_manual", [False, True])
def test_a_persons_first_cycle_runs_through_the_backoff_the_rest_wait_it_out(stand_ins, first_manual):
    done = follow_mod.follow(CF, 8.0, clock=stand_ins.clock, sleep=stand_ins.sleep, first_manual=first_manual,
                             new_run_id=lambda: "r")
    manual_flags = [manual for manual, _ in stand_ins.cycles]
    times = [at for _, at in stand_ins.cycles]
    if first_manual:
        assert manual_flags[0] is True and times[0] == 0.0  # at once, as a person's
    else:
        assert times[0] >= BACKOFF_S  # waited out
    # every other cycle: not a person's, and only once the backoff is over
    assert not any(manual_flags[1:]) and all(at >= BACKOFF_S for at in times[1:])
    assert done.cycles == len(stand_ins.cycles) >= 2
