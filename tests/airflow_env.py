"""Airflow for tests: a private AIRFLOW_HOME that sees this project's dags/ and plugins/.

Airflow reads AIRFLOW_HOME (and derives its database URL from it) when it is
first imported, so `use_airflow()` must run before anything imports airflow;
the tests that need Airflow call it from a fixture and import airflow after.
One AIRFLOW_HOME serves the whole pytest session (a second, different one
could not take effect in the same process).

    env = use_airflow(tmp_path_factory.mktemp("airflow"))   # enough for DagBag
    env.migrate_db()                                         # needed for dag.test()
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DAGS_FOLDER = REPO / "dags"
PLUGINS_FOLDER = REPO / "plugins"

# What a DAG run needs besides the DAG: the Spark connection of
# airflow_settings.yaml, given as an environment connection so no
# `airflow connections` call is needed (dag.test() does not check pools).
SPARK_CONNECTION = {"conn_type": "spark", "host": "local[*]", "extra": {"deploy-mode": "client"}}


@dataclass
class AirflowEnv:
    home: Path
    env: dict[str, str]
    migrated: bool = False

    def migrate_db(self) -> None:
        """`airflow db migrate` into this AIRFLOW_HOME's SQLite database, once.

        DagBag parses DAG files without a database; dag.test() and
        `airflow dags test` write the DAG run and task instances, so need it.
        """
        if self.migrated:
            return
        done = subprocess.run(
            [str(Path(sys.executable).parent / "airflow"), "db", "migrate"],
            env={**os.environ, **self.env},
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            raise RuntimeError(f"airflow db migrate failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        self.migrated = True


_current: AirflowEnv | None = None


def airflow_variables(home: Path) -> dict[str, str]:
    return {
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS_FOLDER),
        "AIRFLOW__CORE__PLUGINS_FOLDER": str(PLUGINS_FOLDER),
        "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps(SPARK_CONNECTION),
    }


def connect_connection(url: str) -> str:
    """The `spark_connect_default` connection of airflow_settings.yaml, for the server at
    `url` (sc://host:port), as the value of AIRFLOW_CONN_SPARK_CONNECT_DEFAULT."""
    host, port = url.removeprefix("sc://").rstrip("/").rsplit(":", 1)
    return json.dumps({"conn_type": "spark_connect", "host": host, "port": int(port)})


def use_airflow(base: Path) -> AirflowEnv:
    """Point this process's Airflow at a fresh AIRFLOW_HOME under `base` (first call wins)."""
    global _current
    if _current is not None:
        return _current
    if "airflow.configuration" in sys.modules:
        raise RuntimeError(
            "airflow was imported before use_airflow(), so it keeps the AIRFLOW_HOME it found then; "
            "import airflow only inside tests and fixtures that call use_airflow() first"
        )
    home = Path(base) / "airflow-home"
    home.mkdir(parents=True, exist_ok=True)
    env = airflow_variables(home)
    os.environ.update(env)
    # Airflow puts the plugins folder on sys.path when it initialises; a test
    # may import cdcflow_airflow before that happens.
    if str(PLUGINS_FOLDER) not in sys.path:
        sys.path.append(str(PLUGINS_FOLDER))
    _current = AirflowEnv(home=home, env=env)
    return _current


def parsed_changefeed_dag(changefeed_id: str):
    """The changefeed's DAG as Airflow parses it from dags/ (after use_airflow())."""
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(DAGS_FOLDER))
    assert not bag.import_errors, bag.import_errors
    return bag.dags[f"changefeed__{changefeed_id}"]


def sync_dag_file(path: Path, bundle: str = "tests") -> dict:
    """The DAGs of a file outside dags/ (a consumer a user writes, a DAG a test builds), written to
    Airflow's DB under a bundle of their own (syncing dags/ leaves them alone) and unpaused, so
    the scheduler's queries and dag.test() see them.  Returns them by id."""
    from airflow.dag_processing.dagbag import DagBag, sync_bag_to_db
    from airflow.models.dag import DagModel
    from airflow.models.dagbundle import DagBundleModel
    from airflow.utils.session import create_session

    bag = DagBag(dag_folder=str(path))
    assert not bag.import_errors and bag.dags, bag.import_errors
    with create_session() as session:
        session.merge(DagBundleModel(name=bundle))
    sync_bag_to_db(bag, bundle, None)
    with create_session() as session:
        for dag_id in bag.dags:
            session.get(DagModel, dag_id).is_paused = False
    return bag.dags
