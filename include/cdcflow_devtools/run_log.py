"""A long command's output kept in a log file, with only its progress on the terminal.

`make demo` and `make dag-test` run `airflow dags test`, whose output is a few hundred lines
of Airflow's and Spark's logging; a person following the run needs which task runs, what
each stage moved (cdcflow's structured event lines) and any warning or error.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

from cdcflow.core import log_line

# structlog's console line: "<time> [<level>] <message> [<logger>] key=value ..."
_LINE = re.compile(r"^\S+ \[(?P<level>\w+)\s*\] (?P<msg>.*?) \[(?P<logger>[\w.]+)\](?: \S+=.*)?$")
_TASK = re.compile(r"\[DAG TEST\] (?:starting task_id=(?P<start>\w+)|end task task_id=(?P<end>\w+))")
_RUN_END = re.compile(r"DagRun Finished: .*?state=(?P<state>\w+)")

# cdcflow's events worth a line, and the fields of each that say what moved
EVENTS = {
    "window": ("checkpoint_ts", "dry_run"),
    "pulled": ("events", "transactions", "seconds"),
    "empty window": ("checkpoint_after",),
    "ddl skipped": ("commit_ts", "name", "why"),
    "filtered": ("kept_ddl", "skipped_ddl", "kept_tables", "tables", "dropped_tables"),
    "barriers": ("segments",),
    "applied": ("rows_in", "rows_written", "statements", "ddl_applied", "seconds"),
    "finished": ("state", "checkpoint_time", "error"),
    "skip": ("reason",),
    "superseded": ("by",),
}


def progress_line(line: str) -> str | None:
    """What a person following the run should see of one output line, or None."""
    m = _LINE.match(line.rstrip("\n"))
    if not m:
        return None
    level, msg = m["level"], m["msg"]
    event = log_line.parse(msg) if m["logger"] == "cdcflow" else None
    if event is not None:
        fields = EVENTS.get(event["event"])
        if fields is None:
            return None
        said = ", ".join(f"{k} {event[k]}" for k in fields if event.get(k) not in (None, [], ""))
        return f"    {event['event']}: {said}"
    task = _TASK.search(msg)
    if task:
        return f"  task {task['start']} ..." if task["start"] else None
    run = _RUN_END.search(msg)
    if run:
        return f"  DAG run {run['state']}"
    if level in ("error", "critical") or (level == "warning" and m["logger"].startswith("cdcflow")):
        return f"  {level.upper()}: {msg}"
    return None


def run_logged(cmd: list[str], log_path: Path, show: Callable[[str], None] = print, **popen) -> int:
    """Run `cmd` with its whole output in `log_path`, showing only its progress lines."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w") as log, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                                     text=True, bufsize=1, **popen) as proc:
        for line in proc.stdout:
            log.write(line)
            said = progress_line(line)
            if said:
                show(said)
        return proc.wait()
