import dataclasses
import json
import logging

import pytest

from cdcflow.config.checks import EVENT_TYPES, cron_problem, format_duration, parse_duration
from cdcflow.config.keys import ChangefeedConfig, EventFilterRule
from cdcflow.config.parsing import config_from_dict, parse_config
from cdcflow.core.errors import ConfigError
from cdcflow.core.sink_params import SinkOptions, merge_sink_options
from cdcflow.core.sql_mode import TIDB_DEFAULT_SQL_MODE


def err(text: str) -> str:
    with pytest.raises(ConfigError) as e:
        parse_config(text, source="cf.toml")
    assert e.value.code == "CDCFLOW:ErrInvalidConfig" and not e.value.retryable
    return str(e.value)


# --- defaults ---------------------------------------------------------------

def test_defaults_follow_ticdc():
    c = ChangefeedConfig()
    assert c == parse_config("")
    # DM's online-ddl defaults: on, its shadow-table-rules and trash-table-rules
    assert c.online_ddl is True
    assert c.shadow_table_rules == (r"^_(.+)_(?:new|gho)$",) and c.trash_table_rules == (r"^_(.+)_(?:ghc|del|old)$",)
    assert c.case_sensitive is False and c.force_replicate is False
    assert c.sql_mode == TIDB_DEFAULT_SQL_MODE == (
        "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,"
        "ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION")
    assert c.error_stuck_seconds == 1800
    assert c.gc_ttl_seconds == 86400
    assert c.rules == ("*.*",) and c.ignore_txn_start_ts == () and c.event_filters == ()
    assert c.sink == SinkOptions(safe_mode=False, worker_count=4, max_txn_row=256, transaction_atomicity="none")
    assert c.schedule == "*/5 * * * *"
    assert c.event_store is None and c.spark_master is None and c.shuffle_partitions == 4


def test_config_is_frozen_and_hashable():
    c = ChangefeedConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.force_replicate = True
    assert hash(c) == hash(ChangefeedConfig())


FULL = """
case-sensitive = true
force-replicate = true
sql-mode = "ONLY_FULL_GROUP_BY, ansi_quotes"
changefeed-error-stuck-duration = "1h30m"
gc-ttl = "48h"

[filter]
rules = ['test.t*', '!test.tmp']
ignore-txn-start-ts = [420000000000000001, 420000000000000002]

[[filter.event-filters]]
matcher = ["test.t1"]
ignore-event = ["create table", "drop table", "truncate table", "rename table", "create schema"]

[[filter.event-filters]]
matcher = ["test.worker"]
ignore-event = ["insert"]
ignore-sql = ["^drop", "add column"]
ignore-delete-value-expr = "name = 'john'"
ignore-insert-value-expr = "id >= 100"
ignore-update-old-value-expr = "age < 18 or name = 'lili'"
ignore-update-new-value-expr = "gender = 'male' and age > 18"

[sink]
safe-mode = true
worker-count = 8
max-txn-row = 1000
transaction-atomicity = "table"

[cdcflow]
schedule = "@hourly"
event-store = "hdfs://nn:8020/cdcflow/events"
spark-master = "spark://master:7077"
shuffle-partitions = 16
"""


def test_every_key_parses():
    c = parse_config(FULL)
    assert c.case_sensitive and c.force_replicate
    assert c.sql_mode == "ONLY_FULL_GROUP_BY,ANSI_QUOTES"
    assert c.error_stuck_seconds == 5400 and c.gc_ttl_seconds == 48 * 3600
    assert c.rules == ("test.t*", "!test.tmp")
    assert c.ignore_txn_start_ts == (420000000000000001, 420000000000000002)
    first, second = c.event_filters
    # the schema alias is stored under its canonical name, as TiCDC's binlog filter maps it
    assert first == EventFilterRule(matcher=("test.t1",), ignore_event=(
        "create table", "drop table", "truncate table", "rename table", "create database"))
    assert second.matcher == ("test.worker",) and second.ignore_event == ("insert",)
    assert second.ignore_sql == ("^drop", "add column")
    assert second.ignore_delete_value_expr == "name = 'john'"
    assert second.ignore_insert_value_expr == "id >= 100"
    assert second.ignore_update_old_value_expr == "age < 18 or name = 'lili'"
    assert second.ignore_update_new_value_expr == "gender = 'male' and age > 18"
    assert c.sink == SinkOptions(safe_mode=True, worker_count=8, max_txn_row=1000, transaction_atomicity="table")
    assert c.schedule == "@hourly"
    assert c.event_store == "hdfs://nn:8020/cdcflow/events"
    assert c.spark_master == "spark://master:7077" and c.shuffle_partitions == 16


