"""`make bench`'s lag part: how fresh a downstream stays under a steady upstream workload.

    python -m cdcflow_devtools.bench_lag [--rates 1000,5000] [--seconds 120] [--dir DIR]
        [--schedules @binlog,@continuous] [--no-cli] [--sysbench [--sysbench-threads 4]]

An upstream MariaDB takes a steady stream of row changes (UPDATEs of `rate / 10` rows ten
times a second) and, every 100 ms, an UPDATE of one heartbeat row holding the upstream's
write time in microseconds.  A sampler reads that row on the downstream every 250 ms: the
lag of a sample is the sample's time minus the heartbeat value it sees, so it is the
end-to-end freshness a reader of the downstream gets (write, binlog, cycle, apply).  For
each rate, the launchers take turns on the same Spark Connect server, each with a
downstream of its own:

    dag-binlog      the changefeed's DAG on `[cdcflow] schedule = "@binlog"` (a run when the
                    binlog moves: an asset watched by a trigger on the triggerer), run by a
                    real scheduler (`airflow standalone` on free ports, in a folder of its own)
    dag-continuous  the same on `@continuous` (runs back to back)
    dag-continuous-follow60
                    `--schedules @continuous+follow60`: the same with `follow-seconds = 60`
                    (a run follows the binlog for 60 s after its cycle, in its follow task)
    cli             a loop of `cdcflow changefeed run --spark-remote` (one cycle after the other)
    cli-follow      one `cdcflow changefeed run --follow --spark-remote`: cycles back to back in
                    one process, each as soon as the binlog moves (launch/follow.py)

`--sysbench` adds a load after the rates: Debian's sysbench `oltp_read_write` with 4 threads
against the upstream for `--seconds` (lag_sysbench), the heartbeat beside it; reported: the
lag while it runs and how long after it stops the downstream shows a heartbeat written after
the stop (`caught_up_seconds`).

Each launcher gets a changefeed created at the upstream's head just before its turn, so
no launcher catches up another's backlog; only one runs at a time.  The lag is measured once
the first heartbeat has arrived and SETTLE_CYCLES more cycles have ended (settle_cycles).
Also recorded: cycles per minute (from cdcflow's runs), for a DAG where a run's seconds go
(each task's time and the wait before it starts, from Airflow's database), and the tail run
by run for every launcher (lag_tail: each run's path, window, tasks or stages, and the runs
above the p90), printed and in the results.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from cdcflow_devtools import lag_sysbench, lag_tail, process_tree
from cdcflow_devtools.bench_targets import SYSBENCH, lag_verdicts
from cdcflow_devtools.checkout import LOCAL, child_env

DEFAULT_RATES = (1000, 5000)
DEFAULT_SECONDS = 120
DEFAULT_SCHEDULES = ("@binlog", "@continuous", "@continuous+follow60")  # the DAG's launchers, in turn
CAUGHT_UP_TIMEOUT_S = 300  # after sysbench stops: the downstream shows a heartbeat written after the stop
SCHEMA = "bench"  # the schema bench_common.CONFIG replicates (the part has servers of its own)
TABLE_ROWS = 20_000
HEARTBEAT_EVERY_S = 0.1
SAMPLE_EVERY_S = 0.25
LOAD_TICK_S = 0.1
FIRST_HEARTBEAT_TIMEOUT_S = 240  # the first cycle or DAG run after the changefeed's creation
SETTLE_CYCLES = 3  # cycles (or DAG runs) left to end after the first heartbeat's arrival before measuring
DRAIN_S = 15  # after a DAG's pause: its last run ends before the CLI's turn
CLI_LAUNCHERS = ("cli", "cli-follow")  # a process per cycle; one process following the binlog


def say(text: str) -> None:
    print(f"[bench] lag: {text}", flush=True)


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile by nearest rank (p in 0..100)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


def lag_figures(lags: list[float]) -> dict:
    if not lags:
        return {"samples": 0}
    return {"samples": len(lags), "p50": round(percentile(lags, 50), 2), "p99": round(percentile(lags, 99), 2),
            "max": round(max(lags), 2)}


# --- the upstream's workload and the downstream's sampler -------------------------------------

def create_tables(*servers) -> None:
    """The same tables and rows on every server (the downstreams' snapshot)."""
    for s in servers:
        s.execute(f"DROP DATABASE IF EXISTS {SCHEMA}", f"CREATE DATABASE {SCHEMA}",
                  f"CREATE TABLE {SCHEMA}.heartbeat (id INT PRIMARY KEY, written_us BIGINT NOT NULL)",
                  f"INSERT INTO {SCHEMA}.heartbeat VALUES (1, 0)",
                  f"CREATE TABLE {SCHEMA}.churn (id INT PRIMARY KEY, v INT NOT NULL, pad VARCHAR(64) NOT NULL)")
        conn = s.connect(SCHEMA)
        try:
            with conn.cursor() as cur:
                for lo in range(1, TABLE_ROWS + 1, 5000):
                    cur.execute("INSERT INTO churn VALUES " + ",".join(
                        f"({i}, 0, 'row {i} of the lag bench')" for i in range(lo, min(lo + 5000, TABLE_ROWS + 1))))
        finally:
            conn.close()


class Ticker(threading.Thread):
    """Calls `step(conn)` every `every` seconds on a connection of its own until stopped."""

    def __init__(self, connect, every: float, step):
        super().__init__(daemon=True)
        self._connect, self._every, self._step = connect, every, step
        self._halt = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        conn = self._connect()
        try:
            t = time.monotonic()
            while not self._halt.is_set():
                self._step(conn)
                t += self._every
                self._halt.wait(max(0.0, t - time.monotonic()))
        except BaseException as e:  # noqa: BLE001 - reported by stop()
            self.error = e
        finally:
            conn.close()

    def stop(self) -> None:
        self._halt.set()
        self.join()
        if self.error is not None:
            raise RuntimeError(f"lag bench thread failed: {self.error}") from self.error


class Workload:
    """The upstream's steady row changes and its heartbeat, and the downstream's samples."""

    def __init__(self, up, down, rate: int):
        self.rows_changed = 0
        self.missing = 0  # samples that found no heartbeat row downstream
        self.samples: list[tuple[float, float]] = []  # (sample time, heartbeat value seen), seconds
        self._at = 0
        per_tick = max(1, round(rate * LOAD_TICK_S))
        self._threads = [
            Ticker(lambda: up.connect(SCHEMA), LOAD_TICK_S, lambda c: self._load(c, per_tick)),
            Ticker(lambda: up.connect(SCHEMA), HEARTBEAT_EVERY_S, self._beat),
            Ticker(lambda: down.connect(SCHEMA), SAMPLE_EVERY_S, self._sample),
        ] if rate else [Ticker(lambda: up.connect(SCHEMA), HEARTBEAT_EVERY_S, self._beat),
                        Ticker(lambda: down.connect(SCHEMA), SAMPLE_EVERY_S, self._sample)]

    def _load(self, conn, rows: int) -> None:
        lo = self._at % TABLE_ROWS + 1
        hi = min(TABLE_ROWS, lo + rows - 1)
        self._at = hi % TABLE_ROWS
        with conn.cursor() as cur:
            self.rows_changed += cur.execute("UPDATE churn SET v = v + 1 WHERE id BETWEEN %s AND %s", (lo, hi))

    @staticmethod
    def _beat(conn) -> None:
        with conn.cursor() as cur:
            cur.execute("UPDATE heartbeat SET written_us = %s WHERE id = 1", (int(time.time() * 1e6),))

    def _sample(self, conn) -> None:
        with conn.cursor() as cur:
            cur.execute("SELECT written_us FROM heartbeat WHERE id = 1")
            row = cur.fetchone()
        if row is None:  # between a safe-mode apply's DELETE and its REPLACE: counted, not a lag
            self.missing += 1
            return
        self.samples.append((time.time(), row[0] / 1e6))

    def __enter__(self) -> "Workload":
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc) -> None:
        for t in self._threads:
            t.stop()

    def lags_since(self, since: float, until: float = float("inf")) -> list[float]:
        return [at - seen for at, seen in self.samples if since <= at < until]

    def caught_up_after(self, stop: float, timeout: float) -> float:
        """Seconds from `stop` until the downstream shows a heartbeat written at or after it."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            seen = next(((at, v) for at, v in self.samples[-50:] if v >= stop), None)
            if seen is not None:
                return seen[0] - stop
            time.sleep(SAMPLE_EVERY_S)
        raise RuntimeError(f"the downstream did not catch up within {timeout:.0f} s after the load stopped")

    def wait_first_heartbeat(self, since: float, timeout: float) -> float:
        """Seconds until the downstream shows a heartbeat written after `since`."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.samples and self.samples[-1][1] >= since:
                return time.time() - since
            time.sleep(SAMPLE_EVERY_S)
        raise RuntimeError(f"no heartbeat written after the turn began reached the downstream in {timeout:.0f} s")


