"""A chunk whose checksums differ, compared row by row.

Rows are matched by key as the downstream's index matches them (sink.collation_key: under
a `_ci` collation 'a' and 'A' are one key, so the downstream's 'A' for the upstream's 'a'
is one row that differs, not one missing and one extra).  Values compare by their text
forms (checksum.py), the same the checksums were taken over.  A table without a key is a
multiset: a row the upstream holds more often than the downstream is missing downstream,
and the other way round extra.
"""

from __future__ import annotations

from collections import Counter

from cdcflow.core.row_codec import encode_image

MISSING, EXTRA, DIFFERENT = "missing downstream", "extra downstream", "different"


def _texts(columns: list[str], texts: tuple) -> dict:
    return dict(zip(columns, texts))


def _diff(table: str, kind: str, key: dict, columns: list[str], up=None, down=None) -> dict:
    """One differing row: its key (text forms), both sides' values (text forms, None for a
    side without it) and, for the fix SQL, both sides' values as row images."""
    out = {"table": table, "kind": kind, "key": key,
           "upstream": _texts(columns, up[1]) if up else None,
           "downstream": _texts(columns, down[1]) if down else None,
           "up_image": encode_image(up[0]) if up else None,
           "down_image": encode_image(down[0]) if down else None}
    if up and down:
        out["columns"] = [c for c, a, b in zip(columns, up[1], down[1]) if a != b]
    return out


def keyed_diff(table: str, columns: list[str], key: list[str], up_rows: list, down_rows: list, fold) -> list[dict]:
    """Rows of one chunk ((values, texts) per row, checksum.fetch_rows), matched by
    `fold(values) -> hashable key`."""
    up = {fold(values): (values, texts) for values, texts in up_rows}
    down = {fold(values): (values, texts) for values, texts in down_rows}
    at = [columns.index(c) for c in key]
    out = []
    for k in sorted(up.keys() | down.keys()):
        u, d = up.get(k), down.get(k)
        row = u or d
        shown = {c: row[1][i] for c, i in zip(key, at)}
        if d is None:
            out.append(_diff(table, MISSING, shown, columns, up=u))
        elif u is None:
            out.append(_diff(table, EXTRA, shown, columns, down=d))
        elif u[1] != d[1]:
            out.append(_diff(table, DIFFERENT, shown, columns, up=u, down=d))
    return out


def multiset_diff(table: str, columns: list[str], up_rows: list, down_rows: list) -> list[dict]:
    """Rows of a keyless table, each identified by all its values."""
    up_count, down_count = Counter(t for _, t in up_rows), Counter(t for _, t in down_rows)
    first = {}
    for row in down_rows + up_rows:  # an upstream row wins: the fix SQL inserts its values
        first[row[1]] = row
    out = []
    for texts, n in sorted((up_count - down_count).items(), key=lambda kv: repr(kv[0])):
        out += [_diff(table, MISSING, _texts(columns, texts), columns, up=first[texts])] * n
    for texts, n in sorted((down_count - up_count).items(), key=lambda kv: repr(kv[0])):
        row = next(r for r in down_rows if r[1] == texts)
        out += [_diff(table, EXTRA, _texts(columns, texts), columns, down=row)] * n
    return out
