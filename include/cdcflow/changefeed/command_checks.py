"""What create, resume and update check before they write anything: a config file that reads
and parses, a filter whose rules compile, credentials that resolve, an upstream and a sink that
answer, foreign keys the changefeed can keep, an upstream that still holds the checkpoint's
binlog, and a new source that can continue the checkpoint.  Each refusal names the changefeed."""

from __future__ import annotations

from cdcflow.changefeed import config_update, upstream_id
from cdcflow.config.parsing import parse_config
from cdcflow.config.spec_store import Spec
from cdcflow.core.errors import MYSQL_CONNECTION_ERROR, UPSTREAM_UNREACHABLE, CdcflowError
from cdcflow.core.wording import Words
from cdcflow.filter import cascade_fk
from cdcflow.filter.assembled import Filter
from cdcflow.store import metastore


def read_config(path: str, changefeed_id: str | None = None) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise CdcflowError(f"cannot read config file {path}: {e.strerror}", changefeed=changefeed_id) from None


def check_filter_rules(cfg, changefeed_id: str) -> Filter:
    """The changefeed's filter, once its rules and the event-filter matchers compile (else a
    cycle would fail on them)."""
    try:
        return Filter.build(cfg)
    except CdcflowError as e:
        raise e.with_context(changefeed=changefeed_id) from None


def check_foreign_keys(tf, source, sink, changefeed_id: str) -> None:
    conn, down = source.connect(), sink.connect()
    try:
        cascade_fk.check_catalogue(conn, tf, changefeed_id, down)
    finally:
        conn.close()
        down.close()


def check_upstream_holds(changefeed_id: str, source, feed: metastore.FeedState, available_logs,
                         words: Words) -> None:
    """TiCDC refuses to resume below the GC safepoint; here: from a binlog already purged."""
    from cdcflow.source.binlog import check_checkpoint_held  # lazy: binlog reading, 40 ms, not for every command

    try:
        conn = source.connect()
    except CdcflowError:
        raise  # a password reference that does not resolve says so itself
    except Exception as e:  # noqa: BLE001 - any connection failure means the same to the operator
        raise CdcflowError(f"cannot reach the upstream {source.redacted()} to check its binlogs: {e}",
                           changefeed=changefeed_id, code=UPSTREAM_UNREACHABLE,
                           hint="start the upstream, then resume again") from None
    try:
        logs = available_logs(conn)
    finally:
        conn.close()
    try:
        check_checkpoint_held(logs, feed.checkpoint_pos, feed.checkpoint_ts, words)
    except CdcflowError as e:
        raise e.with_context(changefeed=changefeed_id)


def check_credentials(changefeed_id: str, *uris) -> None:
    """A password given by reference (core.credentials) must resolve now, not at the first cycle."""
    for uri in uris:
        try:
            uri.connection_args()
        except CdcflowError as e:
            raise e.with_context(changefeed=changefeed_id) from None


def check_sink_reachable(sink, changefeed_id: str) -> None:
    """As TiCDC validates the sink at create and update: a downstream that cannot be reached
    is refused there, not found out at the first cycle with rows to write."""
    try:
        sink.connect().close()
    except CdcflowError:
        raise  # a password reference that does not resolve says so itself
    except Exception as e:  # noqa: BLE001 - any connection failure means the same to the operator
        raise CdcflowError(f"cannot connect to the sink {sink.redacted()}: {e}", changefeed=changefeed_id,
                           code=MYSQL_CONNECTION_ERROR,
                           hint="check the sink URI's host, port, user and password, and that the server runs") from None


def new_config_text(spec: Spec, config_path: str) -> str:
    """The file's config laid over the changefeed's: refused unless the file, and the result,
    validate (a file of its own may still combine badly with what it leaves out, e.g.
    cdcflow.spark-remote given where the changefeed sets spark-master)."""
    text = read_config(config_path, spec.id)
    check_filter_rules(parsed_config(text, config_path, spec.id), spec.id)
    merged = config_update.overlay(spec.config_text, text)
    check_filter_rules(parsed_config(merged, f"{config_path} over changefeed {spec.id}'s config", spec.id), spec.id)
    return merged


def parsed_config(text: str, source: str, changefeed_id: str):
    """parse_config, its refusal naming the changefeed."""
    try:
        return parse_config(text, source=source)
    except CdcflowError as e:
        raise e.with_context(changefeed=changefeed_id) from None


def check_new_source(changefeed_id: str, feed: metastore.FeedState, source_uri: str) -> tuple[str | None, int]:
    """A new upstream for the changefeed (a replica promoted after its primary was lost):
    refused unless that server can continue the checkpoint's GTID position
    (source.gtid_locate.locate, the check the next cycle's prepare repeats where it locates the
    start).  Returns (that GTID position, the new server's upstream id)."""
    from cdcflow.core.uri import parse_source_uri  # lazy: credentials and TLS, 8 ms of the start
    from cdcflow.source.binlog import check_upstream, connect_upstream  # lazy: binlog reading, 40 ms
    from cdcflow.source.gtid_locate import locate  # lazy: with source.binlog

    source = parse_source_uri(source_uri)
    check_credentials(changefeed_id, source)
    check_upstream(source, changefeed_id)
    gtid = (feed.checkpoint_pos or {}).get("gtid")
    conn = connect_upstream(source, changefeed_id)
    try:
        locate(conn, gtid, changefeed_id, feed.checkpoint_ts, source.redacted())
        return gtid, upstream_id.read(conn)
    finally:
        conn.close()
