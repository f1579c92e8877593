"""The Airflow side: dags/changefeeds.py through a real DagBag, the trigger form,
the task chain and its Spark tasks (Spark Connect sessions by default, spark-submit
jobs for a changefeed that names a master), airflow_settings.yaml and its
bootstrap, and the exit codes of the spark-submit entry point."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

try:
    from airflow_env import REPO, use_airflow
except ImportError:  # tests/ imported as a package
    from tests.airflow_env import REPO, use_airflow

from cdcflow.core.errors import CdcflowError
from cdcflow.config.spec_store import Spec, save_spec
from cdcflow.launch.modes import MODES

CHAIN = ["prepare", "pull", "filter", "barrier", "apply", "wait_index", "finish"]
SPARK_STAGES = ["filter", "barrier", "apply"]
RUN_ID_TEMPLATE = "{{ ti.xcom_pull(task_ids='prepare', key='run_id') }}"

FEEDS = {
    # id: (config text, the DAG's schedule)
    "orders": ('[cdcflow]\nschedule = "*/10 * * * *"\nshuffle-partitions = 3\nspark-master = "local[2]"\n',
               "*/10 * * * *"),
    "audit": ('[cdcflow]\nschedule = "none"\nindex-wait = "reschedule"\n', None),
    "follower": ('[cdcflow]\nschedule = "@continuous"\nfollow-seconds = 300\n', "@continuous"),
}
INDEX_WAIT = {"orders": "deferrable", "audit": "reschedule", "follower": "deferrable"}  # the default, the config's
FOLLOWING = {"follower"}  # the changefeeds whose runs follow the binlog after their cycle (a follow task)


@pytest.fixture(scope="module")
def airflow(tmp_path_factory):
    return use_airflow(tmp_path_factory.mktemp("airflow"))


@pytest.fixture(scope="module")
def feeds_home(tmp_path_factory, airflow):
    home = tmp_path_factory.mktemp("cdcflow-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CDCFLOW_HOME", str(home))
        for changefeed_id, (config_text, _) in FEEDS.items():
            save_spec(Spec(id=changefeed_id, source_uri="mysql://u@127.0.0.1:3306", sink_uri="mysql://u@127.0.0.1:4000",
                           config_text=config_text))
        # a spec whose config no longer parses must not take the others down
        save_spec(Spec(id="broken", source_uri="mysql://u@h:1", sink_uri="mysql://u@h:2",
                       config_text='[cdcflow]\nschedul = "@daily"\n'))
        yield home


@pytest.fixture(scope="module")
def dagbag(airflow, feeds_home):
    from airflow.dag_processing.dagbag import DagBag

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CDCFLOW_HOME", str(feeds_home))
        return DagBag(dag_folder=str(REPO / "dags"))


# DagBag.get_dag() looks the DAG up in Airflow's database too; .dags needs none.


def test_each_dag_documents_its_changefeed(dagbag):
    orders, audit = dagbag.dags["changefeed__orders"].doc_md, dagbag.dags["changefeed__audit"].doc_md
    assert "### Changefeed `orders`" in orders and "`*/10 * * * *`" in orders
    assert "mysql://u@127.0.0.1:3306" in orders and "spark-submit jobs on `local[2]`" in orders
    assert "runs only when triggered" in audit
    assert "| Spark | sessions on the Spark Connect server of the connection `spark_connect_default` |" in audit
    for doc in (orders, audit):
        assert "(/plugin/cdcflow-changefeeds)" in doc  # the Changefeeds page
        # one pause: the changefeed's state; Airflow's toggle pauses and resumes it too
        assert "cdcflow changefeed pause -c" in doc and "its one pause" in doc
        assert "docs/guides/airflow-pause.md" in doc and "Airflow's toggle on this DAG" in doc
        assert "not cdcflow's backfill" in doc and "mode = backfill" in doc
        # every mode of the trigger form, in order, with what it does
        trigger = doc[doc.index("**Trigger**"):]
        assert [trigger.index(f"`{mode}`: ") for mode in MODES] == sorted(trigger.index(f"`{m}`: ") for m in MODES)
        assert "`verify`: compare the downstream" in trigger and "`snapshot`: copy the tables" in trigger
        # no caveat about Airflow's "Unpause on trigger": the DAG is never left paused by cdcflow
        assert "Unpause" not in doc


def test_one_dag_per_spec_and_no_import_errors(dagbag):
    assert dagbag.import_errors == {}
    assert sorted(dagbag.dag_ids) == sorted(f"changefeed__{changefeed_id}" for changefeed_id in FEEDS)


def test_a_task_parse_builds_its_own_changefeeds_dag_only(airflow, feeds_home, monkeypatch):
    """Airflow parses the DAG file again for every task, with the task's DAG in its parsing
    context (as its task runner sets it): that changefeed's DAG is the only one built; a DAG that
    is not a changefeed's, or one whose spec is gone, builds all or none, never another's."""
    from airflow.dag_processing.dagbag import DagBag
    from airflow.sdk.definitions.context import _AIRFLOW_PARSING_CONTEXT_DAG_ID, _AIRFLOW_PARSING_CONTEXT_TASK_ID

    monkeypatch.setenv("CDCFLOW_HOME", str(feeds_home))
    # the variables Airflow's task runner sets around its parse (its context manager leaves them
    # set where they were not: monkeypatch takes them away after the test)
    monkeypatch.setenv(_AIRFLOW_PARSING_CONTEXT_TASK_ID, "prepare")
    for dag_id, built in (("changefeed__orders", ["changefeed__orders"]),
                          ("changefeed__gone", []),
                          ("someone_elses", sorted(f"changefeed__{c}" for c in FEEDS))):
        monkeypatch.setenv(_AIRFLOW_PARSING_CONTEXT_DAG_ID, dag_id)
        bag = DagBag(dag_folder=str(REPO / "dags"))
        assert sorted(bag.dag_ids) == built and bag.import_errors == {}, (dag_id, bag.dag_ids)


@pytest.mark.parametrize("changefeed_id", sorted(FEEDS))
def test_dag_settings(dagbag, changefeed_id):
    dag = dagbag.dags[f"changefeed__{changefeed_id}"]
    assert dag.schedule == FEEDS[changefeed_id][1]
    assert dag.timetable.can_be_scheduled is (FEEDS[changefeed_id][1] is not None)
    assert dag.max_active_runs == 1
    assert dag.catchup is False
    assert dag.is_paused_upon_creation is False  # a triggered run starts; the changefeed's state pauses
    assert set(dag.tags) == {"cdcflow"}


def test_trigger_form_params(dagbag):
    from airflow.sdk.definitions.param import ParamValidationError

    params = dagbag.dags["changefeed__orders"].params
    assert params.get_param("mode").schema["enum"] == ["catch-up", "backfill", "dry-run", "verify", "snapshot",
                                                       "add-tables", "resync-tables"]
    described = params.get_param("mode").description
    assert all(f"{mode}: " in described for mode in MODES), described
    assert "Unpause" not in described
    assert params["mode"] == "catch-up"
    assert params["start_ts"] is None and params["target_ts"] is None and params["tables"] is None
    with pytest.raises(ParamValidationError):
        params.get_param("mode").resolve("replay")
    for name in ("start_ts", "target_ts"):
        param = params.get_param(name)
        assert param.resolve("2026-11-22 10:00:00") == "2026-11-22 10:00:00"
        assert param.resolve("450000000000000000") == "450000000000000000"
        assert param.resolve(None) is None
        assert param.resolve("now") == "now" and param.resolve("2026-11-22T10:00:00Z") == "2026-11-22T10:00:00Z"
        for nonsense in ("yesterday-ish", "1 hour ago", "2026-11-22 10", 450000000000000000):
            with pytest.raises(ParamValidationError):  # what Airflow refuses before a run exists
                param.resolve(nonsense)
    # the oldest start ts: not looked up yet when the DAG was parsed (the page looks it up)
    assert "The oldest the upstream still holds: not looked up yet" in params.get_param("start_ts").description


def test_task_chain(dagbag):
    dag = dagbag.dags["changefeed__orders"]
    assert sorted(dag.task_ids) == sorted(CHAIN)
    for upstream, downstream in zip(CHAIN, CHAIN[1:]):
        # pull also leads straight to wait_index: an empty window skips the Spark stages
        # and prepare to finish: finish is the teardown of prepare's setup
        extra = {"wait_index"} if upstream == "pull" else {"finish"} if upstream == "prepare" else set()
        assert dag.get_task(upstream).downstream_task_ids == {downstream} | extra
    assert dag.get_task("prepare").upstream_task_ids == set()
    assert dag.get_task("finish").downstream_task_ids == set()


def test_prepare_skips_only_the_stages_and_finish_always_runs(dagbag):
    from airflow.providers.standard.operators.python import PythonOperator, ShortCircuitOperator
    from airflow.sdk import TriggerRule

    dag = dagbag.dags["changefeed__orders"]
    prepare = dag.get_task("prepare")
    assert isinstance(prepare, ShortCircuitOperator)
    # False: skipping pull lets the trigger rules decide the rest; a skip never skips a teardown
    assert prepare.ignore_downstream_trigger_rules is False
    finish = dag.get_task("finish")
    assert isinstance(finish, PythonOperator)
    # finish closes what prepare opened: it runs when prepare succeeded, whatever the stages did;
    # when prepare failed it is upstream_failed (one failure, prepare's) and still fails the run
    assert prepare.is_setup and finish.is_teardown and finish.on_failure_fail_dagrun
    assert finish.trigger_rule == TriggerRule.ALL_DONE_SETUP_SUCCESS
    for stage in ["pull", *SPARK_STAGES]:
        assert dag.get_task(stage).trigger_rule == TriggerRule.ALL_SUCCESS
    # after apply, or after pull alone for an empty window; never after a skipped cycle
    assert dag.get_task("wait_index").trigger_rule == TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS


def test_prepare_is_tried_again_when_airflow_could_not_run_it(dagbag):
    """A prepare try Airflow failed before it ran (the API server not answering yet after `make
    airflow` on a loaded machine) is retried: prepare is safe to retry (a new cycle per try, the
    lease of a try whose process is gone taken over); its own refusals fail without a retry
    (AirflowFailException).  No other task is retried."""
    import datetime as dt

    for changefeed_id in FEEDS:
        dag = dagbag.dags[f"changefeed__{changefeed_id}"]
        prepare = dag.get_task("prepare")
        assert prepare.retries >= 2 and dt.timedelta(seconds=10) <= prepare.retry_delay <= dt.timedelta(minutes=1)
        assert {t.task_id: t.retries for t in dag.tasks if t.task_id != "prepare"} == \
            {t: 0 for t in CHAIN + (["follow"] if changefeed_id in FOLLOWING else []) if t != "prepare"}


@pytest.mark.parametrize("changefeed_id", sorted(FEEDS))
def test_every_dag_waits_for_index_builds_without_holding_a_worker_slot(dagbag, feeds_home, changefeed_id):
    from airflow.serialization.serialized_objects import DagSerialization

    from cdcflow_airflow.index_sensor import IndexWaitSensor

    dag = dagbag.dags[f"changefeed__{changefeed_id}"]
    sensor = dag.get_task("wait_index")
    assert isinstance(sensor, IndexWaitSensor)
    # deferred to the triggerer, or the slot given back between pokes, as the config says
    assert sensor.index_wait == INDEX_WAIT[changefeed_id] and sensor.mode == "reschedule"
    assert sensor.upstream_task_ids == {"apply", "pull"} and sensor.downstream_task_ids == {"finish"}
    assert sensor.poke_interval == 30 and sensor.timeout == 6 * 3600
    assert (sensor.changefeed_id, sensor.cdcflow_home, sensor.run_id) == (changefeed_id, str(feeds_home),
                                                                         RUN_ID_TEMPLATE)
    back = DagSerialization.from_dict(DagSerialization.to_dict(dag)).get_task("wait_index")
    # what the scheduler reads from the serialized DAG
    assert back.reschedule is True and list(back.template_fields) == ["run_id"]


@pytest.mark.parametrize("stage", SPARK_STAGES)
def test_spark_tasks(dagbag, feeds_home, stage):
    from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

    task = dagbag.dags["changefeed__orders"].get_task(stage)
    assert isinstance(task, SparkSubmitOperator)
    assert task.application == str(REPO / "jobs" / "stage.py")
    assert Path(task.application).is_file()
    assert task.application_args == [stage, "--changefeed-id", "orders", "--run-id", RUN_ID_TEMPLATE]
    assert task._conn_id == "spark_default"
    assert task.pool == "cdcflow_spark"
    env = task.env_vars
    assert env["CDCFLOW_HOME"] == str(feeds_home)
    assert env["PYSPARK_PYTHON"] == sys.executable
    # the hook runs a bare `spark-submit`, found on the PATH it gives Popen
    found = shutil.which("spark-submit", path=env["PATH"])
    assert found == str(Path(sys.executable).parent / "spark-submit")


@pytest.mark.parametrize("stage", SPARK_STAGES)
def test_spark_connect_tasks_by_default(dagbag, feeds_home, stage):
    from airflow.providers.standard.operators.python import PythonOperator

    from cdcflow_airflow.cycle_tasks import spark_stage

    task = dagbag.dags["changefeed__audit"].get_task(stage)  # its config names no master
    assert isinstance(task, PythonOperator) and task.python_callable is spark_stage
    assert task.pool == "cdcflow_spark"
    assert task.op_kwargs == {"stage": stage, "changefeed_id": "audit", "cdcflow_home": str(feeds_home),
                              "run_id": RUN_ID_TEMPLATE}


@pytest.mark.parametrize("changefeed_id", ["audit", "orders"])
def test_pull_takes_a_spark_pool_slot_as_it_may_run_the_spark_stages(dagbag, changefeed_id):
    # the fast path runs filter, barrier and apply inside pull, and a large window's ranges are
    # read on Spark there: the pool bounds the Spark work of either path
    dag = dagbag.dags[f"changefeed__{changefeed_id}"]
    assert dag.get_task("pull").pool == "cdcflow_spark"
    assert {t.task_id for t in dag.tasks if t.pool == "cdcflow_spark"} == {"pull", *SPARK_STAGES}


def test_a_task_reads_airflow_conn_id_credentials_through_the_task_sdk(airflow, monkeypatch, tmp_path):
    from cdcflow.core import home
    from cdcflow.core.uri import parse_sink_uri
    from cdcflow_airflow.cycle_tasks import airflow_connection_credentials, task_home, user_errors_fail_the_task

    monkeypatch.setenv("AIRFLOW_CONN_CDCFLOW_DOWN", json.dumps({"conn_type": "mysql", "login": "rep",
                                                                "password": "p@ss", "host": "db"}))
    sink = parse_sink_uri("mysql://db:3306/?airflow-conn-id=cdcflow_down")
    with user_errors_fail_the_task(), task_home(str(tmp_path)).entered():  # every task body runs in its home
        args = sink.connection_args()
        assert home.current().airflow_lookup is airflow_connection_credentials, "the task has no Airflow lookup"
    assert (args["user"], args["password"]) == ("rep", "p@ss")
    monkeypatch.delenv("AIRFLOW_CONN_CDCFLOW_DOWN")
    from airflow.sdk.exceptions import AirflowFailException

    with pytest.raises(AirflowFailException, match="Airflow connection cdcflow_down, which cannot be found") as e:
        with user_errors_fail_the_task(), task_home(str(tmp_path)).entered():
            sink.connection_args()
    assert "no environment variable" not in str(e.value)  # the Task SDK was asked, not the environment


def test_spark_connect_url_comes_from_the_connection(airflow, monkeypatch):
    from cdcflow_devtools import airflow_bootstrap as boot
    from cdcflow_airflow.cycle_tasks import connect_url

    conn = next(c for c in boot.load_settings(REPO / "airflow_settings.yaml")["connections"]
                if c["conn_id"] == "spark_connect_default")
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_CONNECT_DEFAULT", json.dumps(boot.connection_record(conn)))
    assert connect_url("audit") == "sc://127.0.0.1:15002/"
    monkeypatch.delenv("AIRFLOW_CONN_SPARK_CONNECT_DEFAULT")
    with pytest.raises(CdcflowError) as e:
        connect_url("audit")
    assert "changefeed audit" in str(e.value) and "spark_connect_default" in str(e.value)
    assert "cdcflow.spark-master" in e.value.hint


def test_one_thin_job_runs_every_spark_stage():
    assert sorted(p.name for p in (REPO / "jobs").glob("*.py")) == ["stage.py"]
    text = (REPO / "jobs" / "stage.py").read_text()
    assert "sys.exit(spark_submit.main())" in text
    assert len([line for line in text.splitlines() if line.strip()]) == 3


def test_the_pull_task_branches_past_spark_for_an_empty_window(dagbag):
    from airflow.providers.standard.operators.python import BranchPythonOperator

    pull = dagbag.dags["changefeed__orders"].get_task("pull")
    assert isinstance(pull, BranchPythonOperator)
    assert pull.op_kwargs["run_id"] == RUN_ID_TEMPLATE


def test_pull_skips_every_stage_it_does_not_follow_at_once(dagbag):
    # the branch skips the tasks right after pull; the stages after those go with them (not a
    # scheduler pass each), never the teardown finish nor a stage a followed task leads to
    pull = dagbag.dags["changefeed__orders"].get_task("pull")
    assert pull.beyond({"filter", "wait_index"}, []) == ["barrier", "apply"]  # the fast path
    assert pull.beyond({"filter"}, ["wait_index"]) == ["barrier", "apply"]  # fast, an index build pending
    assert pull.beyond(set(), ["filter", "wait_index"]) == []  # the stages as tasks


@pytest.mark.parametrize("changefeed_id", sorted(FEEDS))
def test_follow_seconds_adds_a_follow_task_beside_the_cycle(dagbag, feeds_home, changefeed_id):
    """With follow-seconds a run has a `follow` task after prepare, beside the cycle's tasks (in the
    Spark pool, as its cycles may run Spark stages); without it a run is its cycle.  A fast-path
    or empty window's skip never reaches it."""
    dag = dagbag.dags[f"changefeed__{changefeed_id}"]
    if changefeed_id not in FOLLOWING:
        assert "follow" not in dag.task_ids and "follows the binlog" not in dag.doc_md
        return
    follow = dag.get_task("follow")
    assert type(follow).__name__ == "FollowOperator" and follow.pool == "cdcflow_spark"
    assert follow.upstream_task_ids == {"prepare"} and follow.downstream_task_ids == set()
    assert (follow.changefeed_id, follow.cdcflow_home) == (changefeed_id, str(feeds_home))
    assert "follows the binlog for 300 s" in dag.doc_md
    from airflow.serialization.serialized_objects import DagSerialization

    assert "follow" in DagSerialization.from_dict(DagSerialization.to_dict(dag)).task_ids
    pull = dag.get_task("pull")
    assert pull.beyond({"filter", "wait_index"}, []) == ["barrier", "apply"]
    assert pull.beyond({"filter"}, ["wait_index"]) == ["barrier", "apply"]
    assert "follow" not in pull.beyond({"filter", "wait_index"}, []) + pull.beyond(set(), [])


