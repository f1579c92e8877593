"""Airflow glue for cdcflow: the DAG of one changefeed and its tasks.

Airflow's plugin loader also imports every file of plugins/ on its own, as a
top-level module, so the modules of this package import each other by their
absolute names (plugins/ is on sys.path), never relatively.
"""

from cdcflow_airflow.dag_factory import (
    changefeed_dag,
    changefeed_dags,
    dag_id_for,
    specs_to_build,
    use_cdcflow_home,
)

__all__ = ["changefeed_dag", "changefeed_dags", "dag_id_for", "specs_to_build", "use_cdcflow_home"]