def test_to_dict_is_json_and_round_trips():
    c = parse_config(FULL)
    d = json.loads(json.dumps(c.to_dict()))
    assert d["changefeed-error-stuck-duration"] == "1h30m"
    assert d["filter"]["event-filters"][0]["ignore-insert-value-expr"] is None
    assert config_from_dict(d) == c
    assert config_from_dict(ChangefeedConfig().to_dict()) == ChangefeedConfig()
    no_schedule = dataclasses.replace(c, schedule=None, event_store=None, spark_master=None)
    assert no_schedule.to_dict()["cdcflow"]["schedule"] == "none"
    assert config_from_dict(no_schedule.to_dict()) == no_schedule


def test_sql_pattern_is_case_insensitive_search():
    rule = parse_config(FULL).event_filters[1]
    pat = rule.sql_pattern()
    assert pat.search("DROP TABLE test.worker")
    assert pat.search("ALTER TABLE test.worker ADD COLUMN c INT")
    assert not pat.search("CREATE TABLE test.worker (id INT)")
    assert parse_config(FULL).event_filters[0].sql_pattern() is None


# --- each key: a good value and a bad one -------------------------------------

GOOD = [
    ("case-sensitive = false", lambda c: c.case_sensitive is False),
    ("force-replicate = true", lambda c: c.force_replicate is True),
    ('sql-mode = ""', lambda c: c.sql_mode == ""),
    ('sql-mode = "ANSI_QUOTES,,NO_ZERO_DATE,ansi_quotes"', lambda c: c.sql_mode == "ANSI_QUOTES,NO_ZERO_DATE"),
    ('changefeed-error-stuck-duration = "30m"', lambda c: c.error_stuck_seconds == 1800),
    ('changefeed-error-stuck-duration = "2h"', lambda c: c.error_stuck_seconds == 7200),
    ("gc-ttl = 3600", lambda c: c.gc_ttl_seconds == 3600),
    ('gc-ttl = "1h30m"', lambda c: c.gc_ttl_seconds == 5400),
    ("[filter]\nrules = ['db1.*', '!db1.log_*']", lambda c: c.rules == ("db1.*", "!db1.log_*")),
    ("[filter]\nignore-txn-start-ts = []", lambda c: c.ignore_txn_start_ts == ()),
    ("[filter]\nignore-txn-start-ts = [1]", lambda c: c.ignore_txn_start_ts == (1,)),
    ('[[filter.event-filters]]\nmatcher = ["a.b"]\nignore-event = ["all dml", "all ddl"]',
     lambda c: c.event_filters[0].ignore_event == ("all dml", "all ddl")),
    ('[[filter.event-filters]]\nmatcher = ["a.b"]\nignore-sql = ["^(create|drop) index"]',
     lambda c: c.event_filters[0].ignore_sql == ("^(create|drop) index",)),
    ('[[filter.event-filters]]\nmatcher = ["a.b"]\nignore-insert-value-expr = ""',
     lambda c: c.event_filters[0].ignore_insert_value_expr is None),
    ("[sink]\nsafe-mode = true", lambda c: c.sink.safe_mode is True),
    ("[sink]\nworker-count = 1", lambda c: c.sink.worker_count == 1),
    ("[sink]\nworker-count = 5000", lambda c: c.sink.worker_count == 1024),  # TiCDC caps it
    ("[sink]\nmax-txn-row = 2048", lambda c: c.sink.max_txn_row == 2048),
    ("[sink]\nmax-txn-row = 9999", lambda c: c.sink.max_txn_row == 2048),
    ('[sink]\ntransaction-atomicity = "none"', lambda c: c.sink.transaction_atomicity == "none"),
    ('[cdcflow]\nschedule = "none"', lambda c: c.schedule is None),
    ('[cdcflow]\nschedule = "None"', lambda c: c.schedule is None),
    ('[cdcflow]\nschedule = "@daily"', lambda c: c.schedule == "@daily"),
    ('[cdcflow]\nschedule = "@Binlog"', lambda c: c.schedule == "@binlog"),
    ('[cdcflow]\nschedule = "0  2 * * mon-fri"', lambda c: c.schedule == "0 2 * * mon-fri"),
    ('[cdcflow]\nschedule = "*/10 0-6,22,23 1 */3 0"', lambda c: c.schedule == "*/10 0-6,22,23 1 */3 0"),
    ('[cdcflow]\nevent-store = "/data/events"', lambda c: c.event_store == "/data/events"),
    ('[cdcflow]\nspark-master = "local[2]"', lambda c: c.spark_master == "local[2]"),
    ('[cdcflow]\nspark-master = "spark://m:7077"\nevent-store = "file:///mnt/shared/ev"',
     lambda c: c.spark_master == "spark://m:7077"),
    ('[cdcflow]\nspark-remote = "sc://127.0.0.1:15002"', lambda c: c.spark_remote == "sc://127.0.0.1:15002"),
    ('[cdcflow]\nindex-wait = "reschedule"', lambda c: c.index_wait == "reschedule"),
    ("", lambda c: c.index_wait == "deferrable"),
    ("[cdcflow]\nshuffle-partitions = 1", lambda c: c.shuffle_partitions == 1),
    ("[cdcflow]\nonline-ddl = false", lambda c: c.online_ddl is False),
    ('[cdcflow]\nshadow-table-rules = ["^(.+)_shadow$"]\ntrash-table-rules = ["^(.+)_trash$", "^_(.+)_old$"]',
     lambda c: c.shadow_table_rules == ("^(.+)_shadow$",) and c.trash_table_rules == ("^(.+)_trash$", "^_(.+)_old$")),
    ('filter.rules = ["x.*"]', lambda c: c.rules == ("x.*",)),  # dotted keys are the same table
]


