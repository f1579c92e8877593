"""A ts a person gives is refused alike on every surface when it is in the future, nonsense, or
older than the upstream's oldest binlog (purged: ErrStartTsBeforeGC), before anything is recorded:
CLI create and resume --overwrite-checkpoint-ts, the trigger form's parameters (cycle_request),
the API's resume and runs, and prepare as the last guard.  The upstream's binlogs are purged, so
the module has a MariaDB pair of its own."""

from __future__ import annotations

import pytest
from e2e_helpers import create_changefeed, next_second, own_pair as _own_pair, purge_binlogs_to

from cdcflow import cli
from cdcflow.core import tso
from cdcflow.core.errors import CdcflowError
from cdcflow.config.spec_store import spec_exists
from cdcflow.launch.modes import cycle_request
from cdcflow.stages.cycle import Cycle
from cdcflow.stages.prepare import prepare
from cdcflow.store import metastore

pytestmark = [pytest.mark.e2e, pytest.mark.airflow]

CID = "ts-surfaces"
FUTURE_WORDS = "is later than the current TSO"
NONSENSE_WORDS = "is neither a TSO"
PURGED_WORDS = "is older than the oldest change the upstream still holds (binlog "


@pytest.fixture(scope="module")
def own_pair(tmp_path_factory):
    with _own_pair(tmp_path_factory, "ts-surfaces-mariadb") as pair:
        yield pair


def _purged_ts(up) -> int:
    """A ts whose binlog the upstream has purged since."""
    long_ago = tso.now()
    next_second()  # binlog files carry their opening time in whole seconds
    up.execute("FLUSH BINARY LOGS")
    head = up.query("SHOW MASTER STATUS")[0][0]
    purge_binlogs_to(up, head)  # the previous surface's reader's dump thread ends a moment after it
    assert up.query("SHOW BINARY LOGS")[0][0] == head
    return long_ago


def _cli_refuses(capsys, argv: list[str]) -> str:
    """The CLI's one line on stderr for a refused command (exit 1, or argparse's 2 for a ts it cannot parse)."""
    capsys.readouterr()
    try:
        rc = cli.main(argv)
    except SystemExit as e:
        rc = e.code
    err = capsys.readouterr().err
    assert rc in (1, 2) and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


def _record(home) -> tuple:
    """Everything cdcflow keeps of the changefeed: its state row, its spec file, its runs, its lease."""
    return (metastore.get_feed(CID), (home / "changefeeds" / f"{CID}.json").read_text(),
            [(r.run_id, r.status) for r in metastore.recent_runs(CID, limit=20)], metastore.lease_holder(CID))


def test_a_future_nonsense_or_purged_ts_is_refused_on_every_surface(own_pair, cdcflow_home, client, airflow_auth,
                                                                      capsys):
    up, down = own_pair
    purged = _purged_ts(up)
    create_changefeed(capsys, up, down, CID, "[filter]\nrules = ['ts_surfaces.*']\n")
    assert cli.main(["changefeed", "pause", "-c", CID]) == 0
    before = _record(cdcflow_home)
    future = tso.now() + (3600_000 << 18)
    cases = [(str(future), FUTURE_WORDS), ("yesterday-ish", NONSENSE_WORDS), (str(purged), PURGED_WORDS)]

    for given, words in cases:
        # CLI create: no changefeed
        args = ["changefeed", "create", "-c", "ts-new", "--source-uri", up.uri, "--sink-uri", down.uri,
                "--start-ts", given]
        # CLI resume --overwrite-checkpoint-ts
        resume = ["changefeed", "resume", "-c", CID, "--no-confirm", "--overwrite-checkpoint-ts", given]
        for argv in (args, resume):
            assert words in _cli_refuses(capsys, argv)
        assert not spec_exists("ts-new")

        # the trigger form's parameters, as the DAG's prepare task and the API's runs read them
        with pytest.raises(CdcflowError) as refused:
            cycle_request(CID, {"mode": "backfill", "start_ts": given})
        assert words in str(refused.value) and CID in str(refused.value)

        # the API: resume with overwrite_checkpoint_ts, and a run request
        user = airflow_auth["user"]
        answer = client.post(f"/api/v2/changefeeds/{CID}/resume", headers=user, json={"overwrite_checkpoint_ts": given})
        assert answer.status_code == 400 and words in answer.json()["error_msg"], answer.json()
        answer = client.post(f"/api/v2/changefeeds/{CID}/runs", headers=user,
                             json={"mode": "backfill", "start_ts": given})
        assert answer.status_code == 400 and words in answer.json()["error_msg"], answer.json()

        # prepare, the last guard, takes a ts already parsed
        if words != NONSENSE_WORDS:
            with pytest.raises(CdcflowError) as refused:
                prepare(Cycle.load(CID, f"r-{given}"), start_ts=int(given), manual=True)
            assert words in str(refused.value)

        assert _record(cdcflow_home) == before, given

    # one message for a purged ts, whichever surface: its name, the ts, the oldest binlog and its start
    oldest = up.query("SHOW BINARY LOGS")[0][0]
    with pytest.raises(CdcflowError) as refused:
        cycle_request(CID, {"mode": "dry-run", "start_ts": tso.to_text(purged)})
    assert refused.value.code == "CDCFLOW:ErrStartTsBeforeGC" and not refused.value.retryable
    assert f"start_ts {tso.parse(tso.to_text(purged))} (" in str(refused.value) and oldest in str(refused.value)
    assert "nothing was changed" in str(refused.value)
    # a ts the upstream still holds passes
    assert cycle_request(CID, {"mode": "dry-run", "start_ts": "now"})["start_ts"] <= tso.now()
