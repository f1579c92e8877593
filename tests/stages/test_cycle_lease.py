"""Cycle.keep_lease: a stage of a cycle goes on while the changefeed's lease is its own, renewing
it only where it took or renewed it long enough ago, and stops where another cycle replaced it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from cdcflow.core.errors import CYCLE_SUPERSEDED, CdcflowError
from cdcflow.stages import cycle as cycle_module
from cdcflow.store import metastore
from cdcflow.store.engine import listening_to_commits

POS = {"file": "binlog.000001", "pos": 4}


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.delenv("CDCFLOW_METASTORE_URL", raising=False)
    monkeypatch.setenv("CDCFLOW_HOME", str(tmp_path))


def _cycle(run_id: str):
    metastore.start_run("cf", run_id, 1, POS, 0, False)
    return SimpleNamespace(changefeed_id="cf", run_id=run_id, run=lambda: metastore.get_run("cf", run_id))


def _commits(fn) -> int:
    seen = []
    with listening_to_commits(lambda: seen.append(1)):
        fn()
    return len(seen)


def test_a_stage_right_after_the_last_renewal_only_looks_at_the_lease():
    metastore.create_feed("cf", 1, POS)
    cycle = _cycle("run1")
    owner = metastore.lease_owner_for("run1")
    assert _commits(lambda: cycle_module.Cycle.keep_lease(cycle, "pull")) == 1  # not held yet: taken
    until = metastore.get_feed("cf").lease_until
    for stage in ("filter", "barrier", "apply"):
        assert _commits(lambda: cycle_module.Cycle.keep_lease(cycle, stage)) == 0
    assert metastore.get_feed("cf").lease_until == until and metastore.lease_holder("cf") == owner
    # renewed longer ago than LEASE_RENEWAL_SECONDS: renewed again
    metastore.acquire_lease("cf", owner, "run1", ttl=metastore.LEASE_SECONDS - cycle_module.LEASE_RENEWAL_SECONDS - 5)
    assert _commits(lambda: cycle_module.Cycle.keep_lease(cycle, "apply")) == 1
    assert metastore.get_feed("cf").lease_until > until


def test_a_cycle_another_replaced_stops_at_its_next_stage_however_fresh_its_lease():
    metastore.create_feed("cf", 1, POS)
    old = _cycle("run1")
    cycle_module.Cycle.keep_lease(old, "pull")
    metastore.supersede_open_runs("cf", "run2")  # a cycle started meanwhile marks this one replaced
    with pytest.raises(CdcflowError) as e:
        cycle_module.Cycle.keep_lease(old, "filter")
    assert e.value.code == CYCLE_SUPERSEDED
