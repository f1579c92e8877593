"""A local Airflow for this project: `make dag-test`, `make airflow-bootstrap` and the demo.

    python -m cdcflow.devtools.airflow_local bootstrap           # db migrate + airflow_settings.yaml
    python -m cdcflow.devtools.airflow_local dags-test DAG_ID    # one DAG run through `airflow dags test`
    python -m cdcflow.devtools.airflow_local standalone [--port N]  # `make airflow`: the UI with the demo changefeed

AIRFLOW_HOME defaults to .local/airflow in the project; the DAGs and plugins folders
are this project's.  cdcflow's library never imports airflow: this only runs its CLI.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cdcflow.devtools.checkout import LOCAL, PROJECT


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
    subprocess.run([sys.executable, "-m", "cdcflow.devtools.airflow_bootstrap", str(PROJECT / "airflow_settings.yaml")],
                   env=env, check=True, stdout=subprocess.DEVNULL if quiet else None)
    marker.touch()


def dags_test(dag_id: str, env: dict[str, str], conf: str | None = None) -> int:
    bootstrap(env)
    args = ["dags", "test", dag_id]
    if conf:
        args += ["--conf", conf]
    return _airflow(*args, env=env, check=False)


PASSWORDS_FILE = "simple_auth_manager_passwords.json.generated"


def standalone(env: dict[str, str], port: int) -> int:
    """`airflow standalone` on 127.0.0.1 with airflow_settings.yaml applied and the demo
    changefeed (its MariaDB pair started); prints the URL and the login once it serves."""
    import json
    import time
    import urllib.request

    from cdcflow.devtools.demo import LOCAL, demo_changefeed

    env.setdefault("CDCFLOW_HOME", os.environ.get("CDCFLOW_HOME") or str(LOCAL / "cdcflow-home"))
    os.environ["CDCFLOW_HOME"] = env["CDCFLOW_HOME"]
    if demo_changefeed(fresh=False) is None:
        return 1
    bootstrap(env)
    env.update({"AIRFLOW__API__HOST": "127.0.0.1", "AIRFLOW__API__PORT": str(port),
                "AIRFLOW__CORE__PARALLELISM": "4"})
    proc = subprocess.Popen([str(Path(sys.executable).parent / "airflow"), "standalone"], env=env)
    url = f"http://127.0.0.1:{port}"
    try:
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
              f"  changefeeds:  {url}/plugin/cdcflow-changefeeds (API: {url}/cdcflow/api/v2/changefeeds)\n"
              f"  CDCFLOW_HOME: {env['CDCFLOW_HOME']}\n  Ctrl-C stops it.\n", flush=True)
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        return proc.wait()


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    env = airflow_env()
    if argv[:1] == ["bootstrap"]:
        bootstrap(env, quiet=False)
        print(f"Airflow at AIRFLOW_HOME={env['AIRFLOW_HOME']} is set up")
        return 0
    if argv[:1] == ["dags-test"] and len(argv) == 2:
        return dags_test(argv[1], env)
    if argv[:1] == ["standalone"]:
        port = int(argv[2]) if argv[1:2] == ["--port"] and len(argv) == 3 else 8080
        return standalone(env, port)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