@pytest.mark.parametrize("text,check", GOOD, ids=[g[0] for g in GOOD])
def test_good_values(text, check):
    assert check(parse_config(text))


BAD = [
    ('case-sensitive = "yes"', ["case-sensitive", '"yes"', "true or false"]),
    ("force-replicate = 1", ["force-replicate", "1", "true or false"]),
    ("sql-mode = 3", ["sql-mode", "SQL modes"]),
    ('sql-mode = "ANSI_QOUTES"', ["sql-mode", "ANSI_QOUTES", "did you mean 'ANSI_QUOTES'"]),
    ('changefeed-error-stuck-duration = "10m"', ["changefeed-error-stuck-duration", '"10m"', "30m"]),
    ('changefeed-error-stuck-duration = "30"', ["changefeed-error-stuck-duration", "missing or unknown unit"]),
    ("changefeed-error-stuck-duration = 1800", ["changefeed-error-stuck-duration", "quoted string"]),
    ("gc-ttl = 0", ["gc-ttl", "greater than zero"]),
    ("gc-ttl = -5", ["gc-ttl", "negative"]),
    ('gc-ttl = "1d"', ["gc-ttl", '"1d"']),
    ("gc-ttl = 1.5", ["gc-ttl", "1.5", "number of seconds"]),
    ("gc-ttl = true", ["gc-ttl", "true"]),
    ("[filter]\nrules = []", ["filter.rules", "*.*"]),
    ("[filter]\nrules = 'test.*'", ["filter.rules", "array"]),
    ("[filter]\nrules = ['test.*', 3]", ["filter.rules", "array"]),
    ("[filter]\nignore-txn-start-ts = [0]", ["filter.ignore-txn-start-ts", "[0]"]),
    ('[filter]\nignore-txn-start-ts = ["1"]', ["filter.ignore-txn-start-ts"]),
    ('[[filter.event-filters]]\nmatcher = []', ["filter.event-filters[0].matcher", "at least one"]),
    ('[[filter.event-filters]]\nmatcher = "a.b"', ["filter.event-filters[0].matcher", "array"]),
    ('[[filter.event-filters]]\nignore-event = ["insert"]', ["filter.event-filters[0].matcher is missing"]),
    ('[[filter.event-filters]]\nmatcher = ["a.b"]\nignore-event = ["insrt"]',
     ["filter.event-filters[0].ignore-event", "'insrt'", "'all dml'", "'multi schema change'",
      "did you mean 'insert'"]),
    ('[[filter.event-filters]]\nmatcher = ["a.b"]\nignore-event = ["add index"]',
     ["'add index'", "did you mean 'create index'"]),
    ('[[filter.event-filters]]\nmatcher = ["a.b"]\nignore-event = ["INSERT"]', ["'INSERT'", "did you mean 'insert'"]),
    ('[[filter.event-filters]]\nmatcher = ["a.b"]\nignore-event = "insert"', ["ignore-event", "array"]),
    ('[[filter.event-filters]]\nmatcher = ["a.b"]\nignore-sql = ["^drop", "add (column"]',
     ["filter.event-filters[0].ignore-sql", "'add (column'", "missing )"]),
    ('[[filter.event-filters]]\nmatcher = ["a.b"]\nignore-delete-value-expr = 5',
     ["filter.event-filters[0].ignore-delete-value-expr", "SQL expression"]),
    ('[[filter.event-filters]]\nmatcher = ["a.b"]\nignore-update-new-value-expr = ["a > 1"]',
     ["ignore-update-new-value-expr"]),
    ('[[filter.event-filters]]\nmatcher = ["a.b"]\nignore-update-old-value-expr = true',
     ["ignore-update-old-value-expr"]),
    ('[[filter.event-filters]]\nmatcher = ["a.b"]\nignore-insert-value-expr = 1', ["ignore-insert-value-expr"]),
    ('[filter.event-filters]\nmatcher = ["a.b"]', ["filter.event-filters", "[[filter.event-filters]]"]),
    ("[sink]\nsafe-mode = 0", ["sink.safe-mode", "true or false"]),
    ("[sink]\nworker-count = 0", ["sink.worker-count", "0", "at least 1"]),
    ('[sink]\nworker-count = "8"', ["sink.worker-count", '"8"']),
    ("[sink]\nmax-txn-row = -1", ["sink.max-txn-row", "-1", "at least 1"]),
    ('[sink]\ntransaction-atomicity = "global"', ["sink.transaction-atomicity", '"global"', '"none" or "table"']),
    ('[cdcflow]\nschedule = "*/5 * * *"', ["cdcflow.schedule", "found 4 fields"]),
    ('[cdcflow]\nschedule = "61 * * * *"', ["cdcflow.schedule", "'61' is not a valid minute"]),
    ('[cdcflow]\nschedule = "0 0 * foo *"', ["cdcflow.schedule", "month"]),
    ('[cdcflow]\nschedule = "@every5m"', ["cdcflow.schedule", "@hourly"]),
    ('[cdcflow]\nschedule = "@binlogs"', ["cdcflow.schedule", "@binlog", "did you mean '@binlog'?"]),
    ("[cdcflow]\nschedule = false", ["cdcflow.schedule"]),
    ('[cdcflow]\nevent-store = ""', ["cdcflow.event-store", "non-empty string"]),
    ("[cdcflow]\nspark-master = 7077", ["cdcflow.spark-master", "7077"]),
    ("[cdcflow]\nshuffle-partitions = 0", ["cdcflow.shuffle-partitions", "at least 1"]),
    ('[cdcflow]\nindex-wait = "poke"', ["cdcflow.index-wait", "deferrable", "reschedule"]),
    ('[cdcflow]\nspark-remote = "127.0.0.1:15002"', ["cdcflow.spark-remote", "sc://"]),
    ('[cdcflow]\nspark-remote = "sc://h:1"\nspark-master = "local[2]"', ["spark-master", "spark-remote", "both"]),
    # a cluster's executors cannot read a folder only the driver's machine has
    ('[cdcflow]\nspark-master = "spark://m:7077"', ["spark://m:7077", "default folder under CDCFLOW_HOME"]),
    ('[cdcflow]\nspark-master = "yarn"\nevent-store = "/data/events"', ["'yarn'", "'/data/events'"]),
    ("sink = 3", ["sink", "a table"]),
    ('[cdcflow]\nonline-ddl = "yes"', ["cdcflow.online-ddl"]),
    ('[cdcflow]\nshadow-table-rules = ["^_.+_new$"]', ["cdcflow.shadow-table-rules", "no group", "real table"]),
    ('[cdcflow]\ntrash-table-rules = ["^_(.+_old$"]', ["cdcflow.trash-table-rules", "invalid regular expression"]),
    ('[cdcflow]\nshadow-table-rules = "^_(.+)_new$"', ["cdcflow.shadow-table-rules", "array"]),
]