def measure_turn(up, down, rate: int, seconds: float, changefeed_id: str, settle: int = SETTLE_CYCLES) -> dict:
    """Run the workload for the first heartbeat's way through plus `seconds`, sampling the lag."""
    t0 = time.time()
    with Workload(up, down, rate) as w:
        first = w.wait_first_heartbeat(t0, FIRST_HEARTBEAT_TIMEOUT_S)
        arrived = time.time()
        settle_cycles(changefeed_id, arrived, settle)
        start = time.time()
        time.sleep(seconds)
        end = time.time()
        rows = w.rows_changed
    return {**lag_figures(w.lags_since(start)), "first_seconds": round(first, 1),
            "rows_per_second": round(rows / (end - t0)), **cycle_figures(changefeed_id, start, end),
            "heartbeat_missing": w.missing, "settle": settle_figures(w, arrived, start),
            "window": [start, end], "samples_seen": w.samples}


def measure_sysbench_turn(up, down, seconds: float, changefeed_id: str, settle: int, threads: int,
                          log_path: Path) -> dict:
    """The heartbeat alone until the first one's way through and the settle, then sysbench for
    `seconds` sampling the lag, then until the downstream has caught up with its stop."""
    t0 = time.time()
    with Workload(up, down, 0) as w:
        first = w.wait_first_heartbeat(t0, FIRST_HEARTBEAT_TIMEOUT_S)
        arrived = time.time()
        settle_cycles(changefeed_id, arrived, settle)
        start = time.time()
        load = lag_sysbench.Run(up, SCHEMA, threads, seconds, log_path)
        try:
            ran = load.wait()
        finally:
            load.stop()
        stop = time.time()
        caught_up = w.caught_up_after(stop, CAUGHT_UP_TIMEOUT_S)
        end = time.time()
    return {**lag_figures(w.lags_since(start, stop)), "first_seconds": round(first, 1),
            "caught_up_seconds": round(caught_up, 2), "sysbench": {"threads": threads, **ran},
            **cycle_figures(changefeed_id, start, stop), "heartbeat_missing": w.missing,
            "settle": settle_figures(w, arrived, start), "window": [start, end], "samples_seen": w.samples}