class _SkippingTi:
    """What SkipMixin.skip asks of a task instance, with prepare's `follows` XCom."""

    map_index = -1

    def __init__(self, follows: bool):
        self.follows, self.pushed = follows, {}

    def xcom_pull(self, task_ids, key):
        return self.follows if (task_ids, key) == ("prepare", "follows") else None

    def xcom_push(self, key, value):
        self.pushed[key] = value


@pytest.mark.parametrize("follows", [True, False])
def test_prepares_skip_takes_every_stage_at_once_and_spares_a_following_runs_follow_task(dagbag, follows):
    """prepare's skip (no cycle: a stopped changefeed, a run whose cycles are the follow task's)
    takes every stage at once, not pull alone with a scheduler pass per stage after it, so finish
    starts in the scheduler's next pass; the follow task is spared where prepare says the run's
    cycles are its, and skipped with the stages otherwise."""
    from airflow.sdk.exceptions import DownstreamTasksSkipped

    dag = dagbag.dags["changefeed__follower"]
    prepare = dag.get_task("prepare")
    with pytest.raises(DownstreamTasksSkipped) as skipped:
        prepare.skip(_SkippingTi(follows), [dag.get_task(t) for t in sorted(prepare.downstream_task_ids)
                                            if not dag.get_task(t).is_teardown])
    named = sorted(t if isinstance(t, str) else t[0] for t in skipped.value.tasks)
    assert named == sorted(["pull", "filter", "barrier", "apply", "wait_index", *([] if follows else ["follow"])])


