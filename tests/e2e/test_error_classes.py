"""Rows the downstream refuses are retryable, as TiCDC retries every sink error it does not
name unretryable: a table that no longer matches (a column an event filter kept from the
downstream) puts the changefeed in warning (③) and backoff; a DBA who fixes the table sees
replication resume by itself (④); left unfixed, it fails once stuck for
changefeed-error-stuck-duration (⑤)."""

from __future__ import annotations

import pytest
from e2e_helpers import assert_consistent, backdate, cli_run, create_changefeed, fresh_schema, query, run_fails

from cdcflow.core.errors import MYSQL_TXN_ERROR

pytestmark = pytest.mark.e2e

CONFIG = ("changefeed-error-stuck-duration = '30m'\n[filter]\nrules = ['{s}.*']\n"
          "[[filter.event-filters]]\nmatcher = ['{s}.t']\nignore-event = ['alter table']\n")


def _diverged(up, down, capsys, schema: str) -> str:
    """A changefeed whose downstream table lacks the column the upstream's rows now carry."""
    changefeed_id = schema.replace("_", "-")
    fresh_schema(up, down, schema, "CREATE TABLE t (id INT PRIMARY KEY, v INT)")
    create_changefeed(capsys, up, down, changefeed_id, CONFIG.format(s=schema))
    up.execute(f"INSERT INTO {schema}.t VALUES (1, 1)", f"ALTER TABLE {schema}.t ADD COLUMN note VARCHAR(20)",
               f"INSERT INTO {schema}.t VALUES (2, 2, 'two')", f"UPDATE {schema}.t SET note = 'one' WHERE id = 1")
    status, message, _ = run_fails(capsys, changefeed_id, state="warning")
    assert status["error"]["code"] == MYSQL_TXN_ERROR and "Unknown column 'note'" in message, message
    assert "fix the downstream table" in message and "next cycle" in message
    return changefeed_id


def test_a_downstream_fixed_during_the_backoff_resumes_by_itself(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    changefeed_id = _diverged(up, down, capsys, "errcls_fixed")
    rc, err = cli_run(capsys, changefeed_id)  # inside the backoff: nothing runs, nothing changes
    assert rc == 0 and query(capsys, changefeed_id)["state"] == "warning"
    down.execute("ALTER TABLE errcls_fixed.t ADD COLUMN note VARCHAR(20)")  # the DBA's fix
    backdate(changefeed_id, 11, "next_retry_at")
    rc, err = cli_run(capsys, changefeed_id)
    assert rc == 0, err
    status = query(capsys, changefeed_id)
    assert status["state"] == "normal" and status["error"] is None
    assert_consistent(up, down, ["errcls_fixed"])


def test_a_downstream_left_unfixed_fails_after_the_stuck_duration(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    changefeed_id = _diverged(up, down, capsys, "errcls_stuck")
    backdate(changefeed_id, 29 * 60, "last_progress_at", "error_since", "next_retry_at")
    run_fails(capsys, changefeed_id, state="warning")  # 29 minutes: retried, still warning
    backdate(changefeed_id, 2 * 60, "last_progress_at", "error_since", "next_retry_at")
    rc, err = cli_run(capsys, changefeed_id)  # 31 minutes: ⑤
    status = query(capsys, changefeed_id)
    assert rc == 1 and status["state"] == "failed", err
    assert "changefeed-error-stuck-duration 1800 s" in status["error"]["message"], status["error"]
