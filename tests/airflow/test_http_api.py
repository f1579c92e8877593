"""The plugin's read-only API (TiCDC OpenAPI v2 shapes) through FastAPI's TestClient (the `client`
fixture, tests/airflow/conftest.py), over a real metadata store written by the CLI against the shared
MariaDB pair."""

from __future__ import annotations

import time

from e2e_helpers import CountedReads, cli_run, create_changefeed, runs_ending_in_a_failure, schema_changefeed

from cdcflow.changefeed import upstream_id
from cdcflow.core import tso
from cdcflow.config.spec_store import load_spec, save_spec
from cdcflow.core.uri import parse_source_uri
from cdcflow.store import metastore, snapshots
from cdcflow_devtools.mariadb import free_port


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
        {"upstream_id": upstream_id.of_source(parse_source_uri(up.uri)), "namespace": "default", "state": "normal",
         "error": None}
    assert one["checkpoint_time"] == tso.to_text(one["checkpoint_tso"])
    assert one["cdcflow"]["checkpoint_lag_seconds"] == 0  # nothing committed upstream that it has not passed
    assert one["cdcflow"]["lag"]["status"] == "caught-up" and one["cdcflow"]["last_run_time"] is None
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

    status = client.get("/api/v2/changefeeds/api-two/status").json()
    assert status["state"] == "warning" and status["last_warning"]["message"].endswith("cannot connect")
    assert status["last_error"] is None and status["checkpoint_ts"] == two["checkpoint_tso"]
    metastore.update_feed("api-two", state="failed")
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
    assert 'const API = "api/v2/changefeeds"' in page.text


def test_snapshot_progress_in_the_list_and_the_detail(mariadb_pair, client, capsys):
    """The fields the page renders, as the copy records them: chunks done / total, rows, rows/s, state."""
    up, down = mariadb_pair
    create_changefeed(capsys, up, down, "api-snap", "")
    assert client.get("/api/v2/changefeeds/api-snap").json()["cdcflow"]["snapshot"] is None
    snapshots.begin("api-snap", {"file": "binlog.000003", "pos": 77},
                    [{"table": "s.t", "chunk": {"index": i}} for i in range(4)])
    snapshots.chunk_done("api-snap", "s.t", 0, 500, 0.5)
    (item,) = [x for x in client.get("/api/v2/changefeeds").json()["items"] if x["id"] == "api-snap"]
    copying = item["cdcflow"]["snapshot"]
    assert {k: copying[k] for k in ("status", "chunks_done", "chunks_total", "rows_copied", "finished")} == \
        {"status": "copying", "chunks_done": 1, "chunks_total": 4, "rows_copied": 500, "finished": None}
    assert copying["rows_per_second"] > 0 and copying["started"].endswith("Z")
    for i in range(1, 4):
        snapshots.chunk_done("api-snap", "s.t", i, 500, 0.5)
    snapshots.finish("api-snap")
    done = client.get("/api/v2/changefeeds/api-snap").json()["cdcflow"]["snapshot"]
    assert (done["status"], done["chunks_done"], done["rows_copied"]) == ("done", 4, 2000)
    assert done["finished"].endswith("Z") and done["position"] == {"file": "binlog.000003", "pos": 77}
    page = client.get("/ui").text  # the page renders these fields
    assert "function snapshotText" in page and 'field(dl, "Snapshot", snapshotText(own.snapshot))' in page


def test_resolved_ts_is_the_last_cycles(mariadb_pair, client, capsys):
    from cdcflow.launch.in_process import run_cycle

    up, down = mariadb_pair
    create_changefeed(capsys, up, down, "api-resolved", "")
    created = client.get("/api/v2/changefeeds/api-resolved/status").json()
    time.sleep(0.01)
    run_cycle("api-resolved")  # nothing new upstream: no Spark, the window is read up to the head
    after = client.get("/api/v2/changefeeds/api-resolved/status").json()
    assert after["resolved_ts"] > created["resolved_ts"] and after["resolved_ts"] >= after["checkpoint_ts"]
    assert client.get("/api/v2/changefeeds/api-resolved").json()["resolved_ts"] == after["resolved_ts"]


