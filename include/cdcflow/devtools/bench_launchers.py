"""`make bench`'s launcher table: the same window run three ways, one at a time.

    cli       `cdcflow changefeed run` in a child process (embedded Spark, local[*])
    connect   one Airflow DAG run (dag.test() in a child process), its Spark tasks as
              sessions on a warm Spark Connect server on 127.0.0.1:15002
    submit    one Airflow DAG run whose Spark tasks are spark-submit jobs (the changefeed's
              config names a master: local[*])

For each size (and an idle window after the largest) three changefeeds start at the same
binlog position, on three downstreams holding the same snapshot; the workload runs once on
the upstream; then each launcher catches up its changefeed and its downstream is compared
with the upstream.  The run's wall time comes from the run itself (dag.test()'s run, the
CLI process), each task's from Airflow's task instances, without Airflow's import time.

    python -m cdcflow.devtools.bench_launchers dag-run CHANGEFEED_ID   # the child: JSON out
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from cdcflow.devtools.checkout import LOCAL, PROJECT

LAUNCHERS = ("cli", "connect", "submit")
DEFAULT_SIZES = (10_000, 100_000)
_CONFIG = {
    "cli": "",
    "connect": "",  # no master, no remote: the DAG's tasks use the spark_connect_default connection
    "submit": '[cdcflow]\nspark-master = "local[*]"\n',
}


def say(text: str) -> None:
    print(f"[bench] {text}", flush=True)


def dag_run(changefeed_id: str) -> dict:
    """One catch-up DAG run in this process: its wall time and each task's."""
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(PROJECT / "dags"))
    dag = bag.dags[f"changefeed__{changefeed_id}"]
    t0 = time.perf_counter()
    run = dag.test(run_conf={"mode": "catch-up", "start_ts": None, "target_ts": None})
    wall = time.perf_counter() - t0
    tasks = {}
    for ti in run.get_task_instances():
        state = getattr(ti.state, "value", ti.state)
        if ti.start_date and ti.end_date and state != "skipped":
            tasks[ti.task_id] = round((ti.end_date - ti.start_date).total_seconds(), 2)
    return {"state": str(getattr(run.state, "value", run.state)), "wall_seconds": round(wall, 2), "tasks": tasks}


def _child_env() -> dict[str, str]:
    from cdcflow.devtools.airflow_local import airflow_env

    env = airflow_env(LOCAL / "bench" / "airflow")
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(PROJECT / "include"), str(PROJECT / "plugins"), env.get("PYTHONPATH")) if p)
    return env


def _measure_dag(cid: str, env: dict[str, str], log_dir: Path) -> dict:
    log_path = log_dir / f"dag-{cid}.log"
    with open(log_path, "wb") as log:
        proc = subprocess.run([sys.executable, "-m", "cdcflow.devtools.bench_launchers", "dag-run", cid],
                              stdout=subprocess.PIPE, stderr=log, env=env)
    lines = proc.stdout.decode(errors="replace").strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"the DAG run of {cid} failed (exit {proc.returncode}); see {log_path}")
    result = json.loads(lines[-1])
    if result["state"] != "success":
        raise RuntimeError(f"the DAG run of {cid} ended {result['state']}; see {log_path}")
    return result


def _measure(launcher: str, cid: str, rows: int, env: dict[str, str], log_dir: Path) -> dict:
    from cdcflow.devtools.bench import run_cycle_measured

    if launcher == "cli":
        cyc = run_cycle_measured(cid, rows, log_dir)
        tasks = {s: round(cyc.stage_seconds(s), 2) for s in ("pull", "filter", "barrier", "apply")
                 if f"{s}_seconds" in cyc.stats}
        return {"wall_seconds": round(cyc.wall_seconds, 2), "tasks": tasks}
    return _measure_dag(cid, env, log_dir)


def launcher_table(servers, sizes: list[int], shape: str, home: Path, log_dir: Path) -> list[dict]:
    """Each size through the three launchers, then an idle window: one entry per window."""
    from cdcflow.devtools import bench_peers, bench_workload
    from cdcflow.devtools.airflow_local import bootstrap, spark_connect_server
    from cdcflow.devtools.bench import create_changefeed, run_workload, verify

    downs = {"cli": servers.cdcflow, "connect": servers.binlog, "submit": servers.replica}
    env = _child_env()
    env["CDCFLOW_HOME"] = str(home)
    bootstrap(env)
    out: list[dict] = []
    with spark_connect_server():
        for n in sizes:
            bench_peers.reset_replica(servers.replica)
            for s in (servers.up, *downs.values()):
                bench_workload.create_snapshot(s)
            cids = {}
            for launcher, down in downs.items():
                cids[launcher] = f"launch-{launcher}-{n}"
                create_changefeed(cids[launcher], servers.up, down, home, config=_CONFIG[launcher])
            _plan, done, _ = run_workload(servers.up, n, shape)
            entry = {"rows": done, "runs": {}}
            for launcher in LAUNCHERS:
                say(f"launchers: {done:,} row changes through {launcher}")
                entry["runs"][launcher] = _measure(launcher, cids[launcher], done, env, log_dir)
                entry["runs"][launcher]["consistent"] = not verify(
                    servers.up, downs[launcher], f"{launcher}'s downstream after {done:,}")
            out.append(entry)
        if out:  # the last size's changefeeds once more: nothing new upstream
            idle = {"rows": 0, "runs": {}}
            for launcher in LAUNCHERS:
                say(f"launchers: an idle window through {launcher}")
                idle["runs"][launcher] = {**_measure(launcher, f"launch-{launcher}-{sizes[-1]}", 0, env, log_dir),
                                          "consistent": True}
            out.append(idle)
    return sorted(out, key=lambda e: e["rows"])


def report(table: list[dict]) -> None:
    if not table:
        return
    print()
    print("the same window by launcher: wall time of the run (its Spark tasks filter / barrier / apply):")
    print(f"{'row changes':>14}" + "".join(f"{name:>30}" for name in LAUNCHERS) + f"{'connect/cli':>13}"
          f"{'submit/connect':>16}")
    for e in table:
        cells = []
        for name in LAUNCHERS:
            r = e["runs"][name]
            spark = " / ".join(f"{r['tasks'].get(s, 0):.1f}" for s in ("filter", "barrier", "apply"))
            mark = "" if r["consistent"] else " DIFFERS"
            cells.append(f"{r['wall_seconds']:.1f} s ({spark}){mark}")
        cli, connect, submit = (e["runs"][n]["wall_seconds"] for n in LAUNCHERS)
        label = f"{e['rows']:,}" if e["rows"] else "0 (idle)"
        print(f"{label:>14}" + "".join(f"{c:>30}" for c in cells)
              + f"{connect / cli if cli else 0:>13.2f}{submit / connect if connect else 0:>16.2f}")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["dag-run"] and len(argv) == 2:
        print(json.dumps(dag_run(argv[1])), flush=True)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
