"""A changefeed's state as TiCDC shows it: the JSON of `cdc cli changefeed query/list` and of
OpenAPI v2 (`/api/v2/changefeeds`, `/{id}`, `/{id}/status`), field names as TiCDC spells them.

Used by the CLI and by the Airflow plugin's HTTP API and page, so all three say the same.
Fields TiCDC does not have (cdcflow's own) live under the key `cdcflow`.
"""

from __future__ import annotations

import time

from cdcflow import __version__
from cdcflow.changefeed import states
from cdcflow.core import tso
from cdcflow.core.home import Spec
from cdcflow.store import metastore

NAMESPACE = "default"
UPSTREAM_ID = 0  # one upstream per changefeed, named in its source URI (TiCDC numbers PD clusters)


def all_feeds() -> list[metastore.FeedState]:
    """The state of every changefeed that has a spec (a spec without state is half-created)."""
    from cdcflow.core.home import list_specs

    ids = {spec.id for spec in list_specs()}
    return [feed for feed in metastore.list_feeds() if feed.id in ids]


def _time_text(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch)) + f".{int(epoch % 1 * 1000):03d}Z"


def running_error(error: dict | None) -> dict | None:
    """TiCDC's RunningError: time, addr, code, message."""
    if not error:
        return None
    return {"time": _time_text(error.get("time")), "addr": error.get("addr", ""),
            "code": error.get("code", ""), "message": error.get("message", "")}


def lag_seconds(feed: metastore.FeedState) -> float:
    """How far the checkpoint is behind what the upstream had committed when a cycle last
    read it (the resolved ts): zero once a cycle caught up, however long ago, since the
    checkpoint of an idle upstream has nothing left to pass."""
    behind = tso.physical_ms(feed.resolved_ts) - tso.physical_ms(feed.checkpoint_ts)
    return round(max(0.0, behind / 1000), 3)


def extras(feed: metastore.FeedState) -> dict:
    """cdcflow's own fields: lag (as of the last cycle's look at the upstream), the retry
    schedule of a warning changefeed."""
    return {
        "checkpoint_lag_seconds": lag_seconds(feed),
        "retry_count": feed.retry_count,
        "next_retry_time": _time_text(feed.next_retry_at) if feed.state == states.WARNING else None,
        "state_since": _time_text(feed.state_since),
        "retryable": (feed.error or {}).get("retryable"),
    }


def simple(feed: metastore.FeedState) -> dict:
    """`cdc cli changefeed query -s`, and each item of OpenAPI v2's changefeed list."""
    return {
        "upstream_id": UPSTREAM_ID, "namespace": NAMESPACE, "id": feed.id, "state": feed.state,
        "checkpoint_tso": feed.checkpoint_ts, "checkpoint_time": tso.to_text(feed.checkpoint_ts),
        "error": running_error(feed.error),
    }


def list_item(feed: metastore.FeedState) -> dict:
    """One entry of `cdc cli changefeed list`."""
    return {"id": feed.id, "namespace": NAMESPACE,
            "summary": {"state": feed.state, "tso": feed.checkpoint_ts,
                        "checkpoint": tso.to_text(feed.checkpoint_ts), "error": running_error(feed.error)}}


def detail(spec: Spec, feed: metastore.FeedState) -> dict:
    """`cdc cli changefeed query` (checkpoint_tso) and OpenAPI v2's ChangeFeedInfo (checkpoint_ts)."""
    from cdcflow.core.uri import parse_sink_uri

    return {
        **simple(feed),
        "sink_uri": parse_sink_uri(spec.sink_uri).redacted(),
        "config": spec.config().to_dict(),
        "create_time": _time_text(spec.created_at),
        "start_ts": spec.start_ts, "target_ts": spec.target_ts,
        "resolved_ts": feed.resolved_ts, "checkpoint_ts": feed.checkpoint_ts,
        "creator_version": f"cdcflow {__version__}",
    }


def run_summary(run) -> dict:
    """One recent cycle as `query` shows it: times as text, whether it was a dry run, its
    error, and the DDLs it did not run downstream (with why), which the event store forgets."""
    import json

    filtered = (run.stats or {}).get("filter") or {}
    return {"run_id": run.run_id, "status": run.status, "dry_run": bool(run.dry_run),
            "started": _time_text(run.started_at), "ended": _time_text(run.ended_at),
            "error": json.loads(run.error)["message"] if run.error else None,
            "ddl_skipped": filtered.get("skipped_ddl", 0), "skipped_ddls": filtered.get("skipped", [])}


def status(feed: metastore.FeedState) -> dict:
    """OpenAPI v2 `GET /changefeeds/{id}/status`."""
    err = running_error(feed.error)
    return {
        "state": feed.state, "resolved_ts": feed.resolved_ts, "checkpoint_ts": feed.checkpoint_ts,
        "last_error": err if feed.state != states.WARNING else None,
        "last_warning": err if feed.state == states.WARNING else None,
    }


def verify_summary(result: dict | None) -> dict | None:
    """The last `cdcflow changefeed verify` in brief (query, the Changefeeds page): its
    status, when, what it checked and the differences it found (the first ones)."""
    if not result:
        return None
    keys = ("status", "finished", "tables_checked", "chunks_checked", "rows_compared", "table_problems",
            "column_problems", "differences", "differences_total", "not_yet_applied", "not_yet_applied_total",
            "fix_sql")
    return {k: result[k] for k in keys if k in result}
