"""An operator's commands on changefeeds (TiCDC's `cdc cli changefeed ...`): create, query,
list, pause, resume, update, skip-ddl, replace-ddl, remove, and verify.

Each takes plain arguments and returns plain results; it checks what the changefeed's state
allows (states.TRANSITIONS, and TiCDC's rule that update needs a stopped or failed
changefeed) and raises a CdcflowError naming the changefeed and what to do otherwise.
The command line (cli.py) only parses, calls and prints.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from cdcflow.changefeed import command_checks, config_update, feed_state, lifecycle, states, table_commands, upstream_id
from cdcflow.core import ts_input, tso
from cdcflow.core.errors import (
    CHANGEFEED_ALREADY_EXISTS,
    CHANGEFEED_UPDATE_REFUSED,
    CLI_ABORTED,
    CLI_CHECKPOINT_TS_IN_FUTURE,
    CLI_INVALID_CHECKPOINT_TS,
    LEASE_HELD,
    SNAPSHOT_REFUSED,
    SNAPSHOT_UNSUPPORTED,
    CdcflowError,
)
from cdcflow.core.sink_params import merge_sink_options
from cdcflow.config.spec_store import Spec, load_spec, save_spec, spec_exists
from cdcflow.core.wording import CLI, Words
from cdcflow.filter.assembled import Filter
from cdcflow.store import ddl_replacements, metastore, schema_versions, snapshots, table_copies, verify_results
from cdcflow.store.engine import transaction

log = logging.getLogger(__name__)

UPDATABLE_STATES = (states.STOPPED, states.FAILED)


def _load(changefeed_id: str) -> tuple[Spec, metastore.FeedState]:
    spec = load_spec(changefeed_id)
    return spec, feed_state.expire_gc_ttl(spec.id, metastore.get_feed(spec.id), spec.config)


def create(changefeed_id: str, source_uri: str, sink_uri: str, config_path: str | None = None,
           start_ts: int | None = None, target_ts: int | None = None, snapshot=None,
           spark_for: Callable | None = None, report: Callable[[dict], None] = lambda p: None,
           paused: bool = False) -> dict:
    """Check the upstream, the sink, the config and its value expressions, then record the
    changefeed from `start_ts` (default: the upstream's current position) with its schema
    snapshot.  With `snapshot` (the --snapshot options given: SnapshotOptions' field names, None
    for the config's) the filter's tables are first copied
    (cdcflow.snapshot; `spark_for(config)` opens the Spark session, `report` hears the progress)
    and the changefeed starts at the copy's consistent point; a changefeed whose copy did not
    finish continues it.  `paused` (`create --pause`): the changefeed is recorded stopped, as if
    paused (①) right after its creation, in the same transaction, so no cycle runs before an
    operator resumes it; with a snapshot the copy still runs, and the changefeed waits stopped at
    its consistent point.  Returns what the changefeed starts with."""
    # lazy: core.uri (credentials, TLS), 8 ms of every command's start
    from cdcflow.core.uri import default_server_id, parse_sink_uri, parse_source_uri, validate_changefeed_id

    changefeed_id = validate_changefeed_id(changefeed_id)
    if snapshot is not None and spec_exists(changefeed_id) and snapshots.unfinished(changefeed_id):
        if paused:
            _pause_unless_stopped(changefeed_id)
        return _continue_snapshot(changefeed_id, snapshot, spark_for, report)
    if spec_exists(changefeed_id):
        raise CdcflowError(f"changefeed {changefeed_id} already exists", code=CHANGEFEED_ALREADY_EXISTS,
                           hint="choose another --changefeed-id, or remove the old one first")
    if start_ts:
        ts_input.not_in_future(start_ts, "start-ts", changefeed_id,
                               hint="give a --start-ts at or before the current TSO (`cdcflow tso query`), or "
                                    "none to start at the upstream's current position")
    source, sink = parse_source_uri(source_uri), parse_sink_uri(sink_uri)
    config_text, cfg, flt = _checked_for_create(changefeed_id, source, sink, config_path)
    server_id = source.server_id or default_server_id(changefeed_id)
    up_id = upstream_id.of_source(source)
    record = _Record(changefeed_id, source, source_uri, sink_uri, config_text, target_ts, up_id, flt, paused)
    if snapshot is not None:
        return _create_at_snapshot(record, sink, cfg, server_id, snapshot, start_ts, spark_for, report)
    start_ts, pos, replay_until = _start_of(source, server_id, start_ts, changefeed_id)
    if target_ts and target_ts <= start_ts:
        raise CdcflowError(f"target-ts {target_ts} is not after start-ts {start_ts}",
                           changefeed=changefeed_id, hint="give a --target-ts later than the start")
    kept = record(start_ts, pos, replay_until)
    return {"upstream": source.redacted(), "upstream_id": up_id, "sink_uri": sink.redacted(), "start_ts": start_ts,
            "target_ts": target_ts or 0, "start_position": pos.to_dict(), "server_id": server_id,
            "state": states.STOPPED if paused else states.NORMAL, "tracked_tables": kept,
            "config": cfg.to_dict()}


def _checked_for_create(changefeed_id: str, source, sink, config_path: str | None) -> tuple[str, object, Filter]:
    """create's checks of the upstream, the sink, the config and its value expressions (against
    the upstream's tables now, not at the first cycle) and the foreign keys.  Returns the
    config's text, the config (the sink URI's parameters over its [sink]) and the filter."""
    from cdcflow.source.binlog import check_upstream  # lazy: binlog reading, 40 ms of every command's start

    config_text = command_checks.read_config(config_path) if config_path else ""
    cfg = command_checks.parsed_config(config_text, config_path or "<config>", changefeed_id)
    merge_sink_options(cfg.sink, dict(sink.params))
    command_checks.check_credentials(changefeed_id, source, sink)
    check_upstream(source, changefeed_id)
    command_checks.check_sink_reachable(sink, changefeed_id)
    flt = command_checks.check_filter_rules(cfg, changefeed_id)
    flt.check_value_expressions(source.connect, changefeed_id)
    command_checks.check_foreign_keys(flt.tables, source, sink, changefeed_id)
    return config_text, cfg, flt


def _start_of(source, server_id: int, start_ts: int | None, changefeed_id: str) -> tuple[int, object, int | None]:
    """Where a changefeed created without a snapshot starts: (start ts, binlog position, replay
    horizon): at `start_ts`, or at the upstream's current position now."""
    from cdcflow.source.binlog import head_position, position_for_ts, replay_horizon  # lazy: as in _checked_for_create

    if start_ts:
        pos = position_for_ts(source, server_id, start_ts, changefeed_id)
        return start_ts, pos, replay_horizon(start_ts)  # start-ts's second is read again: its DDLs may be replays
    conn = source.connect()
    try:
        pos = head_position(conn, with_gtid=True)
    finally:
        conn.close()
    return tso.now(), pos, None


def _create_at_snapshot(record: _Record, sink, cfg, server_id: int, given: dict, start_ts: int | None,
                        spark_for: Callable | None, report: Callable[[dict], None]) -> dict:
    """create --snapshot: the changefeed recorded at the copy's consistent point, then the
    tables copied (`given`: the --snapshot options)."""
    from cdcflow.snapshot.chunk_copies import SnapshotOptions  # lazy: the copy's planner, 200 ms, only for --snapshot

    cid, source, target_ts = record.changefeed_id, record.source, record.target_ts
    if start_ts or (target_ts and target_ts <= tso.now()):
        raise CdcflowError("--snapshot starts the changefeed at the copy's consistent point: give no --start-ts "
                           "(and a --target-ts in the future)", changefeed=cid, code=SNAPSHOT_UNSUPPORTED,
                           hint="drop --start-ts, or create without --snapshot")
    kept: list[int] = []

    def at_point(point):
        kept.append(record(tso.now(), point.position, None, point))

    options = SnapshotOptions.of(cfg, **given)
    _snapshot_start(cid, source, sink, cfg, options, at_point)
    progress = _snapshot_copy(cid, source, sink, cfg, options, spark_for, report)
    feed = metastore.get_feed(cid)
    return {"upstream": source.redacted(), "upstream_id": record.upstream_id, "sink_uri": sink.redacted(),
            "start_ts": feed.checkpoint_ts, "target_ts": target_ts or 0, "start_position": feed.checkpoint_pos,
            "server_id": server_id, "state": feed.state, "tracked_tables": kept[0] if kept else 0,
            "snapshot": progress, "config": cfg.to_dict()}


@dataclass(frozen=True)
class _Record:
    """How create records a changefeed once it knows where it starts (at once, or at a
    snapshot's consistent point)."""
    changefeed_id: str
    source: object
    source_uri: str
    sink_uri: str
    config_text: str
    target_ts: int | None
    upstream_id: int
    filter: Filter
    paused: bool

    def __call__(self, start_ts: int, pos, replay_until: int | None, point=None) -> int:
        """The feed at `pos` / `start_ts` (stopped when created paused), its tracked schema and
        a snapshot's plan (`point`, snapshot.chunk_copies.Point) in one metadata-store transaction, then
        the spec file: a changefeed exists once its spec does (spec_exists,
        status_view.all_feeds), so an interruption leaves all of it or none (rows without a spec
        are cleared when the id is created again).  Returns how many of the tracked tables the
        filter keeps (the tracked schema holds every upstream table: a DDL may move one in)."""
        cid = self.changefeed_id
        # TiCDC's DDL handling: the schema starts from the upstream's catalogue (a snapshot's: read at its point)
        tables = point.catalogue if point else schema_versions.upstream_catalogue(self.source)
        with transaction() as c:
            metastore.create_feed(cid, start_ts, pos.to_dict(), c)  # nothing of an earlier changefeed of that id stays
            if replay_until is not None:
                metastore.update_feed(cid, c, replay_until=replay_until)
            if self.paused:
                feed_state.pause_created(cid, c)
            schema_versions.start_from(cid, tables, start_ts, c)
            if point is not None:
                point.record(cid, c)
        save_spec(Spec(id=cid, source_uri=self.source_uri, sink_uri=self.sink_uri, config_text=self.config_text,
                       start_ts=start_ts, target_ts=self.target_ts or 0, upstream_id=self.upstream_id))
        return sum(1 for schema, table in tables if self.filter.replicates_rows(schema, table))


def _pause_unless_stopped(changefeed_id: str) -> None:
    """`create --snapshot --pause` continuing a copy: the changefeed ends stopped, as a paused
    create leaves it (①, refused in a state that cannot take a pause)."""
    if metastore.get_feed(changefeed_id).state != states.STOPPED:
        pause(changefeed_id)


def _connection_args(source, sink, cfg) -> tuple[dict, dict]:
    """pymysql's arguments for the upstream and for the sink (its URI over the config's [sink])."""
    return source.connection_args(), sink.connection_args(merge_sink_options(cfg.sink, dict(sink.params)))


def _snapshot_start(changefeed_id, source, sink, cfg, options, at_point) -> None:
    from cdcflow.snapshot.chunk_copies import start  # lazy: the copy's planner, 200 ms, only for a snapshot

    up_args, down_args = _connection_args(source, sink, cfg)
    try:
        start(changefeed_id, up_args, down_args, sink.scheme, list(cfg.rules), cfg.case_sensitive, cfg.force_replicate,
              options,
              at_point)
    except CdcflowError as e:
        raise e.with_context(changefeed=changefeed_id) from None


def _snapshot_copy(changefeed_id, source, sink, cfg, options, spark_for, report) -> dict:
    """The chunks not done yet; then the first cycle treats what it reads up to now as replays
    (its DDLs may already be in the tables created; its rows are written in safe mode)."""
    from cdcflow.snapshot.chunk_copies import continue_copy  # lazy: as in _snapshot_start
    from cdcflow.source.binlog import replay_horizon  # lazy: binlog reading, 40 ms, not for every command

    up_args, down_args = _connection_args(source, sink, cfg)
    progress = continue_copy(changefeed_id, up_args, down_args, sink.scheme,
                             lambda: spark_for(cfg, unless_local=True), options, report)
    metastore.update_feed(changefeed_id, replay_until=replay_horizon(tso.now()))
    return progress


def _continue_snapshot(changefeed_id, given: dict, spark_for, report, new_point: bool = False) -> dict:
    """`create --snapshot` again on a changefeed whose copy was stopped: the chunks not done are
    copied; a keyless table not yet copied takes a new consistent point (the changefeed's start
    moves there).  `new_point`: a new copy from a new point whatever was done before."""
    from cdcflow.core.uri import parse_sink_uri, parse_source_uri  # lazy: credentials and TLS, 8 ms of the start
    from cdcflow.snapshot.chunk_copies import SnapshotOptions, needs_new_point  # lazy: as in _snapshot_start

    spec = load_spec(changefeed_id)
    cfg = spec.config()
    options = SnapshotOptions.of(cfg, **given)
    source, sink = parse_source_uri(spec.source_uri), parse_sink_uri(spec.sink_uri)
    if new_point or needs_new_point(changefeed_id):
        def at_point(point):  # the start moves to the new point with the new plan, in one transaction
            ts = tso.now()
            with transaction() as c:
                metastore.update_feed(changefeed_id, c, checkpoint_ts=ts, checkpoint_pos=point.position.to_dict(),
                                      ddl_in_flight_ts=None)
                schema_versions.start_from(changefeed_id, point.catalogue, ts, c)
                point.record(changefeed_id, c)

        _snapshot_start(changefeed_id, source, sink, cfg, options, at_point)
    progress = _snapshot_copy(changefeed_id, source, sink, cfg, options, spark_for, report)
    feed = metastore.get_feed(changefeed_id)
    return {"upstream": source.redacted(), "upstream_id": spec.upstream_id, "sink_uri": sink.redacted(),
            "start_ts": feed.checkpoint_ts, "target_ts": spec.target_ts, "start_position": feed.checkpoint_pos,
            "state": feed.state, "continued": True, "snapshot": progress, "config": cfg.to_dict()}


SNAPSHOT_STATES = (states.STOPPED, states.FAILED)


def snapshot(changefeed_id: str, spark_for: Callable, report: Callable[[dict], None] = lambda p: None, **given) -> dict:
    """The DAG's trigger mode snapshot: copy the filter's tables of an existing changefeed that
    is stopped (or failed) from a new consistent point (or continue its unfinished copy), move
    its start there and resume it (② / ⑨), so the next cycles replicate from the point.
    `given`: SnapshotOptions' fields over the config's."""
    spec, feed = _load(changefeed_id)
    if feed.state not in SNAPSHOT_STATES:
        raise CdcflowError(
            f"a snapshot needs the changefeed stopped; it is {feed.state} (its cycles would write while the copy "
            "moves its start)", changefeed=spec.id, code=SNAPSHOT_REFUSED,
            hint=f"pause it first (`cdcflow changefeed pause -c {spec.id}`), then trigger mode snapshot again: "
                 "the copy resumes it from its consistent point when it is done")
    states.next_state(feed.state, "resume", spec.id)  # refused before the copy begins
    run_key = f"snapshot-{time.time_ns()}"
    _take_lease_for_snapshot(spec.id, run_key)
    try:
        continuing = snapshots.unfinished(spec.id)

        def report_and_renew(progress: dict) -> None:
            metastore.acquire_lease(spec.id, metastore.lease_owner_for(run_key), run_key)
            report(progress)

        out = _continue_snapshot(spec.id, given, spark_for, report_and_renew, new_point=not continuing)
        new = feed_state.resume(spec.id, feed)
    finally:
        metastore.release_lease(spec.id, run_key)
    return {**out, "continued": continuing, "state": new}


def _take_lease_for_snapshot(changefeed_id: str, run_key: str) -> None:
    """A snapshot moves the changefeed's start and writes its tables: no cycle may run meanwhile.
    A cycle started before the pause still holds the lease while its process lives: refused.
    A DAG run left open between its tasks (no live holder) is replaced, as a new cycle replaces
    it (metastore.supersede_open_runs): its later stages stop, changing nothing."""
    if not metastore.acquire_lease(changefeed_id, metastore.lease_owner_for(run_key), run_key):
        raise CdcflowError(
            f"a snapshot cannot start while a cycle of the changefeed runs ({metastore.lease_holder(changefeed_id)}): "
            "its apply would write the tables the copy writes", changefeed=changefeed_id, code=LEASE_HELD,
            hint="wait for that cycle to end (its DAG run, or `cdcflow changefeed run`), then trigger mode "
                 "snapshot again")
    replaced = metastore.supersede_open_runs(changefeed_id, run_key)
    if replaced:
        log.info("changefeed %s: the snapshot replaced the open cycles %s", changefeed_id, ", ".join(replaced))


def query(changefeed_id: str, simple: bool = False, last_runs: int = 5, lag_points: int = 0) -> dict:
    """`changefeed query`: TiCDC's fields (status_view), and cdcflow's own under `cdcflow`: the
    lag now (live_lag), the last runs (mode, origin, figures) and, with `lag_points`, the lag
    at the end of that many runs and now (the page's plot)."""
    # lazy: status_view brings the lag's binlog readers (50 ms), which create need not load
    from cdcflow.changefeed import status_view
    from cdcflow.core.uri import parse_source_uri  # lazy: credentials and TLS, 8 ms of the start

    spec = load_spec(changefeed_id)
    feed = metastore.get_feed(spec.id)
    if simple:
        return status_view.simple(feed, spec)
    out = status_view.detail(spec, feed)
    del out["checkpoint_ts"]  # the CLI says checkpoint_tso; the HTTP API checkpoint_ts
    runs = metastore.recent_runs(spec.id, limit=max(last_runs, lag_points))
    out["cdcflow"] = {
        **status_view.extras(spec, feed),
        "upstream": parse_source_uri(spec.source_uri).redacted(),
        "checkpoint_position": feed.checkpoint_pos,
        "last_runs": [status_view.run_summary(r) for r in runs[:last_runs]],
        "last_verify": status_view.verify_summary(verify_results.last(spec.id)),
    }
    if lag_points:  # the lag at the end of each run, then the lag now
        out["cdcflow"]["lag_history"] = status_view.lag_history(runs[:lag_points], out["cdcflow"]["lag"])
    return out


def status(changefeed_id: str) -> dict:
    """OpenAPI v2's `GET /changefeeds/{id}/status`: state, checkpoint and resolved ts, and the
    last error or warning (status_view.status)."""
    from cdcflow.changefeed import status_view  # lazy: as in query

    return status_view.status(metastore.get_feed(load_spec(changefeed_id).id))


def cycle(changefeed_id: str, run_id: str) -> dict:
    """One cycle as query's last runs show it (status_view.run_summary), and `superseded_by`: the
    cycle that replaced it while it was open, None unless one did.  What a stage launched in a
    process of its own (spark-submit) reads back of its cycle once that process ended.  Raises a
    CdcflowError when the changefeed has no such cycle."""
    from cdcflow.changefeed import status_view  # lazy: as in query

    run = metastore.get_run(changefeed_id, run_id)
    by = (run.stats or {}).get("superseded_by") if run.status == metastore.SUPERSEDED else None
    return {**status_view.run_summary(run), "superseded_by": by}


def list_changefeeds(include_ended: bool = False) -> list[dict]:
    """`changefeed list`: finished and removed ones only with `include_ended`."""
    from cdcflow.changefeed import status_view  # lazy: as in query

    return [status_view.list_item(feed) for _, feed in status_view.all_feeds()
            if include_ended or feed.state not in (states.FINISHED, states.REMOVED)]


def pause(changefeed_id: str, words: Words = CLI) -> tuple[str, str]:
    """①: stop the changefeed; its cycles do nothing until it is resumed."""
    spec, feed = _load(changefeed_id)
    states.next_state(feed.state, "pause", spec.id, words)  # refused in `words` before anything changes
    return feed.state, feed_state.pause(spec.id, feed)


def follow_switch(changefeed_id: str, paused: bool, words: Words = CLI) -> str | None:
    """The changefeed follows an on/off switch kept outside cdcflow (Airflow's DAG toggle):
    switched off, it is paused (① where its state takes a pause); switched on, a stopped changefeed
    is resumed (②).  None when its state takes no such step (already stopped, finished, failed: a
    failed changefeed is resumed on purpose, after its cause is fixed) or it has no spec.
    Returns the new state."""
    if not spec_exists(changefeed_id):
        return None
    state = metastore.get_feed(changefeed_id).state
    if paused and states.TRANSITIONS.get((state, "pause")):
        return pause(changefeed_id, words)[1]
    if not paused and state == states.STOPPED:
        return resume(changefeed_id, words=words)[1]
    return None


def resume(changefeed_id: str, overwrite_checkpoint_ts: int | None = None,
           confirm: Callable[[str], bool] | None = None, words: Words = CLI,
           dry_run: bool = False) -> tuple[str, str, int]:
    """② / ⑨: back to normal, from the checkpoint or from `overwrite_checkpoint_ts`.
    Returns (old state, new state, checkpoint ts).  Every check runs before anything is asked
    or changed; `dry_run` stops there (the page asks its question with the ts resolved), and
    refusals use `words` (the CLI's, or the page's)."""
    spec, feed = _load(changefeed_id)
    # refused before anything is looked up
    new_state, _ = states.next_state(feed.state, "resume", spec.id, words)
    lifecycle.check_resumable(feed, overwrite=overwrite_checkpoint_ts is not None, words=words)
    from cdcflow.core.uri import default_server_id, parse_source_uri  # lazy: credentials and TLS, 8 ms of the start
    from cdcflow.source.binlog import available_logs, position_for_ts, replay_horizon  # lazy: binlog reading, 40 ms

    source = parse_source_uri(spec.source_uri)
    values: dict = {}
    if overwrite_checkpoint_ts is not None:
        ts = _checkpoint_arg(spec.id, overwrite_checkpoint_ts, words)
        pos = position_for_ts(source, source.server_id or default_server_id(spec.id), ts, spec.id,
                              words.field("overwrite_checkpoint_ts"))
        if dry_run:
            return feed.state, new_state, ts
        question = (f"You are overwriting the checkpoint of changefeed {spec.id} from {feed.checkpoint_ts} "
                    f"({tso.to_text(feed.checkpoint_ts)}) to {ts} ({tso.to_text(ts)}), which may replicate "
                    "changes again or skip changes. Continue? [y/N] ")
        if confirm is not None and not confirm(question):
            raise CdcflowError("resume cancelled: the checkpoint was not overwritten", changefeed=spec.id,
                               code=CLI_ABORTED, hint="answer y to overwrite it, or pass --no-confirm")
        if ts > feed.checkpoint_ts:
            # the DDLs skipped over are never read: track the schema from the catalogue as it is now,
            # as create does for its start-ts (versions before a backward move stay valid)
            schema_versions.snapshot(spec.id, source, ts)
        # the resolved ts only moves forward by itself: an overwrite sets it with the checkpoint, and
        # keeps the replay horizon out of the future, which repairs a changefeed an older cdcflow let
        # a backfill move there
        now = tso.now()
        values.update(checkpoint_ts=ts, checkpoint_pos=pos.to_dict(), ddl_in_flight_ts=None, resolved_ts=ts,
                      replay_until=replay_horizon(ts, min(feed.replay_until, now), min(feed.checkpoint_ts, now)))
    else:
        command_checks.check_upstream_holds(spec.id, source, feed, available_logs, words)
        if dry_run:
            return feed.state, new_state, feed.checkpoint_ts
    new = feed_state.resume(spec.id, feed, **values)
    return feed.state, new, values.get("checkpoint_ts", feed.checkpoint_ts)


def _checkpoint_arg(changefeed_id: str, ts: int, words: Words) -> int:
    name = words.field("overwrite_checkpoint_ts")
    if ts <= 0:
        raise CdcflowError(f"{name} must be positive", changefeed=changefeed_id,
                           code=CLI_INVALID_CHECKPOINT_TS, hint="give 'now', a TSO or a UTC date-time")
    return ts_input.not_in_future(ts, name, changefeed_id, CLI_CHECKPOINT_TS_IN_FUTURE,
                                  hint="give 'now' or an earlier ts; nothing was changed")


def update(changefeed_id: str, *, target_ts: int | None = None, config_path: str | None = None,
           sink_uri: str | None = None, source_uri: str | None = None,
           confirm: Callable[[dict], bool] | None = None, copy_tables: bool = True) -> dict:
    """Change target-ts, config, sink URI or source URI of a stopped or failed changefeed (as
    TiCDC allows; a new source: command_checks.check_new_source).  A config file is laid over
    the current config, as TiCDC's update decodes it onto the changefeed's
    (config_update.overlay): keys it leaves out keep their values.  Every value is checked first; then `confirm(changes)` (the CLI shows the
    diff and asks) decides before anything is written.  A config whose filter takes in tables
    the upstream has makes them join with their existing rows, as add-tables does (`copy_tables`
    False: they replicate from the checkpoint on, without them): `table_copies` in the changes.
    Returns {field: (old, new)} of what
    changes (config_text: the texts; upstream_id with a source that is another server); {} when
    the values given are the changefeed's own, and nothing is written."""
    spec, feed = _load(changefeed_id)
    if feed.state not in UPDATABLE_STATES:
        raise CdcflowError(
            f"can only be updated while stopped or failed; it is {feed.state}",
            changefeed=spec.id, code=CHANGEFEED_UPDATE_REFUSED,
            hint=f"pause it first: `cdcflow changefeed pause -c {spec.id}`",
        )
    if target_ts is None and config_path is None and sink_uri is None and source_uri is None:
        raise CdcflowError("nothing to update", changefeed=spec.id, code=CHANGEFEED_UPDATE_REFUSED,
                           hint="give --target-ts, --config, --sink-uri or --source-uri")
    changes, gtid = _update_changes(spec, feed, target_ts, config_path, sink_uri, source_uri, copy_tables)
    if not changes:
        return {}
    if confirm is not None and not confirm(changes):
        raise CdcflowError("update cancelled: nothing was changed", changefeed=spec.id, code=CLI_ABORTED,
                           hint="answer y to apply the changes shown, or pass --no-confirm")
    if "source_uri" in changes:
        _record_new_source(spec.id, feed, gtid)  # before the spec: see there
    copies = changes.get("table_copies", (None, None))[1]
    if copies:  # recorded before the filter names them: a table the filter names joins only by its copy
        table_copies.request(spec.id, copies, table_copies.ADD)
    for name, (_, new) in changes.items():
        if name != "table_copies":
            setattr(spec, name, new)
    save_spec(spec)
    return changes


def _update_changes(spec: Spec, feed: metastore.FeedState, target_ts: int | None, config_path: str | None,
                    sink_uri: str | None, source_uri: str | None, copy_tables: bool) -> tuple[dict, str | None]:
    """update's {field: (old, new)} of the values given that differ from the changefeed's, each
    checked, and the GTID position a new source continues from (command_checks.check_new_source)."""
    changes: dict = {}
    if target_ts is not None and target_ts != spec.target_ts:
        ts = target_ts
        if ts and ts <= feed.checkpoint_ts:
            raise CdcflowError(f"target-ts {ts} ({tso.to_text(ts)}) is not after the checkpoint "
                               f"{feed.checkpoint_ts} ({tso.to_text(feed.checkpoint_ts)})", changefeed=spec.id,
                               code=CHANGEFEED_UPDATE_REFUSED, hint="give a later --target-ts (0: none)")
        changes["target_ts"] = (spec.target_ts, ts)
    if config_path is not None:
        text = command_checks.new_config_text(spec, config_path)
        if config_update.changed_keys(spec.config_text, text):
            changes["config_text"] = (spec.config_text, text)
            joining = table_commands.joining_by_update(spec, text) if copy_tables else []
            if joining:
                changes["table_copies"] = ([], joining)
    if sink_uri is not None and sink_uri != spec.sink_uri:
        from cdcflow.core.uri import parse_sink_uri  # lazy: credentials and TLS, 8 ms of the start

        new_sink = parse_sink_uri(sink_uri)
        command_checks.check_credentials(spec.id, new_sink)
        command_checks.check_sink_reachable(new_sink, spec.id)
        changes["sink_uri"] = (spec.sink_uri, sink_uri)
    gtid = None
    if source_uri is not None and source_uri != spec.source_uri:
        gtid, new_id = command_checks.check_new_source(spec.id, feed, source_uri)
        changes["source_uri"] = (spec.source_uri, source_uri)
        if new_id != spec.upstream_id:
            changes["upstream_id"] = (spec.upstream_id, new_id)
    return changes, gtid


def _record_new_source(changefeed_id: str, feed: metastore.FeedState, gtid: str | None) -> None:
    """The checkpoint keeps its ts and GTID position and loses its binlog file and offset, which
    name nothing on another server; DDLs and rows up to now are read as replays (safe mode), for
    transactions of the checkpoint that a server interleaving several GTID domains otherwise has
    after the located start.  Recorded before the spec: a crash in between leaves the old source
    with a GTID-only checkpoint, which prepare locates on it just as well."""
    metastore.update_feed(changefeed_id, checkpoint_pos={"file": None, "pos": None, "gtid": gtid},
                          replay_until=max(feed.replay_until, tso.now()))


def skip_ddl(changefeed_id: str, commit_ts: int) -> str:
    """Get past one DDL the downstream rejects (like DM's `binlog skip`): the DDL at that commit
    ts is not replicated; every other event still is.  Returns the changefeed's id."""
    spec = load_spec(changefeed_id)
    feed = metastore.get_feed(spec.id)
    _check_not_past(spec.id, feed, commit_ts)
    metastore.update_feed(spec.id, skip_ddl=feed.skip_ddl + [commit_ts])
    return spec.id


def replace_ddl(changefeed_id: str, commit_ts: int, sql: list[str]) -> tuple[str, list[str]]:
    """Run other statements downstream instead of the one DDL at a commit ts (like DM's `binlog
    replace`); only while the changefeed is stopped or failed, so no cycle is past its filter.
    Returns the changefeed's id and the statements stored."""
    spec = load_spec(changefeed_id)
    feed = metastore.get_feed(spec.id)
    if feed.state not in UPDATABLE_STATES:
        raise CdcflowError(f"changefeed {spec.id} is {feed.state}: a DDL can be replaced only while it is "
                           "stopped or failed", changefeed=spec.id,
                           hint=f"`cdcflow changefeed pause -c {spec.id}` first")
    _check_not_past(spec.id, feed, commit_ts)
    statements = [q.strip().rstrip(";").strip() for q in sql if q.strip().rstrip(";").strip()]
    if not statements:
        raise CdcflowError("--sql is empty", changefeed=spec.id,
                           hint="to drop the DDL without a replacement use `cdcflow changefeed skip-ddl`")
    ddl_replacements.store(spec.id, commit_ts, statements)
    return spec.id, statements


def _check_not_past(changefeed_id: str, feed: metastore.FeedState, commit_ts: int) -> None:
    if commit_ts <= feed.checkpoint_ts:
        raise CdcflowError(f"commit ts {commit_ts} is at or below the checkpoint {feed.checkpoint_ts}: "
                           "that DDL is already past", changefeed=changefeed_id,
                           hint="give the commit ts from the changefeed's error (cdcflow changefeed query)")


def remove(changefeed_id: str) -> str:
    """Delete the changefeed and everything it owns.  Returns its id."""
    from cdcflow.store.removal import remove_changefeed  # lazy: with the event store's Arrow, 400 ms

    spec = load_spec(changefeed_id)
    remove_changefeed(spec)
    return spec.id


def _checkpoint_moves(changefeed_id: str, catch_up: Callable[[], object] | None) -> Callable[[], bool]:
    """verify's `checkpoint_moves`: whether waiting for the checkpoint can help (the state runs
    cycles), after running one with `catch_up` when the caller gives it."""
    def moves() -> bool:
        if catch_up is not None and metastore.get_feed(changefeed_id).state in states.RUNNING_STATES:
            catch_up()
        return metastore.get_feed(changefeed_id).state in states.RUNNING_STATES
    return moves


def verify(changefeed_id: str, *, tables: list[str] | None = None, chunk_size: int | None = None,
           wait_seconds: float | None = None, fix_sql: str | None = None,
           catch_up: Callable[[], object] | None = None) -> dict:
    """Compare the changefeed's tables upstream and downstream (cdcflow.verify), keep the
    result as the changefeed's last, and write the fix SQL to `fix_sql` when given.
    `tables` (filter rules) narrows the tables, None values keep VerifyOptions' defaults;
    the changefeed's `shuffle-partitions` chunks are compared at once.  `catch_up` (a launcher
    that runs cycles itself: the DAG's verify, whose own run keeps the scheduled catch-up from
    starting) runs a cycle before the comparison and whenever it waits for the checkpoint, instead
    of waiting for another launcher's cycle."""
    from cdcflow.core.uri import parse_sink_uri, parse_source_uri  # lazy: credentials and TLS, 8 ms of the start
    from cdcflow.verify import VerifyOptions, verify as run_verify  # lazy: chunk planner and comparers, 100 ms

    spec = load_spec(changefeed_id)
    metastore.get_feed(spec.id)
    cfg = spec.config()
    given = {"tables": tables, "chunk_size": chunk_size, "wait_seconds": wait_seconds}
    options = VerifyOptions(workers=cfg.shuffle_partitions, **{k: v for k, v in given.items() if v is not None})
    source, sink = parse_source_uri(spec.source_uri), parse_sink_uri(spec.sink_uri)
    if catch_up is not None:
        catch_up()
    try:
        up_args, down_args = _connection_args(source, sink, cfg)
        result, fix = run_verify(
            spec.id, source, up_args, down_args, list(cfg.rules), cfg.case_sensitive, options,
            _checkpoint_moves(spec.id, catch_up))
    except CdcflowError as e:
        raise e.with_context(changefeed=spec.id) from None
    if fix_sql:
        try:
            with open(fix_sql, "w", encoding="utf-8") as f:
                f.write(fix)
        except OSError as e:
            raise CdcflowError(f"cannot write the fix SQL to {fix_sql}: {e.strerror}", changefeed=spec.id,
                               hint="give a --fix-sql path in a folder you can write") from None
        result["fix_sql"] = fix_sql
    verify_results.save(spec.id, result)
    return result