def cycle_figures(changefeed_id: str, start: float, end: float) -> dict:
    """Cycles a minute and their median seconds, of the cycles that started in [start, end]."""
    from cdcflow.store import metastore  # lazy: the bench's home is set before the store is opened

    runs = [r for r in metastore.recent_runs(changefeed_id, limit=10_000) if start <= r.started_at <= end]
    took = [r.ended_at - r.started_at for r in runs if r.ended_at]
    return {"cycles_per_minute": round(len(runs) * 60 / (end - start), 1),
            "cycle_seconds_p50": round(statistics.median(took), 2) if took else None}


def settle_figures(w: Workload, arrived: float, start: float) -> dict:
    return {"seconds": round(start - arrived, 1), **lag_figures(w.lags_since(arrived, start))}


def settle_cycles(changefeed_id: str, since: float, cycles: int, timeout: float = FIRST_HEARTBEAT_TIMEOUT_S) -> None:
    """Until `cycles` cycles that started after `since` have ended: a launcher's first
    cycles are cold (a turn's first DAG run's first task spent 20-37 s in Airflow's start-up
    before its code ran, on a loaded machine) and the backlog they leave takes a few cycles to
    drain, which is not the steady lag this part measures (the settle's lag is reported apart)."""
    from cdcflow.store import metastore

    deadline = time.time() + timeout
    while time.time() < deadline:
        done = [r for r in metastore.recent_runs(changefeed_id, limit=50) if r.started_at >= since and r.ended_at]
        if len(done) >= cycles:
            return
        time.sleep(SAMPLE_EVERY_S)
    raise RuntimeError(f"changefeed {changefeed_id}: fewer than {cycles} cycles ended in {timeout:.0f} s")


# --- the launchers ----------------------------------------------------------------------------

def cli_env(home: Path) -> dict[str, str]:
    return child_env(CDCFLOW_HOME=str(home))