@pytest.mark.parametrize("manual", [False, True])
def test_a_catch_up_run_leaves_its_cycles_to_the_follow_task(airflow, feeds_home, manual):
    """A catch-up of a following changefeed, scheduled or a person's, opens no cycle in prepare:
    the follow task runs the run's cycles (the hand-off between runs costs no pull or finish
    process).  The other modes, and a changefeed that does not follow, are not asked to; nor a
    stopped changefeed's run, whose prepare says why it does nothing."""
    from cdcflow.core.home import Home
    from cdcflow.launch import dag_tasks
    from cdcflow.store import metastore

    home = Home(str(feeds_home))
    with home.entered():
        try:
            metastore.get_feed("follower")
        except CdcflowError:
            metastore.create_feed("follower", 1, {"file": "binlog.000001", "pos": 4})
        assert dag_tasks.follow_seconds("follower", {}) == 300
        assert dag_tasks.follow_seconds("follower", {"mode": "catch-up", "target_ts": "now"}) == 0
        assert dag_tasks.follow_seconds("follower", {"mode": "dry-run"}) == 0
        assert dag_tasks.follow_seconds("orders", {}) == 0 and dag_tasks.follow_seconds("nobody", {}) == 0
    opened = dag_tasks.prepare("follower", {"mode": "catch-up"}, manual, home)
    assert opened.follows and opened.run_id is None and opened.instead is None and opened.skipped is None
    assert "follow task" in opened.skip_reason
    with home.entered():
        metastore.update_feed("follower", state="stopped")
    try:
        stopped = dag_tasks.prepare("follower", {"mode": "catch-up"}, manual, home)
    finally:
        with home.entered():
            metastore.update_feed("follower", state="normal")
    assert not stopped.follows and stopped.skipped == "stopped" and "paused" in stopped.skip_reason