def test_every_route_needs_airflows_login_and_dag_access(mariadb_pair, client, airflow_auth, capsys):
    """Without Airflow's JWT nothing is answered; a viewer may read but not pause, resume or
    trigger (as Airflow's own DAG pages decide); a user may pause and resume through the
    same command the CLI runs."""
    up, down = mariadb_pair
    create_changefeed(capsys, up, down, "api-auth", "")
    anonymous = {"Authorization": ""}
    for path in ("/api/v2/changefeeds", "/api/v2/changefeeds/api-auth", "/api/v2/changefeeds/api-auth/status"):
        assert client.get(path, headers=anonymous).status_code == 401, path
        assert client.get(path, headers={"Authorization": "Bearer forged"}).status_code == 403, path
    for action in ("pause", "resume", "runs"):
        assert client.post(f"/api/v2/changefeeds/api-auth/{action}", headers=anonymous).status_code == 401
        assert client.post(f"/api/v2/changefeeds/api-auth/{action}", json={}).status_code == 403  # a viewer
    assert metastore.get_feed("api-auth").state == "normal"
    # the page itself sends a browser without the login to Airflow's login page
    page = client.get("/ui", headers=anonymous, follow_redirects=False)
    assert page.status_code == 307 and "/auth/" in page.headers["location"]
    assert page.headers["location"].endswith("next=http%3A%2F%2Ftestserver%2Fui")  # and back here

    user = airflow_auth["user"]
    paused = client.post("/api/v2/changefeeds/api-auth/pause", headers=user)
    assert paused.status_code == 200 and paused.json() == {"id": "api-auth", "state_before": "normal",
                                                           "state": "stopped"}
    assert metastore.get_feed("api-auth").state == "stopped"
    again = client.post("/api/v2/changefeeds/api-auth/pause", headers=user)  # the command's own refusal
    assert again.status_code == 400 and "api-auth" in again.json()["error_msg"]
    # refusals in the page's words (its buttons and fields), not the CLI's
    assert again.json()["error_msg"] == ("changefeed api-auth: a stopped changefeed cannot be paused — "
                                         "a stopped changefeed can take Resume")
    bad = client.post("/api/v2/changefeeds/api-auth/resume", headers=user, json={"overwrite_checkpoint_ts": "soon"})
    assert bad.status_code == 400 and "overwrite checkpoint ts: 'soon' is neither" in bad.json()["error_msg"]
    assert "'now' is the current one" in bad.json()["error_msg"] and "cdcflow " not in bad.json()["error_msg"]
    # what the page enables follows the state table
    actions = client.get("/api/v2/changefeeds/api-auth").json()["cdcflow"]["actions"]
    assert (actions["pause"], actions["resume"], actions["modes"]) == (False, True, ["verify", "snapshot"])
    assert actions["refusals"] == \
        {"pause": "a stopped changefeed cannot be paused — a stopped changefeed can take Resume"}
    # a dry run checks everything and resolves `now`, changing nothing: the page asks about that ts
    before = metastore.get_feed("api-auth")
    checked = client.post("/api/v2/changefeeds/api-auth/resume", headers=user,
                          json={"overwrite_checkpoint_ts": "now", "dry_run": True})
    assert checked.status_code == 200, checked.text
    checked = checked.json()
    assert (checked["dry_run"], checked["state_before"], checked["state"]) == (True, "stopped", "normal")
    assert abs(tso.physical_ms(checked["checkpoint_ts"]) / 1000 - time.time()) < 30
    assert checked["checkpoint_time"] == tso.to_text(checked["checkpoint_ts"])
    after = metastore.get_feed("api-auth")
    assert (after.state, after.checkpoint_ts, after.checkpoint_pos) == ("stopped", before.checkpoint_ts,
                                                                         before.checkpoint_pos)
    future = client.post("/api/v2/changefeeds/api-auth/resume", headers=user,
                         json={"overwrite_checkpoint_ts": "2999-01-01", "dry_run": True})
    assert future.status_code == 400 and "overwrite checkpoint ts " in future.json()["error_msg"]
    assert "--overwrite-checkpoint-ts" not in future.json()["error_msg"]
    resumed = client.post("/api/v2/changefeeds/api-auth/resume", headers=user,
                          json={"overwrite_checkpoint_ts": "now"})
    assert resumed.status_code == 200 and resumed.json()["state"] == "normal"
    feed = metastore.get_feed("api-auth")
    assert feed.state == "normal" and feed.checkpoint_ts == resumed.json()["checkpoint_ts"]
    # a run request the DAG would refuse is refused here, before any DAG run exists
    refused = client.post("/api/v2/changefeeds/api-auth/runs", headers=user, json={"mode": "backfill"})
    assert refused.status_code == 400 and "mode backfill needs start_ts" in refused.json()["error_msg"]
    assert client.post("/api/v2/changefeeds/nope/runs", headers=user, json={}).status_code == 404


