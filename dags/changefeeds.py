"""One Airflow DAG per cdcflow changefeed spec under CDCFLOW_HOME (built by cdcflow_airflow)."""

from cdcflow.core.home import Home
from cdcflow_airflow import changefeed_dags, specs_to_build, use_cdcflow_home

_home = use_cdcflow_home()
with Home(_home).entered():
    # a task's parse builds its own changefeed's DAG only (specs_to_build)
    for _dag in changefeed_dags(specs_to_build(), _home):
        globals()[_dag.dag_id] = _dag
