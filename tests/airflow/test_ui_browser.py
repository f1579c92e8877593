"""The changefeeds page in a real headless Chromium (Debian's `chromium`, driven by Playwright:
found by role and label, clicked as a person clicks) against a real
`airflow standalone` (scheduler, DAG processor, triggerer and API server) that this test
starts on 127.0.0.1 with low parallelism and the simple auth manager's users and passwords.
The browser logs in as the simple auth manager's login page does (a JWT from
`POST /auth/token` in the `_token` cookie); the page's JavaScript calls the plugin's API,
so what is read from the DOM went through Airflow's API server, its login and the browser."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import expect, sync_playwright

try:
    from airflow_env import DAGS_FOLDER, PLUGINS_FOLDER, connect_connection
except ImportError:  # tests/ imported as a package
    from tests.airflow_env import DAGS_FOLDER, PLUGINS_FOLDER, connect_connection

from e2e_helpers import create_changefeed, query, runs_ending_in_a_failure

from cdcflow import cli
from cdcflow.changefeed import feed_state
from cdcflow.core import tso
from cdcflow.core.errors import CdcflowError
from cdcflow_devtools.airflow_bootstrap import load_settings
from cdcflow_devtools.airflow_local import SCHEDULER_SETTINGS
from cdcflow_devtools.checkout import PROJECT
from cdcflow_devtools.mariadb import free_port
from cdcflow.store import metastore, snapshots, verify_results

pytestmark = [pytest.mark.e2e, pytest.mark.airflow]

START_TIMEOUT = 300  # a first start migrates a fresh metadata DB; under a loaded CI machine that took over 150 s once
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"  # Debian's, not a Playwright download
SETTINGS = PROJECT / "airflow_settings.yaml"  # the pool and connections make airflow applies
PASSWORDS = {"admin": "admin-pw", "viewer": "viewer-pw"}  # the simple auth manager's users, by role name


def standalone_env(airflow_home: Path, cdcflow_home: Path, port: int, passwords: Path,
                   spark_connect_url: str) -> dict[str, str]:
    venv_bin = str(Path(sys.executable).parent)
    return {
        **os.environ,
        # the Spark stages of triggered runs on the session's Spark Connect server
        "AIRFLOW_CONN_SPARK_CONNECT_DEFAULT": connect_connection(spark_connect_url),
        # no scheduled runs: the page's runs are the ones this test triggers (the DAGs are unpaused
        # from their first parse, and their schedules would add runs at moments of their own)
        "AIRFLOW__SCHEDULER__USE_JOB_SCHEDULE": "False",
        "AIRFLOW_HOME": str(airflow_home),
        "CDCFLOW_HOME": str(cdcflow_home),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS_FOLDER),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(PLUGINS_FOLDER),
        "AIRFLOW__CORE__PARALLELISM": "2",
        "AIRFLOW__API__HOST": "127.0.0.1",
        "AIRFLOW__API__PORT": str(port),
        # the tasks' Execution API on this API server (the default is port 8080)
        "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{port}/execution/",
        "AIRFLOW__API__WORKERS": "1",
        # the log servers of the scheduler and triggerer: free ports, not the fixed defaults
        "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port()),
        "AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT": str(free_port()),
        # a login as in production: users with roles, passwords from a file
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": ",".join(f"{u}:{u}" for u in PASSWORDS),
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(passwords),
        # a changefeed created during the test gets its DAG within seconds
        "AIRFLOW__DAG_PROCESSOR__MIN_FILE_PROCESS_INTERVAL": "5",
        "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
        "PATH": venv_bin + os.pathsep + os.environ.get("PATH", ""),
        # the scheduler loops as make airflow's does: each hop between two tasks of the test's runs
        # waited up to the default idle second for a loop that had found nothing to do
        **SCHEDULER_SETTINGS,
    }


@pytest.fixture
def standalone(tmp_path, cdcflow_home, spark_connect):
    port = free_port()
    log = (tmp_path / "standalone.log").open("w")
    passwords = tmp_path / "passwords.json"
    passwords.write_text(json.dumps(PASSWORDS))
    proc = subprocess.Popen([str(Path(sys.executable).parent / "airflow"), "standalone"],
                            env=standalone_env(tmp_path / "airflow-home", cdcflow_home, port, passwords, spark_connect.url),
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + START_TIMEOUT
        while True:
            assert proc.poll() is None, (tmp_path / "standalone.log").read_text()[-3000:]
            if request(base + "/cdcflow/api/v2/changefeeds")[0] == 401:  # served, and asks for the login
                break
            assert time.time() < deadline, ("airflow standalone did not serve the plugin in time; its log ends:\n"
                                            + (tmp_path / "standalone.log").read_text()[-3000:])
            time.sleep(0.5)
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the process group this fixture started
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        log.close()


def request(url: str, token: str | None = None, method: str = "GET", body: dict | None = None):
    """(status, JSON body or text) of one HTTP call; a connection refused is status 0."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            status, text = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        status, text = e.code, e.read().decode()
    except OSError:
        return 0, None
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


