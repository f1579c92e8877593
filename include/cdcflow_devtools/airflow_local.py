"""A local Airflow for this project: `make dag-test`, `make airflow-bootstrap` and the demo.

    python -m cdcflow_devtools.airflow_local bootstrap           # db migrate + airflow_settings.yaml
    python -m cdcflow_devtools.airflow_local dags-test CF_ID      # one DAG run through `airflow dags test`
    python -m cdcflow_devtools.airflow_local standalone [--port N] [--spark-port N]
                                                                  # `make airflow`: the UI with the demo changefeed

AIRFLOW_HOME defaults to .local/airflow in the project, CDCFLOW_HOME to .local/cdcflow-home
(the demo's); the DAGs and plugins folders are this project's.  The DAG's Spark stages run
on a Spark Connect server on 127.0.0.1:15002 (the `spark_connect_default` connection of
airflow_settings.yaml; `standalone --spark-port` another), started here unless one listens
there already.  The scheduler loops as SCHEDULER_SETTINGS says (docs/guides/airflow.md, "Keeping a
downstream fresh").  cdcflow's library never imports airflow: this only runs its CLI.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cdcflow_devtools import process_tree, spark_connect
from cdcflow_devtools.checkout import LOCAL, PROJECT

DEMO_HOME = LOCAL / "cdcflow-home"  # the CDCFLOW_HOME of make demo, make airflow, make dag-test


def airflow_env(home: Path | None = None) -> dict[str, str]:
    home = Path(home or os.environ.get("AIRFLOW_HOME") or LOCAL / "airflow")
    home.mkdir(parents=True, exist_ok=True)
    venv_bin = str(Path(sys.executable).parent)
    return {
        **os.environ,
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(PROJECT / "dags"),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(PROJECT / "plugins"),
        "PATH": venv_bin + os.pathsep + os.environ.get("PATH", ""),
    }


def _airflow(*args: str, env: dict[str, str], check: bool = True, quiet: bool = False) -> int:
    cmd = [str(Path(sys.executable).parent / "airflow"), *args]
    out = subprocess.DEVNULL if quiet else None
    rc = subprocess.run(cmd, env=env, stdout=out, stderr=out).returncode
    if check and rc != 0:
        raise SystemExit(f"`airflow {' '.join(args)}` failed with exit code {rc}")
    return rc


def bootstrap(env: dict[str, str], quiet: bool = True) -> None:
    """Create Airflow's database if needed and apply airflow_settings.yaml (idempotent)."""
    marker = Path(env["AIRFLOW_HOME"]) / ".cdcflow-bootstrapped"
    if not marker.exists():
        _airflow("db", "migrate", env=env, quiet=quiet)
    subprocess.run([sys.executable, "-m", "cdcflow_devtools.airflow_bootstrap", str(PROJECT / "airflow_settings.yaml")],
                   env=env, check=True, stdout=subprocess.DEVNULL if quiet else None)
    marker.touch()


@contextmanager
def spark_connect_server() -> Iterator[str]:
    """A Spark Connect server on 127.0.0.1:15002 while the block runs; one that already
    listens there (a `make airflow` running) is used and left running."""
    url = f"sc://{spark_connect.HOST}:{spark_connect.DEFAULT_PORT}"
    if spark_connect.port_taken(spark_connect.DEFAULT_PORT):
        print(f"Spark Connect: using the server already on {url}", flush=True)
        yield url
        return
    print(f"Spark Connect: starting a server on {url} (log: {LOCAL / 'logs'})", flush=True)
    server = spark_connect.start(LOCAL / "logs")
    try:
        yield server.url
    finally:
        server.stop()
        print("Spark Connect: server stopped", flush=True)


def dags_test(dag_id: str, env: dict[str, str], conf: str | None = None) -> int:
    """One DAG run through `airflow dags test`: its tasks and what each moved on the terminal,
    Airflow's and Spark's whole output in .local/logs/<dag id>.log (named on the terminal)."""
    from cdcflow_devtools.run_log import run_logged

    bootstrap(env)
    args = ["dags", "test", dag_id]
    if conf:
        args += ["--conf", conf]
    log_path = LOCAL / "logs" / f"{dag_id}.log"
    with spark_connect_server():
        print(f"airflow dags test {dag_id}: progress below, the whole output in {log_path}", flush=True)
        return run_logged([str(Path(sys.executable).parent / "airflow"), *args], log_path,
                          show=lambda line: print(line, flush=True), env=env)


def dag_test_changefeed(changefeed_id: str, env: dict[str, str]) -> int:
    """`make dag-test CF=<id>`: one DAG run of a changefeed of the home make demo and make
    airflow use (or $CDCFLOW_HOME); a home without that changefeed is an error, not created."""
    home = Path(env.setdefault("CDCFLOW_HOME", str(DEMO_HOME)))
    if not (home / "changefeeds" / f"{changefeed_id}.json").is_file():
        print(f"Error: no changefeed {changefeed_id!r} in CDCFLOW_HOME={home}: `make demo` creates the "
              f"changefeed demo there; create others with CDCFLOW_HOME={home} cdcflow changefeed create ...",
              file=sys.stderr)
        return 2
    return dags_test(f"changefeed__{changefeed_id}", env)


PASSWORDS_FILE = "simple_auth_manager_passwords.json.generated"

# The scheduler's loop, tuned for a changefeed on `@continuous` (docs/performance.md, "Freshness"):
# each hop between two tasks of a run, and from one run to the next, waits for a scheduler loop
# that found nothing to do to sleep its idle time out.
# the scheduler's loop, and how long a worker's task supervisor may wait, after its task's
# sockets closed, before it sees the process gone (docs/guides/airflow.md, "Keeping a downstream fresh")
SCHEDULER_SETTINGS = {"AIRFLOW__SCHEDULER__SCHEDULER_IDLE_SLEEP_TIME": "0.2",
                      "AIRFLOW__WORKERS__MIN_HEARTBEAT_INTERVAL": "1"}


