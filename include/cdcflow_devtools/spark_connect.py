"""A local Spark Connect server from the pyspark package, for `make airflow`, `make demo`,
the tests and the benchmark: one warm JVM that every Spark stage opens a session on.

    python -m cdcflow_devtools.spark_connect [--port 15002] [--log-dir DIR]

runs one in the foreground until Ctrl-C.  The server's Python workers run this
interpreter with this checkout's cdcflow first on their path, so the stages' Arrow
functions import the same code as the process that plans them.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from cdcflow_devtools import process_tree

HOST = "127.0.0.1"
DEFAULT_PORT = 15002
READY_LINE = "Spark Connect server started"
START_TIMEOUT_S = 180


@dataclass
class ConnectServer:
    port: int
    process: subprocess.Popen
    log_path: Path

    @property
    def url(self) -> str:
        return f"sc://{HOST}:{self.port}"

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout: float = 30) -> None:
        """SIGTERM to the server's process group and descendants (the launcher script, the JVM, its
        Python workers), then SIGKILL; returns once none of them is left (the port is free again)."""
        process_tree.stop_group(self.process, timeout)
        # the listening socket can outlive the group by a moment: a start on the same port
        # right after (a restart) found it taken
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and port_taken(self.port):
            time.sleep(0.2)


def _group_alive(pgid: int) -> bool:
    # a group whose only member is the launcher's zombie is gone
    return bool(process_tree.group_members(pgid))


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def port_taken(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex((HOST, port)) == 0


def server_env(log_dir: Path) -> dict[str, str]:
    import cdcflow

    code = str(Path(cdcflow.__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (code, os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
            "PYTHONPATH": path, "SPARK_LOG_DIR": str(log_dir), "SPARK_PID_DIR": str(log_dir)}


def start(log_dir: Path, port: int = DEFAULT_PORT, driver_memory: str = "2g",
          shuffle_partitions: int = 4, timeout: float = START_TIMEOUT_S, warm: bool = True,
          master: str = "local[*]", conf: dict[str, str] | None = None) -> ConnectServer:
    """Start a server on 127.0.0.1:`port` and wait until it takes sessions; `warm` runs the
    warm-up job (cdcflow.spark.warm_up) first, so the first stage does not pay for it.  `conf`:
    more Spark settings (the bench's event log: cdcflow_devtools.spark_events)."""
    log_dir = Path(log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    if port_taken(port):
        raise RuntimeError(f"port {port} on {HOST} is taken (a Spark Connect server already running?): "
                           f"stop it, or choose another port")
    log_path = log_dir / f"spark-connect-{port}.log"
    cmd = [str(spark_home() / "sbin" / "start-connect-server.sh"), "--wait",
           "--master", master, "--driver-memory", driver_memory,
           "--conf", f"spark.connect.grpc.binding.address={HOST}",
           "--conf", f"spark.connect.grpc.binding.port={port}",
           "--conf", "spark.ui.enabled=false",
           "--conf", "spark.sql.session.timeZone=UTC",
           "--conf", f"spark.sql.shuffle.partitions={shuffle_partitions}",
           "--conf", f"spark.default.parallelism={shuffle_partitions}",
           "--conf", "spark.python.worker.reuse=true"]
    cmd += [arg for key, value in (conf or {}).items() for arg in ("--conf", f"{key}={value}")]
    with open(log_path, "ab") as log:
        process = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env=server_env(log_dir), cwd=log_dir, start_new_session=True)
    server = ConnectServer(port, process, log_path)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not server.alive():
            raise RuntimeError(f"the Spark Connect server exited with code {process.returncode} while "
                               f"starting; its log: {log_path}\n{_tail(log_path)}")
        if READY_LINE in log_path.read_text(errors="replace") and port_taken(port):
            if warm:
                try:
                    _warm(server, log_dir)
                except BaseException:
                    server.stop()  # a server its caller never got would outlive it
                    raise
            return server
        time.sleep(0.5)
    server.stop()
    raise RuntimeError(f"the Spark Connect server did not start within {timeout:.0f} s; its log: {log_path}")


def _warm(server: ConnectServer, log_dir: Path) -> None:
    from cdcflow.spark.session import connect_session, release
    from cdcflow.spark.warm_up import warm_up

    spark = connect_session(server.url)
    try:
        took = warm_up(spark, str(log_dir.resolve() / f"warm-up-{server.port}"))
    finally:
        release(spark)
    with open(server.log_path, "a") as log:
        log.write(f"cdcflow: warm-up job took {took:.1f} s\n")


def _tail(path: Path, lines: int = 15) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m cdcflow_devtools.spark_connect",
                                description="Run a local Spark Connect server until Ctrl-C.")
    p.add_argument("--port", type=int, default=DEFAULT_PORT)
    p.add_argument("--log-dir", type=Path, default=Path.cwd() / "logs")
    args = p.parse_args(argv)
    try:
        server = start(args.log_dir, args.port)
    except RuntimeError as e:
        print(f"Error: {e}", file=sys.stderr)
        return 1
    print(f"Spark Connect server on {server.url} (log: {server.log_path}); Ctrl-C stops it.", flush=True)
    try:
        server.process.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        print("Spark Connect server stopped.", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
