"""An operator's commands on one changefeed: pause, resume, update (TiCDC's `cdc cli changefeed ...`).

Each checks what the changefeed's state allows (states.TRANSITIONS, and TiCDC's rule that
update needs a stopped or failed changefeed) and raises a CdcflowError naming the changefeed
and what to do otherwise.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from cdcflow.changefeed import lifecycle, states
from cdcflow.core import tso
from cdcflow.core.errors import (
    CHANGEFEED_UPDATE_REFUSED,
    CLI_ABORTED,
    CLI_CHECKPOINT_TS_IN_FUTURE,
    CLI_INVALID_CHECKPOINT_TS,
    MYSQL_CONNECTION_ERROR,
    UPSTREAM_UNREACHABLE,
    CdcflowError,
)
from cdcflow.core.home import Spec, load_spec, save_spec
from cdcflow.store import metastore

UPDATABLE_STATES = (states.STOPPED, states.FAILED)


def _load(cid: str) -> tuple[Spec, metastore.FeedState]:
    spec = load_spec(cid)
    feed = metastore.get_feed(spec.id)
    if feed.state in (states.STOPPED, states.FAILED):
        feed = lifecycle.expire_gc_ttl(spec.id, _gc_ttl(spec))
    return spec, feed


def _gc_ttl(spec: Spec) -> float:
    try:
        return spec.config().gc_ttl_seconds
    except CdcflowError:
        return 86400.0


def pause(cid: str) -> tuple[str, str]:
    """①: stop the changefeed; its cycles do nothing until it is resumed."""
    spec, feed = _load(cid)
    new, _ = states.next_state(feed.state, "pause", spec.id)
    metastore.update_feed(spec.id, state=new, state_since=time.time(), next_retry_at=None)
    return feed.state, new


def resume(cid: str, overwrite_checkpoint_ts: int | None = None,
           confirm: Callable[[str], bool] | None = None) -> tuple[str, str, int]:
    """② / ⑨: back to normal, from the checkpoint or from `overwrite_checkpoint_ts`.
    Returns (old state, new state, checkpoint ts)."""
    spec, feed = _load(cid)
    new, _ = states.next_state(feed.state, "resume", spec.id)
    lifecycle.check_resumable(feed, overwrite=overwrite_checkpoint_ts is not None)
    from cdcflow.core.uri import default_server_id, parse_source_uri
    from cdcflow.source.binlog import available_logs, position_for_ts, replay_horizon

    source = parse_source_uri(spec.source_uri)
    values: dict = {}
    if overwrite_checkpoint_ts is not None:
        ts = _checkpoint_arg(spec.id, overwrite_checkpoint_ts)
        pos = position_for_ts(source, source.server_id or default_server_id(spec.id), ts, spec.id)
        question = (f"You are overwriting the checkpoint of changefeed {spec.id} from {feed.checkpoint_ts} "
                    f"({tso.to_text(feed.checkpoint_ts)}) to {ts} ({tso.to_text(ts)}), which may replicate "
                    "changes again or skip changes. Continue? (Y/n) ")
        if confirm is not None and not confirm(question):
            raise CdcflowError("resume cancelled: the checkpoint was not overwritten", changefeed=spec.id,
                               code=CLI_ABORTED, hint="answer Y, or pass --no-confirm")
        if ts > feed.checkpoint_ts:
            # the DDLs skipped over are never read: track the schema from the catalogue as it is now,
            # as create does for its start-ts (versions before a backward move stay valid)
            from cdcflow.store import schema_versions

            schema_versions.snapshot(spec.id, source, ts)
        values.update(checkpoint_ts=ts, checkpoint_pos=pos.to_dict(), ddl_in_flight_ts=None,
                      replay_until=replay_horizon(ts, feed.replay_until, feed.checkpoint_ts))
    else:
        _check_upstream_holds(spec.id, source, feed, available_logs)
    now = time.time()
    metastore.update_feed(spec.id, state=new, state_since=now, last_progress_at=now, **lifecycle.cleared(),
                          **values)
    return feed.state, new, values.get("checkpoint_ts", feed.checkpoint_ts)


def _checkpoint_arg(cid: str, ts: int) -> int:
    if ts <= 0:
        raise CdcflowError("--overwrite-checkpoint-ts must be positive", changefeed=cid,
                           code=CLI_INVALID_CHECKPOINT_TS, hint="give 'now', a TSO or a UTC date-time")
    if ts > tso.now():
        raise CdcflowError(f"--overwrite-checkpoint-ts {ts} ({tso.to_text(ts)}) is in the future", changefeed=cid,
                           code=CLI_CHECKPOINT_TS_IN_FUTURE, hint="give 'now' or an earlier ts")
    return ts


def _check_upstream_holds(cid: str, source, feed: metastore.FeedState, available_logs) -> None:
    """TiCDC refuses to resume below the GC safepoint; here: from a binlog already purged."""
    from cdcflow.source.binlog import check_checkpoint_held

    try:
        conn = source.connect()
    except Exception as e:  # noqa: BLE001 - any connection failure means the same to the operator
        raise CdcflowError(f"cannot reach the upstream {source.redacted()} to check its binlogs: {e}",
                           changefeed=cid, code=UPSTREAM_UNREACHABLE,
                           hint="start the upstream, then resume again") from None
    try:
        logs = available_logs(conn)
    finally:
        conn.close()
    try:
        check_checkpoint_held(logs, feed.checkpoint_pos, feed.checkpoint_ts)
    except CdcflowError as e:
        raise e.with_context(changefeed=cid)


def check_sink_reachable(sink, cid: str) -> None:
    """As TiCDC validates the sink at create and update: a downstream that cannot be reached
    is refused there, not found out at the first cycle with rows to write."""
    try:
        sink.connect().close()
    except Exception as e:  # noqa: BLE001 - any connection failure means the same to the operator
        raise CdcflowError(f"cannot connect to the sink {sink.redacted()}: {e}", changefeed=cid,
                           code=MYSQL_CONNECTION_ERROR,
                           hint="check the sink URI's host, port, user and password, and that the server runs") from None


def update(cid: str, *, target_ts: int | None = None, config_path: str | None = None,
           sink_uri: str | None = None) -> dict:
    """Change target-ts, config or sink URI of a stopped or failed changefeed (as TiCDC allows).
    Returns {field: (old, new)} of what changed."""
    spec, feed = _load(cid)
    if feed.state not in UPDATABLE_STATES:
        raise CdcflowError(
            f"can only be updated while stopped or failed; it is {feed.state}",
            changefeed=spec.id, code=CHANGEFEED_UPDATE_REFUSED,
            hint=f"pause it first: `cdcflow changefeed pause -c {spec.id}`",
        )
    if target_ts is None and config_path is None and sink_uri is None:
        raise CdcflowError("nothing to update", changefeed=spec.id, code=CHANGEFEED_UPDATE_REFUSED,
                           hint="give --target-ts, --config or --sink-uri")
    changes: dict = {}
    if target_ts is not None:
        ts = target_ts
        if ts and ts <= feed.checkpoint_ts:
            raise CdcflowError(f"target-ts {ts} ({tso.to_text(ts)}) is not after the checkpoint "
                               f"{feed.checkpoint_ts} ({tso.to_text(feed.checkpoint_ts)})", changefeed=spec.id,
                               code=CHANGEFEED_UPDATE_REFUSED, hint="give a later --target-ts (0: none)")
        changes["target_ts"] = (spec.target_ts, ts)
    if config_path is not None:
        from cdcflow.core.config import parse_config

        try:
            with open(config_path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise CdcflowError(f"cannot read config file {config_path}: {e.strerror}", changefeed=spec.id) from None
        parse_config(text, source=config_path)  # refuse a config that does not validate
        changes["config_text"] = (spec.config_text, text)
    if sink_uri is not None:
        from cdcflow.core.uri import parse_sink_uri

        check_sink_reachable(parse_sink_uri(sink_uri), spec.id)
        changes["sink_uri"] = (spec.sink_uri, sink_uri)
    for name, (_, new) in changes.items():
        setattr(spec, name, new)
    save_spec(spec)
    return changes
