"""Reading a changefeed's config: TOML text or a decoded table (to_dict's shape) checked key by key
into a ChangefeedConfig.  Nothing unknown is ignored: a misspelt key or a TiCDC setting cdcflow
does not implement is an error naming the full dotted key, because a filter that silently does
not apply replicates data the user meant to keep out.

What is validated here is the shape of each value.  Table-filter rules and the four value
expressions are only stored: `table_filter` and the expression filter check their syntax.
"""

from __future__ import annotations

import tomllib
from typing import Any, Callable, Mapping

from cdcflow.config import checks
from cdcflow.config.checks import Origin
from cdcflow.config.keys import CDCFLOW, EVENT_FILTER, FILTER, TOP, ChangefeedConfig, EventFilterRule, key_fields
from cdcflow.core import sink_params
from cdcflow.core.errors import ConfigError
from cdcflow.core.sink_params import SinkOptions
from cdcflow.core.suggest import did_you_mean

# TiCDC settings cdcflow does not implement: named as such rather than as typos.
_TICDC_UNSUPPORTED = frozenset({
    "enable-old-value", "enable-sync-point", "sync-point-interval", "sync-point-retention",
    "bdr-mode", "memory-quota", "check-gc-safe-point", "enable-table-monitor",
    "mounter", "scheduler", "consistent", "integrity",
    "ddl-allow-list", "do-dbs", "do-tables", "ignore-dbs", "ignore-tables",
    "protocol", "dispatchers", "column-selectors", "csv", "date-separator", "encoder-concurrency",
    "terminator", "enable-partition-separator", "schema-registry", "kafka-config", "mysql-config",
    "cloud-storage-config", "delete-only-output-handle-key-columns", "content-compatible",
    "advance-timeout", "send-bootstrap-interval-in-sec", "debezium-disable-schema",
})


def parse_config(text: str, source: str = "<config>") -> ChangefeedConfig:
    """Parse a changefeed config file's TOML text; an empty text gives the defaults."""
    try:
        data = tomllib.loads(text or "")
    except tomllib.TOMLDecodeError as e:
        # the message ends with "(at line L, column C)"
        raise ConfigError(f"{source}: not valid TOML: {e}",
                          hint="check quoting and brackets; arrays of tables use [[...]]") from None
    return config_from_dict(data, source)


def config_from_dict(data: Mapping[str, Any], source: str = "<config>") -> ChangefeedConfig:
    """Validate an already-decoded config (TOML's or to_dict's shape)."""
    origin = Origin(source)
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: the config must be a table of keys, not {checks.show(data)}")
    _check_keys(origin, data, _SECTIONS["the top level (before any [section])"], "",
                "the top level (before any [section])")
    fields = _read(origin, data, _TOP_KEYS, "")

    filt = _table(origin, data, "filter")
    _check_keys(origin, filt, _SECTIONS["[filter]"], "filter.", "[filter]")
    fields.update(_read(origin, filt, _FILTER_KEYS, "filter."))
    fields["event_filters"] = _event_filters(origin, filt.get("event-filters", []))

    sink = _table(origin, data, "sink")
    _check_keys(origin, sink, _SECTIONS["[sink]"], "sink.", "[sink]")
    fields["sink"] = SinkOptions(**_read(origin, sink, _SINK_KEYS, "sink."))

    own = _table(origin, data, "cdcflow")
    _check_keys(origin, own, _SECTIONS["[cdcflow]"], "cdcflow.", "[cdcflow]")
    fields.update(_read(origin, own, _CDCFLOW_KEYS, "cdcflow."))
    _check_cluster_store(source, fields.get("spark_master"), fields.get("event_store"))
    if fields.get("spark_master") and fields.get("spark_remote"):
        raise ConfigError(
            f"{source}: cdcflow.spark-master and cdcflow.spark-remote are both set",
            hint="set spark-remote to run the stages on a Spark Connect server, or spark-master to run "
                 "them in a Spark of their own (spark-submit in Airflow), not both")
    return ChangefeedConfig(**fields)


