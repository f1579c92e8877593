"""core.suggest: the one "did you mean" of config keys, URI parameters, SQL modes, event types
and the CLI's subcommands."""

from __future__ import annotations

import pytest

from cdcflow.config.parsing import parse_config
from cdcflow.core.errors import ConfigError
from cdcflow.core.suggest import closest, did_you_mean


def test_the_nearest_known_name_or_none():
    commands = ["create", "query", "remove", "run", "pause", "resume", "update", "list"]
    assert closest("qeury", commands) == "query"
    assert closest("udpate", commands) == "update"
    assert closest("zzzzzz", commands) is None
    assert did_you_mean("worker-cuont", ["worker-count", "max-txn-row"], "sink.") == "did you mean 'sink.worker-count'?"
    assert did_you_mean("zzzzzz", ["worker-count"]) is None


def test_config_keys_use_it():
    with pytest.raises(ConfigError) as e:
        parse_config("[sink]\nworker-cuont = 2\n")
    assert e.value.hint == "did you mean 'sink.worker-count'?"
