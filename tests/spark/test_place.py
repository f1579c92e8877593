"""Where a changefeed's Spark runs is one value (spark.place.SparkPlace), resolved once per task
from the config and the launcher: the CLI's --spark-remote, else the config's spark-remote, else
its spark-master, else the launcher's connection (the DAG's Airflow connection), else embedded."""

from __future__ import annotations

import pytest

from cdcflow.config.parsing import config_from_dict
from cdcflow.core.errors import ConfigError
from cdcflow.spark.place import SparkPlace

REMOTE = {"cdcflow": {"spark-remote": "sc://config:15002"}}
MASTER = {"cdcflow": {"spark-master": "local[2]"}}


def _asked(url: str, asked: list):
    return lambda: asked.append(url) or url


def test_the_places_in_order():
    asked: list = []
    connection = _asked("sc://airflow:15002", asked)
    assert SparkPlace.resolve(config_from_dict(REMOTE), "sc://flag:1", connection).url() == "sc://flag:1"
    assert SparkPlace.resolve(config_from_dict(REMOTE), None, connection).url() == "sc://config:15002"
    on_master = SparkPlace.resolve(config_from_dict(MASTER), None, connection)
    assert (on_master.url(), on_master.master, on_master.is_remote) == (None, "local[2]", False)
    assert asked == []  # a config naming a server or a master never asks the launcher's connection
    via_airflow = SparkPlace.resolve(config_from_dict({}), None, connection)
    assert via_airflow.is_remote and asked == []  # not asked until a session is opened
    assert via_airflow.url() == "sc://airflow:15002" and asked == ["sc://airflow:15002"]
    embedded = SparkPlace.resolve(config_from_dict({}))
    assert (embedded.url(), embedded.master, embedded.is_remote) == (None, None, False)


def test_a_cycle_without_spark_needs_no_connection():
    # the DAG's connection fails only where a session is opened: an idle pull never asks it
    def missing():
        raise ConfigError("no Spark Connect server to run the stages on")

    place = SparkPlace.resolve(config_from_dict({}), connection=missing)
    assert place.is_remote
    with pytest.raises(ConfigError, match="no Spark Connect server"):
        place.url()


def test_the_value_is_frozen_and_compares_by_where():
    a = SparkPlace.resolve(config_from_dict(REMOTE), connection=lambda: "x")
    assert a == SparkPlace("sc://config:15002") and hash(a) == hash(SparkPlace("sc://config:15002"))
    with pytest.raises(AttributeError):
        a.remote = "sc://elsewhere:1"  # type: ignore[misc]