def standalone_settings(port: int, spark_port: int, tuned: bool = True) -> dict[str, str]:
    """The environment of an `airflow standalone` on `port` whose DAGs' Spark stages run on the
    Spark Connect server on `spark_port`; `tuned` adds SCHEDULER_SETTINGS."""
    # the workers reach the task execution API on the same server: on another port than
    # Airflow's default 8080 they must be told, or every task fails before it starts; the
    # connection spark_connect_default names this server (the environment wins over the database)
    return {"AIRFLOW__API__HOST": "127.0.0.1", "AIRFLOW__API__PORT": str(port),
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://127.0.0.1:{port}/execution/",
            "AIRFLOW__CORE__PARALLELISM": "4",
            "AIRFLOW_CONN_SPARK_CONNECT_DEFAULT": json.dumps(
                {"conn_type": "spark_connect", "host": spark_connect.HOST, "port": spark_port}),
            **(SCHEDULER_SETTINGS if tuned else {})}


STOP_GRACE_S = 5.0  # from SIGTERM to SIGKILL for what `make airflow` started, at Ctrl-C


def standalone(env: dict[str, str], port: int, spark_port: int = spark_connect.DEFAULT_PORT) -> int:
    """`airflow standalone` on 127.0.0.1 with airflow_settings.yaml applied and the demo
    changefeed (its MariaDB pair started) and a Spark Connect server; prints the URL and
    the login once it serves.  Ctrl-C (or SIGTERM) stops every process it started at once
    (process_tree.stop_all): Airflow's components, the Spark server, a MariaDB pair it started.
    Returns 0 after a stop that ended them all, 1 when one outlived it, else Airflow's exit code."""
    process_tree.become_subreaper()  # what a component leaves behind when it dies stays ours to stop
    groups: list[int] = []  # the process groups started here
    try:
        rc = _standalone(env, port, spark_port, groups)
    except KeyboardInterrupt:
        # Ctrl-C is how a person ends it: a clean stop is a success, or make would end the session
        # with "make: *** [Makefile:…: airflow] Error 130" after every process stopped as asked
        rc = 0
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):  # a second Ctrl-C must not cut the stop short
            signal.signal(sig, signal.SIG_IGN)
        print("\nstopping every process started here (Airflow, the Spark Connect server, the MariaDB pair "
              "if it was not running before) ...", flush=True)
        t0 = time.monotonic()
        left = process_tree.stop_all(groups, STOP_GRACE_S)
        print(f"stopped in {time.monotonic() - t0:.1f} s" + (f"; still running: {left}" if left else ""),
              flush=True)
    return 1 if left else rc


def _standalone(env: dict[str, str], port: int, spark_port: int, groups: list[int]) -> int:
    from cdcflow_devtools.demo_feed import demo_changefeed

    env.setdefault("CDCFLOW_HOME", os.environ.get("CDCFLOW_HOME") or str(DEMO_HOME))
    os.environ["CDCFLOW_HOME"] = env["CDCFLOW_HOME"]
    if demo_changefeed(fresh=False) is None:
        return 1
    bootstrap(env)
    spark_url = f"sc://{spark_connect.HOST}:{spark_port}"
    if spark_connect.port_taken(spark_port):
        print(f"Spark Connect: using the server already on {spark_url}", flush=True)
    else:
        print(f"Spark Connect: starting a server on {spark_url} (log: {LOCAL / 'logs'})", flush=True)
        groups.append(spark_connect.start(LOCAL / "logs", port=spark_port).process.pid)
    env.update(standalone_settings(port, spark_port))
    # a group of its own: the terminal's Ctrl-C reaches this process alone, which stops them all
    proc = subprocess.Popen([str(Path(sys.executable).parent / "airflow"), "standalone"], env=env,
                            start_new_session=True)
    groups.append(proc.pid)
    url = f"http://127.0.0.1:{port}"
    while proc.poll() is None:
        try:
            urllib.request.urlopen(url + "/api/v2/monitor/health", timeout=5).close()
            break
        except OSError:
            time.sleep(2)
    passwords = Path(env["AIRFLOW_HOME"]) / PASSWORDS_FILE
    login = ", ".join(f"{user} / {password}" for user, password in json.loads(passwords.read_text()).items()) \
        if passwords.exists() else "see the `standalone |` lines above"
    print(f"\n  Airflow:      {url}\n  login:        {login}\n"
          f"  changefeeds:  {url}/plugin/cdcflow-changefeeds (API: {url}/cdcflow/api/v2/changefeeds, with\n"
          f"                a bearer token from POST {url}/auth/token {{\"username\", \"password\"}})\n"
          f"  Spark:        {spark_url} (Spark Connect, connection spark_connect_default)\n"
          f"  CDCFLOW_HOME: {env['CDCFLOW_HOME']}\n  Ctrl-C stops it.\n", flush=True)
    return proc.wait()


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    env = airflow_env()
    if argv[:1] == ["bootstrap"]:
        bootstrap(env, quiet=False)
        print(f"Airflow at AIRFLOW_HOME={env['AIRFLOW_HOME']} is set up")
        return 0
    if argv[:1] == ["dags-test"] and len(argv) == 2:
        return dag_test_changefeed(argv[1], env)
    if argv[:1] == ["standalone"]:
        opts = dict(zip(argv[1::2], argv[2::2]))
        port, spark_port = int(opts.get("--port", 8080)), int(opts.get("--spark-port", spark_connect.DEFAULT_PORT))
        signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops Airflow and the Spark server as Ctrl-C does
        return standalone(env, port, spark_port)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
