"""The one shape of cdcflow's structured log lines, and the one reader of it.

A line says first, in words, what happened and to which changefeed, then the whole event as
JSON for machines:

    applied · changefeed demo · {"changefeed": "demo", "event": "applied", "run": "r1", "rows_in": 3, ...}

Airflow's log pane, a terminal and `make demo`'s progress show the words first, where a line
that began with the JSON hid the event's name far to the right.  The JSON keeps every field
(the event and the changefeed too), so it reads alone; `parse` gets it back from a line.
"""

from __future__ import annotations

import json

SEP = " · "


def event_line(what: str, changefeed_id: str, **fields) -> str:
    """`<what> · changefeed <id> · <JSON of the event>`; values JSON cannot hold are written as text."""
    data = {"changefeed": changefeed_id, "event": what, **fields}
    return f"{what}{SEP}changefeed {changefeed_id}{SEP}{json.dumps(data, default=str)}"


def parse(text: str) -> dict | None:
    """The event of one log line written by event_line (its message, or a longer line that holds
    it), or None for any other line."""
    head, sep, rest = text.partition(f"{SEP}changefeed ")
    if not sep:
        return None
    _, sep, payload = rest.partition(SEP)
    if not sep or not payload.startswith("{"):
        return None
    try:
        data, _ = json.JSONDecoder().raw_decode(payload)
    except ValueError:
        return None
    return data if isinstance(data, dict) and "event" in data and head.endswith(str(data["event"])) else None