def login(base: str, user: str) -> str:
    """A JWT as the simple auth manager's login page gets one."""
    status, body = request(base + "/auth/token", method="POST",
                           body={"username": user, "password": PASSWORDS[user]})
    assert status == 201, body
    return body["access_token"]


def wait_for_dag(base: str, token: str, dag_id: str) -> dict:
    deadline = time.time() + START_TIMEOUT
    while True:
        status, dag = request(f"{base}/api/v2/dags/{dag_id}", token)
        if status == 200:
            return dag
        assert time.time() < deadline, f"the DAG processor never parsed {dag_id}: {status} {dag}"
        time.sleep(0.5)


def wait_run(base: str, token: str, dag_id: str, run_id: str) -> str:
    """The state a DAG run ends in."""
    deadline = time.time() + START_TIMEOUT
    while (run := request(f"{base}/api/v2/dags/{dag_id}/dagRuns/{run_id}", token))[0] != 200 or \
            run[1]["state"] not in ("success", "failed"):
        assert time.time() < deadline, f"{dag_id} run {run_id} did not end in time: {run}"
        time.sleep(0.5)
    return run[1]["state"]


def trigger_form(page, dag_page: str, mode: str, start_ts: str | None = None):
    """Airflow's trigger form on the DAG's page, filled as a person fills it and sent; its dialog.
    (A trigger takes the browser to the run's page, where the button is a menu.)"""
    page.goto(dag_page)
    page.get_by_role("button", name="Trigger Dag").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_role("combobox").first.click()  # the Mode Param: an enum, a select
    page.get_by_role("option", name=mode, exact=True).click()
    if start_ts is not None:
        dialog.locator("#element_start_ts").fill(start_ts)
    dialog.get_by_role("button", name="Trigger", exact=True).click()
    return dialog


@contextmanager
def rows_flowing(server, table: str, first: int):
    """A thread inserting rows into `table` (id, v), ids from `first`, until the block ends;
    yields how many it wrote so far."""
    stop, count = threading.Event(), [0]

    def write() -> None:
        conn = server.connect()
        try:
            with conn.cursor() as cur:
                while not stop.is_set():
                    cur.execute(f"INSERT INTO {table} VALUES (%s, 'flowing')", (first + count[0],))
                    conn.commit()
                    count[0] += 1
                    stop.wait(0.2)
        finally:
            conn.close()

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        yield lambda: count[0]
    finally:
        stop.set()
        writer.join(timeout=30)


@contextmanager
def chromium_page():
    """A page of Debian's headless Chromium driven by Playwright (no browser download): clicks
    are a person's, on what is visible, enabled and not covered."""
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1800})
            page.set_default_timeout(60_000)
            # expect() keeps its own 5 s default: a resume that looks up the binlog position of its
            # ts took longer than that on a loaded machine, and the page was right, only slow
            expect.set_options(timeout=60_000)
            yield page
        finally:
            browser.close()


# Notes as long as a changefeed's can be: the lag's when the upstream cannot be read (one unwrapped
# line made the list 1,919 px wide in a 1,440 px window), and an error naming a long URI
LONG_NOTE = ("the upstream mysql://repl:***@db-primary-0.mysql-upstream.eu-west-1.internal.example.com:3306/ "
             "cannot be read: OperationalError: (2003, \"Can't connect to MySQL server on 'db-primary-0.mysql-"
             "upstream.eu-west-1.internal.example.com' ([Errno 111] Connection refused)\")")
LONG_ERROR = ("cannot connect to the downstream mysql://writer:***@tidb-downstream-gateway.analytics.eu-west-1.internal."
              "example.com:4000/?ssl-ca=/etc/cdcflow/certificates/downstream-ca-bundle-2026.pem&read-timeout=30s "
              + "after 5 attempts over 120 s; " * 4)
WIDTH = 1280  # the window the list must fit, every column in it


def with_long_notes(route) -> None:
    """The changefeeds list as the API answers it, with ui-normal's lag note and ui-warning's
    error as long as they come."""
    response = route.fetch()
    body = response.json()
    for item in body["items"]:
        if item["id"] == "ui-normal":
            item["cdcflow"]["lag"] = {"status": "unknown", "seconds": None, "note": LONG_NOTE}
        if item["id"] == "ui-warning":
            item["error"]["message"] = LONG_ERROR
    route.fulfill(response=response, body=json.dumps(body))


def is_the_list(url: str) -> bool:
    return url.split("?")[0].endswith("/cdcflow/api/v2/changefeeds")