def test_runs_with_modes_figures_error_remedy_and_lag_history(mariadb_pair, spark, client, capsys):
    """The detail the page shows: each run's mode, origin and figures, the last error with its
    remedy apart, and the lag at the end of each run (the plot's points)."""
    up, down = mariadb_pair
    runs_ending_in_a_failure(spark, up, down, capsys, "api-runs")

    detail = client.get("/api/v2/changefeeds/api-runs").json()
    own = detail["cdcflow"]
    assert own["dag_id"] == "changefeed__api-runs" and "***" in own["upstream"] and "***" in detail["sink_uri"]
    failed, caught_up, dry = own["last_runs"]
    assert [(r["mode"], r["origin"], r["status"]) for r in own["last_runs"]] == \
        [("catch-up", "cli", "failed"), ("catch-up", "cli", "done"), ("dry-run", "cli", "done")]
    assert dry["events_pulled"] == caught_up["events_pulled"] >= 5 and dry["rows_written"] == 0
    assert caught_up["rows_written"] == 3 and caught_up["ddl_applied"] == 2
    assert set(caught_up["stage_seconds"]) >= {"pull", "filter", "barrier", "apply"}
    assert caught_up["checkpoint_after"] > caught_up["checkpoint_before"] and caught_up["resolved_ts"]
    assert "t2" in failed["error"] and failed["checkpoint_after"] < failed["resolved_ts"]
    assert detail["state"] == "failed" and "skip-ddl" in own["error_remedy"]
    assert detail["error"]["message"].endswith(own["error_remedy"])  # the message keeps it, as the CLI prints it
    lags = own["lag_history"]
    # the lag at the end of each run, then the lag now (the failed DDL's change is still pending)
    assert [p["run_id"] for p in lags] == [dry["run_id"], caught_up["run_id"], failed["run_id"], None]
    assert lags[1]["lag_seconds"] == 0 and lags[2]["lag_seconds"] >= 0 and lags[2]["time"].endswith("Z")
    assert lags[3]["live"] and lags[3]["lag_seconds"] == own["checkpoint_lag_seconds"] > 0
    assert own["lag"]["status"] == "behind" and own["last_run_time"] == failed["started"]


def test_a_run_from_the_future_is_refused_with_the_words_of_every_surface(mariadb_pair, client, airflow_auth,
                                                                        capsys):
    up, down = mariadb_pair
    create_changefeed(capsys, up, down, "api-future", "")
    before = metastore.get_feed("api-future")
    user = airflow_auth["user"]
    for body in ({"mode": "backfill", "start_ts": "2999-01-01"}, {"mode": "dry-run", "start_ts": "2999-01-01"}):
        refused = client.post("/api/v2/changefeeds/api-future/runs", headers=user, json=body)
        assert refused.status_code == 400, refused.text
        message = refused.json()["error_msg"]
        assert "start_ts" in message and "(2999-01-01 00:00:00.000) is later than the current TSO" in message
    nonsense = client.post("/api/v2/changefeeds/api-future/runs", headers=user,
                           json={"mode": "backfill", "start_ts": "yesterday-ish"})
    assert nonsense.status_code == 400 and "start_ts" in nonsense.json()["error_msg"]
    misspelt = client.post("/api/v2/changefeeds/api-future/runs", headers=user, json={"mode": "backfill",
                                                                                     "start-ts": "now"})
    assert misspelt.status_code == 400 and "unknown trigger parameter 'start-ts' (did you mean start_ts?)" in \
        misspelt.json()["error_msg"] and "a run takes only mode, start_ts, target_ts" in misspelt.json()["error_msg"]
    # the oldest start ts a backfill can take, on the page's detail: the start of the oldest binlog
    oldest = client.get("/api/v2/changefeeds/api-future").json()["cdcflow"]["oldest_start_ts"]
    assert oldest["binlog"] == up.query("SHOW BINARY LOGS")[0][0] and 0 < oldest["ts"] <= tso.now(), oldest
    client.post("/api/v2/changefeeds/api-future/pause", headers=user)
    future = client.post("/api/v2/changefeeds/api-future/resume", headers=user,
                         json={"overwrite_checkpoint_ts": "2999-01-01"})
    assert future.status_code == 400 and "is later than the current TSO" in future.json()["error_msg"]
    after = metastore.get_feed("api-future")
    assert (after.checkpoint_ts, after.resolved_ts, after.checkpoint_pos) == \
        (before.checkpoint_ts, before.resolved_ts, before.checkpoint_pos)


