"""update --config as TiCDC's: the file laid over the changefeed's config, shown as the keys
that change."""

from __future__ import annotations

import tomllib

import pytest

from cdcflow.changefeed.config_update import changed_keys, overlay, to_toml
from cdcflow.config.parsing import parse_config

CURRENT = """gc-ttl = 3600
[filter]
rules = ['shop.*', '!shop.log']
[[filter.event-filters]]
matcher = ['shop.orders']
ignore-event = ['delete']
[sink]
worker-count = 2
safe-mode = true
"""


def test_a_file_with_only_a_filter_keeps_every_other_key():
    merged = overlay(CURRENT, "[filter]\nrules = ['shop.*']\n")
    cfg = parse_config(merged)
    assert cfg.sink.worker_count == 2 and cfg.gc_ttl_seconds == 3600  # kept, not reset to the defaults
    assert cfg.rules == ("shop.*",)  # an array is replaced whole
    assert [r.matcher for r in cfg.event_filters] == [("shop.orders",)]  # a key of [filter] the file leaves out
    assert changed_keys(CURRENT, merged) == {"filter.rules": (["shop.*", "!shop.log"], ["shop.*"])}


def test_arrays_of_tables_are_replaced_and_tables_merge_key_by_key():
    merged = overlay(CURRENT, "[[filter.event-filters]]\nmatcher = ['shop.users']\nignore-event = ['insert']\n"
                              "[sink]\nworker-count = 8\n")
    cfg = parse_config(merged)
    assert [(r.matcher, r.ignore_event) for r in cfg.event_filters] == [(("shop.users",), ("insert",))]
    assert cfg.sink.worker_count == 8 and cfg.sink.safe_mode is True
    changes = changed_keys(CURRENT, merged)
    assert changes["sink.worker-count"] == (2, 8) and "sink.safe-mode" not in changes
    assert changes["filter.event-filters"][1][0]["matcher"] == ["shop.users"]


def test_a_key_back_to_its_default_is_a_change():
    assert changed_keys(CURRENT, "")["sink.worker-count"] == (2, 4)
    assert changed_keys(CURRENT, CURRENT) == {}


def test_an_empty_current_config_takes_the_file():
    assert tomllib.loads(overlay("", CURRENT)) == tomllib.loads(CURRENT)
    assert overlay("", "") == ""


@pytest.mark.parametrize("doc", [
    tomllib.loads(CURRENT),
    {"a key": "quote \" backslash \\ newline \n tab \t del \x7f nul \x00 é 😀", "n": -3, "f": 0.5, "big": 1e300,
     "t": True, "list": [1, 2], "nested": {"deeper": {"x": [["a"], ["b", "c"]]}, "y": "z"}},
    {"cdcflow": {"schedule": "@continuous"}, "filter": {"event-filters": [
        {"matcher": ["a.b"], "ignore-event": [], "sub": {"k": 1}}, {"matcher": ["c.d"]}]}},
    {"mixed": [{"inline": 1}, 2], "empty": {}, "none": []},
])
def test_to_toml_reads_back_as_the_document(doc):
    assert tomllib.loads(to_toml(doc)) == doc
