"""`cdcflow` — the command line, shaped like TiCDC's `cdc cli changefeed`."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import traceback

from cdcflow.changefeed import states
from cdcflow.core import tso
from cdcflow.core.errors import CHANGEFEED_ALREADY_EXISTS, CdcflowError
from cdcflow.ddl import replace
from cdcflow.store import metastore, schema_versions


def _emit(data) -> None:
    print(json.dumps(data, indent=2, default=str))


def _ts_arg(text: str) -> int:
    try:
        return tso.parse(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def cmd_create(a) -> int:
    from cdcflow.core.config import parse_config
    from cdcflow.core.home import Spec, save_spec, spec_exists
    from cdcflow.core.uri import (
        default_server_id,
        parse_sink_uri,
        parse_source_uri,
        validate_changefeed_id,
    )
    from cdcflow.source.binlog import check_upstream, head_position, position_for_ts, replay_horizon

    cid = validate_changefeed_id(a.changefeed_id)
    if spec_exists(cid):
        raise CdcflowError(f"changefeed {cid} already exists", code=CHANGEFEED_ALREADY_EXISTS,
                           hint="choose another --changefeed-id, or remove the old one first")
    source, sink = parse_source_uri(a.source_uri), parse_sink_uri(a.sink_uri)
    config_text = ""
    if a.config:
        try:
            with open(a.config, encoding="utf-8") as f:
                config_text = f.read()
        except OSError as e:
            raise CdcflowError(f"cannot read config file {a.config}: {e.strerror}") from None
    cfg = parse_config(config_text, source=a.config or "<config>")
    from cdcflow.core.sink_params import merge_sink_options

    merge_sink_options(cfg.sink, dict(sink.params))
    check_upstream(source, cid)
    from cdcflow.changefeed.admin import check_sink_reachable

    check_sink_reachable(sink, cid)
    _check_filter_expressions(cfg, source, cid)
    server_id = source.server_id or default_server_id(cid)
    if a.start_ts:
        start_ts = a.start_ts
        pos = position_for_ts(source, server_id, start_ts, cid)
    else:
        conn = source.connect()
        try:
            pos = head_position(conn)
        finally:
            conn.close()
        start_ts = tso.now()
    if a.target_ts and a.target_ts <= start_ts:
        raise CdcflowError(f"target-ts {a.target_ts} is not after start-ts {start_ts}",
                           changefeed=cid, hint="give a --target-ts later than the start")
    spec = Spec(id=cid, source_uri=a.source_uri, sink_uri=a.sink_uri, config_text=config_text,
                start_ts=start_ts, target_ts=a.target_ts or 0)
    save_spec(spec)
    metastore.create_feed(cid, start_ts, pos.to_dict())
    if a.start_ts:  # the start-ts's second is read again (position_for_ts): its DDLs may be replays
        metastore.update_feed(cid, replay_until=replay_horizon(start_ts))
    replace.delete(cid)  # a re-created changefeed does not inherit an old one's replacements
    # seed 004: the schema starts from the upstream's catalogue; DDLs from the start on evolve it
    tables = schema_versions.snapshot(cid, source, start_ts)
    print("Create changefeed successfully!")
    print(f"ID: {cid}")
    _emit({"upstream": source.redacted(), "sink_uri": sink.redacted(), "start_ts": start_ts,
           "target_ts": a.target_ts or 0, "start_position": pos.to_dict(), "server_id": server_id,
           "tracked_tables": tables,
           "config": cfg.to_dict()})
    return 0


def _check_filter_expressions(cfg, source, cid: str) -> None:
    """Value expressions are checked against the upstream's tables now, not at the first cycle."""
    from cdcflow.filter import value_expr

    if not value_expr.has_expressions(cfg):
        return
    conn = source.connect()
    try:
        columns = value_expr.upstream_columns(conn)
    finally:
        conn.close()
    value_expr.check_expressions(cfg, columns, cid)


def cmd_query(a) -> int:
    from cdcflow.changefeed import status_view
    from cdcflow.core.home import load_spec
    from cdcflow.core.uri import parse_source_uri

    spec = load_spec(a.changefeed_id)
    feed = metastore.get_feed(spec.id)
    if a.simple:
        _emit(status_view.simple(feed))
        return 0
    out = status_view.detail(spec, feed)
    del out["checkpoint_ts"]  # the CLI says checkpoint_tso; the HTTP API checkpoint_ts
    runs = metastore.recent_runs(spec.id, limit=5)
    out["cdcflow"] = {
        **status_view.extras(feed),
        "upstream": parse_source_uri(spec.source_uri).redacted(),
        "checkpoint_position": feed.checkpoint_pos,
        "last_runs": [{"run_id": r.run_id, "status": r.status, "started_at": r.started_at,
                       "ended_at": r.ended_at, "error": json.loads(r.error)["message"] if r.error else None}
                      for r in runs],
    }
    _emit(out)
    return 0


