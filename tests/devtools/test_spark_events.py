"""The bench's reading of Spark's event log (cdcflow_devtools.spark_events): each application's
jobs apart (job and stage ids start at 0 in each), their wall and task time, those submitted
since a moment."""

from __future__ import annotations

import json

from cdcflow_devtools import spark_events


def _app(folder, name: str, jobs: list[tuple[int, int, int, list[int]]]) -> None:
    """A rolled event log of `jobs`: (job id, submitted ms, completed ms, its tasks' run ms)."""
    app = folder / f"eventlog_v2_{name}"
    app.mkdir(parents=True)
    (app / f"appstatus_{name}").write_text("")
    lines = []
    for job, start, end, tasks in jobs:
        lines.append({"Event": "SparkListenerJobStart", "Job ID": job, "Submission Time": start,
                      "Stage Infos": [{"Stage ID": job, "Stage Name": f"collect at {name}:{job}"}],
                      "Properties": {}})
        lines += [{"Event": "SparkListenerTaskEnd", "Stage ID": job, "Task Metrics": {"Executor Run Time": ms}}
                  for ms in tasks]
        lines.append({"Event": "SparkListenerJobEnd", "Job ID": job, "Completion Time": end})
    lines.append("{\"Event\": \"SparkListenerTaskEnd\", \"Stage")  # a running application's last line
    (app / f"events_1_{name}").write_text("\n".join(json.dumps(x) if isinstance(x, dict) else x for x in lines))


def test_each_application_s_jobs_are_its_own(tmp_path):
    _app(tmp_path, "local-1", [(0, 1_000, 3_000, [500, 700]), (1, 4_000, 4_500, [100])])
    _app(tmp_path, "local-2", [(0, 10_000, 11_000, [900]), (1, 12_000, 12_250, [200, 50])])
    found = spark_events.jobs(tmp_path)
    assert [(j.submitted_ms, j.wall_s, j.tasks, j.task_ms) for j in found] == [
        (1_000, 2.0, 2, 1_200), (4_000, 0.5, 1, 100), (10_000, 1.0, 1, 900), (12_000, 0.25, 2, 250)]
    since = spark_events.jobs(tmp_path, since_ms=10_000)
    assert [j.stages for j in since] == [["collect at local-2:0"], ["collect at local-2:1"]]
    summary = spark_events.summary(since)
    assert (summary["jobs"], summary["wall_seconds"], summary["task_seconds"]) == (2, 1.25, 1.15)
