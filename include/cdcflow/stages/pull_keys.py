"""pull's key texts: beside each row change's images, the text of its key as apply compares
keys (sink.compaction.Keyer: the key's values, folded where the key's collation folds), so
that apply compacts, splits key-changing UPDATEs and partitions by key without decoding a
key from an image (compaction.keyed_arrow: column expressions over the texts).

The key is the one apply would choose (sink.row_sink.table_key): the tracked schema's valid
key as the table has it when the change commits, the downstream's catalogue where the tracker
does not know the table.  Pull follows the window's DDLs on its own copy of the tracked schema
(filter's is only written after pull), so a DDL that changes a key changes the key of the
changes after it.  What pull cannot know for sure (a DDL it read differently from filter, a
parallel range that starts after a DDL of an earlier range, a downstream catalogue that a DDL
changes before apply) is settled at apply: each table's KeySpans say by which key its changes
were keyed, and apply takes pull's texts only for a segment whose spans all have the key apply
writes it by (keyed_by_pull); otherwise it keys the segment itself, as it did before pull wrote
keys.  Keying never fails pull: a change it cannot key gets no text, and a span without a key.

Pull also finds the keys whose changes share the value of another unique key of their table
with another key's change in the window (sink.conflict_keys): at the window's end
(mark_tangled) each table's spans list them, and apply writes their changes on one connection.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from cdcflow.core.errors import CdcflowError
from cdcflow.core.event import Event
from cdcflow.ddl.classify import classify
from cdcflow.ddl.table_def import TableInfo
from cdcflow.ddl.tracker import SchemaTracker, lookup_key
from cdcflow.filter.table import TableFilter
from cdcflow.sink.collation_key import KeyFolder
from cdcflow.sink.compaction import Keyer
from cdcflow.sink.conflict_keys import PAIRS_BYTES, ConflictPairs, ConflictValues
from cdcflow.sink.table_keys import Catalogue, table_key
from cdcflow.stages.contracts import KeySpan

log = logging.getLogger(__name__)

BATCH = 2_000  # row changes keyed at once: the weights of a folding key's strings are asked per batch
_NOW = 2 ** 62  # above every ts: the tracker's latest version of a table, every DDL read so far applied
_NO_KEY = (None, {})


class KeyStamper:
    """Sets each row event's before_key / after_key on its way to `add` (wrap), following the
    DDL events through `tracker` (the tracked schema at the window's start); `spans` records by
    which key each table's changes were keyed.  `sink`: the downstream's connection parameters
    (its catalogue and its collations' weights); `sql_mode`: the config's, for a DDL the binlog
    recorded none for; `tables`: the table filter's (rules, case-sensitive), whose tables alone
    are keyed (the others' rows never reach apply; None: every table); `offset`: added to an
    event's commit_ts for the tracker's versions (a parallel range's events carry their
    transaction's number instead of its ts).  `pairs` holds the window's conflict-key values
    (sink.conflict_keys), within `pairs_budget` bytes: mark_tangled lists the keys that share
    one in the spans."""

    def __init__(self, tracker: SchemaTracker, sink: dict | None, sql_mode: str | None,
                 tables: tuple[tuple[str, ...], bool] | None = None, offset: int = 0,
                 pairs_budget: int = PAIRS_BYTES):
        self.tracker, self.sink, self.sql_mode, self.offset = tracker, sink, sql_mode, offset
        # built here: its compiled rules do not pickle, and the spec travels to Spark tasks
        self.tables = None if tables is None else TableFilter(list(tables[0]), tables[1])
        self.keyer = Keyer({}, KeyFolder({}, sink))
        self.spans: list[KeySpan] = []
        self._open: dict[tuple[str, str], KeySpan] = {}  # each table's latest span
        self._keys: dict[tuple[str, str], tuple] = {}  # (key, collations) per table, until a DDL
        # the window's (conflict-key value, key) pairs, and per table what reads its values (None:
        # no other unique key), until a DDL
        self.pairs = ConflictPairs(pairs_budget)
        self._values: dict[tuple[str, str], ConflictValues | None] = {}
        self._catalogue = Catalogue(sink)
        self._held: list[Event] = []
        self._add: Callable[[Event], None] | None = None

    @classmethod
    def of(cls, spec: dict) -> "KeyStamper":
        """From pull.stamper_spec's keywords (plus `offset` for a range)."""
        return cls(**spec)

    def wrap(self, add: Callable[[Event], None]) -> Callable[[Event], None]:
        def stamp(ev: Event) -> None:
            if ev.op == "ddl":
                self._flush(add)
                self._follow(ev)
                add(ev)
                return
            self._held.append(ev)
            if len(self._held) >= BATCH:
                self._flush(add)
        self._add = add
        return stamp

    def close(self) -> list[KeySpan]:
        """Key and pass on what is held; the spans."""
        try:
            if self._add is not None:
                self._flush(self._add)
        finally:
            self.keyer.folder.close()
            self._catalogue.close()
        return self.spans

    def _follow(self, ev: Event) -> None:
        """A DDL event: the tracked schema as it leaves it (filter applies it the same way)."""
        self._keys.clear()
        self._values.clear()
        mode = ev.sql_mode if ev.sql_mode is not None else self.sql_mode
        try:
            self.tracker.apply(classify(ev.ddl_query, ev.ddl_schema, mode), ev.ddl_query, mode,
                               self.offset + ev.commit_ts)
        except CdcflowError:
            pass  # filter fails or skips it; apply compares the keys (keyed_by_pull)
        except Exception as e:  # noqa: BLE001 - keying never fails pull: filter says what is wrong with it
            log.info("pull's keys do not follow the DDL at %s: %s", ev.commit_ts, e)

    def _key(self, table: tuple[str, str]) -> tuple:
        if table not in self._keys:
            found = lookup_key(self.tracker.key_ranges(*table, _NOW, _NOW), _NOW)
            try:
                key, _known, collations = table_key(found, self._catalogue, table)
            except Exception as e:  # noqa: BLE001 - the downstream unreachable: apply keys these itself
                log.info("pull writes no key texts for %s.%s: %s", *table, e)
                key, collations = _NO_KEY
            self._keys[table] = (key, collations) if key else _NO_KEY
        return self._keys[table]

    def _flush(self, add: Callable[[Event], None]) -> None:
        held, self._held = self._held, []
        by_table: dict[tuple[str, str], list[Event]] = {}
        for ev in held:
            by_table.setdefault((ev.schema, ev.table), []).append(ev)
        for table, events in by_table.items():
            if self.tables is not None and not self.tables.match_table(*table):
                continue  # filtered out: neither a key nor the downstream's catalogue asked
            key, collations = self._key(table)
            if key is not None and not self._stamp(table, key, collations, events):
                key, collations = _NO_KEY
            if key is not None:
                self._pair(table, events)
            self._record(table, key, collations, events)
        for ev in held:
            add(ev)

    def _stamp(self, table: tuple[str, str], key: list[str], collations: dict, events: list[Event]) -> bool:
        name = f"{table[0]}.{table[1]}"
        if self.keyer.keys.get(name) != key or self.keyer.folder.collations.get(name) != collations:
            self.keyer.set(name, key, collations)
        try:
            texts = self.keyer.texts([name] * len(events), [e.op for e in events], [e.before for e in events],
                                     [e.after for e in events])
        except Exception as e:  # noqa: BLE001 - an image without a key column, weights not had: apply's to say
            log.info("pull writes no key texts for %s: %s", name, e)
            return False
        for ev, (kb, ka) in zip(events, texts):
            ev.before_key, ev.after_key = kb, ka
        return True

    def _pair(self, table: tuple[str, str], events: list[Event]) -> None:
        """Each change's (conflict-key value, key) pairs held for the window's end (sink.conflict_keys)."""
        if not self.pairs.wanted(table):
            return
        if table not in self._values:
            info = self.tracker.current(*table)
            unique = info.other_unique_keys() if isinstance(info, TableInfo) else {}
            self._values[table] = ConflictValues(unique) if unique else None
        values = self._values[table]
        if values is None:
            return
        try:
            pairs = values.pairs((e.before, e.after, e.before_key, e.after_key) for e in events)
        except Exception as e:  # noqa: BLE001 - an image without a unique key's column: told apart by none
            log.info("pull tells no conflict keys of %s.%s apart: %s", *table, e)
            self.pairs.tangle_all(table)
            return
        self.pairs.add(table, pairs)

    def _record(self, table: tuple[str, str], key, collations: dict, events: list[Event]) -> None:
        first, last = events[0].commit_ts, events[-1].commit_ts
        span = self._open.get(table)
        if span is not None and span.key == key and span.collations == collations:
            span.last_ts = last
            return
        span = KeySpan(schema=table[0], table=table[1], first_ts=first, last_ts=last, key=key,
                       collations=collations)
        self._open[table] = span
        self.spans.append(span)


def mark_tangled(spans: list[KeySpan], pairs: ConflictPairs) -> list[KeySpan]:
    """`spans` with each table's tangled keys (sink.conflict_keys), found over the whole window:
    every span of a table gets the table's."""
    tangled = pairs.tangled()
    for span in spans:
        keys = tangled.get((span.schema, span.table), [])
        span.tangled, span.all_tangled = keys or [], keys is None
    return spans