@pytest.mark.parametrize("text,parts", BAD, ids=[b[0] for b in BAD])
def test_bad_values(text, parts):
    message = err(text)
    assert message.startswith("cf.toml: ")
    for part in parts:
        assert part in message, message


# --- unknown keys -----------------------------------------------------------

UNKNOWN = [
    ("case-sensitve = true", "unknown key case-sensitve", "did you mean 'case-sensitive'?"),
    ("[filter]\nrule = ['*.*']", "unknown key filter.rule", "did you mean 'filter.rules'?"),
    ('[[filter.event-filters]]\nmatcher = ["a.b"]\n[[filter.event-filters]]\nmatcher = ["c.d"]\nignore-evnt = []',
     "unknown key filter.event-filters[1].ignore-evnt", "did you mean 'filter.event-filters[1].ignore-event'?"),
    ("[sink]\nworker-cout = 3", "unknown key sink.worker-cout", "did you mean 'sink.worker-count'?"),
    ('[cdcflow]\nshedule = "@daily"', "unknown key cdcflow.shedule", "did you mean 'cdcflow.schedule'?"),
    # a key from another section says where it belongs
    ("worker-count = 3", "unknown key worker-count", "belongs in [sink]"),
    ('[filter]\nmatcher = ["test.t1"]', "unknown key filter.matcher", "a [[filter.event-filters]] table"),
    ('[sink]\nschedule = "@daily"', "unknown key sink.schedule", "belongs in [cdcflow]"),
    # TiCDC settings cdcflow lacks are named as such
    ("enable-old-value = true", "unknown key enable-old-value", "TiCDC setting cdcflow does not support"),
    ('[sink]\nprotocol = "canal-json"', "unknown key sink.protocol", "TiCDC setting"),
    ("[mounter]\nworker-num = 16", "unknown key mounter", "TiCDC setting"),
    ("zzz = 1", "unknown key zzz", "known keys here:"),
]