def assert_fits(root) -> None:
    """The page of `root` (its <html>, in the window or in Airflow's frame) scrolls not sideways,
    and every column of the changefeeds list is inside its width."""
    seen = root.evaluate("""html => ({
        width: html.clientWidth, scroll: html.scrollWidth,
        columns: [...html.ownerDocument.querySelectorAll('#changefeeds th')].map(
            th => [th.textContent, Math.round(th.getBoundingClientRect().left), Math.round(th.getBoundingClientRect().right)])})""")
    assert len(seen["columns"]) == 8 and seen["scroll"] <= seen["width"], seen
    assert all(0 <= left and right <= seen["width"] for _, left, right in seen["columns"]), seen


def framing_background(page) -> str:
    """The background Airflow paints around its plugin's frame (the nearest ancestor with one)."""
    return page.locator("iframe").evaluate("""f => {
        let e = f.parentElement;
        while (e && getComputedStyle(e).backgroundColor === 'rgba(0, 0, 0, 0)') e = e.parentElement;
        return getComputedStyle(e || document.documentElement).backgroundColor; }""")


def test_changefeeds_page_in_chromium(mariadb_pair, cdcflow_home, standalone, spark, capsys, tmp_path):
    shots = Path(os.environ.get("CDCFLOW_PAGE_SCREENSHOTS") or tmp_path)  # where the screenshots go

    def shot(name: str) -> Path:
        return shots / f"page-{name}.png"

    up, down = mariadb_pair
    create_changefeed(capsys, up, down, "ui-normal", "")
    create_changefeed(capsys, up, down, "ui-paused", "")
    create_changefeed(capsys, up, down, "ui-warning", "")
    assert cli.main(["changefeed", "pause", "-c", "ui-paused"]) == 0
    feed_state.record_error("ui-warning", CdcflowError("cannot connect to the downstream", changefeed="ui-warning",
                                                       code="CDCFLOW:ErrDownstreamUnreachable", retryable=True),
                            stuck_limit=1800)
    behind = metastore.get_feed("ui-normal").checkpoint_ts - (3 * 3600 * 1000 << 18)  # three hours behind
    metastore.update_feed("ui-normal", checkpoint_ts=behind)
    runs_ending_in_a_failure(spark, up, down, capsys, "ui-runs")
    # a changefeed without a schedule whose one Airflow run fails in prepare (below): a cycle of
    # this live process holds its lease
    create_changefeed(capsys, up, down, "ui-failed", '[cdcflow]\nschedule = "none"\n')
    assert metastore.acquire_lease("ui-failed", metastore.lease_owner_for("held-by-the-test"), "held-by-the-test")
    # a changefeed of its own schema, whose runs are triggered from the page and from Airflow's form
    for s in (up, down):
        s.execute("DROP DATABASE IF EXISTS ui_walk", "CREATE DATABASE ui_walk",
                  "CREATE TABLE ui_walk.t (id INT PRIMARY KEY, v VARCHAR(20))")
    create_changefeed(capsys, up, down, "ui-walk", "[filter]\nrules = ['ui_walk.*']\n")
    up.execute("INSERT INTO ui_walk.t VALUES (1, 'one'), (2, 'two')")
    cli.main(["changefeed", "verify", "-c", "ui-runs", "--wait", "0"])
    verified = query(capsys, "ui-runs")["cdcflow"]["last_verify"]
    # snapshot progress as the copy records it: one copy under way, one done
    chunks = [{"table": "s.t", "chunk": {"index": i}} for i in range(3)]
    for changefeed_id, done in (("ui-paused", 1), ("ui-runs", 3)):
        snapshots.begin(changefeed_id, {"file": "binlog.000007", "pos": 1234}, chunks)
        for i in range(done):
            snapshots.chunk_done(changefeed_id, "s.t", i, 250, 0.5)
    snapshots.finish("ui-runs")

    # the plugin's API and page answer nobody without Airflow's login; a viewer reads, but
    # may not pause, resume or trigger
    api = standalone + "/cdcflow/api/v2/changefeeds"
    assert request(api)[0] == 401 and request(api + "/ui-runs")[0] == 401
    assert request(api + "/ui-runs", token="forged")[0] == 403
    assert request(api + "/ui-paused/resume", method="POST", body={})[0] == 401
    viewer, admin = login(standalone, "viewer"), login(standalone, "admin")
    status, listed = request(api, viewer)
    assert status == 200 and listed["total"] == 6
    assert request(api + "/ui-paused/resume", viewer, "POST", {})[0] == 403
    assert request(api + "/ui-normal/runs", viewer, "POST", {"mode": "dry-run"})[0] == 403
    assert metastore.get_feed("ui-paused").state == "stopped"
    with urllib.request.urlopen(standalone + "/cdcflow/ui", timeout=30) as r:  # to the login page and back
        assert "/auth/login" in r.url and "cdcflow%2Fui" in r.url, r.url

    # triggers through Airflow's own API, as its trigger form sends them: the DAG is unpaused from
    # its first parse, and a conf the run would refuse is refused before a run exists
    dags = standalone + "/api/v2/dags/changefeed__ui-failed"
    assert wait_for_dag(standalone, admin, "changefeed__ui-failed")["is_paused"] is False
    # a trigger while Airflow lacks the pool of the Spark tasks: refused before a run exists (the
    # scheduler would hold its pull forever), then the pool made as make airflow-bootstrap makes it
    status, refused = request(dags + "/dagRuns", admin, "POST", {"logical_date": None, "conf": {"mode": "catch-up"}})
    assert status == 400 and "Airflow has no pool cdcflow_spark" in str(refused["detail"]), refused
    assert "make airflow-bootstrap" in str(refused["detail"]), refused
    for pool in load_settings(SETTINGS)["pools"]:
        assert request(standalone + "/api/v2/pools", admin, "POST",
                       {"name": pool["pool_name"], "slots": pool["pool_slot"]})[0] == 201
    for conf, words in (({"mode": "backfill", "start_ts": "yesterday-ish"}, "yesterday-ish"),
                        ({"mode": "backfill", "start_ts": "2999-01-01"}, "is later than the current TSO"),
                        ({"mode": "catch-up", "start-ts": "now"}, "a run takes only mode, start_ts, target_ts")):
        status, refused = request(dags + "/dagRuns", admin, "POST", {"logical_date": None, "conf": conf})
        assert status == 400 and words in str(refused["detail"]), (conf, refused)
    assert request(dags + "/dagRuns", admin)[1]["total_entries"] == 0
    # a catch-up passes; its prepare finds the lease held and fails, alone (no cycle opened)
    status, failed_run = request(dags + "/dagRuns", admin, "POST", {"logical_date": None, "conf": {"mode": "catch-up"}})
    assert status == 200, failed_run
    assert wait_run(standalone, admin, "changefeed__ui-failed", failed_run["dag_run_id"]) == "failed"
    states = {t["task_id"]: t["state"] for t in request(
        f"{dags}/dagRuns/{failed_run['dag_run_id']}/taskInstances", admin)[1]["task_instances"]}
    assert states["prepare"] == "failed" and states["finish"] == "upstream_failed", states  # one failure

    with chromium_page() as page:
        page.context.add_cookies([{"name": "_token", "value": admin, "url": standalone}])  # as the login page
        page.goto(standalone + "/cdcflow/ui#ui-runs")
        expect(page.locator("#summary")).to_have_text("6 changefeeds")
        expect(page.locator("#runs tbody tr")).to_have_count(3)
        rows = {row.get_attribute("data-id"): row.locator("td").all_inner_texts()
                for row in page.locator("#changefeeds tr[data-id]").all()}
        assert sorted(rows) == ["ui-failed", "ui-normal", "ui-paused", "ui-runs", "ui-walk", "ui-warning"]
        ident, state, when, tso_text, lag, next_retry, error, links = rows["ui-normal"]
        # the DAGs start unpaused: no "DAG paused" note, the changefeed's state is the one pause
        assert (ident, state, error, next_retry) == ("ui-normal", "normal", "", "")
        # one time format, with its zone
        assert int(tso_text) == behind and when == tso.to_text(behind)[:19] + " UTC"
        # the lag now, not at the last run: ui-normal never ran, and the changefeeds created after it
        # wrote tables it replicates, so it is behind by about as long as they took
        shown, last_run = lag.split("\n")
        assert last_run == "last run never" and shown.endswith((" s", " min")), lag
        # (now - the first of those changes: live_lag), not its checkpoint's three hours; how long
        # they took is the machine's pace, so the lag is checked against that change's own time
        live = request(api + "/ui-normal", admin)[1]["cdcflow"]["lag"]
        since = time.time() - tso.physical_ms(live["pending_ts"]) / 1000
        assert live["status"] == "behind" and live["pending_ts"] > behind and live["seconds"] < 3600, live
        assert since - 5 <= live["seconds"] <= since + 0.5, (live, since)
        assert rows["ui-runs"][4].split("\n")[1].startswith("last run ") and rows["ui-runs"][4].endswith(" ago")
        assert links == "DAG · runs"
        hrefs = page.locator("#changefeeds a[target=_top]").evaluate_all("as => as.map(a => a.href)")
        assert [h for h in hrefs if "changefeed__ui-normal" in h] == \
            [standalone + "/dags/changefeed__ui-normal", standalone + "/dags/changefeed__ui-normal/runs"]
        assert rows["ui-paused"][1] == "stopped\ncopying 1/3 chunks"
        failed_feed = metastore.get_feed("ui-failed")  # the failed prepare recorded its error: as the page shows
        assert rows["ui-failed"][1] == failed_feed.state and (rows["ui-failed"][6] == "") == (failed_feed.error is None)

        warning = rows["ui-warning"]
        assert warning[1] == "warning" and warning[5].endswith(" UTC")
        assert warning[6].startswith("CDCFLOW:ErrDownstreamUnreachable: changefeed ui-warning: cannot connect")

        # the list fits a 1,280 px window with every column in it whatever the notes say: a long lag
        # note and a long error wrap (the note was one line, and the last columns fell off the screen)
        page.set_viewport_size({"width": WIDTH, "height": 1800})
        page.route(is_the_list, with_long_notes)
        page.reload()
        expect(page.locator('#changefeeds tr[data-id="ui-normal"] td.lag .note')).to_have_text(LONG_NOTE)
        expect(page.locator('#changefeeds tr[data-id="ui-warning"] td.error')).to_contain_text(LONG_ERROR.strip())
        expect(page.locator("#runs tbody tr")).to_have_count(3)
        assert_fits(page.locator("html"))
        page.screenshot(path=shot("list-1280"), full_page=True)
        page.unroute(is_the_list)
        page.set_viewport_size({"width": 1400, "height": 1800})
        page.reload()
        expect(page.locator("#runs tbody tr")).to_have_count(3)

        # the detail of a changefeed with runs and an error
        fields = {dd.get_attribute("data-field"): dd.inner_text() for dd in page.locator("#detail-fields dd").all()}
        assert fields["Last verify"].startswith(f"{verified['status']} at ") and "row(s) compared" in \
            fields["Last verify"]
        snap = fields["Snapshot"]
        assert snap.startswith("done: 3/3 chunks, 750 rows, ") and " rows/s, started " in snap, snap
        assert ", finished " in snap and snap.endswith(" UTC (from binlog binlog.000007:1234)"), snap
        assert fields["State"] == "failed" and "***" in fields["Source"] and "***" in fields["Sink"]
        assert down.uri.split("@")[0].split(":")[-1] not in fields["Sink"]  # the password is not shown
        assert fields["Filter rules"] == "ui_runs.*" and fields["Checkpoint"].endswith(")")
        remedy = page.locator("#detail-error .remedy").inner_text()
        assert remedy.startswith("Remedy: ") and "skip-ddl -c ui-runs" in remedy
        assert "t2" in page.locator("#detail-error .error").inner_text()
        runs = [row.locator("td").all_inner_texts() for row in page.locator("#runs tbody tr").all()]
        assert [r[1:4] for r in runs] == [["catch-up", "CLI", "failed"], ["catch-up", "CLI", "done"],
                                          ["dry-run", "CLI", "done"]]
        failed, done, dry = runs
        assert all(r[0].endswith(" UTC") for r in runs)
        assert (done[5], done[6]) == ("3", "2") and int(done[4]) >= 5 and (dry[5], dry[6]) == ("0", "0")
        assert "pull" in done[8] and "apply" in done[8] and "t2" in failed[10]
        page.screenshot(path=shot("runs"), full_page=True)
        # the lag plot: one point per finished run, then the lag now (the failed DDL still pending)
        lags = page.locator("#lag-svg circle").evaluate_all("cs => cs.map(c => [+c.dataset.lag, !!c.dataset.live])")
        assert [live for _, live in lags] == [False, False, False, True]
        assert lags[1][0] == 0 and lags[2][0] >= 0 and lags[3][0] > 0
        # drawn as steps between the samples: each lag holds until the next run's, no slope between
        corners = [tuple(map(float, c.split(","))) for c in
                   page.locator("#lag-svg polyline").get_attribute("points").split()]
        assert len(corners) == 2 * len(lags) - 1
        assert all(a[1] == b[1] if i % 2 == 0 else a[0] == b[0]
                   for i, (a, b) in enumerate(zip(corners, corners[1:]))), corners
        assert fields["Lag"].startswith(page.locator("#lag-svg circle[data-live] title").text_content().split(": ")[1]
                                        .removesuffix(" (now)"))

        # a run that failed in Airflow before it opened a cycle: its error line and its task's log
        page.get_by_role("link", name="ui-failed", exact=True).click()
        expect(page.locator("#detail-title")).to_have_text("Changefeed ui-failed")
        failed_id = failed_run["dag_run_id"]
        failed_row = page.locator(f'#runs tbody tr[data-dag-run="{failed_id}"]')
        expect(failed_row).to_have_count(1)
        cells = failed_row.locator("td").all_inner_texts()
        assert cells[1:4] == ["catch-up", "Airflow run", "failed"], cells
        assert "another cycle holds the lease" in cells[10], cells[10]
        expect(page.locator("#oldest-start")).to_contain_text(" binlog ")  # what a backfill can start from
        log_link = failed_row.get_by_role("link", name="log of prepare", exact=True)
        assert log_link.get_attribute("target") == "_top"
        assert log_link.get_attribute("href").startswith(
            f"../dags/changefeed__ui-failed/runs/{failed_id}/tasks/prepare")
        page.screenshot(path=shot("failed-run"), full_page=True)

        # a refresh of ui-failed's detail still under way when ui-paused is chosen: its late answer
        # is dropped, or the page would show ui-failed while its buttons act on ui-paused.  The
        # detail's load alone: a whole refresh also redraws the list, whose rows could move under
        # the click (a fresh-clone run once clicked no link: the title stayed ui-failed)
        held = []
        page.route(lambda url: url.endswith("/changefeeds/ui-failed"), lambda route: held.append(route))
        page.evaluate("() => { window.lateRefresh = loadDetail(); }")
        while not held:
            page.wait_for_timeout(20)
        page.get_by_role("link", name="ui-paused", exact=True).click()
        expect(page.locator("#detail-title")).to_have_text("Changefeed ui-paused")
        held[0].continue_()
        page.evaluate("() => window.lateRefresh")  # the late load has run to its end
        page.unroute_all()
        assert page.locator("#detail-title").inner_text() == "Changefeed ui-paused"

        # actions follow the state: a stopped changefeed cannot be paused, only resumed
        result = page.locator("#action-result")
        pause, resume = (page.get_by_role("button", name=n, exact=True) for n in ("Pause", "Resume"))
        expect(pause).to_be_disabled()
        assert pause.get_attribute("title") == \
            "a stopped changefeed cannot be paused — a stopped changefeed can take Resume"
        expect(page.get_by_role("combobox", name="mode", exact=True).locator("option:enabled")).to_have_text(
            ["verify", "snapshot"])
        resume.click()
        expect(result).to_contain_text("resumed")
        assert "stopped → normal" in result.inner_text()
        assert metastore.get_feed("ui-paused").state == "normal"
        # the stopped state forced the mode to verify; resumed, the next run is a catch-up again
        expect(page.get_by_role("combobox", name="mode", exact=True)).to_have_value("catch-up")
        expect(resume).to_be_disabled()
        pause.click()
        expect(result).to_contain_text("paused:")
        assert metastore.get_feed("ui-paused").state == "stopped"
        # an overwrite-checkpoint-ts is checked before it is asked about: a ts that is none is
        # refused in the page's words, and nothing is asked
        box = page.get_by_label("overwrite checkpoint ts", exact=True)
        confirm = page.get_by_role("button", name="Overwrite the checkpoint", exact=True)
        box.fill("yesterday-ish")
        resume.click()
        expect(result).to_have_class("refused")
        said = result.inner_text()
        assert "overwrite checkpoint ts: 'yesterday-ish' is neither a TSO" in said and "--overwrite" not in said, said
        expect(confirm).to_have_count(0)
        box.fill("2999-01-01")
        resume.click()
        expect(result).to_contain_text("is later than the current TSO")
        expect(confirm).to_have_count(0)
        # a good one is asked about with the time it resolves to; nothing is done before the answer
        box.fill("now")
        resume.click()
        expect(confirm).to_be_visible()
        question = result.inner_text()
        asked = re.search(r"Overwrite the checkpoint of ui-paused with now \((\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC, "
                          r"ts (\d+)\)\?", question)
        assert asked, question
        resolved = int(asked.group(2))
        assert tso.to_text(resolved)[:19] == asked.group(1)
        assert abs(tso.physical_ms(resolved) / 1000 - time.time()) < 60
        assert metastore.get_feed("ui-paused").state == "stopped"
        page.screenshot(path=shot("confirm"), full_page=True)
        confirm.click()
        expect(result).to_contain_text("resumed")
        feed = metastore.get_feed("ui-paused")
        assert (feed.state, feed.checkpoint_ts) == ("normal", resolved)  # the ts asked about, not a later now
        expect(resume).to_be_disabled()
        expect(pause).to_be_enabled()

        # a catch-up triggered from the page is a DAG run like any other, and it runs: the DAG was
        # never paused, and nobody touches its toggle
        walk_dag = f"{standalone}/api/v2/dags/changefeed__ui-walk"
        assert wait_for_dag(standalone, admin, "changefeed__ui-walk")["is_paused"] is False
        page.get_by_role("link", name="ui-walk", exact=True).click()
        expect(page.locator("#detail-title")).to_have_text("Changefeed ui-walk")
        oldest = page.locator("#oldest-start").inner_text()  # what a backfill can start from, live
        assert re.fullmatch(r"oldest start ts: \d+ \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC, binlog \S+\)", oldest), oldest
        expect(page.get_by_role("combobox", name="mode", exact=True)).to_have_value("catch-up")
        page.get_by_role("button", name="Trigger a run", exact=True).click()
        expect(result).to_contain_text("DAG run")
        said = result.inner_text()
        assert "(catch-up) is " in said and "switched off" not in said, said
        status, dag_runs = request(f"{walk_dag}/dagRuns", admin)
        assert status == 200 and dag_runs["total_entries"] == 1
        run = dag_runs["dag_runs"][0]
        assert run["run_type"] == "manual" and run["conf"]["mode"] == "catch-up" and run["triggering_user_name"] == "admin"
        assert run["dag_run_id"] in said
        # it runs to success (a paused DAG would hold it queued), and the rows are downstream
        assert wait_run(standalone, admin, "changefeed__ui-walk", run["dag_run_id"]) == "success"
        assert down.query("SELECT id, v FROM ui_walk.t ORDER BY id") == [(1, "one"), (2, "two")]
        assert request(walk_dag, admin)[1]["is_paused"] is False

        # Airflow's toggle is the changefeed's pause: switched off there, the page shows it stopped
        # (and the DAG off); Resume here resumes it and switches the DAG on again
        assert request(walk_dag, admin, "PATCH", {"is_paused": True})[0] == 200
        assert metastore.get_feed("ui-walk").state == "stopped"
        page.reload()
        expect(page.locator("#detail-title")).to_have_text("Changefeed ui-walk")
        expect(page.locator('#detail-fields dd[data-field="State"]')).to_have_text("stoppedDAG paused")  # textContent
        page.screenshot(path=shot("paused-in-airflow"), full_page=True)
        resume.click()
        expect(result).to_contain_text("resumed")
        assert metastore.get_feed("ui-walk").state == "normal"
        assert request(walk_dag, admin)[1]["is_paused"] is False
        expect(page.locator('#detail-fields dd[data-field="State"]')).to_have_text("normal")

        # Airflow's own trigger form (its Params): a start_ts that is no ts and one in the future are
        # refused in the form itself, in the words a run's check would use, and no run exists.  The
        # form's help is the DAG's as last parsed: first the DAG processor parses it after the page's
        # lookup (every 5 s here; the runs above can end sooner than that)
        deadline = time.time() + 60
        while oldest.split()[3] not in json.dumps(request(f"{walk_dag}/details", admin)[1].get("params")):
            assert time.time() < deadline, "the DAG was not parsed again within 60 s of the page's lookup"
            time.sleep(0.5)
        for start_ts, words in (("yesterday-ish", "trigger parameter start_ts: 'yesterday-ish' is neither a TSO"),
                                ("2999-01-01", "is later than the current TSO")):
            dialog = trigger_form(page, f"{standalone}/dags/changefeed__ui-walk", "backfill", start_ts)
            expect(dialog).to_contain_text(words)
            # the form's help names the oldest start ts, as the page looked it up (the DAG parsed since)
            expect(dialog).to_contain_text(f"The oldest the upstream still holds: {oldest.split()[3]} (")
            page.screenshot(path=shot("form-refused"))
            page.keyboard.press("Escape")
            expect(dialog).to_have_count(0)
        assert request(f"{walk_dag}/dagRuns", admin)[1]["total_entries"] == 1
        # a catch-up from the form, then verify from the form, while rows flow upstream: verify's run
        # catches up within itself, so the rows written before and during it are compared applied
        with rows_flowing(up, "ui_walk.t", first=100) as written:
            for mode in ("catch-up", "verify"):
                dialog = trigger_form(page, f"{standalone}/dags/changefeed__ui-walk", mode)
                expect(dialog).to_have_count(0)  # the run is created: the form closes
                expect(page.get_by_role("status").filter(has_text="Dag Run Triggered").first).to_be_visible()
                runs = [r for r in request(f"{walk_dag}/dagRuns", admin)[1]["dag_runs"] if r["conf"].get("mode") == mode]
                assert len(runs) == (2 if mode == "catch-up" else 1), runs  # the page's catch-up, and this one
                run = max(runs, key=lambda r: r["queued_at"])
                assert run["triggering_user_name"] == "admin" and run["triggered_by"] == "ui", run
                assert wait_run(standalone, admin, "changefeed__ui-walk", run["dag_run_id"]) == "success"
        assert written() > 0
        last = verify_results.last("ui-walk")
        assert last is not None and last["status"] == "equal", last
        page.goto(standalone + "/cdcflow/ui#ui-walk")
        expect(page.locator('#detail-fields dd[data-field="Last verify"]')).to_contain_text("equal at ")
        # Airflow's successful runs in the cycles' word, as the CLI's: "done" (was "success" beside "done")
        statuses = {tuple(r.locator("td").all_inner_texts()[2:4]) for r in page.locator("#runs tbody tr").all()}
        assert {status for origin, status in statuses if origin.startswith("Airflow")} == {"done"}, statuses
        assert not [s for s in statuses if s[1] not in ("done", "failed")], statuses

        # a table joins the running changefeed with its rows, from the page's run form (mode add-tables)
        for s in (up, down):
            s.execute("DROP DATABASE IF EXISTS ui_extra")
        up.execute("CREATE DATABASE ui_extra", "CREATE TABLE ui_extra.t (id INT PRIMARY KEY, v VARCHAR(20))",
                   "INSERT INTO ui_extra.t SELECT seq, CONCAT('x', seq) FROM ui_extra.seq_1_to_500")
        page.get_by_role("combobox", name="mode", exact=True).select_option("add-tables")
        page.get_by_role("textbox", name="tables", exact=True).fill("ui_extra.t")
        page.get_by_role("button", name="Trigger a run", exact=True).click()
        expect(result).to_contain_text("(add-tables) is ")
        run = max((r for r in request(f"{walk_dag}/dagRuns", admin)[1]["dag_runs"]
                   if r["conf"].get("mode") == "add-tables"), key=lambda r: r["queued_at"])
        assert run["conf"]["tables"] == "ui_extra.t"
        assert wait_run(standalone, admin, "changefeed__ui-walk", run["dag_run_id"]) == "success"
        assert down.query("SELECT COUNT(*) FROM ui_extra.t") == [(500,)]  # its run joined and copied it
        page.reload()
        expect(page.locator('#detail-fields dd[data-field="Table copies"]')).to_contain_text(
            "ui_extra.t (add): ")
        page.screenshot(path=shot("table-copies"), full_page=True)

        # the page inside the Airflow UI: the plugin's nav entry, under Browse, renders it in a
        # sandboxed iframe, where its script runs and its calls carry the login; in a 1,280 px
        # window, narrower in Airflow's frame, the list still fits with the long notes
        page.set_viewport_size({"width": WIDTH, "height": 1000})
        page.route(is_the_list, with_long_notes)
        page.goto(standalone + "/")
        page.get_by_role("button", name="Browse", exact=True).click()
        page.get_by_role("menuitem", name="Changefeeds", exact=True).click()
        frame = 'iframe[src="cdcflow/ui"][title="Changefeeds"]'
        expect(page.locator(frame)).to_be_attached()
        expect(page.frame_locator(frame).locator("#summary")).to_have_text("6 changefeeds")
        # Airflow mirrors a nav view's frame path into its own address once the frame has loaded
        # (it was the bare plugin route until then, which a check could catch or miss): a deep
        # link, which the reload below comes back to
        expect(page).to_have_url(standalone + "/plugin/cdcflow-changefeeds/cdcflow/ui")
        page_root = page.frame_locator(frame).locator("html")
        expect(page_root).to_have_attribute("data-theme", "light")
        expect(page.frame_locator(frame).locator('#changefeeds tr[data-id="ui-normal"] .note')).to_have_text(LONG_NOTE)
        assert_fits(page_root)
        body = page.frame_locator(frame).locator("body")
        assert body.evaluate("b => getComputedStyle(b).backgroundColor") == framing_background(page) \
            == "rgb(255, 255, 255)"
        page.screenshot(path=shot("in-airflow"))
        # Airflow in dark mode (its choice as its toggle stores it): the page is dark with it, in
        # Airflow's own navy (it was pure black in the navy frame), and follows a toggle without a reload
        page.evaluate("localStorage.setItem('theme', 'dark')")
        page.reload()
        frame = "iframe"  # the plugin's, the only one (after a reload Airflow renders it with other attributes)
        expect(page.frame_locator(frame).locator("#summary")).to_have_text("6 changefeeds", timeout=60_000)
        page_root = page.frame_locator(frame).locator("html")
        expect(page_root).to_have_attribute("data-theme", "dark")
        body = page.frame_locator(frame).locator("body")
        expect(page.frame_locator(frame).locator('#changefeeds tr[data-id="ui-normal"] .note')).to_have_text(LONG_NOTE)
        dark = body.evaluate("b => getComputedStyle(b).backgroundColor")
        assert dark == framing_background(page) and dark != "rgb(0, 0, 0)", (dark, framing_background(page))
        assert_fits(page_root)
        page.screenshot(path=shot("in-airflow-dark"))
        page.evaluate("document.documentElement.classList.replace('dark', 'light')")
        expect(page_root).to_have_attribute("data-theme", "light")
        assert body.evaluate("b => getComputedStyle(b).backgroundColor") == "rgb(255, 255, 255)"
        page.evaluate("localStorage.setItem('theme', 'light')")
        page.unroute(is_the_list)
        # its links open Airflow's page in the whole window, not a second Airflow inside the frame
        page.frame_locator(frame).locator('#changefeeds tr[data-id="ui-normal"]').get_by_role(
            "link", name="DAG", exact=True).click()
        expect(page).to_have_url(standalone + "/dags/changefeed__ui-normal")
        expect(page.locator("iframe")).to_have_count(0)
        page.screenshot(path=shot("dag-from-link"))