class CliLoop(threading.Thread):
    """`cdcflow changefeed run --spark-remote URL` again and again, one cycle at a time; with
    `follow`, one `run --follow` for the whole turn, stopped with SIGTERM (failures: the cycles
    its output reports failed)."""

    def __init__(self, changefeed_id: str, spark_url: str, env: dict[str, str], log_path: Path,
                 follow: bool = False):
        super().__init__(daemon=True)
        self.args = [sys.executable, "-m", "cdcflow.cli", "changefeed", "run", "-c", changefeed_id,
                     "--spark-remote", spark_url, *(["--follow"] if follow else [])]
        self.env, self.log_path, self.follow = env, log_path, follow
        self._halt = threading.Event()
        self._proc: subprocess.Popen | None = None
        self.failures = 0

    def run(self) -> None:
        with open(self.log_path, "ab") as log:
            start = log.tell()
            while not self._halt.is_set():
                self._proc = subprocess.Popen(self.args, env=self.env, stdout=log, stderr=subprocess.STDOUT)
                self.failures += self._proc.wait() != 0
        if self.follow:  # a follower's errors are its lines, one per failed cycle
            with open(self.log_path, "rb") as log:
                log.seek(start)
                self.failures += sum(1 for line in log if line.startswith(b"Error: "))

    def stop(self) -> None:
        self._halt.set()
        if self.follow and self._proc is not None and self._proc.poll() is None:
            self._proc.send_signal(signal.SIGTERM)  # as a service manager stops it (cli._follow)
        self.join()


def airflow_standalone_env(home: Path, cdcflow_home: Path, spark_port: int, tuned: bool = True,
                           settings: dict[str, str] | None = None) -> tuple[dict[str, str], int]:
    """The environment of an `airflow standalone` on free ports in `home`, and its API port."""
    from cdcflow_devtools import airflow_local
    from cdcflow_devtools.mariadb import free_port

    env = airflow_local.airflow_env(home)
    env["CDCFLOW_HOME"] = str(cdcflow_home)
    env["PYTHONPATH"] = cli_env(cdcflow_home)["PYTHONPATH"]
    port = free_port()
    env.update(airflow_local.standalone_settings(port, spark_port, tuned))
    env.update({"AIRFLOW__LOGGING__WORKER_LOG_SERVER_PORT": str(free_port()),
                "AIRFLOW__LOGGING__TRIGGER_LOG_SERVER_PORT": str(free_port()),
                "AIRFLOW__SCHEDULER__SCHEDULER_HEALTH_CHECK_SERVER_PORT": str(free_port())})
    env.update(settings or {})
    return env, port


def _airflow_db(env: dict[str, str]) -> sqlite3.Connection:
    return sqlite3.connect(Path(env["AIRFLOW_HOME"]) / "airflow.db", timeout=30)


def wait_dag(env: dict[str, str], dag_id: str, timeout: float = 300) -> None:
    """Until the API server answers (a task started before fails: its worker cannot reach the
    execution API) and the DAG processor has parsed the changefeed's DAG, then unpause it."""
    deadline = time.monotonic() + timeout
    health = f"http://127.0.0.1:{env['AIRFLOW__API__PORT']}/api/v2/monitor/health"
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(health, timeout=5).close()
            break
        except OSError:
            time.sleep(2)
    while time.monotonic() < deadline:
        with _airflow_db(env) as db:
            if db.execute("SELECT 1 FROM dag WHERE dag_id = ? AND is_stale = 0", (dag_id,)).fetchone():
                break
        time.sleep(2)
    else:
        raise RuntimeError(f"Airflow did not parse {dag_id} within {timeout:.0f} s")
    set_paused(env, dag_id, False)


