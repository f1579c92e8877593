"""`make bench`'s launcher table: the same window run three ways, one at a time.

    cli       `cdcflow changefeed run` in a child process (embedded Spark, local[*])
    connect   one Airflow DAG run (`airflow dags test`), its Spark tasks as sessions on a
              warm Spark Connect server on 127.0.0.1:15002
    submit    one Airflow DAG run whose Spark tasks are spark-submit jobs (the changefeed's
              config names a master: local[*])

For each size (and an idle window after the largest) three changefeeds start at the same
binlog position, on three downstreams holding the same snapshot; the workload runs once on
the upstream; then each launcher catches up its changefeed and its downstream is compared
with the upstream.  A DAG run's wall time and its tasks' come from Airflow's database (the
run's and the task instances' start and end, without the CLI's own start-up); the CLI's
from its process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cdcflow_devtools.checkout import LOCAL, PROJECT

LAUNCHERS = ("cli", "connect", "submit")
DEFAULT_SIZES = (10_000, 100_000)
_CONFIG = {
    "cli": "",
    "connect": "",  # no master, no remote: the DAG's tasks use the spark_connect_default connection
    "submit": '[cdcflow]\nspark-master = "local[*]"\n',
}


def say(text: str) -> None:
    print(f"[bench] {text}", flush=True)


def _child_env() -> dict[str, str]:
    from cdcflow_devtools.airflow_local import airflow_env

    env = airflow_env(LOCAL / "bench" / "airflow")
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(PROJECT / "include"), str(PROJECT / "plugins"), env.get("PYTHONPATH")) if p)
    return env


def _measure_dag(changefeed_id: str, env: dict[str, str], log_dir: Path) -> dict:
    """One `airflow dags test` of the changefeed's DAG; the run's times from Airflow's database."""
    import datetime as dt

    import sqlalchemy as sa

    log_path = log_dir / f"dag-{changefeed_id}.log"
    dag_id = f"changefeed__{changefeed_id}"
    with open(log_path, "wb") as log:
        subprocess.run([str(Path(sys.executable).parent / "airflow"), "dags", "test", dag_id],
                       stdout=log, stderr=subprocess.STDOUT, env=env)
    engine = sa.create_engine(f"sqlite:///{Path(env['AIRFLOW_HOME']) / 'airflow.db'}")
    try:
        with engine.connect() as c:
            run = c.execute(sa.text("SELECT run_id, state, start_date, end_date FROM dag_run WHERE dag_id = :d "
                                    "ORDER BY id DESC LIMIT 1"), {"d": dag_id}).one()
            tis = c.execute(sa.text("SELECT task_id, state, start_date, end_date FROM task_instance "
                                    "WHERE dag_id = :d AND run_id = :r"), {"d": dag_id, "r": run.run_id}).all()
    finally:
        engine.dispose()
    if run.state != "success":
        raise RuntimeError(f"the DAG run of {changefeed_id} ended {run.state}; see {log_path}")

    def seconds(start, end) -> float:
        return (dt.datetime.fromisoformat(str(end)) - dt.datetime.fromisoformat(str(start))).total_seconds()

    tasks = {t.task_id: round(seconds(t.start_date, t.end_date), 2) for t in tis
             if t.state == "success" and t.start_date and t.end_date}
    return {"wall_seconds": round(seconds(run.start_date, run.end_date), 2), "tasks": tasks}


def _measure(launcher: str, changefeed_id: str, rows: int, env: dict[str, str], log_dir: Path) -> dict:
    from cdcflow_devtools.bench_common import run_cycle_measured

    if launcher == "cli":
        cyc = run_cycle_measured(changefeed_id, rows, log_dir)
        tasks = {s: round(cyc.stage_seconds(s), 2) for s in ("pull", "filter", "barrier", "apply")
                 if f"{s}_seconds" in cyc.stats}
        return {"wall_seconds": round(cyc.wall_seconds, 2), "tasks": tasks}
    return _measure_dag(changefeed_id, env, log_dir)


def launcher_table(servers, sizes: list[int], shape: str, home: Path, log_dir: Path) -> list[dict]:
    """Each size through the three launchers, then an idle window: one entry per window."""
    from cdcflow_devtools import bench_peers, bench_workload
    from cdcflow_devtools.airflow_local import bootstrap, spark_connect_server
    from cdcflow_devtools.bench_common import create_changefeed, run_workload, verify

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