def test_the_follow_task_ends_after_the_cycle_under_way_when_airflow_stops_it(dagbag, monkeypatch):
    """Airflow's SIGTERM calls on_kill: the follow is asked to stop (between cycles), and the task
    ends as a follow that was stopped, not with an error."""
    import threading

    from cdcflow.launch import dag_tasks
    from cdcflow.launch.follow import Followed

    asked = threading.Event()

    def fake_follow(changefeed_id, params, connection, home, *, manual, on_cycle, on_error, stop):
        asked.set()
        deadline = time.monotonic() + 30
        while not stop() and time.monotonic() < deadline:
            time.sleep(0.01)
        return Followed(cycles=2, ended="stopped as asked" if stop() else "never asked", state="normal")

    monkeypatch.setattr(dag_tasks, "follow", fake_follow)
    task = dagbag.dags["changefeed__follower"].get_task("follow")
    out = {}
    runner = threading.Thread(target=lambda: out.update(r=task.execute({"params": {}, "outlet_events": {}})))
    runner.start()
    assert asked.wait(30)
    task.on_kill()
    runner.join(30)
    assert out["r"] == {"cycles": 2, "errors": 0, "ended": "stopped as asked", "state": "normal"}


def test_only_a_catch_up_to_no_target_of_its_own_follows():
    from cdcflow.launch.modes import MODE_RULES, follows

    assert [m for m, rule in MODE_RULES.items() if rule.follows] == ["catch-up"]
    assert follows({}) and follows({"mode": "catch-up", "start_ts": None, "target_ts": None})
    assert not follows({"mode": "catch-up", "target_ts": "2026-11-30 10:00:00"})
    assert not any(follows({"mode": m}) for m in MODES if m != "catch-up")


