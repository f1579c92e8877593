"""What the plugin adds to Airflow's own REST API (airflow_api_guard), through Airflow's whole API
server app in this process (its routes, its simple auth manager, the plugin loaded from plugins/)
over Airflow's metadata DB holding the changefeed's DAG as the DAG processor writes it, and a
real changefeed on the shared MariaDB pair:

- the DAG is in Airflow unpaused from its first parse (a triggered run starts);
- Airflow's toggle (the UI's call) pauses and resumes the changefeed, for a user Airflow lets;
- a trigger (the form's call) is refused before a run exists: unknown keys, a ts of no known
  shape (Airflow's Params), a ts in the future (cdcflow's one check), in the page's words."""

from __future__ import annotations

import pytest

try:
    from airflow_env import DAGS_FOLDER
except ImportError:  # tests/ imported as a package
    from tests.airflow_env import DAGS_FOLDER

from e2e_helpers import create_changefeed

from cdcflow import cli
from cdcflow.core import tso
from cdcflow.store import metastore

pytestmark = [pytest.mark.e2e, pytest.mark.airflow]

CID = "guarded"
DAG = f"/api/v2/dags/changefeed__{CID}"


def _sync_dags_folder() -> None:
    """dags/ parsed and written to Airflow's DB as the DAG processor does."""
    from airflow.dag_processing.dagbag import DagBag, sync_bag_to_db
    from airflow.models.dagbundle import DagBundleModel
    from airflow.utils.session import create_session

    bag = DagBag(dag_folder=str(DAGS_FOLDER))
    assert not bag.import_errors, bag.import_errors
    with create_session() as session:
        session.merge(DagBundleModel(name="dags-folder"))
    sync_bag_to_db(bag, "dags-folder", None)


def _runs() -> int:
    from airflow.models.dagrun import DagRun
    from airflow.utils.session import create_session
    from sqlalchemy import func, select

    with create_session() as session:
        return session.scalar(select(func.count()).select_from(DagRun).where(DagRun.dag_id == f"changefeed__{CID}"))


def _spark_pool(slots: int | None) -> None:
    """The cdcflow_spark pool with `slots`, or none."""
    from airflow.models.pool import Pool
    from airflow.utils.session import create_session

    with create_session() as session:
        if slots is None:
            session.query(Pool).filter(Pool.pool == "cdcflow_spark").delete()
        else:
            Pool.create_or_update_pool("cdcflow_spark", slots, "cdcflow Spark work", False, session=session)


def test_toggle_is_the_changefeeds_pause_and_a_trigger_is_checked_first(mariadb_pair, cdcflow_home, airflow_auth,
                                                                         capsys):
    from airflow.api_fastapi.app import create_app
    from fastapi.testclient import TestClient

    up, down = mariadb_pair
    create_changefeed(capsys, up, down, CID, "[filter]\nrules = ['guarded.*']\n")
    _sync_dags_folder()
    api = TestClient(create_app())
    admin, viewer = airflow_auth["admin"], airflow_auth["viewer"]

    dag = api.get(DAG, headers=admin).json()
    assert dag["is_paused"] is False, dag  # is_paused_upon_creation=False: a trigger starts a run

    # a viewer may not toggle: Airflow refuses, and the changefeed stays as it is
    assert api.patch(DAG, headers=viewer, json={"is_paused": True}).status_code == 403
    assert metastore.get_feed(CID).state == "normal"
    # Airflow's toggle off: the changefeed is paused with it; on: resumed
    answer = api.patch(DAG, headers=admin, json={"is_paused": True})
    assert answer.status_code == 200 and answer.json()["is_paused"] is True
    assert metastore.get_feed(CID).state == "stopped"
    assert api.patch(DAG, headers=admin, json={"is_paused": False}).status_code == 200
    assert metastore.get_feed(CID).state == "normal"
    # the bulk toggle (by pattern) too
    assert api.patch("/api/v2/dags", headers=admin, params={"dag_id_pattern": f"changefeed__{CID}"},
                     json={"is_paused": True}).status_code == 200
    assert metastore.get_feed(CID).state == "stopped"
    # paused on the command line, then switched on in Airflow: one pause, so it is resumed
    assert api.patch(DAG, headers=admin, json={"is_paused": False}).status_code == 200
    assert cli.main(["changefeed", "pause", "-c", CID]) == 0
    assert api.patch(DAG, headers=admin, json={"is_paused": True}).status_code == 200  # already stopped: stays
    assert metastore.get_feed(CID).state == "stopped"
    assert api.patch(DAG, headers=admin, json={"is_paused": False}).status_code == 200
    assert metastore.get_feed(CID).state == "normal"

    # triggers refused before a run exists, in the page's and prepare's words
    future = str(tso.now() + (3600_000 << 18))
    refusals = [
        ({"start-ts": "now", "mode": "backfill"}, "unknown trigger parameter 'start-ts' (did you mean start_ts?)"),
        ({"mode": "backfill", "start_ts": future}, "is later than the current TSO"),
        ({"mode": "backfill"}, "mode backfill needs start_ts"),
    ]
    for conf, words in refusals:
        answer = api.post(f"{DAG}/dagRuns", headers=admin, json={"logical_date": None, "conf": conf})
        assert answer.status_code == 400 and words in answer.json()["detail"], (conf, answer.json())
        assert f"changefeed {CID}" in answer.json()["detail"]
    assert "a run takes only mode, start_ts, target_ts" in api.post(
        f"{DAG}/dagRuns", headers=admin, json={"logical_date": None, "conf": {"start-ts": "now"}}).json()["detail"]
    # a ts of no known shape: Airflow's own check of the Params' pattern, before a run too
    answer = api.post(f"{DAG}/dagRuns", headers=admin,
                      json={"logical_date": None, "conf": {"mode": "backfill", "start_ts": "yesterday-ish"}})
    assert answer.status_code == 400 and "yesterday-ish" in str(answer.json()["detail"]), answer.json()
    # someone Airflow does not let trigger learns nothing of the changefeed: Airflow's 403
    answer = api.post(f"{DAG}/dagRuns", headers=viewer, json={"logical_date": None, "conf": {"mode": "backfill"}})
    assert answer.status_code == 403 and "backfill" not in answer.text
    assert _runs() == 0

    # a good conf while Airflow has no pool for the Spark tasks: refused too (its scheduler would
    # never start them); with the pool made, the trigger is Airflow's, unchanged
    _spark_pool(None)
    answer = api.post(f"{DAG}/dagRuns", headers=admin, json={"logical_date": None, "conf": {"mode": "dry-run"}})
    assert answer.status_code == 400 and "Airflow has no pool cdcflow_spark" in answer.json()["detail"], answer.json()
    assert "make airflow-bootstrap" in answer.json()["detail"] and _runs() == 0
    _spark_pool(2)
    # a good trigger is Airflow's, unchanged: a queued run of the unpaused DAG
    answer = api.post(f"{DAG}/dagRuns", headers=admin, json={"logical_date": None, "conf": {"mode": "dry-run"}})
    assert answer.status_code == 200 and answer.json()["conf"] == {"mode": "dry-run"}, answer.json()
    assert _runs() == 1
