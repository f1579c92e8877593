"""One Airflow DAG per cdcflow changefeed spec under CDCFLOW_HOME (built by cdcflow_airflow)."""

from cdcflow.core.home import Home
from cdcflow.config.spec_store import list_specs
from cdcflow_airflow import changefeed_dags, use_cdcflow_home

_home = use_cdcflow_home()
with Home(_home).entered():
    for _dag in changefeed_dags(list_specs(), _home):
        globals()[_dag.dag_id] = _dag