def set_paused(env: dict[str, str], dag_id: str, paused: bool) -> None:
    subprocess.run([str(Path(sys.executable).parent / "airflow"), "dags", "pause" if paused else "unpause", dag_id],
                   env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def where_the_seconds_go(runs: list[dict]) -> dict:
    """Medians over the DAG's runs (lag_tail.dag_runs): the run's seconds, the gap from a run's
    end to the next run's start, and per task the seconds it ran and the seconds before it
    started (from the previous task's end, or from the run's start for the first)."""
    med = lambda xs: round(statistics.median(xs), 2) if xs else None  # noqa: E731
    per_task: dict[str, dict[str, list[float]]] = {}
    for r in runs:
        for task, d in r["tasks"].items():
            t = per_task.setdefault(task, {"wait": [], "ran": []})
            t["wait"].append(d["wait"])
            t["ran"].append(d["ran"])
    return {"runs": len(runs), "run_seconds_p50": med([r["seconds"] for r in runs]),
            "between_runs_p50": med([r["gap_before"] for r in runs if r["gap_before"] is not None]),
            "tasks_per_run_p50": med([len(r["tasks"]) for r in runs]),
            "tasks": {t: {"wait_p50": med(d["wait"]), "ran_p50": med(d["ran"]), "runs": len(d["ran"])}
                      for t, d in per_task.items()}}


# --- the part ---------------------------------------------------------------------------------

FOLLOW_MARK = "+follow"  # a schedule with follow-seconds: @continuous+follow60


def launchers_of(schedules, cli: bool) -> list[str]:
    """The launchers' names, in turn: `dag-<schedule without @>` per DAG schedule (a run that
    follows the binlog for N s after its cycle: `dag-<schedule>-followN`), then the CLI's."""
    return [f"dag-{schedule.lstrip('@').replace(FOLLOW_MARK, '-follow')}" for schedule in schedules] + \
        (list(CLI_LAUNCHERS) if cli else [])


def dag_config(launcher: str) -> tuple[str, str]:
    """A DAG launcher's schedule and its changefeed's `[cdcflow]` config (launchers_of's name read back)."""
    schedule, _, follow = launcher.removeprefix("dag-").partition("-follow")
    schedule = "@" + schedule
    return schedule, f'[cdcflow]\nschedule = "{schedule}"\n' + (f"follow-seconds = {int(follow)}\n" if follow else "")


class Turns:
    """The servers, the Spark Connect server and the `airflow standalone` the turns share."""

    def __init__(self, root: Path, home: Path, launchers: list[str], tuned: bool, settings: dict[str, str]):
        from cdcflow_devtools.mariadb import MariaDB

        self.root, self.home, self.tuned, self.settings = root, home, tuned, settings
        self.up = MariaDB(root, name="upstream", binlog=True, server_id=11)
        self.downs = {name: MariaDB(root, name=f"down-{name}", server_id=12 + i) for i, name in enumerate(launchers)}
        self.spark = self.airflow = self.env = None

    def start(self, sysbench: bool) -> None:
        from cdcflow_devtools import airflow_local, spark_connect
        from cdcflow_devtools.mariadb import free_port

        for s in (self.up, *self.downs.values()):
            s.start()
        create_tables(self.up, *self.downs.values())
        (self.root / "logs").mkdir(parents=True, exist_ok=True)
        if sysbench:
            say(f"sysbench prepare: {lag_sysbench.TABLES} tables of {lag_sysbench.TABLE_SIZE:,} rows, copied to "
                "every downstream")
            lag_sysbench.prepare(self.up, list(self.downs.values()), SCHEMA, self.root / "logs" / "sysbench.log")
        spark_port = free_port()
        say(f"Spark Connect server on port {spark_port}")
        self.spark = spark_connect.start(self.root / "logs", port=spark_port)
        if not any(name.startswith("dag-") for name in self.downs):
            return
        self.env, port = airflow_standalone_env(self.root / "airflow", self.home, spark_port, self.tuned,
                                                self.settings)
        airflow_local.bootstrap(self.env)
        say(f"airflow standalone on port {port} (AIRFLOW_HOME {self.env['AIRFLOW_HOME']})")
        with open(self.root / "logs" / "airflow-standalone.log", "ab") as log:
            self.airflow = subprocess.Popen([str(Path(sys.executable).parent / "airflow"), "standalone"],
                                            env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True)

    def stop(self) -> None:
        if self.airflow is not None:
            process_tree.stop_group(self.airflow, 15.0)
        if self.spark is not None:
            self.spark.stop()
        for s in (self.up, *self.downs.values()):
            s.stop()

    def measure(self, launcher: str, load, seconds: float, changefeed_id: str, settle: int, threads: int) -> dict:
        down = self.downs[launcher]
        if load == SYSBENCH:
            return measure_sysbench_turn(self.up, down, seconds, changefeed_id, settle, threads,
                                         self.root / "logs" / f"sysbench-{launcher}.log")
        return measure_turn(self.up, down, load, seconds, changefeed_id, settle)

    def dag_turn(self, launcher: str, load, seconds: float, settle: int, threads: int) -> dict:
        from cdcflow_devtools.bench_common import create_changefeed

        from cdcflow.changefeed import commands

        schedule, config = dag_config(launcher)
        cid, dag_id = f"lag-{launcher}-{load}", f"changefeed__lag-{launcher}-{load}"
        create_changefeed(cid, self.up, self.downs[launcher], self.home, config=config)
        wait_dag(self.env, dag_id)
        say(f"{load_words(load)} through the DAG on {schedule} ({launcher}) for {seconds:.0f} s")
        dag = self.measure(launcher, load, seconds, cid, settle, threads)
        set_paused(self.env, dag_id, True)
        commands.pause(cid)  # `airflow dags pause` leaves the changefeed as it is: a follow task stops on this
        time.sleep(DRAIN_S)  # also lets the last run in the window end
        dag["runs"] = lag_tail.dag_runs(Path(self.env["AIRFLOW_HOME"]) / "airflow.db", dag_id, cid,
                                        dag.pop("window"), dag.pop("samples_seen"))
        dag["where"] = where_the_seconds_go(dag["runs"])
        dag["tail"] = lag_tail.summary(dag["runs"])
        return dag

    def cli_turn(self, launcher: str, load, seconds: float, settle: int, threads: int) -> dict:
        from cdcflow_devtools.bench_common import create_changefeed

        cid = f"lag-{launcher}-{load}"
        create_changefeed(cid, self.up, self.downs[launcher], self.home, config='[cdcflow]\nschedule = "none"\n')
        follow = launcher == "cli-follow"
        how = "`cdcflow changefeed run --follow --spark-remote`" if follow else \
            "a loop of `cdcflow changefeed run --spark-remote`"
        say(f"{load_words(load)} through {how} for {seconds:.0f} s")
        loop = CliLoop(cid, self.spark.url, cli_env(self.home), self.root / "logs" / f"{launcher}-{load}.log",
                       follow=follow)
        loop.start()
        try:
            cli = self.measure(launcher, load, seconds, cid, settle, threads)
        finally:
            loop.stop()
        cli["runs"] = lag_tail.cli_cycles(cid, cli.pop("window"), cli.pop("samples_seen"))
        cli["tail"] = lag_tail.summary(cli["runs"])
        cli["failed_cycles"] = loop.failures
        return cli


def load_words(load) -> str:
    return (f"sysbench {lag_sysbench.TEST}" if load == SYSBENCH else f"{load:,} row changes/s")


def lag_table(rates: list[int], seconds: float, base: Path, tuned: bool = True, settle: int = SETTLE_CYCLES,
              schedules=DEFAULT_SCHEDULES, cli: bool = True, sysbench: bool = False,
              sysbench_threads: int = lag_sysbench.THREADS, airflow_settings: dict[str, str] | None = None) -> dict:
    """Each rate (then sysbench's load) through each launcher, in turn."""
    root = base / "lag"
    home = root / "cdcflow-home"
    home.mkdir(parents=True, exist_ok=True)
    os.environ["CDCFLOW_HOME"] = str(home)
    launchers = launchers_of(schedules, cli)
    loads = [*rates, *([SYSBENCH] if sysbench else [])]
    out: dict = {"rates": {}, "seconds": seconds, "settle_cycles": settle, "launchers": launchers,
                 "airflow_settings": airflow_settings or {}}
    turns = Turns(root, home, launchers, tuned, airflow_settings or {})
    try:
        turns.start(sysbench)
        for load in loads:
            entry = out["rates"][str(load)] = {}
            for launcher in launchers:
                entry[launcher] = (turns.cli_turn(launcher, load, seconds, settle, sysbench_threads)
                                   if launcher in CLI_LAUNCHERS
                                   else turns.dag_turn(launcher, load, seconds, settle, sysbench_threads))
            say(summary_line(load, entry))
    finally:
        turns.stop()
    return out


def summary_line(load, entry: dict) -> str:
    """Each launcher's p50, p99, max and runs a minute (under sysbench: and the catch-up after it);
    each DAG's p99 against its target and against the CLI loop's."""
    load = load if load == SYSBENCH else int(load)  # the table keys its rates as text (JSON keys)
    cli = entry.get("cli") or {}
    parts = []
    for launcher, r in entry.items():
        text = (f"{launcher} p50 {r.get('p50')} s p99 {r.get('p99')} s max {r.get('max')} s, "
                f"{r.get('cycles_per_minute')} runs/min")
        if "caught_up_seconds" in r:
            text += (f", caught up {r['caught_up_seconds']} s after it stopped "
                     f"({r['sysbench'].get('transactions_per_second')} sysbench tps)")
        verdicts = lag_verdicts(load, r) if launcher.startswith("dag-") else []
        if verdicts:
            text += " [" + "; ".join(v.text() for v in verdicts) + "]"
        if launcher.startswith("dag-") and r.get("p99") and cli.get("p99"):
            text += f" (p99 / CLI {r['p99'] / cli['p99']:.2f})"
        parts.append(text)
    return f"{load_words(load)}: " + "; ".join(parts)


def report(table: dict | None) -> None:
    if not table:
        return
    print()
    print(f"end-to-end lag (heartbeat every {HEARTBEAT_EVERY_S * 1000:.0f} ms, sampled every "
          f"{SAMPLE_EVERY_S * 1000:.0f} ms, {table['seconds']:.0f} s per launcher and load):")
    for load, entry in table["rates"].items():
        print("  " + summary_line(load, entry))
        for launcher, r in entry.items():
            where = r.get("where")
            # no run finished in the window (a following run goes on cycling): no run's times to give
            if where and where.get("runs"):
                tasks = ", ".join(f"{t} {d['wait_p50']}+{d['ran_p50']}" for t, d in where.get("tasks", {}).items())
                print(f"    {launcher}: a DAG run {where.get('run_seconds_p50')} s (median), "
                      f"{where.get('between_runs_p50')} s to the next; per task, median s waited + ran: {tasks}")
            for line in lag_tail.report_lines(f"{launcher} runs", r.get("tail") or {}):
                print("    " + line)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m cdcflow_devtools.bench_lag", description=__doc__.split("\n")[0])
    p.add_argument("--rates", default=",".join(map(str, DEFAULT_RATES)))
    p.add_argument("--seconds", type=float, default=DEFAULT_SECONDS)
    p.add_argument("--dir", default=str(LOCAL / "bench"))
    p.add_argument("--untuned", action="store_true", help="Airflow's own scheduler settings "
                   "(not airflow_local.SCHEDULER_SETTINGS), for a before/after comparison")
    p.add_argument("--settle-cycles", type=int, default=SETTLE_CYCLES, help="cycles to end after the first "
                   f"heartbeat's arrival before the lag is measured (default {SETTLE_CYCLES}; 0: measure from it)")
    add_launcher_options(p, "--")
    p.add_argument("--airflow-setting", action="append", default=[], metavar="AIRFLOW__SECTION__KEY=VALUE",
                   help="an Airflow setting for the standalone's environment, over the tuned ones (repeatable)")
    a = p.parse_args(argv)
    base = Path(a.dir).resolve()
    table = lag_table([int(x) for x in a.rates.split(",") if x], a.seconds, base, tuned=not a.untuned,
                      settle=a.settle_cycles, schedules=schedules_of(a.schedules), cli=a.cli, sysbench=a.sysbench,
                      sysbench_threads=a.sysbench_threads,
                      airflow_settings=dict(x.split("=", 1) for x in a.airflow_setting))
    report(table)
    (base / "lag-results.json").write_text(json.dumps(table, indent=1))
    return 0


def add_launcher_options(p: argparse.ArgumentParser, prefix: str) -> None:
    """The options that pick the launchers and the sysbench load (here `--`, in bench.py `--lag-`)."""
    p.add_argument(f"{prefix}schedules", default=",".join(DEFAULT_SCHEDULES),
                   help=f"the DAG's schedules, a turn each (default {','.join(DEFAULT_SCHEDULES)}; 'none': no DAG)")
    p.add_argument(f"{prefix}cli", action=argparse.BooleanOptionalAction, default=True,
                   help="turns of the CLI too: a loop of runs, and one run --follow (default yes)")
    p.add_argument(f"{prefix}sysbench", action="store_true",
                   help=f"after the rates, sysbench {lag_sysbench.TEST} against the upstream (lag_sysbench)")
    p.add_argument(f"{prefix}sysbench-threads", type=int, default=lag_sysbench.THREADS)


def schedules_of(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip() and x.strip().lower() != "none"]


if __name__ == "__main__":
    sys.exit(main())