def test_dags_survive_serialization(dagbag):
    from airflow.serialization.serialized_objects import DagSerialization

    dag = dagbag.dags["changefeed__orders"]
    back = DagSerialization.from_dict(DagSerialization.to_dict(dag))
    assert sorted(back.task_ids) == sorted(CHAIN)
    assert back.get_task("filter").application_args[-1] == RUN_ID_TEMPLATE
    assert back.params["mode"] == "catch-up"
    assert back.max_active_runs == 1


def test_home_comes_from_the_airflow_variable_without_cdcflow_home(airflow, tmp_path, monkeypatch):
    from cdcflow_airflow import use_cdcflow_home

    monkeypatch.delenv("CDCFLOW_HOME", raising=False)
    monkeypatch.setenv("AIRFLOW_VAR_CDCFLOW_HOME", str(tmp_path / "from-variable"))
    assert use_cdcflow_home() == str(tmp_path / "from-variable")
    monkeypatch.setenv("CDCFLOW_HOME", str(tmp_path / "from-env"))
    assert use_cdcflow_home() == str(tmp_path / "from-env")


def test_the_home_reaches_the_dag_file_and_the_tasks_without_the_environment(airflow, tmp_path, monkeypatch):
    from cdcflow_airflow import use_cdcflow_home
    from cdcflow_airflow.cycle_tasks import prepare_cycle

    monkeypatch.delenv("CDCFLOW_HOME", raising=False)
    monkeypatch.setenv("AIRFLOW_VAR_CDCFLOW_HOME", str(tmp_path / "from-variable"))
    assert use_cdcflow_home() == str(tmp_path / "from-variable") and "CDCFLOW_HOME" not in os.environ

    class TaskInstance:
        pushed: dict = {}

        def xcom_push(self, key, value):
            self.pushed[key] = value

    # a DAG's task works in the home the DAG was built with, whatever the process's is
    monkeypatch.setenv("CDCFLOW_HOME", str(tmp_path / "process-home"))
    ti = TaskInstance()
    assert prepare_cycle("gone", str(tmp_path / "dag-home"), {"mode": "catch-up"}, ti) is False
    assert "removed" in ti.pushed["skip_reason"]  # looked for under dag-home, where there is no spec
    assert (tmp_path / "dag-home" / "changefeeds").is_dir() and not (tmp_path / "process-home").exists()
    assert os.environ["CDCFLOW_HOME"] == str(tmp_path / "process-home")