@pytest.mark.parametrize("text,head,hint", UNKNOWN, ids=[u[1] for u in UNKNOWN])
def test_unknown_keys(text, head, hint):
    message = err(text)
    assert f"cf.toml: {head}" in message
    assert hint in message


def test_seed_style_event_filter_without_table_header_is_explained():
    # 000's example, as flattened in the seed text, lost its [[filter.event-filters]] line
    message = err("[filter]\nrules = ['test.t*']\nmatcher = [\"test.t1\"]\n"
                  "ignore-event = [\"create table\", \"drop table\", \"truncate table\", \"rename table\"]")
    assert "filter.matcher" in message and "[[filter.event-filters]]" in message


def test_every_ticdc_event_type_is_accepted():
    names = sorted(EVENT_TYPES)
    c = parse_config(f'[[filter.event-filters]]\nmatcher = ["a.*"]\nignore-event = {json.dumps(names)}')
    assert set(c.event_filters[0].ignore_event) == EVENT_TYPES - {"create schema", "drop schema"}
    for must in ("all dml", "all ddl", "insert", "update", "delete", "create database", "drop database",
                 "create table", "drop table", "add column", "drop column", "modify column", "truncate table",
                 "rename table", "create index", "drop index", "alter table", "create view", "drop view",
                 "add table partition", "drop table partition", "truncate table partition",
                 "alter table partitioning", "remove table partitioning", "add primary key",
                 "drop primary key", "set default value"):
        assert must in EVENT_TYPES, must


