"""A changefeed DAG's runs as Airflow records them — queued, running, failed, succeeded — merged
with cdcflow's cycle records: the runs list of the Changefeeds page and of the HTTP API.

Airflow's records are read through its ORM in the API server's session (DagRun, TaskInstance,
the prepare task's XCom that names the cycle a run opened); a failed run carries its failed
task, that task's first ERROR line (TaskLogReader, as Airflow's own log view reads it) and the
Airflow UI path of the task's log.  A run whose prepare failed before opening a cycle has no
cycle record: it is here only because Airflow's records are read.  A task Airflow itself failed
before it ran (the task's first call to the API server timed out, its worker was lost) has an
empty log: its error is what Airflow said about it (its audit log's event for the task), and a
task Airflow retries says so while the run goes on.

A run's status is one vocabulary with the cycles' (running, done, failed, superseded): Airflow's
success is "done", and a run whose prepare skipped the cycle for the changefeed's sake is
"skipped (<why>)" (stopped, failed, finished, removed, retry backoff, copy unfinished), not a
success with empty columns.
"""

from __future__ import annotations

import logging

from sqlalchemy import select

log = logging.getLogger(__name__)

ERROR_LINE_CHARS = 500
# Airflow's words in its audit log (the `log` table) when it fails or ends a task itself: the
# executor's task ended before the task ran (the scheduler's "state mismatch"), no heartbeat,
# stuck in queued, a run's fail-fast
AIRFLOW_FAILURE_EVENTS = ("state mismatch", "heartbeat timeout", "stuck in queued tries exceeded", "fail task")
# Airflow's run states in the cycles' words (the run statuses changefeed.commands.query shows)
RUN_STATUS = {"success": "done"}


def utc_text(dt) -> str | None:
    """An Airflow time (aware, UTC) as cdcflow's API writes times."""
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z" if dt else None


def _state(value) -> str | None:
    return None if value is None else str(getattr(value, "value", value))


def airflow_runs(session, dag_id: str, limit: int) -> list[dict]:
    """The DAG's last `limit` runs, newest first, as the page shows them."""
    # lazy: Airflow's ORM, in the API server; Airflow's plugin loader imports this file everywhere
    from airflow.models.dagrun import DagRun
    from airflow.models.taskinstance import TaskInstance
    from airflow.models.xcom import XComModel

    runs = session.scalars(select(DagRun).where(DagRun.dag_id == dag_id).order_by(DagRun.id.desc()).limit(limit)).all()
    if not runs:
        return []
    run_ids = [r.run_id for r in runs]
    pushed: dict[tuple[str, str], object] = {(row.run_id, row.key): XComModel.deserialize_value(row)
                                             for row in session.execute(
        select(XComModel.run_id, XComModel.key, XComModel.value).where(
            XComModel.dag_id == dag_id, XComModel.run_id.in_(run_ids), XComModel.task_id == "prepare",
            XComModel.key.in_(("run_id", "skipped"))))}
    failed: dict[str, TaskInstance] = {}
    for ti in session.scalars(select(TaskInstance).where(
            TaskInstance.dag_id == dag_id, TaskInstance.run_id.in_(run_ids),
            TaskInstance.state.in_(("failed", "up_for_retry"))).order_by(TaskInstance.end_date)):
        failed.setdefault(ti.run_id, ti)  # the first task that failed; the ones after it followed it
    said = _airflow_said(session, dag_id, list(failed.values()))
    out = []
    for run in runs:
        conf = run.conf or {}
        ti = failed.get(run.run_id)
        out.append({
            "dag_run_id": run.run_id, "airflow_state": _state(run.state), "run_type": _state(run.run_type),
            "mode": conf.get("mode") or "catch-up", "conf": conf, "cycle_id": pushed.get((run.run_id, "run_id")),
            "skipped": pushed.get((run.run_id, "skipped")),
            "queued": utc_text(run.queued_at), "started": utc_text(run.start_date), "ended": utc_text(run.end_date),
            "failed_task": ti.task_id if ti else None,
            "error": _task_error(ti, said) if ti else _run_error(run),
            "log_path": (f"dags/{dag_id}/runs/{run.run_id}/tasks/{ti.task_id}?try_number={ti.try_number}"
                         if ti else None),
            "run_path": f"dags/{dag_id}/runs/{run.run_id}",
        })
    return out


