"""The cycle runner loads a changefeed's spec once per task and hands the loaded Cycle down:
the DAG's pull task reads the spec once for pull, the empty-window settle and the records of
both, where it used to read it four times."""

from __future__ import annotations

import msgspec

from cdcflow.core.spec_store import Spec, save_spec
from cdcflow.runner import airflow_tasks, cycle_runner
from cdcflow.source.binlog import Position
from cdcflow.stages import contracts, cycle
from cdcflow.store import metastore

CID, RUN = "once", "airflow__20260101T000000_abcdef"
POS = Position("b.000001", 4)
START, RESOLVED = 1000 << 18, 2000 << 18


def _pull_nothing(spark, cyc):
    """pull of an idle window, without an upstream: nothing read, resolved up to RESOLVED."""
    window = contracts.WINDOW.read(cyc.folder)
    pulled = contracts.Pulled(end_ts=START, end_pos=POS, resolved_ts=RESOLVED, stopped_at_target=False,
                              aborted_ts=[], events=0, transactions=0)
    contracts.WINDOW.write(cyc.folder, msgspec.structs.replace(window, pulled=pulled))
    return contracts.PullResult()


def test_the_pull_task_loads_the_spec_once(cdcflow_home, monkeypatch):
    save_spec(Spec(id=CID, source_uri="mysql://u@127.0.0.1:1/", sink_uri="mysql://u@127.0.0.1:2/"))
    metastore.create_feed(CID, START, POS.to_dict())
    metastore.start_run(CID, RUN, START, POS.to_dict(), 0, False)
    contracts.WINDOW.write(cycle.Cycle.load(CID, RUN).folder,
                           contracts.Window(start_ts=START, start_pos=POS, head=POS, head_tso=RESOLVED))
    loads = []
    load_spec = cycle.load_spec
    monkeypatch.setattr(cycle, "load_spec",
                        lambda changefeed_id: loads.append(changefeed_id) or load_spec(changefeed_id))
    monkeypatch.setitem(cycle_runner.STAGE_FUNCS, "pull", _pull_nothing)

    results, following = airflow_tasks.pull(CID, RUN, spark_remote=lambda cfg: None)

    assert loads == [CID]
    assert sorted(results) == ["apply", "barrier", "filter", "pull"] and following == ["wait_index"]
    assert metastore.get_feed(CID).checkpoint_ts == RESOLVED  # the empty window was settled
    stats = metastore.get_run(CID, RUN).stats
    assert {"pull", "filter", "barrier", "apply"} <= set(stats)
