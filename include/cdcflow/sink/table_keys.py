"""The key a segment's rows of a table are written by, as pull and apply both find it, and
whether pull's key texts (stages.pull_keys) were written by that key."""

from __future__ import annotations

from collections.abc import Callable

from cdcflow.sink.connection import connect
from cdcflow.sink.downstream_tables import catalogue_key


def table_key(found: tuple | None, catalogue: Callable[[tuple[str, str]], tuple], table: tuple[str, str]):
    """(key, known, collations) of `table` from `found`, the tracked schema's (lookup_key; None
    where it has no ranges for the table): the downstream's `catalogue` (catalogue_key) gives
    the key where the tracker does not know the table, and a key column's collation where no
    clause named it (as the downstream created it).  Pull keys its events by this too."""
    if found is not None and found[1]:
        key, _known, collations = found
        if None in collations.values():
            down = catalogue(table)[1]
            collations = {c: coll or down.get(c) for c, coll in collations.items()}
        return key, True, collations
    key, collations = catalogue(table)
    return key, False, collations


def keyed_by_pull(spans: dict | None, table: tuple[str, str], lo: int, hi: int,
                  key: list[str], collations: dict) -> bool:
    """Whether pull keyed every change of `table` committed in (lo, hi] by `key` and `collations`
    (`spans`: the window's KeySpans, by_table; None where pull wrote no key texts)."""
    if spans is None:
        return False
    inside = [s for s in spans.get(table, ()) if s.last_ts > lo and s.first_ts <= hi]
    return bool(inside) and all(s.key == key and s.collations == collations for s in inside)


def tangled_by_pull(spans: dict | None, table: tuple[str, str], lo: int, hi: int) -> frozenset[str] | None:
    """The keys of `table` whose changes committed in (lo, hi] pull found sharing another unique
    key's value with another key's (sink.conflict_keys): None for every key of it; none where
    pull found none (or wrote no spans, or wrote them before it looked)."""
    inside = [s for s in (spans or {}).get(table, ()) if s.last_ts > lo and s.first_ts <= hi]
    if any(s.all_tangled for s in inside):
        return None
    return frozenset(k for s in inside for k in s.tangled)


def by_table(spans: list) -> dict:
    """Pull's spans (stages.contracts.KeySpan) by (schema, table), as keyed_by_pull takes them."""
    out: dict = {}
    for s in spans:
        out.setdefault((s.schema, s.table), []).append(s)
    return out


class Catalogue:
    """The downstream catalogue's keys (catalogue_key), asked once per table on a connection
    of its own, opened when first needed: what table_key takes as `catalogue` outside apply."""

    def __init__(self, sink: dict | None):
        self.sink = sink
        self._conn = None
        self._failed: Exception | None = None
        self._known: dict[tuple[str, str], tuple] = {}

    def __call__(self, table: tuple[str, str]) -> tuple:
        if table not in self._known:
            if self._conn is None:
                if self._failed is not None:  # once unreachable, not asked again for every table
                    raise self._failed
                try:
                    self._conn = connect(self.sink)
                except Exception as e:
                    self._failed = e
                    raise
            self._known[table] = catalogue_key(self._conn, *table)
        return self._known[table]

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