def test_invalid_toml_reports_line_and_column():
    message = err('force-replicate = true\nsql-mode = "unterminated\n')
    assert "not valid TOML" in message and "line 2" in message and "column" in message
    assert "not valid TOML" in err("a = 1\na = 2")  # a duplicate key is a TOML error, not a last-wins


def test_config_from_dict_rejects_non_tables():
    with pytest.raises(ConfigError, match="table of keys"):
        config_from_dict([1, 2])


# --- files ------------------------------------------------------------------

def test_cap_is_logged(caplog):
    with caplog.at_level(logging.WARNING, logger="cdcflow.core.sink_params"):
        assert parse_config("[sink]\nworker-count = 2000").sink.worker_count == 1024
    assert "sink.worker-count" in caplog.text


# --- durations --------------------------------------------------------------

@pytest.mark.parametrize("text,seconds", [
    ("30m", 1800), ("1h30m", 5400), ("45s", 45), ("0", 0), ("0s", 0), ("+10s", 10), ("1.5h", 5400),
    (".5m", 30), ("1.m", 60), ("2h45m30s", 9930), ("1h0m0s", 3600), ("1500ms", None), ("2000ms", 2),
    ("3000000us", 3), ("3000000\u00b5s", 3), ("3000000\u03bcs", 3), ("5000000000ns", 5), ("90s", 90),
    (86400, 86400), (0, 0), (" 10m ", 600),
])
def test_parse_duration(text, seconds):
    if seconds is None:
        with pytest.raises(ConfigError, match="whole number of seconds"):
            parse_duration(text)
    else:
        assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "30", "1x", "1d", "m", ".s", "1h 30m", "1..5h", "-1s", "--1s", -1, True,
                                  1.5, None, "1hh"])
def test_parse_duration_rejects(text):
    with pytest.raises(ConfigError, match="duration"):
        parse_duration(text)


@pytest.mark.parametrize("seconds", [0, 1, 59, 60, 61, 1800, 3600, 5400, 86400, 90061])
def test_format_duration_round_trips(seconds):
    assert parse_duration(format_duration(seconds)) == seconds


def test_format_duration_is_compact():
    assert [format_duration(s) for s in (0, 45, 1800, 5400, 90061)] == ["0s", "45s", "30m", "1h30m", "25h1m1s"]


def test_cron_problem():
    assert cron_problem("*/5 * * * *") is None
    assert cron_problem("0 12 1-15/2 jan-jun 7") is None
    assert cron_problem("0 5-2 * * *") is None  # croniter (so Airflow) wraps it: 5-23 and 0-2
    assert "step" in cron_problem("*/0 * * * *")
    assert "day of month" in cron_problem("0 0 0 * *")
    assert "found 6 fields" in cron_problem("0 0 * * * *")
    assert "day of week" in cron_problem("0 0 * * 8")
    assert "'0-1-2' is not a valid hour" in cron_problem("0 0-1-2 * * *")


@pytest.mark.parametrize("expr", ["0 0 L * *", "0 9 * * MON#2", "0 9 * * 1#2", "30 6 1,L * *", "0 0 * * L5",
                                  "0 22-2 * * *", "0 0 ? * *"])
