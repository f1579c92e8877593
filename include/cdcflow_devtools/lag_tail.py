"""The lag part's tail, run by run: where a slow DAG run or CLI cycle spent its seconds.

A p99 lag is made by a few slow runs, which medians hide.  For every DAG run (Airflow's
database) and every CLI cycle (cdcflow's runs) in a turn this records its seconds, the gap
since the one before, the path it took (fast: the Spark stages inside the pull task; staged:
a task per stage; empty: nothing to read; none: no cycle opened), each task's wait (from the
previous task's end, or the run's start), queued time and run time, the window (events,
ranges pull read it in, binlog bytes, upstream seconds it spans), each stage's seconds, and
the worst lag sampled while it was the run that would clear it.  The summary is a histogram
of the run seconds, each path's count and median, and the runs above the p90.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import statistics
from pathlib import Path

from cdcflow.core.stage_names import SPARK_STAGES

STAGE_SECONDS = ("prepare", "pull", *SPARK_STAGES, "finish")
SLOW_PERCENTILE = 90
SLOW_SHOWN = 10  # the report's lines of them
BUCKET_S = 1.0


def _utc(text: str | None) -> float | None:
    if not text:
        return None
    at = dt.datetime.fromisoformat(text)
    return (at if at.tzinfo else at.replace(tzinfo=dt.timezone.utc)).timestamp()  # Airflow stores UTC


def _physical_s(tso: int) -> float:
    return (tso >> 18) / 1000


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


def cdcflow_runs(changefeed_id: str) -> list:
    """The changefeed's cycles, oldest first."""
    from cdcflow.store import metastore

    return sorted(metastore.recent_runs(changefeed_id, limit=100_000), key=lambda r: r.started_at)


def _window(run, following) -> dict:
    """What the cycle read: events and ranges (its pull), binlog bytes and upstream seconds up
    to where the next cycle started (its checkpoint after), when both are known."""
    pulled = run.stats.get("pull") or {}
    out = {"events": pulled.get("pulled"), "ranges": pulled.get("ranges")}
    if following is not None:
        a, b = run.start_pos or {}, following.start_pos or {}
        if a.get("file") and a.get("file") == b.get("file"):
            out["bytes"] = b["pos"] - a["pos"]
        if following.start_ts and run.start_ts:
            out["upstream_seconds"] = round(_physical_s(following.start_ts) - _physical_s(run.start_ts), 2)
    return out


def _stages(run) -> dict:
    return {s: run.stats[f"{s}_seconds"] for s in STAGE_SECONDS if f"{s}_seconds" in run.stats}


def _lag_max(samples: list[tuple[float, float]], since: float, until: float) -> float | None:
    """The worst lag sampled in (since, until]: the samples this run's apply would clear."""
    lags = [at - seen for at, seen in samples if since < at <= until]
    return round(max(lags), 2) if lags else None


def cli_cycles(changefeed_id: str, window: list[float], samples: list[tuple[float, float]]) -> list[dict]:
    """Every CLI cycle of the changefeed that started in `window` (cli_rows)."""
    return cli_rows(cdcflow_runs(changefeed_id), window, samples)


def cli_rows(runs: list, window: list[float], samples: list[tuple[float, float]]) -> list[dict]:
    """Every cycle of `runs` (oldest first) that started in `window`, as a row of the tail (the
    gap before one is the `cdcflow changefeed run` process's start and its imports)."""
    rows, prev_end = [], None
    for i, run in enumerate(runs):
        following = runs[i + 1] if i + 1 < len(runs) else None
        if window[0] <= run.started_at <= window[1] and run.ended_at:
            pulled = (run.stats.get("pull") or {}).get("pulled")
            rows.append({
                "start": round(run.started_at, 3), "seconds": round(run.ended_at - run.started_at, 2),
                "gap_before": round(run.started_at - prev_end, 2) if prev_end else None,
                "path": "empty" if pulled == 0 else "cycle" if pulled else "none",
                "window": _window(run, following), "stages": _stages(run),
                "lag_max": _lag_max(samples, prev_end or run.started_at, run.ended_at)})
        if run.ended_at:
            prev_end = run.ended_at
    return rows


def _path(ran: set[str], pulled) -> str:
    if SPARK_STAGES[0] in ran:
        return "staged"
    if "pull" not in ran:
        return "none"
    return "empty" if not pulled else "fast"


def dag_runs(db_path: Path, dag_id: str, changefeed_id: str, window: list[float],
             samples: list[tuple[float, float]]) -> list[dict]:
    """Every finished run of the DAG that started in `window`, from Airflow's database (dag_rows)."""
    with sqlite3.connect(db_path, timeout=30) as db:
        runs = db.execute("SELECT run_id, start_date, end_date FROM dag_run WHERE dag_id = ?", (dag_id,)).fetchall()
        tis = db.execute("SELECT run_id, task_id, state, queued_dttm, start_date, end_date FROM task_instance "
                         "WHERE dag_id = ?", (dag_id,)).fetchall()
    return dag_rows(runs, tis, cdcflow_runs(changefeed_id), window, samples)


