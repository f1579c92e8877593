"""The plugin's read-only API (TiCDC OpenAPI v2 shapes) through FastAPI's TestClient, over a
real metadata store written by the CLI against the shared MariaDB pair."""

from __future__ import annotations

import time

import pytest

try:
    from airflow_env import use_airflow
except ImportError:  # tests/ imported as a package
    from tests.airflow_env import use_airflow

from e2e_helpers import create_changefeed

from cdcflow.core import tso
from cdcflow.store import metastore


@pytest.fixture
def client(cdcflow_home, tmp_path_factory):
    from fastapi.testclient import TestClient

    use_airflow(tmp_path_factory.mktemp("airflow"))  # cdcflow_airflow imports airflow
    from cdcflow_airflow.http_api import create_app

    return TestClient(create_app())


def test_list_detail_status_and_page(mariadb_pair, client, capsys):
    up, down = mariadb_pair
    create_changefeed(capsys, up, down, "api-one", "")
    create_changefeed(capsys, up, down, "api-two", "")
    err = {"code": "CDCFLOW:ErrMySQLTxnError", "message": "changefeed api-two: cannot connect", "retryable": True,
           "time": time.time(), "addr": "host-a"}
    metastore.update_feed("api-two", state="warning", error=err, retry_count=2, next_retry_at=time.time() + 20)

    listed = client.get("/api/v2/changefeeds").json()
    assert listed["total"] == 2 and [x["id"] for x in listed["items"]] == ["api-one", "api-two"]
    one, two = listed["items"]
    assert {k: one[k] for k in ("upstream_id", "namespace", "state", "error")} == \
        {"upstream_id": 0, "namespace": "default", "state": "normal", "error": None}
    assert one["checkpoint_time"] == tso.to_text(one["checkpoint_tso"])
    assert one["cdcflow"]["checkpoint_lag_seconds"] == 0  # nothing committed upstream that it has not passed
    assert two["state"] == "warning" and two["error"]["code"] == "CDCFLOW:ErrMySQLTxnError"
    assert set(two["error"]) == {"time", "addr", "code", "message"} and two["error"]["addr"] == "host-a"
    assert two["cdcflow"]["retry_count"] == 2 and two["cdcflow"]["next_retry_time"].endswith("Z")
    assert [x["id"] for x in client.get("/api/v2/changefeeds", params={"state": "warning"}).json()["items"]] \
        == ["api-two"]

    detail = client.get("/api/v2/changefeeds/api-one").json()
    assert detail["id"] == "api-one" and detail["checkpoint_ts"] == one["checkpoint_tso"]
    assert "checkpoint_tso" not in detail and "cdcflow" not in detail["sink_uri"]  # password redacted
    for key in ("sink_uri", "config", "create_time", "start_ts", "target_ts", "resolved_ts", "state",
                "creator_version", "checkpoint_time"):
        assert key in detail, key

    # lag is how far the checkpoint is behind the upstream's commits, not behind the clock: a
    # changefeed caught up ten minutes ago on an idle upstream has none; one whose cycle saw
    # commits it could not pass has their distance
    ten_minutes_ago = tso.compose(int((time.time() - 600) * 1000), 0)
    metastore.update_feed("api-one", checkpoint_ts=ten_minutes_ago, resolved_ts=ten_minutes_ago)
    assert client.get("/api/v2/changefeeds").json()["items"][0]["cdcflow"]["checkpoint_lag_seconds"] == 0
    metastore.update_feed("api-one", resolved_ts=tso.compose(int((time.time() - 540) * 1000), 0))
    assert 59 <= client.get("/api/v2/changefeeds").json()["items"][0]["cdcflow"]["checkpoint_lag_seconds"] <= 61

    status = client.get("/api/v2/changefeeds/api-two/status").json()
    assert status["state"] == "warning" and status["last_warning"]["message"].endswith("cannot connect")
    assert status["last_error"] is None and status["checkpoint_ts"] == two["checkpoint_tso"]
    metastore.update_feed("api-two", state="failed")
    # lag is how far the checkpoint is behind the upstream's commits, not behind the clock: a
    # changefeed caught up ten minutes ago on an idle upstream has none; one whose cycle saw
    # commits it could not pass has their distance
    ten_minutes_ago = tso.compose(int((time.time() - 600) * 1000), 0)
    metastore.update_feed("api-one", checkpoint_ts=ten_minutes_ago, resolved_ts=ten_minutes_ago)
    assert client.get("/api/v2/changefeeds").json()["items"][0]["cdcflow"]["checkpoint_lag_seconds"] == 0
    metastore.update_feed("api-one", resolved_ts=tso.compose(int((time.time() - 540) * 1000), 0))
    assert 59 <= client.get("/api/v2/changefeeds").json()["items"][0]["cdcflow"]["checkpoint_lag_seconds"] <= 61

    status = client.get("/api/v2/changefeeds/api-two/status").json()
    assert status["last_error"]["code"] == "CDCFLOW:ErrMySQLTxnError" and status["last_warning"] is None

    missing = client.get("/api/v2/changefeeds/nope")
    assert missing.status_code == 404
    assert missing.json() == {"error_code": "CDCFLOW:ErrChangeFeedNotExists", "error_msg": "changefeed nope does not exist"}
    bogus = client.get("/api/v2/changefeeds", params={"state": "bogus"})
    assert bogus.status_code == 400 and bogus.json()["error_code"] == "CDCFLOW:ErrAPIInvalidParam"
    assert "'bogus' is not one of normal, stopped" in bogus.json()["error_msg"]
    assert client.get("/api/v2/changefeeds/nope/status").status_code == 404

    page = client.get("/ui")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert 'fetch("api/v2/changefeeds")' in page.text


def test_resolved_ts_is_the_last_cycles(mariadb_pair, client, capsys):
    from cdcflow.stages import run_cycle

    up, down = mariadb_pair
    create_changefeed(capsys, up, down, "api-resolved", "")
    created = client.get("/api/v2/changefeeds/api-resolved/status").json()
    time.sleep(0.01)
    run_cycle("api-resolved")  # nothing new upstream: no Spark, the window is read up to the head
    after = client.get("/api/v2/changefeeds/api-resolved/status").json()
    assert after["resolved_ts"] > created["resolved_ts"] and after["resolved_ts"] >= after["checkpoint_ts"]
    assert client.get("/api/v2/changefeeds/api-resolved").json()["resolved_ts"] == after["resolved_ts"]


def test_read_only(client):
    for method in ("post", "put", "delete"):
        assert getattr(client, method)("/api/v2/changefeeds/x").status_code == 405
