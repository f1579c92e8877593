"""The finish task's OpenLineage: a cycle's changed tables as inputs (upstream) and outputs
(downstream), named as OpenLineage names MySQL datasets.  The provider's own classes are
checked where apache-airflow-providers-openlineage is installed (requirements-test.txt);
what a real cycle reports is checked in test_dag_assets.py."""

from __future__ import annotations

import pytest

try:
    from airflow_env import use_airflow
except ImportError:  # tests/ imported as a package
    from tests.airflow_env import use_airflow

from cdcflow.config.spec_store import Spec, save_spec
from cdcflow.launch.cycle_tables import CycleTables, Server

pytestmark = pytest.mark.airflow

TABLES = CycleTables("ol", "airflow__1", Server("up.example", 3306), Server("::1", 4000),
                     (("shop", "orders"), ("shop", "order/lines")), 450000000000000000, "2026-11-25 10:00:00.000")


@pytest.fixture(scope="module")
def airflow(tmp_path_factory):
    return use_airflow(tmp_path_factory.mktemp("airflow"))


def test_a_cycle_reads_its_tables_upstream_and_writes_them_downstream(airflow):
    from cdcflow_airflow.lineage import cycle_datasets

    inputs, outputs = cycle_datasets(TABLES)
    assert inputs == [("mysql://up.example:3306", "shop.orders"), ("mysql://up.example:3306", "shop.order/lines")]
    assert outputs == [("mysql://[::1]:4000", "shop.orders"), ("mysql://[::1]:4000", "shop.order/lines")]
    assert cycle_datasets(None) == ([], [])  # no cycle opened: no lineage


def test_the_openlineage_provider_reads_the_finish_tasks_lineage(airflow, tmp_path, monkeypatch):
    pytest.importorskip("airflow.providers.openlineage", reason="apache-airflow-providers-openlineage not installed")
    from airflow.providers.common.compat.openlineage.facet import Dataset
    from airflow.providers.openlineage.extractors.base import DefaultExtractor
    from airflow.providers.openlineage.extractors.manager import ExtractorManager

    from cdcflow_airflow import changefeed_dag
    from cdcflow_airflow.finish_task import FinishOperator

    monkeypatch.setenv("CDCFLOW_HOME", str(tmp_path))
    spec = Spec(id="ol", source_uri="mysql://u@up.example:3306", sink_uri="tidb://u@[::1]:4000")
    save_spec(spec)
    finish = changefeed_dag(spec, str(tmp_path)).get_task("finish")
    # the provider finds the operator's own OpenLineage method
    assert ExtractorManager().get_extractor_class(finish) is DefaultExtractor
    monkeypatch.setattr(FinishOperator, "_cycle_tables", lambda self, ti: TABLES)
    lineage = finish.get_openlineage_facets_on_complete(None)
    assert lineage.inputs == [Dataset(namespace="mysql://up.example:3306", name="shop.orders"),
                              Dataset(namespace="mysql://up.example:3306", name="shop.order/lines")]
    assert lineage.outputs == [Dataset(namespace="mysql://[::1]:4000", name="shop.orders"),
                               Dataset(namespace="mysql://[::1]:4000", name="shop.order/lines")]
