"""The examples the pages include whole (docs/examples/, pymdownx snippets) do what the pages say:
the changefeed config parses and its filters keep and drop what its comments say, the shell
file's connections resolve to the logins the changefeed's URIs name, airflow_settings.yaml
applies, and the Asset-scheduled DAG builds on the Asset the changefeed's finish task emits."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cdcflow.config.parsing import parse_config
from cdcflow.core.uri import parse_sink_uri, parse_source_uri
from cdcflow.filter import value_expr
from cdcflow.filter.assembled import Filter
from cdcflow.filter.event_filter import EventFilter
from cdcflow.filter.mysql_eval import compile_expr, typed_value
from cdcflow_devtools.airflow_bootstrap import load_settings, plan

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "docs" / "examples"


def test_the_changefeed_config_keeps_and_leaves_out_what_it_says():
    cfg = parse_config((EXAMPLES / "changefeed.toml").read_text(), "changefeed.toml")
    flt = Filter.build(cfg)  # every rule and matcher compiles, as create checks
    assert flt.match_table("shop", "orders") and flt.match_table("shop", "customers")
    assert not flt.match_table("shop", "access_log") and not flt.match_table("shop", "tmp_import")
    assert not flt.match_table("crm", "people")
    events = EventFilter(cfg.event_filters)
    assert events.ddl_ignored("add index", "CREATE INDEX i ON orders (placed)", "shop", "orders")
    assert events.ddl_ignored("alter table comment", "ALTER TABLE orders COMMENT 'x'", "shop", "orders")
    assert not events.ddl_ignored("add column", "ALTER TABLE orders ADD c INT", "shop", "orders")
    assert not events.ddl_ignored("add index", "CREATE INDEX i ON customers (email)", "shop", "customers")
    assert events.ignored_ops("shop", "orders") == frozenset()  # its rows keep flowing


@pytest.mark.parametrize("key, row, ignored", [
    ("ignore_insert_value_expr", {"email": "qa@test.example", "archived": 0}, True),
    ("ignore_insert_value_expr", {"email": "ann@shop.example", "archived": 0}, False),
    ("ignore_delete_value_expr", {"email": "ann@shop.example", "archived": 1}, True),
    ("ignore_delete_value_expr", {"email": "ann@shop.example", "archived": 0}, False),
])
def test_the_changefeed_configs_value_expressions_drop_the_rows_its_comments_name(key, row, ignored):
    cfg = parse_config((EXAMPLES / "changefeed.toml").read_text(), "changefeed.toml")
    rule = next(r for r in cfg.event_filters if getattr(r, key))
    cols = [value_expr.column_of("email", "varchar", "varchar(255)"),
            value_expr.column_of("archived", "tinyint", "tinyint(1)")]
    expr = compile_expr(value_expr.parse(getattr(rule, key), key), cols, dt.datetime(2026, 1, 1))
    assert (expr([typed_value(c, row[c.name]) for c in cols]) == 1) is ignored


def test_the_connections_file_resolves_the_passwords_the_uris_name():
    text = (EXAMPLES / "airflow_connections.sh").read_text()
    shown = subprocess.run(["bash", "-c", f"set -eu; . {EXAMPLES / 'airflow_connections.sh'}; env -0"],
                           capture_output=True, text=True, check=True, env={"PATH": os.environ["PATH"]}).stdout
    env = dict(item.split("=", 1) for item in shown.split("\0") if "=" in item)
    sink = parse_sink_uri(re.search(r"--sink-uri '([^']+)'", text).group(1))
    source = parse_source_uri(re.search(r"--source-uri '([^']+)'", text).group(1))
    saved = dict(os.environ)
    try:
        os.environ.update({k: v for k, v in env.items() if k.startswith(("AIRFLOW_CONN_", "SHOP_"))})
        assert (sink.connection_args()["user"], sink.connection_args()["password"]) == ("writer", "s3cret")
        assert (source.connection_args()["user"], source.connection_args()["password"]) == ("repl", "r3pl")
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_airflow_settings_give_the_connections_pool_and_home_the_guide_names():
    settings = load_settings(REPO / "airflow_settings.yaml")
    assert {c["conn_id"] for c in settings["connections"]} == {"spark_connect_default", "spark_default"}
    assert [p["pool_name"] for p in settings["pools"]] == ["cdcflow_spark"]
    assert [v["variable_name"] for v in settings["variables"]] == ["cdcflow_home"]
    commands = plan(settings, "airflow", "connections.json")
    assert commands[0][:3] == ["airflow", "connections", "import"] and len(commands) == 3


_DAG_CHECK = """
import json, runpy, sys
sys.path.insert(0, {plugins!r})
from cdcflow_airflow.assets import table_asset
module = runpy.run_path({path!r})
want = table_asset("mysql://writer@tidb.internal:4000/?airflow-conn-id=x", "shop", "orders")
print(json.dumps({{"uri": module["ORDERS"].uri, "want": want.uri, "dag": module["dag"].dag_id,
                  "tasks": sorted(module["dag"].task_ids)}}))
"""


def test_the_asset_scheduled_dag_builds_on_the_asset_the_changefeed_emits(tmp_path):
    """In a process of its own: Airflow must not be imported into the test session before its home is set."""
    script = _DAG_CHECK.format(plugins=str(REPO / "plugins"), path=str(EXAMPLES / "orders_report_dag.py"))
    env = {**os.environ, "AIRFLOW_HOME": str(tmp_path), "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
           "PYTHONPATH": os.pathsep.join([str(REPO / "include"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["uri"] == found["want"] == "mysql://tidb.internal:4000/shop/orders"
    assert (found["dag"], found["tasks"]) == ("orders_report", ["report"])
