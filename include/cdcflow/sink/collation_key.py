"""Key values as the downstream's index compares them.

Under a case- or accent-insensitive collation 'é', 'e' and 'E ' are one key: the downstream
holds one row for all of them.  Compaction and partitioning must see them as one key too,
or a respelling (an UPDATE of 'é' to 'e', a DELETE of 'x' and an INSERT of 'X') becomes a
DELETE and an upsert of "different" keys that may run in either order and lose the row.
So each string of a key column compares by its collation's weight, which the downstream
itself computes (WEIGHT_STRING, batched per Arrow batch: exact for every collation, where a
Python imitation of the UCA and general_ci tables is not).  Binary columns and _bin / _cs
collations compare code points, so they keep their text; PAD SPACE collations ignore
trailing spaces, which WEIGHT_STRING keeps, so those are stripped first.
"""

from __future__ import annotations

import re

from cdcflow.sink.connection import connect

# How a collation compares, by its name.  NO PAD: MariaDB names them _nopad_, MySQL 8's
# UCA 9.0.0 ones (_0900_) all are.  Exact: binary, and names ending _bin or _cs.
_NO_PAD_MARKS = ("_nopad_", "_0900_")
_EXACT_ENDINGS = ("_bin", "_cs")
_NAME = re.compile(r"^[a-z0-9_]+$")
_PER_QUERY = 500  # strings weighed per SELECT


def comparison(collation: str | None) -> tuple[bool, bool]:
    """(trailing spaces ignored, weighed by the downstream) for a key column's collation."""
    if collation is None or collation == "binary":
        return False, False
    trim = not any(m in collation for m in _NO_PAD_MARKS)
    return trim, not collation.endswith(_EXACT_ENDINGS)


class KeyFolder:
    """Per table ("schema.table"), the collations of its key's string columns; folds their
    values to comparison keys, asking the downstream `sink` for weights."""

    def __init__(self, collations: dict[str, dict[str, str | None]], sink: dict | None = None):
        self.rules: dict[str, dict[str, tuple[bool, bool]]] = {}  # only columns that fold
        self.collations: dict[str, dict[str, str | None]] = {}
        for t, cols in collations.items():
            self.set(t, cols)
        self.sink = sink
        self._conn = None
        self._weights: dict[tuple[str, str], str] = {}

    def set(self, table: str, collations: dict[str, str | None]) -> None:
        """`table`'s key columns are now compared by `collations` (a DDL changed its key)."""
        self.collations[table] = collations
        rules = {c: rule for c, rule in ((c, comparison(coll)) for c, coll in collations.items()) if any(rule)}
        if rules:
            self.rules[table] = rules
        else:
            self.rules.pop(table, None)

    def __getstate__(self):  # shipped to Spark workers without a connection
        return {**self.__dict__, "_conn": None, "_weights": {}}

    def folds(self, table: str) -> bool:
        return table in self.rules

    def prepare(self, wanted: list[tuple[str, dict]]) -> None:
        """Weigh, in a few queries, the strings of `wanted` ((table, image) pairs) that need it."""
        todo: dict[str, set[str]] = {}
        for table, image in wanted:
            for col, (trim, weigh) in self.rules.get(table, {}).items():
                v = image.get(col)
                if weigh and isinstance(v, str):
                    s = v.rstrip(" ") if trim else v
                    coll = self.collations[table][col]
                    if (coll, s) not in self._weights:
                        todo.setdefault(coll, set()).add(s)
        for coll, strings in todo.items():
            self._weigh(coll, sorted(strings))

    def value(self, table: str, col: str, v):
        """The comparison key of one key value (prepare() saw it)."""
        rule = self.rules.get(table, {}).get(col)
        if rule is None or not isinstance(v, str):
            return v
        trim, weigh = rule
        s = v.rstrip(" ") if trim else v
        return {"w": self._weights[(self.collations[table][col], s)]} if weigh else s

    def _weigh(self, coll: str, strings: list[str]) -> None:
        if not _NAME.match(coll):
            raise ValueError(f"not a collation name: {coll!r}")
        if self._conn is None:
            self._conn = connect(self.sink)
        expr = f"HEX(WEIGHT_STRING(CONVERT(%s USING {coll.split('_')[0]}) COLLATE {coll}))"
        with self._conn.cursor() as cur:
            for i in range(0, len(strings), _PER_QUERY):
                chunk = strings[i:i + _PER_QUERY]
                cur.execute("SELECT " + ", ".join([expr] * len(chunk)), chunk)
                self._weights.update(((coll, s), w) for s, w in zip(chunk, cur.fetchone()))

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