def dag_rows(runs: list[tuple], tis: list[tuple], cycles: list, window: list[float],
             samples: list[tuple[float, float]]) -> list[dict]:
    """Every finished DAG run of `runs` ((run_id, start, end) as Airflow stores them) that started
    in `window`, as a row of the tail: its task instances `tis` ((run_id, task_id, state, queued,
    start, end)), and the cycle of `cycles` (cdcflow's runs, oldest first) its prepare opened,
    the one that started inside it."""
    by_run: dict[str, list] = {}
    for r, task, state, queued, s, e in tis:
        if s and e and state in ("success", "failed"):  # a skipped task ran nowhere
            by_run.setdefault(r, []).append((_utc(s), _utc(e), _utc(queued), task, state))
    rows, prev_end = [], None
    for run_id, s, e in sorted(((r, _utc(s), _utc(e)) for r, s, e in runs if s and e), key=lambda x: x[1]):
        if window[0] <= s <= window[1]:
            i = next((i for i, c in enumerate(cycles) if s <= c.started_at <= e), None)
            cycle = cycles[i] if i is not None else None
            following = cycles[i + 1] if i is not None and i + 1 < len(cycles) else None
            tasks, at = {}, s
            for ts, te, tq, task, state in sorted(by_run.get(run_id, [])):
                tasks[task] = {"wait": round(ts - at, 2), "queued": round(ts - tq, 2) if tq else None,
                               "ran": round(te - ts, 2), **({"state": state} if state != "success" else {})}
                at = te
            pulled = ((cycle.stats.get("pull") or {}).get("pulled")) if cycle else None
            rows.append({
                "run": run_id, "start": round(s, 3), "seconds": round(e - s, 2),
                "gap_before": round(s - prev_end, 2) if prev_end else None,
                "path": _path(set(tasks), pulled), "tasks": tasks,
                "window": _window(cycle, following) if cycle else {}, "stages": _stages(cycle) if cycle else {},
                "lag_max": _lag_max(samples, prev_end or s, e)})
        prev_end = e
    return rows


def summary(rows: list[dict]) -> dict:
    """The run seconds' spread (percentiles and a histogram of BUCKET_S buckets), each path's
    runs and median, and the runs at or above the SLOW_PERCENTILE, slowest first."""
    secs = [r["seconds"] for r in rows]
    if not secs:
        return {"runs": 0}
    hist: dict[int, int] = {}
    for x in secs:
        hist[int(x // BUCKET_S)] = hist.get(int(x // BUCKET_S), 0) + 1
    paths: dict[str, list[float]] = {}
    for r in rows:
        paths.setdefault(r["path"], []).append(r["seconds"])
    gaps = [r["gap_before"] for r in rows if r["gap_before"] is not None]
    bar = _percentile(secs, SLOW_PERCENTILE)
    return {
        "runs": len(rows),
        "seconds": {f"p{p}": round(_percentile(secs, p), 2) for p in (50, 90, 99)} | {"max": max(secs)},
        "gap_before": {"p50": round(statistics.median(gaps), 2), "max": max(gaps)} if gaps else {},
        "histogram": [[round(k * BUCKET_S, 1), round((k + 1) * BUCKET_S, 1), hist[k]] for k in sorted(hist)],
        "paths": {p: {"runs": len(v), "seconds_p50": round(statistics.median(v), 2)} for p, v in paths.items()},
        f"above_p{SLOW_PERCENTILE}": sorted((r for r in rows if r["seconds"] >= bar),
                                            key=lambda r: -r["seconds"]),
        "worst_lag": sorted(rows, key=lambda r: -(r["lag_max"] or 0))[:3],
    }


def _mib(n) -> str:
    return f"{n / 2**20:.2f} MiB" if n is not None else "? MiB"


def row_line(r: dict) -> str:
    """One run in a line: when, seconds, path, window, the gap before it, and where its seconds went."""
    w = r.get("window") or {}
    at = dt.datetime.fromtimestamp(r["start"], dt.timezone.utc).strftime("%H:%M:%S")
    if r.get("tasks"):
        parts = ", ".join(f"{t} {d['wait']}+{d['ran']}" + (f" (queued {d['queued']})" if d.get("queued") else "")
                          for t, d in r["tasks"].items())
        where = f"tasks waited+ran: {parts}"
    else:
        where = "stages: " + ", ".join(f"{s} {v:.2f}" for s, v in r.get("stages", {}).items())
    return (f"{at} {r['seconds']:.2f} s {r['path']}, {w.get('events')} events in {w.get('ranges')} range(s), "
            f"{_mib(w.get('bytes'))}, {w.get('upstream_seconds')} s upstream; gap before {r['gap_before']} s; "
            f"lag max {r['lag_max']} s; {where}")


def report_lines(name: str, tail: dict) -> list[str]:
    if not tail.get("runs"):
        return [f"{name}: no finished run in the window"]
    s, g = tail["seconds"], tail.get("gap_before") or {}
    width = max(c for _, _, c in tail["histogram"])
    hist = "; ".join(f"{lo:g}-{hi:g} s {'#' * max(1, round(8 * c / width))} {c}" for lo, hi, c in tail["histogram"])
    paths = ", ".join(f"{p} {d['runs']} (p50 {d['seconds_p50']} s)" for p, d in tail["paths"].items())
    out = [f"{name}: {tail['runs']} runs, seconds p50 {s['p50']} p90 {s['p90']} p99 {s['p99']} max {s['max']}; "
           f"gap before a run p50 {g.get('p50')} max {g.get('max')} s; paths: {paths}",
           f"  histogram: {hist}"]
    slow = tail[f"above_p{SLOW_PERCENTILE}"]
    shown = slow[:SLOW_SHOWN]  # slowest first; a follower's minute has hundreds of runs (the results keep all)
    out.append(f"  above p{SLOW_PERCENTILE} ({len(slow)}{f', the {len(shown)} slowest' if len(shown) < len(slow) else ''}):")
    out += [f"    {row_line(r)}" for r in shown]
    out.append("  where the worst lag was sampled:")
    out += [f"    {row_line(r)}" for r in tail["worst_lag"]]
    return out
