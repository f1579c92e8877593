"""A changefeed on `[cdcflow] schedule = "@binlog"`: its DAG is scheduled on an asset of its
own, watched by the binlog trigger on the triggerer; Airflow's database gets the watcher's
trigger when the DAG is synced; a run with nothing new costs prepare, pull and finish; and a
schedule value cdcflow does not know is refused naming the changefeed and what to write."""

from __future__ import annotations

import pytest

try:
    from airflow_env import DAGS_FOLDER, parsed_changefeed_dag, sync_dag_file, use_airflow
except ImportError:  # tests/ imported as a package
    from tests.airflow_env import DAGS_FOLDER, parsed_changefeed_dag, sync_dag_file, use_airflow

from e2e_helpers import cli_run, create_changefeed

from cdcflow.changefeed.head_watch import HeadWatch
from cdcflow.config.spec_store import Spec, home, save_spec
from cdcflow.core.errors import CdcflowError
from cdcflow.core.home import Home
from cdcflow.store import metastore

pytestmark = [pytest.mark.e2e, pytest.mark.airflow]

SCHEMA = "dag_binlog"
CONFIG = f"[filter]\nrules = ['{SCHEMA}.*']\n[cdcflow]\nschedule = \"@binlog\"\n"
TRIGGER = "cdcflow_airflow.binlog_trigger.BinlogHeadTrigger"


@pytest.fixture
def airflow_db(tmp_path_factory, monkeypatch):
    env = use_airflow(tmp_path_factory.mktemp("airflow"))
    env.migrate_db()
    monkeypatch.setenv("CDCFLOW_HOME", str(tmp_path_factory.mktemp("cdcflow-home")))
    return env


def _watched_asset(dag):
    assert type(dag.timetable).__name__ == "AssetTriggeredTimetable", dag.timetable
    [asset] = list(dag.schedule)  # the DAG's own asset, nothing else
    return asset


def test_the_dag_is_scheduled_on_an_asset_its_binlog_trigger_watches(airflow_db):
    from airflow.serialization.serialized_objects import DagSerialization

    save_spec(Spec(id="orders", source_uri="mysql://u@127.0.0.1:3306", sink_uri="mysql://u@127.0.0.1:4000",
                   config_text='[cdcflow]\nschedule = "@binlog"\n'))
    dag = parsed_changefeed_dag("orders")
    assert dag.max_active_runs == 1 and dag.catchup is False  # one run at a time: events queue, runs never overlap
    asset = _watched_asset(dag)
    assert asset.name == "changefeed__orders__binlog" and asset.uri == "x-cdcflow://changefeed/orders/binlog"
    [watcher] = asset.watchers
    classpath, kwargs = watcher.trigger.serialize()
    assert watcher.name == asset.name and classpath == TRIGGER
    assert kwargs["changefeed_id"] == "orders" and kwargs["cdcflow_home"] == str(home())
    assert 0 < kwargs["poll_interval"] <= 1 and kwargs["max_backoff"] >= kwargs["poll_interval"]
    assert "`@binlog`: a run when the upstream's binlog moves" in dag.doc_md
    assert "changefeed__orders__binlog" in dag.doc_md
    # what the scheduler and the triggerer read: the serialized DAG keeps the watcher
    encoded = DagSerialization.to_dict(dag)["dag"]["timetable"]["__var"]
    assert TRIGGER in str(encoded) and "changefeed__orders__binlog" in str(encoded), encoded
    assert DagSerialization.from_dict(DagSerialization.to_dict(dag)).max_active_runs == 1


def test_syncing_the_dag_gives_the_triggerer_the_watcher(airflow_db):
    from airflow.models.asset import AssetModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    save_spec(Spec(id="synced", source_uri="mysql://u@127.0.0.1:3306", sink_uri="mysql://u@127.0.0.1:4000",
                   config_text='[cdcflow]\nschedule = "@binlog"\n'))
    assert list(sync_dag_file(DAGS_FOLDER)) == ["changefeed__synced"]
    with create_session() as session:
        asset = session.scalars(select(AssetModel).where(AssetModel.name == "changefeed__synced__binlog")).one()
        triggers = [(w.name, w.trigger.classpath, w.trigger.kwargs["changefeed_id"]) for w in asset.watchers]
    assert triggers == [("changefeed__synced__binlog", TRIGGER, "synced")]


@pytest.mark.parametrize("value,hint", [("@binlogs", "did you mean '@binlog'?"), ("@bin", "@binlog")])
def test_a_schedule_cdcflow_does_not_know_is_refused_naming_the_changefeed(airflow_db, value, hint):
    from cdcflow_airflow.dag_factory import changefeed_dag, changefeed_dags

    spec = Spec(id="typo", source_uri="mysql://u@127.0.0.1:3306", sink_uri="mysql://u@127.0.0.1:4000",
                config_text=f'[cdcflow]\nschedule = "{value}"\n')
    with pytest.raises(CdcflowError) as e:
        changefeed_dag(spec)
    message = str(e.value)
    for part in ("changefeed typo config", f"cdcflow.schedule = \"{value}\" is invalid", "@binlog", "@continuous",
                 hint):
        assert part in message, message
    assert list(changefeed_dags([spec])) == []  # left out, the other changefeeds' DAGs still built


def test_a_run_with_nothing_new_is_prepare_pull_and_finish(mariadb_pair, airflow_db, capsys):
    up, down = mariadb_pair
    up.execute(f"DROP DATABASE IF EXISTS {SCHEMA}", f"CREATE DATABASE {SCHEMA}",
               f"CREATE TABLE {SCHEMA}.t (id INT PRIMARY KEY)")
    down.execute(f"DROP DATABASE IF EXISTS {SCHEMA}", f"CREATE DATABASE {SCHEMA}",
                 f"CREATE TABLE {SCHEMA}.t (id INT PRIMARY KEY)")
    create_changefeed(capsys, up, down, "dag-binlog", CONFIG)
    up.execute(f"INSERT INTO {SCHEMA}.t VALUES (1)")
    watch = HeadWatch("dag-binlog", Home(str(home())))
    try:
        assert watch.news() is not None  # the trigger would queue a run
        assert cli_run(capsys, "dag-binlog")[0] == 0  # ... that a cycle elsewhere made needless
        before = metastore.get_feed("dag-binlog").checkpoint_pos
        run = parsed_changefeed_dag("dag-binlog").test(run_conf={"mode": "catch-up"})
        assert str(run.state) in ("success", "DagRunState.SUCCESS"), run.state
        states = {ti.task_id: getattr(ti.state, "value", ti.state) for ti in run.get_task_instances()}
        assert {t for t, s in states.items() if s == "success"} == {"prepare", "pull", "finish"}, states
        assert metastore.get_feed("dag-binlog").checkpoint_pos == before
        assert watch.news() is None  # caught up: the trigger stays quiet
    finally:
        watch.close()
    assert down.query(f"SELECT id FROM {SCHEMA}.t") == [(1,)]
