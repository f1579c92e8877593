"""The changefeed functions the Airflow glue calls instead of reading the metadata store: the
status route's view (commands.status), a spark-submit stage's cycle read back (commands.cycle)
and the DAG toggle followed (commands.follow_switch).  The resume a switch-on makes checks the
upstream: tests/airflow/test_airflow_api_guard.py runs it against a real server."""

from __future__ import annotations

import json

import pytest

from cdcflow.changefeed import commands, states
from cdcflow.config.spec_store import Spec, save_spec
from cdcflow.core.errors import CdcflowError
from cdcflow.core.wording import PAGE
from cdcflow.store import metastore

CF = "reads"
POS = {"file": "bin.000001", "pos": 4}


@pytest.fixture
def feed(cdcflow_home):
    metastore.create_feed(CF, 100, POS)
    save_spec(Spec(id=CF, source_uri="mysql://u@127.0.0.1:1/", sink_uri="mysql://u@127.0.0.1:2/", start_ts=100))


def test_status_is_the_feeds_state_checkpoint_and_error(feed):
    metastore.update_feed(CF, state=states.WARNING, resolved_ts=150,
                          error={"code": "CDC:ErrX", "message": "it broke", "time": 1.0})
    out = commands.status(CF)
    assert (out["state"], out["checkpoint_ts"], out["resolved_ts"]) == (states.WARNING, 100, 150)
    assert out["last_warning"]["message"] == "it broke" and out["last_error"] is None


def test_status_of_a_changefeed_without_a_spec_is_refused(cdcflow_home):
    with pytest.raises(CdcflowError):
        commands.status("nobody")


def test_a_cycle_reads_back_its_error_and_who_replaced_it(feed):
    metastore.start_run(CF, "r1", 100, POS, 0, False)
    metastore.update_run(CF, "r1", status="failed", error=json.dumps({"message": "the DDL failed"}))
    assert commands.cycle(CF, "r1")["error"] == "the DDL failed"
    assert commands.cycle(CF, "r1")["superseded_by"] is None
    metastore.start_run(CF, "r2", 100, POS, 0, False)
    assert metastore.supersede_open_runs(CF, "r3") == ["r2"]
    replaced = commands.cycle(CF, "r2")
    assert (replaced["status"], replaced["superseded_by"]) == (metastore.SUPERSEDED, "r3")
    with pytest.raises(CdcflowError):
        commands.cycle(CF, "never")


def test_switched_off_a_running_changefeed_pauses_and_a_stopped_one_stays(feed):
    assert commands.follow_switch(CF, True, PAGE) == states.STOPPED
    assert metastore.get_feed(CF).state == states.STOPPED
    assert commands.follow_switch(CF, True, PAGE) is None  # already stopped: nothing to follow


def test_switched_on_a_failed_changefeed_stays_failed_until_resumed_on_purpose(feed):
    metastore.update_feed(CF, state=states.FAILED)
    assert commands.follow_switch(CF, False, PAGE) is None
    assert metastore.get_feed(CF).state == states.FAILED


def test_a_finished_changefeed_follows_no_switch(feed):
    metastore.update_feed(CF, state=states.FINISHED)
    assert commands.follow_switch(CF, True, PAGE) is None
    assert commands.follow_switch(CF, False, PAGE) is None
    assert metastore.get_feed(CF).state == states.FINISHED


def test_switched_on_a_running_changefeed_or_one_without_a_spec_does_nothing(feed):
    assert commands.follow_switch(CF, False, PAGE) is None
    assert commands.follow_switch("nobody", True, PAGE) is None
