"""What a Spark application's event log says of its jobs: how many ran, how long each took on
the wall and in its tasks, and what for, so the bench can say where a cycle forced to Spark
spends its time (a job's planning and scheduling against its tasks' work).

    python -m cdcflow_devtools.spark_events FOLDER

prints the jobs of the logs under FOLDER (spark.eventLog.dir), the longest first.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path


def log_conf(folder: Path) -> dict[str, str]:
    """The Spark settings that write an application's event log under `folder`, uncompressed."""
    folder.mkdir(parents=True, exist_ok=True)
    return {"spark.eventLog.enabled": "true", "spark.eventLog.dir": f"file://{folder.resolve()}",
            "spark.eventLog.compress": "false"}


@dataclass
class Job:
    job_id: int
    submitted_ms: int
    completed_ms: int = 0
    stages: list[str] = field(default_factory=list)
    tasks: int = 0
    task_ms: int = 0  # the executors' run time of its tasks, summed
    description: str = ""

    @property
    def wall_s(self) -> float:
        return max(0, self.completed_ms - self.submitted_ms) / 1000


def jobs(folder: Path, since_ms: int = 0) -> list[Job]:
    """The jobs of every event log under `folder` submitted at or after `since_ms` (epoch ms),
    in submission order."""
    out: list[Job] = []
    for app in _applications(Path(folder)):
        found: dict[int, Job] = {}  # job and stage ids are an application's own
        stage_job: dict[int, int] = {}
        for path in app:
            for line in path.read_text(errors="replace").splitlines():
                try:
                    e = json.loads(line)
                except ValueError:
                    continue  # the line a running application is still writing
                _read(e, found, stage_job)
        out += [j for j in found.values() if j.submitted_ms >= since_ms]
    return sorted(out, key=lambda j: j.submitted_ms)


def _applications(folder: Path) -> list[list[Path]]:
    """The event log files under `folder`, by application: a rolled log is a folder of files
    (eventlog_v2_<app>/events_<n>_<app>), a plain one a file of its own."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.endswith(".crc")
                   and not p.name.startswith("appstatus"))
    by_app: dict[Path, list[Path]] = {}
    for p in files:
        by_app.setdefault(p.parent if p.parent != folder else p, []).append(p)
    return list(by_app.values())


def _read(e: dict, found: dict[int, Job], stage_job: dict[int, int]) -> None:
    kind = e.get("Event")
    if kind == "SparkListenerJobStart":
        job = found[e["Job ID"]] = Job(e["Job ID"], e.get("Submission Time", 0))
        props = e.get("Properties") or {}
        job.description = props.get("spark.job.description") or props.get("spark.job.tags") or ""
        for info in e.get("Stage Infos", []):
            stage_job[info["Stage ID"]] = e["Job ID"]
            job.stages.append(info.get("Stage Name", ""))
    elif kind == "SparkListenerJobEnd" and e["Job ID"] in found:
        found[e["Job ID"]].completed_ms = e.get("Completion Time", 0)
    elif kind == "SparkListenerTaskEnd" and e.get("Stage ID") in stage_job:
        job = found[stage_job[e["Stage ID"]]]
        job.tasks += 1
        job.task_ms += (e.get("Task Metrics") or {}).get("Executor Run Time", 0)


def summary(found: list[Job]) -> dict:
    """The jobs' count, their wall seconds (overlapping jobs counted once each) and their tasks'
    run seconds, and the same per first stage name (what PySpark or Connect called the job)."""
    by_name: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for j in found:
        row = by_name[(j.stages or ["?"])[0]]
        row[0] += 1
        row[1] += j.wall_s
        row[2] += j.task_ms / 1000
    return {"jobs": len(found), "wall_seconds": round(sum(j.wall_s for j in found), 2),
            "task_seconds": round(sum(j.task_ms for j in found) / 1000, 2),
            "by_stage_name": {k: {"jobs": v[0], "wall_seconds": round(v[1], 2), "task_seconds": round(v[2], 2)}
                              for k, v in sorted(by_name.items(), key=lambda kv: -kv[1][1])}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m cdcflow_devtools.spark_events",
                                description="The jobs of the Spark event logs under a folder.")
    p.add_argument("folder", type=Path)
    args = p.parse_args(argv)
    found = jobs(args.folder)
    for j in sorted(found, key=lambda j: -j.wall_s):
        print(f"job {j.job_id:4d}  {j.wall_s:7.2f} s wall  {j.task_ms / 1000:7.2f} s in {j.tasks:3d} tasks  "
              f"{(j.stages or ['?'])[0][:70]}  {j.description[:60]}")
    print(json.dumps(summary(found), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
