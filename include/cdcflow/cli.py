"""`cdcflow` — the command line, shaped like TiCDC's `cdc cli changefeed`."""

from __future__ import annotations

import argparse
import atexit
import gc
import json
import logging
import os
import signal
import sys
import threading
import traceback

from cdcflow.changefeed import commands, config_update, states
from cdcflow.core import pandas_hold, tso
from cdcflow.core.duration import go_duration_ns
from cdcflow.core.errors import CdcflowError
from cdcflow.core.suggest import did_you_mean


def _emit(data) -> None:
    print(json.dumps(data, indent=2, default=str))


def _ts_arg(text: str) -> int:
    try:
        return tso.parse(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def cmd_create(a) -> int:
    snapshot = {"chunk_size": a.snapshot_chunk_size, "workers": a.snapshot_workers} if a.snapshot else None

    def spark_for(cfg, **how):
        from cdcflow.launch.sessions import session_for  # lazy: Spark's session, only when a copy runs

        return session_for(cfg, a.changefeed_id, a.spark_remote, **how)

    def report(p: dict) -> None:
        from cdcflow.snapshot.chunk_copies import progress_line  # lazy: the copy's planner, 150 ms, only for --snapshot

        print(progress_line(a.changefeed_id, p), file=sys.stderr, flush=True)

    info = commands.create(a.changefeed_id, a.source_uri, a.sink_uri, a.config, a.start_ts, a.target_ts,
                           snapshot=snapshot, spark_for=spark_for, report=report, paused=a.pause)
    print("Create changefeed successfully!")
    print(f"ID: {a.changefeed_id}")
    _emit(info)
    if a.pause:
        print(f"Changefeed {a.changefeed_id} is stopped until `cdcflow changefeed resume -c {a.changefeed_id}`",
              file=sys.stderr)
    return 0


def cmd_query(a) -> int:
    _emit(commands.query(a.changefeed_id, simple=a.simple))
    return 0


def cmd_list(a) -> int:
    _emit(commands.list_changefeeds(include_ended=a.all))
    return 0


def cmd_remove(a) -> int:
    print(f"Changefeed {commands.remove(a.changefeed_id)} removed.")
    return 0


def cmd_run(a) -> int:
    from cdcflow.launch.in_process import run_cycle  # lazy: the stages, Spark and Arrow, 500 ms

    if a.follow is not None and a.dry_run:
        raise CdcflowError(f"changefeed {a.changefeed_id}: --follow runs cycles that apply; a dry run moves no "
                           "checkpoint, so it would plan the same window again and again",
                           hint="run --dry-run once, without --follow")
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s")
    for noisy in ("py4j", "pyspark"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    if a.follow is not None:
        return _follow(a)
    try:
        result = run_cycle(a.changefeed_id, dry_run=a.dry_run, spark_remote=a.spark_remote)
    except KeyboardInterrupt:
        return _interrupted(a.changefeed_id)
    _emit(result)
    waiting = (result.get("wait_index") or {}).get("waiting_for")
    if waiting:
        print(f"Changefeed {a.changefeed_id} stopped at commit ts {result['wait_index']['waiting_at']}: the downstream "
              f"still builds {'; '.join(waiting)}. Run again once ADMIN SHOW DDL JOBS shows it synced.",
              file=sys.stderr)
    return 0


def _interrupted(changefeed_id: str) -> int:
    """A cycle Ctrl-C stopped (stages.cycle.recording recorded it, finish left the changefeed as
    it was): where the changefeed stands, in one line; 130, as a shell reports SIGINT."""
    from cdcflow.store import metastore  # lazy: as run_cycle

    feed = metastore.get_feed(changefeed_id)
    print(f"Error: changefeed {changefeed_id}: the cycle was interrupted; the changefeed is {feed.state} at "
          f"checkpoint {feed.checkpoint_ts} ({tso.to_text(feed.checkpoint_ts)}), and nothing is lost: "
          f"`cdcflow changefeed run -c {changefeed_id}` goes on from there", file=sys.stderr)
    return 130


def _follow(a) -> int:
    """run --follow: a JSON line per cycle on stdout, each cycle's error and the end on stderr;
    1 where the changefeed ended failed, 130 where a second signal cut a cycle short."""
    from cdcflow.launch.follow import Followed, follow  # lazy: as run_cycle

    def cycle(result: dict) -> None:
        print(json.dumps(result, default=str), flush=True)

    def error(e: CdcflowError) -> None:
        print(f"Error: {e}", file=sys.stderr, flush=True)

    # A follower runs until stopped: SIGTERM (a service manager's stop) or Ctrl-C (even where its
    # starter ignored SIGINT, as a shell does for a background job) ends it after the cycle under
    # way, which an exception inside it would end as a failed stage; a second one stops at once.
    asked: list[int] = []

    def ask_to_stop(signum, frame) -> None:
        if asked:
            raise KeyboardInterrupt
        asked.append(signum)
        print(f"Changefeed {a.changefeed_id}: {signal.Signals(signum).name}: stopping after the cycle under way "
              "(again to stop at once)", file=sys.stderr, flush=True)

    for stop in (signal.SIGINT, signal.SIGTERM):
        signal.signal(stop, ask_to_stop)
    done = Followed()
    try:
        follow(a.changefeed_id, a.follow or None, spark_remote=a.spark_remote, on_cycle=cycle, on_error=error,
               stop=lambda: bool(asked), out=done)
    except KeyboardInterrupt:
        print(f"Changefeed {a.changefeed_id}: following interrupted after {done.cycles} cycle(s), "
              f"{done.errors} error(s)", file=sys.stderr)
        return 130
    print(f"Changefeed {a.changefeed_id}: {done.cycles} cycle(s), {done.errors} error(s); {done.ended}; "
          f"state {done.state}", file=sys.stderr)
    return 1 if done.state == states.FAILED else 0


def cmd_pause(a) -> int:
    old, new = commands.pause(a.changefeed_id)
    print(f"Changefeed {a.changefeed_id}: {old} -> {new}")
    return 0


def cmd_resume(a) -> int:
    confirm = None if a.no_confirm else _ask
    old, new, checkpoint = commands.resume(a.changefeed_id, a.overwrite_checkpoint_ts, confirm)
    print(f"Changefeed {a.changefeed_id}: {old} -> {new}, checkpoint {checkpoint} ({tso.to_text(checkpoint)})")
    return 0


def _ask(question: str) -> bool:
    """A yes/no question whose safe answer is no: only y or yes agrees; Enter, any other answer
    and no answer at all (stdin closed or not readable) decline."""
    try:
        answer = input(question)
    except BrokenPipeError:
        raise  # stdout's reader is gone (main ends quietly), not an answer
    except (EOFError, OSError):
        print(file=sys.stderr)
        return False
    return answer.strip().lower() in ("y", "yes")


def cmd_update(a) -> int:
    def confirm(changes: dict) -> bool:
        """TiCDC's update: the diff, always; then its question unless --no-confirm."""
        print(f"Diff of changefeed {a.changefeed_id}:")
        for name, change in _flat_report(_update_report(changes)).items():
            print(f"  {name}: {json.dumps(change['old'])} -> {json.dumps(change['new'])}")
        return a.no_confirm or _ask(f"Could you agree to apply changes above to changefeed {a.changefeed_id}? "
                                    "[y/N] ")

    changes = commands.update(a.changefeed_id, target_ts=a.target_ts, config_path=a.config, sink_uri=a.sink_uri,
                              source_uri=a.source_uri, confirm=confirm, copy_tables=not a.no_copy)
    if not changes:
        print(f"Changefeed {a.changefeed_id} already has the values given: nothing to update")
        return 0
    print(f"Update changefeed {a.changefeed_id} successfully!")
    _emit(_update_report(changes))
    return 0


def _update_report(changes: dict) -> dict:
    """What update changes, as {field: {old, new}}; a new config as the keys that change
    ("filter.rules": {old, new}), not as two TOML texts; URIs without their passwords."""
    report = {}
    for name, (old, new) in changes.items():
        if name == "config_text":
            report["config"] = {k: {"old": o, "new": n} for k, (o, n) in config_update.changed_keys(old, new).items()}
        elif name in ("sink_uri", "source_uri"):
            from cdcflow.core.uri import parse_sink_uri, parse_source_uri  # lazy: credentials and TLS, 8 ms

            parse = parse_sink_uri if name == "sink_uri" else parse_source_uri
            report[name] = {"old": parse(old).redacted(), "new": parse(new).redacted()}
        else:
            report[name] = {"old": old, "new": new}
    return report


def _flat_report(report: dict) -> dict:
    """_update_report with the config's keys as config.<key>: one line each in the diff."""
    out = {}
    for name, change in report.items():
        if name == "config":
            out.update({f"config.{k}": v for k, v in change.items()})
        else:
            out[name] = change
    return out


def cmd_skip_ddl(a) -> int:
    changefeed_id = commands.skip_ddl(a.changefeed_id, a.commit_ts)
    print(f"Changefeed {changefeed_id}: the DDL at commit ts {a.commit_ts} will be skipped; "
          f"resume the changefeed if it has failed")
    return 0


def cmd_replace_ddl(a) -> int:
    changefeed_id, statements = commands.replace_ddl(a.changefeed_id, a.commit_ts, a.sql)
    print(f"Changefeed {changefeed_id}: the DDL at commit ts {a.commit_ts} will be replaced by "
          f"{len(statements)} statement(s); resume the changefeed")
    return 0


def cmd_table_copy(a) -> int:
    """add-tables / resync-tables: the tables recorded; the cycles join and copy them."""
    from cdcflow.changefeed import table_commands  # lazy: the upstream's catalogue reader, only for these

    act = table_commands.add_tables if a.command == "add-tables" else table_commands.resync_tables
    result = act(a.changefeed_id, a.tables)
    _emit(result)
    print(f"Changefeed {result['changefeed_id']}: {', '.join(result['tables'])} will be copied by the next cycles "
          f"(`cdcflow changefeed query -c {result['changefeed_id']}` shows the copy)", file=sys.stderr)
    return 0


def cmd_verify(a) -> int:
    from cdcflow.verify.comparison import EXIT_CODES, summary_line  # lazy: verify's comparers, 100 ms

    result = commands.verify(a.changefeed_id, tables=a.tables, chunk_size=a.chunk_size,
                             wait_seconds=a.wait, fix_sql=a.fix_sql)
    _emit(result)
    print(summary_line(result), file=sys.stderr)
    return EXIT_CODES[result["status"]]


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return n


def _seconds(text: str) -> float:
    try:
        return float(text) if text.replace(".", "", 1).isdigit() else go_duration_ns(text) / 1e9
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration (seconds, or e.g. 90s, 5m)") from None


def cmd_tso(a) -> int:
    print(tso.now())
    return 0


class _Parser(argparse.ArgumentParser):
    """A wrong argument is one line naming the command and what is wrong, like every other
    error of the CLI (argparse's usage block stays for --help); a mistyped subcommand gets the
    nearest one, as a mistyped config key does (core.suggest)."""

    def error(self, message: str):
        self.exit(2, f"Error: {self.prog}: {message} (see {self.prog} --help)\n")

    def _check_value(self, action, value):
        # argparse's hook for a value outside `choices` (3.11-3.13 call it for a subcommand too), whose
        # own message lists every choice: here the nearest one instead, else the list
        if action.choices is not None and value not in action.choices:
            known = list(action.choices)
            noun = "command" if action.dest in _COMMAND_DESTS else "choice"
            raise argparse.ArgumentError(None, f"unknown {noun} {value!r}; " + (
                did_you_mean(value, known) or f"the {noun}s are {', '.join(known)}"))


_COMMAND_DESTS = ("group", "command")  # the subparsers' dest: what the command line names a command by


COMMIT_TS_HELP = "the DDL's commit ts, as the changefeed's error names it (`changefeed query` shows it)"


def _changefeed_arg(parser: argparse.ArgumentParser) -> None:
    """The changefeed a command acts on: one declaration for every command that takes one."""
    parser.add_argument("--changefeed-id", "-c", required=True, metavar="ID",
                        help="the changefeed's id, as given at create (`changefeed list` shows them)")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="cdcflow", description="TiCDC-style changefeeds run as Spark jobs")
    p.add_argument("--debug", action="store_true", help="show the full trace of an error")
    top = p.add_subparsers(dest="group", required=True)
    cf = top.add_parser("changefeed", help="manage changefeeds").add_subparsers(dest="command", required=True)
    # in the order `cdcflow changefeed --help` lists them
    _create_parser(cf)
    _state_parsers(cf)
    _ddl_parsers(cf)
    _table_copy_parsers(cf)
    _verify_parser(cf)
    ls = cf.add_parser("list", help="list changefeeds")
    ls.add_argument("--all", "-a", action="store_true", help="include finished and removed ones")
    ls.set_defaults(func=cmd_list)

    t = top.add_parser("tso", help="timestamps").add_subparsers(dest="command", required=True)
    t.add_parser("query", help="print the current TSO").set_defaults(func=cmd_tso)
    return p


def _create_parser(cf) -> None:
    """create: a changefeed, from a position or a snapshot."""
    c = cf.add_parser("create", help="create a changefeed")
    _changefeed_arg(c)
    c.add_argument("--source-uri", required=True, help="mysql://user:password@host:port/ (binlog upstream)")
    c.add_argument("--sink-uri", required=True, help="mysql://… or tidb://… downstream")
    c.add_argument("--config", help="TiCDC changefeed config (TOML)")
    c.add_argument("--start-ts", type=_ts_arg, help="TSO or date-time; default: the upstream's current position")
    c.add_argument("--target-ts", type=_ts_arg, help="TSO or date-time at which the changefeed finishes")
    c.add_argument("--snapshot", action="store_true",
                   help="first copy the tables the filter selects, then start at the copy's consistent point "
                        "(again on a changefeed whose copy was stopped: continue it)")
    c.add_argument("--snapshot-chunk-size", type=_positive,
                   help="upstream rows per copied chunk (default: the config's snapshot-chunk-size, 100000)")
    c.add_argument("--snapshot-workers", type=_positive,
                   help="Spark tasks copying chunks at once (default: the config's snapshot-workers, 4)")
    c.add_argument("--spark-remote", metavar="sc://HOST:PORT", help="copy the chunks on this Spark Connect server")
    c.add_argument("--pause", action="store_true",
                   help="create it stopped, as if paused right after: no cycle runs until `changefeed resume` "
                        "(with --snapshot the copy still runs, and it waits stopped at the copy's point)")
    c.set_defaults(func=cmd_create)


def _state_parsers(cf) -> None:
    """The commands on one changefeed's state and runs: query, remove, run, pause, resume, update."""
    for name, func, helptext in (("query", cmd_query, "show a changefeed's status"),
                                 ("remove", cmd_remove, "remove a changefeed"),
                                 ("run", cmd_run, "run one catch-up cycle in this process"),
                                 ("pause", cmd_pause, "stop a changefeed (state stopped)"),
                                 ("resume", cmd_resume, "resume a stopped or failed changefeed"),
                                 ("update", cmd_update, "change a stopped or failed changefeed "
                                                        "(shows the changes and asks first)")):
        s = cf.add_parser(name, help=helptext)
        _changefeed_arg(s)
        s.set_defaults(func=func)
        if name == "query":
            s.add_argument("--simple", "-s", action="store_true", help="only id, state, checkpoint and error")
        if name == "run":
            s.add_argument("--dry-run", action="store_true", help="report what would be applied, apply nothing")
            s.add_argument("--follow", nargs="?", const=0, type=_positive, metavar="SECONDS",
                           help="run cycle after cycle, each as soon as the upstream's binlog moves past the "
                                "checkpoint, for SECONDS (without: until the changefeed stops, or Ctrl-C or SIGTERM, "
                                "which end it after the cycle under way); a JSON line per cycle")
            s.add_argument("--spark-remote", metavar="sc://HOST:PORT",
                           help="run the Spark stages on this Spark Connect server "
                                "(default: the config's cdcflow.spark-remote, else an embedded local[*])")
        if name == "resume":
            s.add_argument("--overwrite-checkpoint-ts", type=_ts_arg, metavar="TS|now",
                           help="resume from this TSO or date-time ('now': the current TSO) instead of the checkpoint")
            s.add_argument("--no-confirm", action="store_true", help="do not ask before overwriting the checkpoint")
        if name == "update":
            s.add_argument("--target-ts", type=_ts_arg, help="TSO or date-time at which it finishes (0: never)")
            s.add_argument("--config", help="a TiCDC changefeed config (TOML) laid over the current one, as TiCDC's "
                                            "update does: keys the file leaves out keep their values")
            s.add_argument("--sink-uri", help="a new downstream URI")
            s.add_argument("--source-uri", help="a new upstream (a promoted replica after a failover): the "
                                                "changefeed continues there from its checkpoint's GTID position")
            s.add_argument("--no-confirm", action="store_true", help="apply the changes without asking")
            s.add_argument("--no-copy", action="store_true",
                           help="tables a wider filter takes in replicate from the checkpoint on, without their "
                                "existing rows (by default they join with them, as add-tables does)")


def _ddl_parsers(cf) -> None:
    """skip-ddl and replace-ddl: the one DDL at a commit ts."""
    sk = cf.add_parser("skip-ddl", help="skip the one DDL at a commit ts (a DDL the downstream rejects)")
    _changefeed_arg(sk)
    sk.add_argument("--commit-ts", type=_ts_arg, required=True, help=COMMIT_TS_HELP)
    sk.set_defaults(func=cmd_skip_ddl)
    rp = cf.add_parser("replace-ddl", help="run other statements instead of the one DDL at a commit ts")
    _changefeed_arg(rp)
    rp.add_argument("--commit-ts", type=_ts_arg, required=True, help=COMMIT_TS_HELP)
    rp.add_argument("--sql", action="append", required=True,
                    help="a statement to run instead (repeat for several, run in order)")
    rp.set_defaults(func=cmd_replace_ddl)


def _table_copy_parsers(cf) -> None:
    """add-tables and resync-tables: tables copied while the changefeed goes on."""
    for name, helptext in (("add-tables", "take tables into the running changefeed with their existing rows "
                                          "(the filter names them from now on; the next cycles copy them)"),
                           ("resync-tables", "copy replicated tables again: each is dropped downstream, created "
                                             "from the upstream's definition and copied, while the changefeed goes on")):
        tc = cf.add_parser(name, help=helptext)
        _changefeed_arg(tc)
        tc.add_argument("--tables", required=True, metavar="SCHEMA.TABLE[,…]",
                        help="the tables, commas between them (quote a part in backticks: `my.db`.t)")
        tc.set_defaults(func=cmd_table_copy)


def _verify_parser(cf) -> None:
    """verify: both sides compared."""
    v = cf.add_parser("verify", help="compare the changefeed's tables upstream and downstream "
                                     "(exit 0 equal, 2 different, 3 not yet applied)")
    _changefeed_arg(v)
    v.add_argument("--tables", nargs="+", metavar="PATTERN",
                   help="only the tables these filter rules keep (e.g. 'shop.*' '!shop.log'), within the changefeed's")
    v.add_argument("--fix-sql", metavar="FILE", help="write the statements that make the downstream equal here")
    v.add_argument("--chunk-size", type=_positive, help="upstream rows per chunk (default 10000)")
    v.add_argument("--wait", type=_seconds, metavar="DURATION",
                   help="how long differing chunks wait for the changefeed to apply what the upstream held "
                        "when they were seen (default 120s)")
    v.add_argument("--spark-remote", metavar="sc://HOST:PORT",
                   help="accepted and unused: verify runs its queries from this command, without Spark")
    v.set_defaults(func=cmd_verify)


def _stop_spark() -> None:
    """Stop the Spark session this process started: the JVM logs while it shuts down, which
    would otherwise follow the closing error line."""
    if "pyspark" not in sys.modules:
        return
    from pyspark import SparkContext  # lazy: only a process that loaded pyspark gets here

    if SparkContext._active_spark_context is not None:
        SparkContext._active_spark_context.stop()
    if "pyspark.sql.connect.session" in sys.modules:  # a Connect session: release it on the server
        from pyspark.sql.connect.session import SparkSession  # lazy: as SparkContext above

        session = SparkSession.getActiveSession()
        if session is not None:
            session.stop()


def entry() -> int:
    """The `cdcflow` command: main() in a process of its own, whose Spark it may stop, and which
    imports pandas only if it runs Spark (core.pandas_hold)."""
    pandas_hold.hold()
    status = main(stop_spark=True)
    _ending()
    _exit_now(status)
    return status


def _ending() -> None:
    """The process ends next: the metadata store's connections are closed now (SQLite folds its
    write-ahead log back into the file as the last one closes, as at any exit), and what is left
    is frozen out of the cyclic collector, whose passes over the loaded modules' objects while
    the interpreter tears them down took 0.4-0.8 s of a CLI cycle.  Output is flushed, logging
    shut down and threads joined at exit as before; objects in a reference cycle are left to
    the end of the process, as the interpreter is free to leave them anyway."""
    if "cdcflow.store.engine" in sys.modules:  # a command that never opened the store loads none of it
        sys.modules["cdcflow.store.engine"].close_all()
    gc.freeze()


def _exit_now(status: int) -> None:
    """End the process without the interpreter's teardown of its 1,000 loaded modules, which
    took 0.02-0.04 s after a cycle's last word: what an exit does that anyone sees is done
    first (the atexit handlers, logging's shutdown among them, and the output flushed).  Only
    where no other thread runs: an exit joins those, and this one could not."""
    if threading.active_count() > 1:
        return
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # an output gone: the interpreter's own exit reports it as before
        return
    os._exit(status)


# a command whose output's reader went away (`cdcflow changefeed list | head -1`) ends as one killed
# by SIGPIPE does in a shell: status 141, nothing on stderr
CLOSED_PIPE_STATUS = 128 + signal.SIGPIPE


def _closed_pipe() -> int:
    """Quiet on a closed stdout: point it at /dev/null, so that Python's flush at exit finds
    nothing to fail on either."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass  # a stdout without a descriptor (captured): nothing is flushed to a pipe at exit
    return CLOSED_PIPE_STATUS


def main(argv: list[str] | None = None, stop_spark: bool = False) -> int:
    try:
        return _run(argv, stop_spark)
    except BrokenPipeError:
        return _closed_pipe()


def _run(argv: list[str] | None, stop_spark: bool) -> int:
    args = build_parser().parse_args(argv)
    try:
        status = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not in the flush at exit
        return status
    except BrokenPipeError:
        raise
    except CdcflowError as e:
        if args.debug:
            traceback.print_exc()
        if stop_spark:
            _stop_spark()
        print(f"Error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("Error: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - anything else is a bug; still one line unless --debug
        if args.debug:
            traceback.print_exc()
        changefeed_id = getattr(args, "changefeed_id", None)
        where = f"changefeed {changefeed_id}: " if changefeed_id else ""
        if stop_spark:
            _stop_spark()
        print(f"Error: {where}{type(e).__name__}: {e} (run with --debug for the trace)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(entry())
