"""A changefeed's state as TiCDC shows it: the JSON of `cdc cli changefeed query/list` and of
OpenAPI v2 (`/api/v2/changefeeds`, `/{id}`, `/{id}/status`), field names as TiCDC spells them.

Used by the CLI and by the Airflow plugin's HTTP API and page, so all three say the same.
Fields TiCDC does not have (cdcflow's own) live under the key `cdcflow`.
"""

from __future__ import annotations

import calendar
import json
import time

from cdcflow import __version__
from cdcflow.changefeed import live_lag, states
from cdcflow.core import tso
from cdcflow.config.spec_store import Spec, list_specs, load_spec
from cdcflow.core.stage_names import STAGES
from cdcflow.core.uri import parse_sink_uri
from cdcflow.store import metastore, snapshots, table_copies

NAMESPACE = "default"


def all_feeds() -> list[tuple[Spec, metastore.FeedState]]:
    """Every changefeed that has a spec (a spec without state is half-created), with its state."""
    specs = {spec.id: spec for spec in list_specs()}
    return [(specs[feed.id], feed) for feed in metastore.list_feeds() if feed.id in specs]


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


def _lag(resolved_ts: int, checkpoint_ts: int) -> float:
    behind = tso.physical_ms(resolved_ts) - tso.physical_ms(checkpoint_ts)
    return round(max(0.0, behind / 1000), 3)


def extras(spec: Spec, feed: metastore.FeedState, lag: live_lag.Lag | None = None) -> dict:
    """cdcflow's own fields: the lag now (live_lag: read from the upstream when asked, unless
    `lag` is that; its seconds also as `checkpoint_lag_seconds`, None when the upstream cannot be
    read), when the last cycle started, the retry schedule of a warning changefeed."""
    lag = lag or live_lag.live_lag(spec, feed)
    last = metastore.recent_runs(feed.id, limit=1)
    return {
        "checkpoint_lag_seconds": lag.seconds,
        "lag": lag.to_dict(),
        "last_run_time": _time_text(last[0].started_at) if last else None,
        "retry_count": feed.retry_count,
        "next_retry_time": _time_text(feed.next_retry_at) if feed.state == states.WARNING else None,
        "state_since": _time_text(feed.state_since),
        "retryable": (feed.error or {}).get("retryable"),
        "error_remedy": (feed.error or {}).get("hint"),
        "snapshot": snapshots.progress(feed.id),  # the initial copy (create --snapshot), None without one
        "table_copies": table_copies.progress(feed.id),  # tables joining with their rows (add-tables, resync-tables)
    }


def extras_of_all(pairs: list[tuple[Spec, metastore.FeedState]]) -> dict[str, dict]:
    """`extras` of many changefeeds (by id), their lags read together (live_lag.live_lags:
    one head read per upstream, the binlog reads at once)."""
    lags = live_lag.live_lags(pairs)
    return {feed.id: extras(spec, feed, lags[feed.id]) for spec, feed in pairs}


