"""The changefeeds page in a real headless Chromium (Debian's `chromium`) against a real
`airflow standalone` (scheduler, DAG processor, triggerer and API server) that this test
starts on 127.0.0.1 with low parallelism.  The page's JavaScript fetches the plugin's API,
so the rows read from the DOM went through Airflow's API server and the browser."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pytest

try:
    from airflow_env import DAGS_FOLDER, PLUGINS_FOLDER
except ImportError:  # tests/ imported as a package
    from tests.airflow_env import DAGS_FOLDER, PLUGINS_FOLDER

from e2e_helpers import create_changefeed

from cdcflow import cli
from cdcflow.changefeed import lifecycle
from cdcflow.core import tso
from cdcflow.core.errors import CdcflowError
from cdcflow.devtools.mariadb import free_port
from cdcflow.store import metastore

pytestmark = [pytest.mark.e2e, pytest.mark.airflow]

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
START_TIMEOUT = 150


def standalone_env(airflow_home: Path, cdcflow_home: Path, port: int) -> dict[str, str]:
    venv_bin = str(Path(sys.executable).parent)
    return {
        **os.environ,
        "AIRFLOW_HOME": str(airflow_home),
        "CDCFLOW_HOME": str(cdcflow_home),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS_FOLDER),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(PLUGINS_FOLDER),
        "AIRFLOW__CORE__PARALLELISM": "2",
        "AIRFLOW__API__HOST": "127.0.0.1",
        "AIRFLOW__API__PORT": str(port),
        "AIRFLOW__API__WORKERS": "1",
        # the log servers of the scheduler and triggerer: free ports, not the fixed defaults
        "AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port()),
        "AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT": str(free_port()),
        # the UI without a login form: the test browses as an admin
        "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",
        "PATH": venv_bin + os.pathsep + os.environ.get("PATH", ""),
    }


@pytest.fixture
def standalone(tmp_path, cdcflow_home):
    port = free_port()
    log = (tmp_path / "standalone.log").open("w")
    proc = subprocess.Popen([str(Path(sys.executable).parent / "airflow"), "standalone"],
                            env=standalone_env(tmp_path / "airflow-home", cdcflow_home, port),
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + START_TIMEOUT
        while True:
            assert proc.poll() is None, (tmp_path / "standalone.log").read_text()[-3000:]
            try:
                with urllib.request.urlopen(base + "/cdcflow/api/v2/changefeeds", timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert time.time() < deadline, "airflow standalone did not serve the plugin in time"
            time.sleep(2)
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the process group this fixture started
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        log.close()


def dump_dom(url: str, budget_ms: int = 10000) -> str:
    profile = tempfile.mkdtemp(prefix="cdcflow-chromium-")
    try:
        done = subprocess.run(
            [shutil.which("chromium") or "chromium", *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
             f"--virtual-time-budget={budget_ms}", "--dump-dom", url],
            capture_output=True, text=True, timeout=120,
        )
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


class Rows(HTMLParser):
    """The table's rows: {data-id: [cell texts]}, and the text of #summary."""

    def __init__(self):
        super().__init__()
        self.rows: dict[str, list[str]] = {}
        self.summary = ""
        self._row = self._cell = None
        self._in_summary = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "tr" and "data-id" in attrs:
            self._row = self.rows.setdefault(attrs["data-id"], [])
        elif tag == "td" and self._row is not None:
            self._cell = ""
        elif attrs.get("id") == "summary":
            self._in_summary = True

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self._row.append(self._cell)
            self._cell = None
        elif tag == "tr":
            self._row = None
        elif tag == "p":
            self._in_summary = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data
        elif self._in_summary:
            self.summary += data


def test_changefeeds_page_in_chromium(mariadb_pair, cdcflow_home, standalone, capsys):
    up, down = mariadb_pair
    create_changefeed(capsys, up, down, "ui-normal", "")
    create_changefeed(capsys, up, down, "ui-paused", "")
    create_changefeed(capsys, up, down, "ui-warning", "")
    assert cli.main(["changefeed", "pause", "-c", "ui-paused"]) == 0
    lifecycle.record_error("ui-warning", CdcflowError("cannot connect to the downstream", changefeed="ui-warning",
                                                      code="CDCFLOW:ErrDownstreamUnreachable", retryable=True),
                           stuck_limit=1800)
    behind = metastore.get_feed("ui-normal").checkpoint_ts - (3 * 3600 * 1000 << 18)  # three hours behind
    metastore.update_feed("ui-normal", checkpoint_ts=behind)

    page = Rows()
    page.feed(dump_dom(standalone + "/cdcflow/ui"))
    assert page.summary == "3 changefeeds", page.summary
    assert sorted(page.rows) == ["ui-normal", "ui-paused", "ui-warning"]
    ident, state, when, tso_text, lag, next_retry, error = page.rows["ui-normal"]
    assert (ident, state, error, next_retry) == ("ui-normal", "normal", "", "")
    assert int(tso_text) == behind and when == tso.to_text(behind)
    assert lag.endswith(" h") and 2.9 <= float(lag[:-2]) <= 3.2
    assert page.rows["ui-paused"][1] == "stopped"
    warning = page.rows["ui-warning"]
    assert warning[1] == "warning" and warning[5].endswith("Z")
    assert warning[6].startswith("CDCFLOW:ErrDownstreamUnreachable: changefeed ui-warning: cannot connect")

    # the page inside the Airflow UI: the plugin's nav entry renders it in an iframe
    ui = dump_dom(standalone + "/plugin/cdcflow-changefeeds", budget_ms=15000)
    assert '<iframe' in ui and 'src="cdcflow/ui"' in ui and 'title="Changefeeds"' in ui
