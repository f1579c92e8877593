"""What `changefeed update --config` does to a changefeed's config, as TiCDC's `cli changefeed
update` does it: the file is laid over the current config (TiCDC decodes the file onto the
changefeed's ReplicaConfig, so a key the file leaves out keeps its value; a table merges key by
key; an array, arrays of tables included, is replaced whole), and the change is shown as the
keys whose effective value moves, not as two TOML texts.
"""

from __future__ import annotations

import datetime
import json
import math
import string
import tomllib
from collections.abc import Mapping

from cdcflow.config.parsing import parse_config

_BARE_KEY_CHARS = frozenset(string.ascii_letters + string.digits + "_-")  # TOML's bare keys


def overlay(current_text: str, file_text: str) -> str:
    """The config text of `file_text` laid over `current_text` (both valid TOML)."""
    merged = _merge(tomllib.loads(current_text or ""), tomllib.loads(file_text or ""))
    return to_toml(merged)


def _merge(base: dict, over: Mapping) -> dict:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def changed_keys(old_text: str, new_text: str) -> dict[str, tuple]:
    """{dotted key: (old, new)} of the effective configs (defaults included) where they differ,
    sorted by key: a key whose value returns to its default shows as a change too."""
    old, new = _flat(parse_config(old_text).to_dict()), _flat(parse_config(new_text).to_dict())
    return {k: (old.get(k), new.get(k)) for k in sorted(old.keys() | new.keys()) if old.get(k) != new.get(k)}


def _flat(d: Mapping, prefix: str = "") -> dict:
    out: dict = {}
    for k, v in d.items():
        out.update(_flat(v, f"{prefix}{k}.") if isinstance(v, Mapping) else {f"{prefix}{k}": v})
    return out


# --- TOML text of a parsed document (tomllib reads, the standard library writes none) -------------

def to_toml(doc: Mapping) -> str:
    """A TOML text that tomllib reads back as `doc` (a document as tomllib returns one)."""
    lines: list[str] = []
    _table(doc, [], lines)
    return "\n".join(lines).strip() + "\n" if lines else ""


def _is_table_array(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(x, Mapping) for x in value)


def _table(table: Mapping, path: list[str], lines: list[str]) -> None:
    for key, value in table.items():  # a table's own keys come before its sub-tables
        if not isinstance(value, Mapping) and not _is_table_array(value):
            lines.append(f"{_key(key)} = {_value(value)}")
    for key, value in table.items():
        if isinstance(value, Mapping):
            lines += ["", f"[{_dotted(path + [key])}]"]
            _table(value, path + [key], lines)
        elif _is_table_array(value):
            for item in value:
                lines += ["", f"[[{_dotted(path + [key])}]]"]
                _table(item, path + [key], lines)


def _dotted(path: list[str]) -> str:
    return ".".join(_key(k) for k in path)


def _key(key: str) -> str:
    return key if key and set(key) <= _BARE_KEY_CHARS else _string(key)


def _string(text: str) -> str:
    # JSON's escapes are TOML's basic-string escapes; TOML also wants DEL escaped
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(_value(x) for x in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no TOML value for {type(value).__name__}")
