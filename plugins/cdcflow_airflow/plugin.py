"""The Airflow plugin: cdcflow's changefeed API (behind Airflow's login), its page in the Airflow UI, and
what it adds to Airflow's own API (airflow_api_guard: the DAG toggle is the changefeed's pause, a trigger
is checked before its run exists)."""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from cdcflow_airflow.airflow_api_guard import AirflowApiGuard
from cdcflow_airflow.http_api import URL_PREFIX, app


class CdcflowPlugin(AirflowPlugin):
    name = "cdcflow"
    fastapi_apps = [{"app": app, "url_prefix": URL_PREFIX, "name": "cdcflow changefeeds API"}]
    fastapi_root_middlewares = [{"middleware": AirflowApiGuard, "args": [], "kwargs": {},
                                 "name": "cdcflow: DAG toggle = changefeed pause; triggers checked first"}]
    # A nav entry that shows the page inside the Airflow UI (href relative to the UI's base URL).
    external_views = [{
        "name": "Changefeeds",
        "href": URL_PREFIX.lstrip("/") + "/ui",
        "destination": "nav",
        "url_route": "cdcflow-changefeeds",
        "category": "browse",
    }]