# -- what the DAG calls in cdcflow.stages


def test_the_dag_runs_the_library_stages(dagbag):
    from cdcflow import stages

    assert [t for t in CHAIN if t in stages.STAGES] == list(stages.STAGES)
    for changefeed_id, launcher in (("orders", "StageSubmitOperator"), ("audit", "PythonOperator")):
        dag = dagbag.dags[f"changefeed__{changefeed_id}"]
        spark_tasks = [t.task_id for t in dag.tasks if type(t).__name__ == launcher and t.pool == "cdcflow_spark"]
        assert sorted(spark_tasks) == sorted(stages.SPARK_STAGES)
        if launcher == "StageSubmitOperator":  # its driver lives for one task, as an embedded session's
            assert all(dag.get_task(t).conf["spark.driver.defaultJavaOptions"].startswith("-XX:TieredStopAtLevel=1")
                       for t in spark_tasks)


def test_prepare_takes_what_the_trigger_form_sends(airflow):
    import inspect

    from cdcflow.stages.prepare import prepare

    params = inspect.signature(prepare).parameters
    for name in ("start_ts", "target_ts", "dry_run"):
        assert name in params and params[name].kind is inspect.Parameter.KEYWORD_ONLY, name


def test_cycle_run_ids_are_unique_and_say_airflow(airflow):
    import re

    from cdcflow.launch.dag_tasks import cycle_run_id

    ids = {cycle_run_id() for _ in range(20)}
    assert len(ids) == 20
    assert all(re.fullmatch(r"airflow__\d{8}T\d{6}_[0-9a-f]{6}", i) for i in ids)


# -- trigger parameters -> stages.prepare, and the failure summary of finish


