"""A changefeed's runs as Airflow asset events: a DAG scheduled on one replicated table's Asset
is queued by the changefeed's run that changed the table, and not by a run that changed only
another table; the event says the checkpoint.  Real MariaDB servers, the changefeed DAG through
dag.test() (Spark stages on the session's Spark Connect server), Airflow's metadata DB."""

from __future__ import annotations

import datetime as dt
import textwrap

import pytest

try:
    from airflow_env import parsed_changefeed_dag, sync_dag_file
except ImportError:  # tests/ imported as a package
    from tests.airflow_env import parsed_changefeed_dag, sync_dag_file

from e2e_helpers import assert_consistent, schema_changefeed

from cdcflow.core import tso
from cdcflow.launch.cycle_tables import cycle_tables
from cdcflow.store import metastore

pytestmark = [pytest.mark.e2e, pytest.mark.airflow]

SCHEMA = "e2e_assets"
CONSUMER_ID = "orders_report"


def _sync_consumer(folder, uri: str) -> None:
    """A DAG scheduled on the orders table's Asset, as a user writes one, in Airflow's DB and unpaused."""
    path = folder / "orders_report.py"
    path.write_text(textwrap.dedent(f"""\
        import datetime as dt
        from airflow.providers.standard.operators.empty import EmptyOperator
        from airflow.sdk import DAG, Asset
        with DAG({CONSUMER_ID!r}, schedule=[Asset({uri!r})], start_date=dt.datetime(2026, 1, 1)):
            EmptyOperator(task_id="report")
        """))
    assert list(sync_dag_file(path)) == [CONSUMER_ID]


def _events(uri: str) -> list:
    from airflow.models.asset import AssetEvent, AssetModel
    from airflow.utils.session import create_session
    from sqlalchemy import select

    with create_session() as session:
        return [(e.source_dag_id, e.source_task_id, e.extra) for e in session.scalars(
            select(AssetEvent).join(AssetModel, AssetEvent.asset_id == AssetModel.id)
            .where(AssetModel.uri == uri).order_by(AssetEvent.id))]


def _consumer_due() -> bool:
    """Whether the scheduler would create a run of the consumer now (its asset condition is met)."""
    from airflow.models.dag import DagModel
    from airflow.utils.session import create_session

    with create_session() as session:
        _, triggered = DagModel.dags_needing_dagruns(session)
        return CONSUMER_ID in triggered


def _clear_queue() -> None:
    from airflow.models.asset import AssetDagRunQueue
    from airflow.utils.session import create_session
    from sqlalchemy import delete

    with create_session() as session:
        session.execute(delete(AssetDagRunQueue))


def _state(run, task_id: str | None = None) -> str:
    state = run.get_task_instance(task_id).state if task_id else run.state
    return str(state).rsplit(".", 1)[-1].lower()


def _succeeded(run, task_id: str | None = None) -> bool:
    return _state(run, task_id) == "success"


def test_a_run_emits_an_event_only_for_the_tables_it_changed_and_queues_their_consumers(
        mariadb_pair, airflow_home, capsys, tmp_path, monkeypatch):
    from cdcflow_airflow import index_trigger
    from cdcflow_airflow.assets import table_asset
    from cdcflow_airflow.lineage import cycle_datasets

    looks = []  # the index trigger's looks: none, when the sensor does not defer
    real_look = index_trigger.look_once

    def look(*args):
        looks.append(args)
        return real_look(*args)

    monkeypatch.setattr(index_trigger, "look_once", look)

    up, down = mariadb_pair
    schema_changefeed(capsys, up, down, "e2e-assets", SCHEMA,
                      f"CREATE DATABASE {SCHEMA}",
                      f"CREATE TABLE {SCHEMA}.orders (id INT PRIMARY KEY, total INT)",
                      f"CREATE TABLE {SCHEMA}.audit (id INT PRIMARY KEY, what VARCHAR(20))",
                      f"INSERT INTO {SCHEMA}.orders VALUES (1, 10), (2, 20)",
                      f"INSERT INTO {SCHEMA}.audit VALUES (1, 'created')")
    orders, audit = (table_asset(down.uri, SCHEMA, t).uri for t in ("orders", "audit"))
    assert orders == f"mysql://127.0.0.1:{down.port}/{SCHEMA}/orders"  # the MySQL provider's asset URI
    _sync_consumer(tmp_path, orders)
    assert not _consumer_due()

    dag = parsed_changefeed_dag("e2e-assets")
    run = dag.test()
    assert _succeeded(run), run.state
    assert_consistent(up, down, [SCHEMA])
    cycle = metastore.recent_runs("e2e-assets", limit=1)[0]
    feed = metastore.get_feed("e2e-assets")
    extra = {"changefeed": "e2e-assets", "cycle": cycle.run_id, "checkpoint_ts": feed.checkpoint_ts,
             "checkpoint_time": tso.to_text(feed.checkpoint_ts)}
    assert _events(orders) == [("changefeed__e2e-assets", "finish", extra)]
    assert _events(audit) == [("changefeed__e2e-assets", "finish", extra)]
    assert tso.to_datetime(feed.checkpoint_ts) <= dt.datetime.now(dt.timezone.utc)
    assert _consumer_due()  # the scheduler creates the consumer's run on its next loop
    # a MariaDB downstream has no index build to wait for: the pull task that ran apply skips
    # wait_index (Spark Connect's fast path), and the trigger never looks
    assert _state(run, "wait_index") == "skipped" and looks == []

    _clear_queue()  # as the scheduler does when it creates the consumer's run
    up.execute(f"INSERT INTO {SCHEMA}.audit VALUES (2, 'audited')",
               f"CREATE TABLE {SCHEMA}.later (id INT PRIMARY KEY)")  # a table the DAG never saw: DDL only
    run = dag.test()
    assert _succeeded(run), run.state
    assert down.query(f"SELECT what FROM {SCHEMA}.audit WHERE id = 2") == [("audited",)]
    second = metastore.recent_runs("e2e-assets", limit=1)[0]
    assert second.run_id != cycle.run_id
    assert len(_events(orders)) == 1  # no row of orders changed: no event, the consumer is not queued
    assert not _consumer_due()
    (*_, (_, _, last)) = _events(audit)
    assert len(_events(audit)) == 2 and last["cycle"] == second.run_id
    assert last["checkpoint_ts"] == metastore.get_feed("e2e-assets").checkpoint_ts > feed.checkpoint_ts
    later = table_asset(down.uri, SCHEMA, "later").uri
    assert [e for *_, e in _events(later)] == [last]
    # the lineage the finish task reports (lineage.py): the tables it changed, read upstream, written downstream
    inputs, outputs = cycle_datasets(cycle_tables("e2e-assets", second.run_id))
    assert inputs == [(f"mysql://127.0.0.1:{up.port}", f"{SCHEMA}.{t}") for t in ("audit", "later")]
    assert outputs == [(f"mysql://127.0.0.1:{down.port}", f"{SCHEMA}.{t}") for t in ("audit", "later")]
