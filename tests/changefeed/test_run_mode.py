"""status_view.run_mode: the mode the Changefeeds page and `query` show for a recent run, in the
trigger form's words, from what the run recorded."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from cdcflow.changefeed.status_view import run_mode
from cdcflow.store import metastore


@pytest.mark.parametrize("dry_run, stats, mode", [
    (False, {}, "catch-up"),
    (False, None, "catch-up"),
    (True, {}, "dry-run"),
    (False, {metastore.RUN_BACKFILL: {"checkpoint_ts": 1}}, "backfill"),
    (False, {metastore.RUN_TABLE_COPY: {"kind": "add", "tables": ["app.b"]}}, "add-tables"),
    (False, {metastore.RUN_TABLE_COPY: {"kind": "resync", "tables": ["app.b"]}}, "resync-tables"),
    (False, {metastore.RUN_TABLE_COPY: {"kind": "later", "tables": ["app.b"]}}, "catch-up"),  # a kind not known here
])
def test_a_runs_mode_is_the_one_it_was_triggered_with(dry_run, stats, mode):
    assert run_mode(SimpleNamespace(dry_run=dry_run, stats=stats)) == mode