@pytest.mark.parametrize(
    "params, expected",
    [
        ({"mode": "catch-up"}, {"start_ts": None, "target_ts": None, "dry_run": False, "instead": None, "copy": None}),
        ({"mode": "catch-up", "start_ts": "", "target_ts": "12345"}, {"start_ts": None, "target_ts": 12345,
                                                                      "dry_run": False, "instead": None, "copy": None}),
        ({"mode": "backfill", "start_ts": "1970-01-01 00:00:01"}, {"start_ts": 1000 << 18, "target_ts": None,
                                                                   "dry_run": False, "instead": None, "copy": None}),
        ({"mode": "dry-run"}, {"start_ts": None, "target_ts": None, "dry_run": True, "instead": None, "copy": None}),
        ({"mode": "dry-run", "start_ts": "77"}, {"start_ts": 77, "target_ts": None, "dry_run": True, "instead": None,
                                                 "copy": None}),
        ({"mode": "verify"}, {"start_ts": None, "target_ts": None, "dry_run": False, "instead": "verify", "copy": None}),
        ({"mode": "snapshot"}, {"start_ts": None, "target_ts": None, "dry_run": False, "instead": "snapshot",
                                "copy": None}),
        # a changefeed this home does not have: its run does nothing, so its tables are not looked up
        ({"mode": "add-tables", "tables": "app.b"}, {"start_ts": None, "target_ts": None, "dry_run": False,
                                                     "instead": None, "copy": None}),
    ],
)
def test_cycle_request(airflow, params, expected, tmp_path, monkeypatch):
    from cdcflow.launch.modes import cycle_request

    # a home without the changefeed: a start_ts of one that exists is also checked against its
    # upstream's oldest binlog (tests/airflow/test_ts_every_surface.py)
    monkeypatch.setenv("CDCFLOW_HOME", str(tmp_path))
    assert cycle_request("orders", params) == expected


@pytest.mark.parametrize(
    "params, names",
    [
        ({"mode": "backfill"}, "backfill needs start_ts"),
        ({"mode": "catch-up", "start_ts": "5"}, "start_ts is only used by mode backfill"),
        ({"mode": "backfill", "start_ts": "yesterday"}, "trigger parameter start_ts"),
        ({"mode": "catch-up", "target_ts": "soon"}, "trigger parameter target_ts"),
        ({"mode": "replay"}, "mode='replay'"),
        ({"mode": "add-tables"}, "mode add-tables needs tables"),
        ({"mode": "catch-up", "tables": "app.b"}, "tables is only used by modes add-tables and resync-tables"),
    ],
)
def test_cycle_request_errors_name_the_parameter(airflow, params, names):
    from cdcflow.core.errors import ConfigError
    from cdcflow.launch.modes import cycle_request

    with pytest.raises(ConfigError) as e:
        cycle_request("orders", params)
    assert names in str(e.value) and "changefeed orders" in str(e.value)


def test_failure_message_names_the_failed_tasks_only(airflow):
    from cdcflow.launch.dag_tasks import failure_message

    ok = {"prepare": "success", "pull": "success", "filter": "success", "barrier": "success", "apply": "success"}
    assert failure_message(ok) is None
    skipped = {"prepare": "success", "pull": "skipped", "filter": "skipped", "barrier": "skipped", "apply": "skipped"}
    assert failure_message(skipped) is None
    failed = {**ok, "filter": "failed", "barrier": "upstream_failed", "apply": "upstream_failed"}
    message = failure_message(failed)
    assert "filter" in message and "barrier" not in message and "apply" not in message
    assert "prepare" in failure_message({"prepare": "failed", "pull": "upstream_failed"})


# -- airflow_settings.yaml and its bootstrap


def test_settings_file_is_astro_format_with_spark_pool_and_home():
    from cdcflow_devtools import airflow_bootstrap as boot

    settings = boot.load_settings(REPO / "airflow_settings.yaml")
    connect, submit = settings["connections"]
    assert boot.connection_record(connect) == {"conn_type": "spark_connect", "host": "127.0.0.1", "port": 15002}
    assert submit["conn_id"] == "spark_default"
    assert boot.connection_record(submit) == {"conn_type": "spark", "host": "local[*]",
                                              "extra": json.dumps({"deploy-mode": "client"})}
    (pool,) = settings["pools"]
    assert boot.pool_command(pool, "airflow")[:5] == ["airflow", "pools", "set", "cdcflow_spark", "2"]
    (var,) = settings["variables"]
    assert boot.variable_command(var, "airflow")[:4] == ["airflow", "variables", "set", "cdcflow_home"]


def test_spark_connection_resolves_to_local_master(airflow, monkeypatch):
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    from cdcflow_devtools import airflow_bootstrap as boot

    conn = next(c for c in boot.load_settings(REPO / "airflow_settings.yaml")["connections"]
                if c["conn_id"] == "spark_default")
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", json.dumps(boot.connection_record(conn)))
    resolved = SparkSubmitHook(conn_id="spark_default")._resolve_connection()
    assert resolved["master"] == "local[*]"
    assert resolved["deploy_mode"] == "client"
    assert resolved["spark_binary"] == "spark-submit"


