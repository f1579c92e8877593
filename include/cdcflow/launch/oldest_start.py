"""The oldest start_ts a backfill or dry run of a changefeed can take: the start of the oldest
binlog its upstream still holds (source.binlog.oldest_held; older changes are purged,
ErrStartTsBeforeGC).  Each look is recorded under CDCFLOW_HOME, so the trigger form's
description, built while Airflow parses DAGs (when no upstream may be asked), shows the last
one seen; the page and the trigger checks always ask the upstream."""

from __future__ import annotations

import json
import time

from cdcflow.core import ts_input, tso
from cdcflow.config.spec_store import home, load_spec
from cdcflow.core.uri import default_server_id, parse_source_uri

FOLDER = "oldest-start"


def _path(changefeed_id: str):
    return home() / FOLDER / f"{changefeed_id}.json"


def look(changefeed_id: str) -> dict:
    """The oldest start ts now, asked of the upstream, and recorded: {ts, time, binlog, seen}."""
    from cdcflow.source.binlog import oldest_held  # lazy: the binlog reader, at task and request time only

    source = parse_source_uri(load_spec(changefeed_id).source_uri)
    binlog, ts = oldest_held(source, source.server_id or default_server_id(changefeed_id), changefeed_id)
    found = {"ts": ts, "time": tso.to_text(ts), "binlog": binlog,
             "seen": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())}
    path = _path(changefeed_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(found))
    tmp.replace(path)
    return found


def recorded(changefeed_id: str) -> dict | None:
    """The last look's answer, None before the first (no upstream is asked)."""
    try:
        return json.loads(_path(changefeed_id).read_text())
    except (OSError, ValueError):
        return None


def check_held(changefeed_id: str, start_ts: int, name: str = "start_ts") -> int:
    """`start_ts`, unless the upstream purged the binlog it needs (core.ts_input.not_before_gc)."""
    found = look(changefeed_id)
    return ts_input.not_before_gc(start_ts, name, changefeed_id, found["binlog"], found["ts"])


def in_words(found: dict | None) -> str:
    """The oldest start ts as the trigger form says it.  Without the time it was seen: the form is
    part of the DAG, which Airflow stores as a new version whenever its text changes, so it changes
    only when the oldest binlog does."""
    if found is None:
        return "not looked up yet (the Changefeeds page shows it)"
    return (f"{found['ts']} ({found['time']}, the start of binlog {found['binlog']}; binlogs purged since then "
            "move it later, as the Changefeeds page shows)")