def test_cron_accepts_what_airflow_accepts(expr):
    assert cron_problem(expr) is None
    c = parse_config(f'[cdcflow]\nschedule = "{expr}"')
    assert c.schedule == expr


@pytest.mark.parametrize("expr,problem", [
    ("0 9 * * mon#6", "'mon#6' is not a valid day of week"),
    ("0 0 LW * *", "'LW' is not a valid day of month"),
    ("H * * * *", "'H' is not a valid minute"),  # Jenkins' hash needs an id Airflow does not give
    ("0 0 1 13 *", "'13' is not a valid month"),
    ("0 0 * * * 2030", "found 6 fields"),  # croniter's year field is not Airflow's
])
def test_cron_still_refuses(expr, problem):
    assert problem in cron_problem(expr)
    with pytest.raises(ConfigError) as info:
        parse_config(f'[cdcflow]\nschedule = "{expr}"')
    assert "cdcflow.schedule" in str(info.value) and problem in str(info.value)


# --- sink URI parameters over [sink] -----------------------------------------

def test_merge_sink_options_overrides():
    base = parse_config(FULL).sink
    merged = merge_sink_options(base, {"worker-count": "2", "max-txn-row": "64", "safe-mode": "false",
                                       "transaction-atomicity": "none", "time-zone": "UTC"})
    assert merged == SinkOptions(safe_mode=False, worker_count=2, max_txn_row=64, transaction_atomicity="none")
    assert merge_sink_options(base, {}) == base
    assert merge_sink_options(base, {"worker-count": ""}) == base  # empty keeps the config's value
    assert merge_sink_options(SinkOptions(), {"safe-mode": "1"}).safe_mode is True
    assert merge_sink_options(SinkOptions(), {"safe-mode": "F"}).safe_mode is False
    assert merge_sink_options(SinkOptions(), {"worker-count": "4096"}).worker_count == 1024
    assert merge_sink_options(SinkOptions(), {"max-txn-row": "4096"}).max_txn_row == 2048


@pytest.mark.parametrize("params,parts", [
    ({"worker-count": "0"}, ["worker-count", "'0'", "an integer of at least 1"]),
    ({"worker-count": "four"}, ["worker-count", "'four'"]),
    ({"worker-count": "1_0"}, ["worker-count", "'1_0'"]),
    ({"max-txn-row": "-3"}, ["max-txn-row", "'-3'"]),
    ({"safe-mode": "yes"}, ["safe-mode", "'yes'", "true or false"]),
    ({"transaction-atomicity": "global"}, ["transaction-atomicity", "'global'", "none or table"]),
    ({"worker-cnt": "3"}, ["'worker-cnt'", "did you mean 'worker-count'"]),
    ({"server-id": "3"}, ["'server-id'"]),
])
def test_merge_sink_options_rejects(params, parts):
    with pytest.raises(ConfigError) as e:
        merge_sink_options(SinkOptions(), params)
    for part in parts:
        assert part in str(e.value), str(e.value)


def test_a_spec_parses_its_config_text_once_and_an_edit_anew():
    """Building a DAG asks a spec for its config several times: one parse serves them (the config
    is frozen); a changed text, or a spec whose text does not parse, is parsed again each time."""
    from cdcflow.config.spec_store import Spec

    spec = Spec(id="memo", source_uri="mysql://u@h:1", sink_uri="mysql://u@h:2", config_text="[filter]\nrules = ['a.*']\n")
    first = spec.config()
    assert spec.config() is first and first.rules == ("a.*",)
    spec.config_text = "[filter]\nrules = ['b.*']\n"
    assert spec.config() is not first and spec.config().rules == ("b.*",)
    spec.config_text = "[cdcflow]\nschedul = 1\n"
    for _ in range(2):  # an error is not kept: each call says it
        with pytest.raises(ConfigError, match="changefeed memo config"):
            spec.config()