@pytest.mark.parametrize(
    "text, names",
    [
        ("airflow: []\n", "no `airflow:` mapping"),
        ("airflow:\n  pools:\n    - pool_name: p\n      pool_slot: two\n", "pool p: pool_slot"),
        ("airflow:\n  connections:\n    - conn_id: c\n      conn_host: h\n", "connection c: conn_type"),
        ("airflow: [unclosed\n", "not valid YAML"),
    ],
)
def test_bad_settings_are_named(tmp_path, text, names):
    from cdcflow.core.errors import ConfigError
    from cdcflow_devtools import airflow_bootstrap as boot

    path = tmp_path / "airflow_settings.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as e:
        boot.apply(boot.load_settings(path), cli="/nonexistent/airflow", dry_run=True)
    assert names in str(e.value)


def test_bootstrap_applies_settings_idempotently(airflow):
    airflow.migrate_db()
    env = {k: v for k, v in os.environ.items() if k != "AIRFLOW_CONN_SPARK_DEFAULT"}
    for _ in range(2):
        done = subprocess.run([sys.executable, "-m", "cdcflow_devtools.airflow_bootstrap",
                               str(REPO / "airflow_settings.yaml")],
                              env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    # what the two runs left in Airflow's DB, read by one process (the CLI's Fernet key decrypts
    # the connection's extra and the variable) rather than by three `airflow ... get` processes
    done = subprocess.run([sys.executable, "-c", READ_SETTINGS], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "connections": [["spark", "local[*]", {"deploy-mode": "client"}]],
        "pools": [["cdcflow_spark", 2]],
        "variables": ["~/.cdcflow"]}


READ_SETTINGS = """
import json
from airflow.models import Connection, Pool, Variable
from airflow.utils.session import create_session
from sqlalchemy import select

with create_session() as session:
    conns = session.scalars(select(Connection).where(Connection.conn_id == "spark_default")).all()
    pools = session.scalars(select(Pool).where(Pool.pool == "cdcflow_spark")).all()
    values = session.scalars(select(Variable).where(Variable.key == "cdcflow_home")).all()
    print(json.dumps({"connections": [[c.conn_type, c.host, c.extra_dejson] for c in conns],
                      "pools": [[p.pool, p.slots] for p in pools], "variables": [v.val for v in values]}))
"""


# -- the spark-submit entry point's exit codes


def _fake_stage(outcome):
    def run_stage(name, spark, cycle, task="cycle"):
        assert task == "own"  # a spark-submit job is the stage's own task
        assert spark.range(2).count() == 2  # the session it was given works
        assert spark.conf.get("spark.sql.shuffle.partitions") == "3"  # built with the changefeed's settings
        if isinstance(outcome, BaseException):
            raise outcome
        return {"stage": name, "changefeed": cycle.changefeed_id, "run_id": cycle.run_id, **outcome}

    return run_stage


@pytest.fixture
def stage_outcome(monkeypatch, feeds_home):
    import logging

    from cdcflow.launch import cycle_runner

    # py4j logs at INFO while the interpreter exits, after pytest closed the
    # stream Airflow's logging setup writes to
    logging.getLogger("py4j").setLevel(logging.WARNING)

    def use(outcome):
        monkeypatch.setenv("CDCFLOW_HOME", str(feeds_home))
        monkeypatch.setattr(cycle_runner, "run_stage", _fake_stage(outcome))

    return use


ARGS = ["--changefeed-id", "orders", "--run-id", "r7"]  # a changefeed of feeds_home


def test_job_entry_prints_the_result_as_one_json_line(stage_outcome, capsys):
    from cdcflow.launch import spark_submit

    stage_outcome({"events": 3})
    assert spark_submit.main(["filter", *ARGS]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert json.loads(out[-1]) == {"stage": "filter", "changefeed": "orders", "run_id": "r7", "events": 3}


def test_job_entry_maps_a_cdcflow_error_to_exit_2_and_one_line(stage_outcome, capsys):
    from cdcflow.launch import spark_submit

    stage_outcome(CdcflowError("DDL not allowed", changefeed="orders", ts=42, statement="ALTER TABLE t\n  ADD x int",
                               hint="add a filter rule"))
    assert spark_submit.main(["filter", *ARGS]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.strip() == "changefeed orders, commit ts 42: DDL not allowed [statement: ALTER TABLE t ADD x int] — add a filter rule"

    assert spark_submit.main(["filter", *ARGS, "--debug"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and err.strip().splitlines()[-1].startswith("changefeed orders, commit ts 42:")


def test_job_entry_maps_any_other_error_to_exit_1(stage_outcome, capsys):
    from cdcflow.launch import spark_submit

    stage_outcome(KeyError("checkpoint"))
    assert spark_submit.main(["apply", *ARGS]) == 1
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last == "changefeed orders: stage apply failed: KeyError: 'checkpoint'"
