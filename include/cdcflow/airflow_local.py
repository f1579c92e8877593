"""A local Airflow for this project: `make dag-test`, `make airflow-bootstrap` and the demo.

    python -m cdcflow.airflow_local bootstrap           # db migrate + airflow_settings.yaml
    python -m cdcflow.airflow_local dags-test DAG_ID    # one DAG run through `airflow dags test`

AIRFLOW_HOME defaults to .local/airflow in the project; the DAGs and plugins folders
are this project's.  cdcflow's library never imports airflow: this only runs its CLI.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]


def airflow_env(home: Path | None = None) -> dict[str, str]:
    home = Path(home or os.environ.get("AIRFLOW_HOME") or PROJECT / ".local" / "airflow")
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
    subprocess.run([sys.executable, "-m", "cdcflow.airflow_bootstrap", str(PROJECT / "airflow_settings.yaml")],
                   env=env, check=True, stdout=subprocess.DEVNULL if quiet else None)
    marker.touch()


def dags_test(dag_id: str, env: dict[str, str], conf: str | None = None) -> int:
    bootstrap(env)
    args = ["dags", "test", dag_id]
    if conf:
        args += ["--conf", conf]
    return _airflow(*args, env=env, check=False)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    env = airflow_env()
    if argv[:1] == ["bootstrap"]:
        bootstrap(env, quiet=False)
        print(f"Airflow at AIRFLOW_HOME={env['AIRFLOW_HOME']} is set up")
        return 0
    if argv[:1] == ["dags-test"] and len(argv) == 2:
        return dags_test(argv[1], env)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
