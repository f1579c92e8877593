"""The JSON functions (TiDB's JSON type): JSON_EXTRACT (and `->`), JSON_UNQUOTE (and `->>`),
JSON_CONTAINS, JSON_LENGTH, JSON_TYPE, over documents read from JSON text or given as JSON
values, and the paths they take ('$.a[0]."b c"[*]')."""

from __future__ import annotations

import decimal
import json
import re

from cdcflow.filter.mysql_eval.conversions import as_text
from cdcflow.filter.mysql_eval.values import Json, json_cmp, json_kind


def json_of(v) -> Json | None:
    """A function's JSON argument: a JSON value as is, a string read as JSON text (None if it is none)."""
    if isinstance(v, Json):
        return v
    try:
        return Json(json.loads(as_text(v)))
    except ValueError:
        return None


_PATH_STEP = re.compile(r'\s*(?:\.\s*(?:"((?:[^"\\]|\\.)*)"|([A-Za-z_$][\w$]*)|(\*))|\[\s*(\d+|\*|last)\s*\])')


def _json_path(path: str) -> list | None:
    """A JSON path ('$.a[0]."b c"[*]') as steps: a key, an index, or '*' for every member; None if
    it is no path."""
    s = path.strip()
    if not s.startswith("$"):
        return None
    steps, i = [], 1
    while i < len(s):
        m = _PATH_STEP.match(s, i)
        if not m:
            return None
        quoted, key, star, index = m.groups()
        if quoted is not None:
            steps.append(("key", json.loads(f'"{quoted}"')))
        elif key is not None:
            steps.append(("key", key))
        elif star or index == "*":
            steps.append(("any", "object" if star else "array"))
        else:
            steps.append(("index", index))
        i = m.end()
    return steps


def _json_find(doc, steps) -> list:
    """The values at `steps` of `doc`."""
    found = [doc]
    for kind, arg in steps:
        nxt = []
        for d in found:
            if kind == "key" and isinstance(d, dict) and arg in d:
                nxt.append(d[arg])
            elif kind == "index":
                items = d if isinstance(d, list) else [d]  # a scalar is an array of one ([0] is itself)
                n = len(items) - 1 if arg == "last" else int(arg)
                if 0 <= n < len(items):
                    nxt.append(items[n])
            elif kind == "any" and arg == "object" and isinstance(d, dict):
                nxt.extend(d.values())
            elif kind == "any" and arg == "array" and isinstance(d, list):
                nxt.extend(d)
        found = nxt
    return found


def _json_at(doc: Json, path) -> list | None:
    steps = _json_path(as_text(path))
    return None if steps is None else _json_find(doc.doc, steps)


def json_extract(doc, *paths):
    d = json_of(doc)
    if d is None:
        return None
    found, wild = [], len(paths) > 1
    for p in paths:
        at = _json_at(d, p)
        if at is None:
            return None
        wild = wild or any(k == "any" for k, _ in _json_path(as_text(p)))
        found.extend(at)
    if not found:
        return None
    return Json(found) if wild else Json(found[0])


def json_unquote(v):
    if isinstance(v, Json):
        return v.doc if isinstance(v.doc, str) else v.text()
    s = as_text(v)
    if len(s) >= 2 and s[0] == s[-1] == '"':
        try:
            return json.loads(s)
        except ValueError:
            return s
    return s


def _json_contains(target, candidate) -> bool:
    if isinstance(target, dict):
        return isinstance(candidate, dict) and all(
            k in target and _json_contains(target[k], v) for k, v in candidate.items())
    if isinstance(target, list):
        if isinstance(candidate, list):
            return all(any(_json_contains(t, c) for t in target) for c in candidate)
        return any(_json_contains(t, candidate) for t in target)
    return json_kind(target) == json_kind(candidate) and json_cmp(target, candidate) == 0


def _json_under(doc, path) -> Json | None:
    """The document (JSON text or value) at `path` (the whole if None); None if not there."""
    d = json_of(doc)
    if d is None or path is None:
        return d
    at = _json_at(d, path)
    return Json(at[0]) if at else None


def json_contains(target, candidate, path=None):
    t, c = _json_under(target, path), json_of(candidate)
    return None if t is None or c is None else int(_json_contains(t.doc, c.doc))


def json_length(doc, path=None):
    d = _json_under(doc, path)
    return None if d is None else len(d.doc) if isinstance(d.doc, (list, dict)) else 1


def json_type(doc):
    d = json_of(doc)
    if d is None:
        return None
    x = d.doc
    if isinstance(x, bool):
        return "BOOLEAN"
    if isinstance(x, int):
        return "UNSIGNED INTEGER" if x > 2 ** 63 - 1 else "INTEGER"
    if isinstance(x, (float, decimal.Decimal)):
        return "DOUBLE"
    return {type(None): "NULL", str: "STRING", list: "ARRAY", dict: "OBJECT"}[type(x)]