def _airflow_said(session, dag_id: str, tis: list) -> dict[tuple[str, str, int | None], str]:
    """What Airflow wrote in its audit log when it failed one of these tasks itself, by (run,
    task, try); the newest event of a try wins."""
    # lazy: Airflow's ORM, in the API server; Airflow's plugin loader imports this file everywhere
    from airflow.models.log import Log

    if not tis:
        return {}
    out = {}
    for row in session.execute(select(Log.run_id, Log.task_id, Log.try_number, Log.event, Log.extra).where(
            Log.dag_id == dag_id, Log.run_id.in_({ti.run_id for ti in tis}),
            Log.task_id.in_({ti.task_id for ti in tis}), Log.event.in_(AIRFLOW_FAILURE_EVENTS)).order_by(Log.id)):
        out[(row.run_id, row.task_id, row.try_number)] = f"{row.event}: {row.extra}" if row.extra else row.event
    return out


def _task_error(ti, said: dict) -> str:
    """A failed (or to be retried) task's error: its log's first ERROR line, else Airflow's word
    on it (a task Airflow could not start writes no line), never nothing."""
    line = _first_error_line(ti)
    if line is None:
        words = said.get((ti.run_id, ti.task_id, ti.try_number))
        line = (f"Airflow: task {ti.task_id} (try {ti.try_number}) {words}" if words else
                f"Airflow: task {ti.task_id} (try {ti.try_number}) ended without an error in its log "
                "(killed, timed out, or it never started)")
        line = line[:ERROR_LINE_CHARS]
    if _state(ti.state) == "up_for_retry":
        return f"{line} — Airflow tries {ti.task_id} again"
    return line


def _run_error(run) -> str | None:
    """Why a run without a failed task failed: Airflow's own doing (marked failed, timed out)."""
    if _state(run.state) != "failed":
        return None
    return "Airflow: the run ended failed without a failed task (marked failed in Airflow, or its timeout)"


def _first_error_line(ti) -> str | None:
    """The first ERROR of the task's log (cdcflow logs its error's one line first)."""
    # lazy: Airflow's ORM, in the API server; Airflow's plugin loader imports this file everywhere
    from airflow.utils.log.log_reader import TaskLogReader

    try:
        messages, _ = TaskLogReader().read_log_chunks(ti, ti.try_number, {})
        for message in messages:
            level = str((message.model_extra or {}).get("level", "")).lower()
            if level in ("error", "critical") and message.event:
                return message.event[:ERROR_LINE_CHARS]
    except Exception:  # noqa: BLE001 - a log that cannot be read leaves the link to it
        log.warning("the log of %s %s %s cannot be read", ti.dag_id, ti.run_id, ti.task_id, exc_info=True)
    return None


def merged(airflow: list[dict], cycles: list[dict], limit: int) -> list[dict]:
    """Airflow's runs with the figures of the cycle each opened, and the cycles no Airflow run
    shows (the CLI's, or a DAG run Airflow no longer keeps), newest first."""
    by_cycle = {c["run_id"]: c for c in cycles}
    rows = []
    for run in airflow:
        cycle = by_cycle.pop(run["cycle_id"], None) if run["cycle_id"] else None
        row = {**(cycle or {}), **{k: v for k, v in run.items() if v is not None or k not in (cycle or {})}}
        row.update(origin="airflow", status=_status(run, cycle), mode=(cycle or run)["mode"],
                   started=run["started"] or (cycle or {}).get("started"),
                   error=(cycle or {}).get("error") or run["error"])
        rows.append(row)
    rows += [{**c, "airflow_state": None} for c in by_cycle.values()]
    rows.sort(key=lambda r: r.get("started") or r.get("queued") or "9999", reverse=True)
    return rows[:limit]


def _status(run: dict, cycle: dict | None) -> str | None:
    """A DAG run's status in the cycles' words: a cycle prepare skipped shows why, a run that
    ran one shows Airflow's state as the cycles say it."""
    if run["skipped"] and cycle is None:
        return f"skipped ({run['skipped']})"
    state = run["airflow_state"]
    return RUN_STATUS.get(state, state)
