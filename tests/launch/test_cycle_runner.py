"""The cycle runner loads a changefeed's spec once per task and hands the loaded Cycle down:
the DAG's pull task reads the spec once for pull, the empty-window settle and the records of
both, where it used to read it four times.  The pull task leads to the wait_index sensor only
when an index build is pending."""

from __future__ import annotations


import msgspec

from cdcflow.config.keys import ChangefeedConfig
from cdcflow.config.parsing import config_from_dict
from cdcflow.config.spec_store import Spec, save_spec
from cdcflow.launch import cycle_runner, dag_tasks
from cdcflow.source.binlog import Position
from cdcflow.stages import contracts, cycle
from cdcflow.store import index_jobs, metastore

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


def _idle_window(changefeed_id: str, run_id: str) -> None:
    save_spec(Spec(id=changefeed_id, source_uri="mysql://u@127.0.0.1:1/", sink_uri="mysql://u@127.0.0.1:2/"))
    metastore.create_feed(changefeed_id, START, POS.to_dict())
    metastore.start_run(changefeed_id, run_id, START, POS.to_dict(), 0, False)
    contracts.WINDOW.write(cycle.Cycle.load(changefeed_id, run_id).folder,
                           contracts.Window(start_ts=START, start_pos=POS, head=POS, head_tso=RESOLVED))


def test_the_pull_task_loads_the_spec_once(cdcflow_home, monkeypatch):
    _idle_window(CID, RUN)
    loads = []
    load_spec = cycle.load_spec
    monkeypatch.setattr(cycle, "load_spec",
                        lambda changefeed_id: loads.append(changefeed_id) or load_spec(changefeed_id))
    monkeypatch.setitem(cycle_runner.STAGE_FUNCS, "pull", _pull_nothing)

    results, following = dag_tasks.pull(CID, RUN)

    assert loads == [CID]
    # no index build pending: the sensor is skipped with the Spark stages, finish follows
    assert sorted(results) == ["apply", "barrier", "filter", "pull"] and following == []
    assert metastore.get_feed(CID).checkpoint_ts == RESOLVED  # the empty window was settled
    stats = metastore.get_run(CID, RUN).stats
    assert {"pull", "filter", "barrier", "apply"} <= set(stats)


def test_the_pull_task_leads_to_wait_index_while_an_index_build_is_pending(cdcflow_home, monkeypatch):
    monkeypatch.setitem(cycle_runner.STAGE_FUNCS, "pull", _pull_nothing)
    _idle_window("idx", RUN)
    index_jobs.record("idx", 7, commit_ts=START, schema="d", table="t", index_name="i", query="ALTER TABLE t ADD "
                      "INDEX i (v)", tidb_state="running")
    # a build of an earlier cycle is still running: the sensor looks (a failed build fails the changefeed)
    assert dag_tasks.pull("idx", RUN)[1] == ["wait_index"]


def test_the_stages_run_in_the_pull_task_on_spark_connect_for_a_window_of_at_most_fast_path_max_events():
    connect = config_from_dict({"cdcflow": {"fast-path-max-events": 1000}})
    master = config_from_dict({"cdcflow": {"fast-path-max-events": 1000, "spark-master": "local[2]"}})
    assert dag_tasks.fast_path(connect, contracts.PullResult(pulled=1000))
    # however pull read it: a window read in ranges (a slow run made it larger) stays on the fast path
    assert dag_tasks.fast_path(connect, contracts.PullResult(pulled=1000, ranges=3))
    assert not dag_tasks.fast_path(connect, contracts.PullResult(pulled=1001))  # a larger window: a task per stage
    assert not dag_tasks.fast_path(master, contracts.PullResult(pulled=5))  # spark-submit: a job per stage
    never = config_from_dict({"cdcflow": {"fast-path-max-events": 0}})
    assert not dag_tasks.fast_path(never, contracts.PullResult(pulled=1))
    assert ChangefeedConfig().fast_path_max_events == 1_000_000
