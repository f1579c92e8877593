"""A Spark standalone cluster on 127.0.0.1 from the pyspark package: one master and N
workers, each a JVM of its own, for the cluster test (`spark://…` masters run the
stages' tasks in executor JVMs the workers launch, as on a real cluster).

The workers' executors run this interpreter with this checkout's cdcflow first on their
path, as the driver does.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from cdcflow_devtools.mariadb import free_port
from cdcflow_devtools.spark_connect import HOST, port_taken, server_env, spark_home

MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"
START_TIMEOUT_S = 120


@dataclass
class Cluster:
    master_url: str
    base: Path
    processes: list[subprocess.Popen] = field(default_factory=list)

    def worker_dirs(self) -> list[Path]:
        return sorted(self.base.glob("worker-*/work"))

    def stop(self, timeout: float = 30) -> None:
        for proc in reversed(self.processes):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for proc in self.processes:
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _spawn(cls: str, args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen:
    with open(log, "ab") as out:
        return subprocess.Popen([str(spark_home() / "bin" / "spark-class"), cls, *args], stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                start_new_session=True)


def _wait_for(what: str, ready, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the Spark {what} exited with code {proc.returncode} while starting; see {log}")
        if ready():
            return
        time.sleep(0.5)
    raise RuntimeError(f"the Spark {what} did not start within {START_TIMEOUT_S} s; see {log}")


def start(base: Path, workers: int = 2, worker_memory: str = "1g", worker_cores: int = 1) -> Cluster:
    """A master and `workers` workers on 127.0.0.1, each with its own folder under `base`."""
    base = Path(base)
    base.mkdir(parents=True, exist_ok=True)
    env = {**server_env(base), "SPARK_LOCAL_IP": HOST, "SPARK_MASTER_HOST": HOST}
    port = free_port()
    cluster = Cluster(f"spark://{HOST}:{port}", base)
    try:
        log = base / "master.log"
        master = _spawn(MASTER, ["--host", HOST, "--port", str(port), "--webui-port", str(free_port())], log, env)
        cluster.processes.append(master)
        _wait_for("master", lambda: port_taken(port), master, log)
        for i in range(workers):
            work = base / f"worker-{i}" / "work"
            work.mkdir(parents=True, exist_ok=True)
            log = base / f"worker-{i}.log"
            worker = _spawn(WORKER, ["--host", HOST, "--cores", str(worker_cores), "--memory", worker_memory,
                                     "--work-dir", str(work), "--webui-port", str(free_port()),
                                     cluster.master_url], log, env)
            cluster.processes.append(worker)
            _wait_for(f"worker {i}", lambda p=log: "Successfully registered with master" in p.read_text(errors="replace"),
                      worker, log)
    except BaseException:
        cluster.stop()
        raise
    return cluster
