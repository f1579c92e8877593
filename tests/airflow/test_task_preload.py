"""The scheduler imports once what a cycle's tasks import (plugins/airflow_local_settings.py),
so the task processes forked from it start with cdcflow's launchers and pyspark's Connect client
imported; no other Airflow process does, and Airflow's own settings are left as they were."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PROBE = """
import json, sys
sys.argv = ["airflow", sys.argv[1]]
import airflow.settings as settings
print(json.dumps({"loaded": sorted(m for m in ("cdcflow.launch.cycle_runner", "cdcflow.stages.finish",
                                                "pyspark.sql.connect.session") if m in sys.modules),
                  "settings_log": settings.log.name}))
"""

pytestmark = pytest.mark.airflow


def _imported_by(component: str, tmp_path) -> dict:
    env = {**os.environ, "AIRFLOW_HOME": str(tmp_path), "AIRFLOW__CORE__PLUGINS_FOLDER": str(REPO / "plugins"),
           "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
           "PYTHONPATH": os.pathsep.join(p for p in (str(REPO / "include"), os.environ.get("PYTHONPATH")) if p)}
    out = subprocess.run([sys.executable, "-c", PROBE, component], env=env, capture_output=True, text=True,
                         timeout=300, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_the_scheduler_alone_preloads_the_tasks_imports(tmp_path):
    assert _imported_by("scheduler", tmp_path) == {
        "loaded": ["cdcflow.launch.cycle_runner", "cdcflow.stages.finish", "pyspark.sql.connect.session"],
        "settings_log": "airflow.settings"}  # the module's own names are not copied into airflow.settings
    assert _imported_by("api-server", tmp_path) == {"loaded": [], "settings_log": "airflow.settings"}