def cmd_list(a) -> int:
    from cdcflow.changefeed import status_view

    out = []
    for feed in status_view.all_feeds():
        if not a.all and feed.state in (states.FINISHED, states.REMOVED):
            continue
        out.append(status_view.list_item(feed))
    _emit(out)
    return 0


def cmd_remove(a) -> int:
    from cdcflow.core.home import delete_spec, load_spec
    from cdcflow.store.events import RunFolder

    spec = load_spec(a.changefeed_id)
    folder = RunFolder(spec.config().event_store, spec.id, "x")
    metastore.delete_feed(spec.id)
    schema_versions.delete(spec.id)
    replace.delete(spec.id)
    delete_spec(spec.id)
    _remove_tree(folder)
    print(f"Changefeed {spec.id} removed.")
    return 0


def _remove_tree(folder) -> None:
    import pyarrow.fs as pafs

    parent = folder.root.rsplit("/", 1)[0]
    if folder.fs.get_file_info(parent).type != pafs.FileType.NotFound:
        folder.fs.delete_dir(parent)


def cmd_run(a) -> int:
    from cdcflow.stages import run_cycle

    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s")
    for noisy in ("py4j", "pyspark"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    result = run_cycle(a.changefeed_id, dry_run=a.dry_run)
    _emit(result)
    waiting = (result.get("wait_index") or {}).get("waiting_for")
    if waiting:
        print(f"Changefeed {a.changefeed_id} stopped at commit ts {result['wait_index']['waiting_at']}: the downstream "
              f"still builds {'; '.join(waiting)}. Run again once ADMIN SHOW DDL JOBS shows it synced.",
              file=sys.stderr)
    return 0


def cmd_pause(a) -> int:
    from cdcflow.changefeed import admin

    old, new = admin.pause(a.changefeed_id)
    print(f"Changefeed {a.changefeed_id}: {old} -> {new}")
    return 0


def cmd_resume(a) -> int:
    from cdcflow.changefeed import admin

    confirm = None if a.no_confirm else _ask
    old, new, checkpoint = admin.resume(a.changefeed_id, a.overwrite_checkpoint_ts, confirm)
    print(f"Changefeed {a.changefeed_id}: {old} -> {new}, checkpoint {checkpoint} ({tso.to_text(checkpoint)})")
    return 0


def _ask(question: str) -> bool:
    try:
        answer = input(question)
    except EOFError:
        print(file=sys.stderr)
        return False
    return answer.strip().lower() in ("", "y", "yes")


def cmd_update(a) -> int:
    from cdcflow.changefeed import admin

    changes = admin.update(a.changefeed_id, target_ts=a.target_ts, config_path=a.config, sink_uri=a.sink_uri)
    print(f"Update changefeed {a.changefeed_id} successfully!")
    _emit({name: {"old": _shown(name, old), "new": _shown(name, new)} for name, (old, new) in changes.items()})
    return 0


def _shown(name: str, value):
    if name == "sink_uri":
        from cdcflow.core.uri import parse_sink_uri

        return parse_sink_uri(value).redacted()
    return value


def cmd_skip_ddl(a) -> int:
    """Get past one DDL the downstream rejects (like DM's `binlog skip`): the DDL at that commit
    ts is not replicated; every other event still is."""
    from cdcflow.core.home import load_spec

    spec = load_spec(a.changefeed_id)
    feed = metastore.get_feed(spec.id)
    if a.commit_ts <= feed.checkpoint_ts:
        raise CdcflowError(f"commit ts {a.commit_ts} is at or below the checkpoint {feed.checkpoint_ts}: "
                           "that DDL is already past", changefeed=spec.id,
                           hint="give the commit ts from the changefeed's error (cdcflow changefeed query)")
    metastore.update_feed(spec.id, skip_ddl=feed.skip_ddl + [a.commit_ts])
    print(f"Changefeed {spec.id}: the DDL at commit ts {a.commit_ts} will be skipped; "
          f"resume the changefeed if it has failed")
    return 0


def cmd_replace_ddl(a) -> int:
    """Run other statements downstream instead of the one DDL at a commit ts (like DM's `binlog
    replace`); only while the changefeed is stopped or failed, so no cycle is past its filter."""
    from cdcflow.core.home import load_spec

    spec = load_spec(a.changefeed_id)
    feed = metastore.get_feed(spec.id)
    if feed.state not in (states.STOPPED, states.FAILED):
        raise CdcflowError(f"changefeed {spec.id} is {feed.state}: a DDL can be replaced only while it is "
                           "stopped or failed", changefeed=spec.id,
                           hint=f"`cdcflow changefeed pause -c {spec.id}` first")
    if a.commit_ts <= feed.checkpoint_ts:
        raise CdcflowError(f"commit ts {a.commit_ts} is at or below the checkpoint {feed.checkpoint_ts}: "
                           "that DDL is already past", changefeed=spec.id,
                           hint="give the commit ts from the changefeed's error (cdcflow changefeed query)")
    statements = [q.strip().rstrip(";").strip() for q in a.sql if q.strip().rstrip(";").strip()]
    if not statements:
        raise CdcflowError("--sql is empty", changefeed=spec.id,
                           hint="to drop the DDL without a replacement use `cdcflow changefeed skip-ddl`")
    replace.store(spec.id, a.commit_ts, statements)
    print(f"Changefeed {spec.id}: the DDL at commit ts {a.commit_ts} will be replaced by "
          f"{len(statements)} statement(s); resume the changefeed")
    return 0


def cmd_tso(a) -> int:
    print(tso.now())
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="cdcflow", description="TiCDC-style changefeeds run as Spark jobs")
    p.add_argument("--debug", action="store_true", help="show the full trace of an error")
    top = p.add_subparsers(dest="group", required=True)
    cf = top.add_parser("changefeed", help="manage changefeeds").add_subparsers(dest="command", required=True)

    c = cf.add_parser("create", help="create a changefeed")
    c.add_argument("--changefeed-id", "-c", required=True)
    c.add_argument("--source-uri", required=True, help="mysql://user:password@host:port/ (binlog upstream)")
    c.add_argument("--sink-uri", required=True, help="mysql://… or tidb://… downstream")
    c.add_argument("--config", help="TiCDC changefeed config (TOML)")
    c.add_argument("--start-ts", type=_ts_arg, help="TSO or date-time; default: the upstream's current position")
    c.add_argument("--target-ts", type=_ts_arg, help="TSO or date-time at which the changefeed finishes")
    c.set_defaults(func=cmd_create)

    for name, func, helptext in (("query", cmd_query, "show a changefeed's status"),
                                 ("remove", cmd_remove, "remove a changefeed"),
                                 ("run", cmd_run, "run one catch-up cycle in this process"),
                                 ("pause", cmd_pause, "stop a changefeed (state stopped)"),
                                 ("resume", cmd_resume, "resume a stopped or failed changefeed"),
                                 ("update", cmd_update, "change a stopped or failed changefeed")):
        s = cf.add_parser(name, help=helptext)
        s.add_argument("--changefeed-id", "-c", required=True)
        s.set_defaults(func=func)
        if name == "query":
            s.add_argument("--simple", "-s", action="store_true", help="only id, state, checkpoint and error")
        if name == "run":
            s.add_argument("--dry-run", action="store_true", help="report what would be applied, apply nothing")
        if name == "resume":
            s.add_argument("--overwrite-checkpoint-ts", type=_ts_arg, metavar="TS|now",
                           help="resume from this TSO or date-time ('now': the current TSO) instead of the checkpoint")
            s.add_argument("--no-confirm", action="store_true", help="do not ask before overwriting the checkpoint")
        if name == "update":
            s.add_argument("--target-ts", type=_ts_arg, help="TSO or date-time at which it finishes (0: never)")
            s.add_argument("--config", help="a new TiCDC changefeed config (TOML)")
            s.add_argument("--sink-uri", help="a new downstream URI")
    sk = cf.add_parser("skip-ddl", help="skip the one DDL at a commit ts (a DDL the downstream rejects)")
    sk.add_argument("--changefeed-id", "-c", required=True)
    sk.add_argument("--commit-ts", type=_ts_arg, required=True)
    sk.set_defaults(func=cmd_skip_ddl)
    rp = cf.add_parser("replace-ddl", help="run other statements instead of the one DDL at a commit ts")
    rp.add_argument("--changefeed-id", "-c", required=True)
    rp.add_argument("--commit-ts", type=_ts_arg, required=True)
    rp.add_argument("--sql", action="append", required=True,
                    help="a statement to run instead (repeat for several, run in order)")
    rp.set_defaults(func=cmd_replace_ddl)
    ls = cf.add_parser("list", help="list changefeeds")
    ls.add_argument("--all", "-a", action="store_true", help="include finished and removed ones")
    ls.set_defaults(func=cmd_list)

    t = top.add_parser("tso", help="timestamps").add_subparsers(dest="command", required=True)
    t.add_parser("query", help="print the current TSO").set_defaults(func=cmd_tso)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except CdcflowError as e:
        if args.debug:
            traceback.print_exc()
        print(f"Error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("Error: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - anything else is a bug; still one line unless --debug
        if args.debug:
            traceback.print_exc()
        cid = getattr(args, "changefeed_id", None)
        where = f"changefeed {cid}: " if cid else ""
        print(f"Error: {where}{type(e).__name__}: {e} (run with --debug for the trace)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