def _keys(holder: type, section: str) -> dict[str, tuple[str, Callable]]:
    """TOML key -> (dataclass field, check) of the keys a section's reader checks one by one."""
    return {f.metadata["key"]: (f.name, f.metadata["check"]) for f in key_fields(holder, section)
            if f.metadata["check"] is not None}


_TOP_KEYS = _keys(ChangefeedConfig, TOP)
_FILTER_KEYS = _keys(ChangefeedConfig, FILTER)
_EVENT_FILTER_KEYS = _keys(EventFilterRule, EVENT_FILTER)
_SINK_KEYS: dict[str, tuple[str, Callable]] = {
    name: (f.name, checks.sink_param(name)) for name, f in sink_params.PARAMS.items()}
_CDCFLOW_KEYS = _keys(ChangefeedConfig, CDCFLOW)

# Where each known key lives, for "belongs in [sink]" hints: label -> keys.
_SECTIONS: dict[str, set[str]] = {
    "the top level (before any [section])": set(_TOP_KEYS) | {"filter", "sink", "cdcflow"},
    "[filter]": set(_FILTER_KEYS) | {"event-filters"},
    "a [[filter.event-filters]] table": set(_EVENT_FILTER_KEYS),
    "[sink]": set(_SINK_KEYS),
    "[cdcflow]": set(_CDCFLOW_KEYS),
}


def _check_keys(origin: Origin, table: Mapping[str, Any], known: set[str], prefix: str, here: str) -> None:
    for key in table:
        if key in known:
            continue
        dotted = f"{prefix}{key}"
        elsewhere = [label for label, keys in _SECTIONS.items() if label != here and key in keys]
        guess = did_you_mean(key, known, prefix)
        if elsewhere:
            hint = f"'{key}' belongs in {elsewhere[0]}"
        elif guess:
            hint = guess
        elif key in _TICDC_UNSUPPORTED:
            hint = f"'{key}' is a TiCDC setting cdcflow does not support; remove it"
        else:
            hint = "known keys here: " + ", ".join(sorted(known))
        raise ConfigError(f"{origin.source}: unknown key {dotted}", hint=hint)


def _read(origin: Origin, table: Mapping[str, Any], keys: dict[str, tuple[str, Callable]], prefix: str) -> dict:
    return {fname: check(origin, prefix + key, table[key]) for key, (fname, check) in keys.items() if key in table}


def _table(origin: Origin, data: Mapping[str, Any], key: str, prefix: str = "") -> Mapping[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise origin.bad(prefix + key, value, f"a table: write [{prefix}{key}] on its own line, then its keys")
    return value


def _check_cluster_store(source: str, master: str | None, store: str | None) -> None:
    """The executors of a cluster master run on other machines: they read the event store by
    its URI, so a folder only this machine has (the default under CDCFLOW_HOME) is refused."""
    if not master or master == "local" or master.startswith("local["):
        return
    if store and "://" in store:
        return
    where = f"the folder {store!r}" if store else "the default folder under CDCFLOW_HOME"
    raise ConfigError(
        f"{source}: cdcflow.spark-master = {master!r} runs executors on other machines, which cannot read "
        f"{where} of this one (cdcflow.event-store)",
        hint='set cdcflow.event-store to a URI every executor reaches: "hdfs://namenode/cdcflow", '
             '"s3a://bucket/cdcflow", or "file:///mnt/shared/cdcflow" for a mount every node has')


def _event_filters(origin: Origin, value: Any) -> tuple[EventFilterRule, ...]:
    if not isinstance(value, list) or not all(isinstance(t, Mapping) for t in value):
        raise origin.bad("filter.event-filters", value,
                      "an array of tables: start each rule with [[filter.event-filters]] (two brackets)")
    rules = []
    for i, table in enumerate(value):
        prefix = f"filter.event-filters[{i}]."
        _check_keys(origin, table, set(_EVENT_FILTER_KEYS), prefix, "a [[filter.event-filters]] table")
        if "matcher" not in table:
            raise ConfigError(f"{origin.source}: {prefix}matcher is missing",
                              hint="give the tables the rule applies to, e.g. matcher = [\"test.worker\"]")
        rules.append(EventFilterRule(**_read(origin, table, _EVENT_FILTER_KEYS, prefix)))
    return tuple(rules)