def simple(feed: metastore.FeedState, spec: Spec | None = None) -> dict:
    """`cdc cli changefeed query -s`, and each item of OpenAPI v2's changefeed list; the
    upstream id (changefeed/upstream_id.py) from `spec`, else from the changefeed's spec file."""
    return {
        "upstream_id": (spec or load_spec(feed.id)).upstream_id, "namespace": NAMESPACE, "id": feed.id,
        "state": feed.state,
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
    return {
        **simple(feed, spec),
        "sink_uri": parse_sink_uri(spec.sink_uri).redacted(),
        "config": spec.config().to_dict(),
        "create_time": _time_text(spec.created_at),
        "start_ts": spec.start_ts, "target_ts": spec.target_ts,
        "resolved_ts": feed.resolved_ts, "checkpoint_ts": feed.checkpoint_ts,
        "creator_version": f"cdcflow {__version__}",
    }


# Where a cycle came from, by its run id's prefix (launch.in_process.new_run_id, launch.dag_tasks.cycle_run_id).
RUN_ORIGINS = {"cli__": "cli", "airflow__": "airflow"}


def run_mode(run) -> str:
    """The trigger form's words: dry-run (applies nothing), backfill (moved the checkpoint back
    to a start ts first), add-tables / resync-tables (began a table copy), else catch-up."""
    stats = run.stats or {}
    if run.dry_run:
        return "dry-run"
    if stats.get(metastore.RUN_BACKFILL):
        return "backfill"
    copy = stats.get(metastore.RUN_TABLE_COPY)
    return table_copies.MODES.get(copy["kind"], "catch-up") if copy else "catch-up"


def run_origin(run) -> str:
    return next((origin for prefix, origin in RUN_ORIGINS.items() if run.run_id.startswith(prefix)), "other")


def run_summary(run) -> dict:
    """One recent cycle as `query` and the page show it: its mode and origin, times as text,
    its error, its figures (events pulled, rows written, DDLs applied, the DDLs it did not run
    downstream with why, which the event store forgets), seconds per stage and where the row
    stages ran, the checkpoint
    before and after and how far it read the upstream (resolved ts)."""
    stats = run.stats or {}
    filtered, applied = stats.get("filter") or {}, stats.get("apply") or {}
    after = stats.get(metastore.RUN_END) or {}
    return {"run_id": run.run_id, "mode": run_mode(run), "origin": run_origin(run), "status": run.status,
            "dry_run": bool(run.dry_run), "started": _time_text(run.started_at), "ended": _time_text(run.ended_at),
            "error": json.loads(run.error)["message"] if run.error else None,
            "events_pulled": (stats.get("pull") or {}).get("pulled", 0),
            "rows_written": applied.get("rows_written", 0), "ddl_applied": applied.get("ddl_applied", 0),
            "ddl_skipped": filtered.get("skipped_ddl", 0), "skipped_ddls": filtered.get("skipped", []),
            "stage_seconds": {stage: stats[f"{stage}_seconds"] for stage in (*STAGES, "wait_index")
                              if f"{stage}_seconds" in stats},
            "stage_places": stage_places(stats),
            "stage_tasks": {stage: stats[f"{stage}_task"] for stage in STAGES if f"{stage}_task" in stats},
            "checkpoint_before": run.start_ts, "checkpoint_after": after.get("checkpoint_ts"),
            "resolved_ts": after.get("resolved_ts")}


def stage_places(stats: dict) -> dict[str, str]:
    """Where each row stage of a cycle ran (stages.engine): "process" (the stage's own process),
    "spark" (Spark tasks), or for apply "process+spark" when its segments went both ways; a stage
    that did not run, or a cycle older than the engine's record, has none."""
    out = {stage: stats[stage]["ran_in"] for stage in ("filter", "barrier")
           if isinstance(stats.get(stage), dict) and stats[stage].get("ran_in")}
    applied = stats.get("apply") if isinstance(stats.get("apply"), dict) else {}
    here, spark = applied.get("segments_in_process", 0), applied.get("segments_in_spark", 0)
    if here or spark:
        out["apply"] = "+".join(p for p, n in (("process", here), ("spark", spark)) if n)
    return out


def lag_history(runs, now: dict | None = None) -> list[dict]:
    """The checkpoint's lag behind the upstream (as lag_seconds) at the end of each finished
    run, oldest first, then the lag `now` (live_lag.Lag.to_dict(), `live`: true) when it has a
    number: the points of the page's lag plot."""
    points = []
    for run in sorted(runs, key=lambda r: r.started_at):
        end = (run.stats or {}).get(metastore.RUN_END) or {}
        if run.ended_at is None or end.get("checkpoint_ts") is None:
            continue
        points.append({"time": _time_text(run.ended_at), "epoch": run.ended_at,
                       "lag_seconds": _lag(end["resolved_ts"], end["checkpoint_ts"]), "run_id": run.run_id})
    if now and now["seconds"] is not None:
        epoch = calendar.timegm(time.strptime(now["as_of"], "%Y-%m-%dT%H:%M:%SZ"))
        points.append({"time": now["as_of"], "epoch": epoch, "lag_seconds": now["seconds"], "run_id": None,
                       "live": True})
    return points


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