def test_the_lag_is_computed_when_asked(mariadb_pair, spark, client, capsys):
    """No cycle runs (a DAG paused, a scheduler down): the lag grows with the upstream's writes;
    a cycle that caught up makes it 0; an upstream that cannot be reached is said so, not 0."""
    up, down = mariadb_pair
    schema_changefeed(capsys, up, down, "api-lag", "api_lag")

    def listed() -> dict:
        return next(x["cdcflow"] for x in client.get("/api/v2/changefeeds").json()["items"] if x["id"] == "api-lag")

    assert (listed()["lag"]["status"], listed()["checkpoint_lag_seconds"]) == ("caught-up", 0)
    up.execute("CREATE DATABASE api_lag", "CREATE TABLE api_lag.t (id INT PRIMARY KEY)",
               "INSERT INTO api_lag.t VALUES (1)")
    time.sleep(2)
    first = client.get("/api/v2/changefeeds/api-lag").json()["cdcflow"]
    assert first["lag"]["status"] == "behind" and first["checkpoint_lag_seconds"] >= 1.0, first["lag"]
    live = first["lag_history"][-1]
    assert live["live"] and live["lag_seconds"] == first["checkpoint_lag_seconds"]
    time.sleep(1.5)
    second = listed()
    assert second["checkpoint_lag_seconds"] >= first["checkpoint_lag_seconds"] + 1.4
    assert second["lag"]["pending_ts"] == first["lag"]["pending_ts"]

    rc, err = cli_run(capsys, "api-lag")
    assert rc == 0, err
    caught_up = listed()
    assert (caught_up["lag"]["status"], caught_up["checkpoint_lag_seconds"]) == ("caught-up", 0)
    assert caught_up["last_run_time"].endswith("Z")

    # the upstream down (a port nothing listens on: the shared servers keep running)
    spec = load_spec("api-lag")
    spec.source_uri = spec.source_uri.replace(f":{up.port}", f":{free_port()}")
    save_spec(spec)
    down_lag = listed()
    assert down_lag["checkpoint_lag_seconds"] is None and down_lag["lag"]["status"] == "unknown"
    assert "cannot be read" in down_lag["lag"]["note"]
    assert client.get("/api/v2/changefeeds/api-lag").json()["cdcflow"]["lag_history"][-1].get("live") is None


def test_the_list_of_many_changefeeds_on_one_upstream_reads_its_head_once(mariadb_pair, client, capsys,
                                                                          monkeypatch):
    """The list page's lag of 20 changefeeds on one upstream: one head read per request, and the
    binlog reads of the changefeeds behind it at once (live_lag.live_lags), not one after another."""
    up, down = mariadb_pair
    for s in (up, down):
        s.execute("DROP DATABASE IF EXISTS api_many")
    ids = [f"api-many-{i:02d}" for i in range(20)]
    for changefeed_id in ids:
        create_changefeed(capsys, up, down, changefeed_id, "[filter]\nrules = ['api_many.*']\n")
    reads = CountedReads(monkeypatch)
    listed = client.get("/api/v2/changefeeds").json()
    assert [x["id"] for x in listed["items"]] == ids
    assert {x["cdcflow"]["lag"]["status"] for x in listed["items"]} == {"caught-up"}
    assert (reads.heads, reads.reads) == (1, 0)

    up.execute("CREATE DATABASE api_many", "CREATE TABLE api_many.t (id INT PRIMARY KEY)")
    reads.heads = 0
    listed = client.get("/api/v2/changefeeds").json()
    assert {x["cdcflow"]["lag"]["status"] for x in listed["items"]} == {"behind"}
    assert all(x["cdcflow"]["checkpoint_lag_seconds"] >= 0 for x in listed["items"])
    assert reads.heads == 1 and reads.reads == 20 and reads.most >= 2, vars(reads)
