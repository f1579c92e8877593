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

Over the event writer's compiled columns (wrap's `columns`) the compiled binlog reader keys the
rows of a table itself where the key is its image's values as they are (`plan_for`: no folding
collation, no other unique key), and counts them in a KeyRun per table; the stamper keys the
other rows in the columns in its batches (`_flush_columns`), and records both in the spans in
the order of their first rows, as it records the Events it holds (the reference).
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
from cdcflow.sink.collation_key import KeyFolder, comparison
from cdcflow.sink.compaction import Keyer
from cdcflow.sink.conflict_keys import PAIRS_BYTES, ConflictPairs, ConflictValues, value_part
from cdcflow.sink.table_keys import Catalogue, table_key
from cdcflow.stages.contracts import KeySpan

log = logging.getLogger(__name__)

BATCH = 2_000  # row changes keyed at once: the weights of a folding key's strings are asked per batch
_NOW = 2 ** 62  # above every ts: the tracker's latest version of a table, every DDL read so far applied
_NO_KEY = (None, {})
# how the compiled reader keys a table's rows (source/compiled_window.pxi's KEY_*)
KEY_NONE, KEY_PENDING, KEY_HERE = 0, 1, 2


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
        # over compiled columns: the columns, and per table the KeyRun the reader counts its rows in
        # and how it keys them, until a DDL (`generation` counts them)
        self._columns = None
        self._runs: dict[tuple[str, str], tuple] = {}
        self.generation = 0

    @classmethod
    def of(cls, spec: dict) -> "KeyStamper":
        """From pull.stamper_spec's keywords (plus `offset` for a range)."""
        return cls(**spec)

    def wrap(self, add: Callable[[Event], None], writer=None) -> Callable[[Event], None]:
        """`add` with each row event's key texts set; `writer`: the store.events.EventWriter that
        `add` adds to, whose compiled columns (where it has them) hold the rows until keyed."""
        if writer is not None and writer.columns is not None:
            return self._wrap_columns(add, writer)

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

    def _wrap_columns(self, add: Callable[[Event], None], writer) -> Callable[[Event], None]:
        self._columns = writer.columns
        self._columns.wait_for_keys(self._flush_columns)
        writer.before_flush = self._flush_columns

        def stamp(ev: Event) -> None:
            if ev.op == "ddl":
                self._flush_columns()
                self._follow(ev)
            add(ev)  # a row waits in the columns for its keys
        return stamp

    # a conflict-key value's part, from its JSON text, where the compiled reader does not fold it itself
    value_part = staticmethod(value_part)

    def plan_for(self, schema: str, table: str) -> tuple:
        """How the compiled reader keys `table`'s rows until the next DDL: (KEY_*, the key's
        columns where it keys them itself, the KeyRun it counts them in, and the conflict keys it
        writes there: (text before the values, columns) of each unique key besides the key)."""
        from cdcflow.core.compiled_columns import KeyRun  # lazy: an extension make setup may not have built

        name = (schema, table)
        if name not in self._runs:
            self._runs[name] = (self._mode(name), KeyRun(schema, table))
        (mode, key, unique), run = self._runs[name]
        return mode, key, run, unique

    def _mode(self, table: tuple[str, str]) -> tuple:
        if self.tables is not None and not self.tables.match_table(*table):
            return KEY_NONE, None, None
        key, collations = self._key(table)
        if key is None:
            return KEY_HERE, None, None  # no key: no texts, a span without one
        if any(any(comparison(c)) for c in collations.values()):
            return KEY_PENDING, None, None  # folded by the downstream's weights
        values = self._conflict_values(table) if self.pairs.wanted(table) else None
        return KEY_HERE, key, None if values is None else [(p.encode(), cols) for p, cols in values.unique]

    def _flush_columns(self) -> None:
        """Key the rows waiting in the columns, as _flush keys the Events held, and record the
        spans of the rows the reader keyed itself, all in the order of their first rows."""
        if self._columns is None:
            return
        columns = self._columns
        found = []  # (first row's number, table, key, collations, first ts, last ts)
        for _how, run in self._runs.values():
            if run.seen:
                table = (run.schema, run.table)
                found.append((run.first_row, table, *self._key(table), run.first_ts, run.last_ts))
                run.taken()
                pairs = run.pairs()
                if pairs is not None:
                    self.pairs.add_arrays(table, *pairs)
        by_table: dict[tuple[str, str], list[tuple]] = {}
        for row in columns.pending_rows():  # (index, schema, table, op, before, after, commit_ts)
            by_table.setdefault((row[1], row[2]), []).append(row)
        for table, rows in by_table.items():
            if self.tables is not None and not self.tables.match_table(*table):
                continue
            key, collations = self._key(table)
            ops, befores, afters = [r[3] for r in rows], [r[4] for r in rows], [r[5] for r in rows]
            texts = None if key is None else self._texts(table, key, collations, ops, befores, afters)
            if texts is None:
                key, collations = _NO_KEY
            else:
                kbs, kas = [t[0] for t in texts], [t[1] for t in texts]
                columns.set_keys([r[0] for r in rows], kbs, kas)
                self._pair(table, zip(befores, afters, kbs, kas))
            found.append((columns.base + rows[0][0], table, key, collations, rows[0][6], rows[-1][6]))
        for _first, table, key, collations, first_ts, last_ts in sorted(found, key=lambda f: f[0]):
            self._record(table, key, collations, first_ts, last_ts)

    def close(self) -> list[KeySpan]:
        """Key and pass on what is held; the spans."""
        try:
            self._flush_columns()
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
        self._runs.clear()
        self.generation += 1
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
            texts = None if key is None else self._texts(table, key, collations, [e.op for e in events],
                                                          [e.before for e in events], [e.after for e in events])
            if texts is None:
                key, collations = _NO_KEY
            else:
                for ev, (kb, ka) in zip(events, texts):
                    ev.before_key, ev.after_key = kb, ka
                self._pair(table, ((e.before, e.after, e.before_key, e.after_key) for e in events))
            self._record(table, key, collations, events[0].commit_ts, events[-1].commit_ts)
        for ev in held:
            add(ev)

    def _texts(self, table: tuple[str, str], key: list[str], collations: dict, ops: list, befores: list,
               afters: list) -> list[tuple] | None:
        """The (before, after) key texts of a table's changes; None where they cannot be had."""
        name = f"{table[0]}.{table[1]}"
        if self.keyer.keys.get(name) != key or self.keyer.folder.collations.get(name) != collations:
            self.keyer.set(name, key, collations)
        try:
            return self.keyer.texts([name] * len(ops), ops, befores, afters)
        except Exception as e:  # noqa: BLE001 - an image without a key column, weights not had: apply's to say
            log.info("pull writes no key texts for %s: %s", name, e)
            return None

    def _conflict_values(self, table: tuple[str, str]) -> ConflictValues | None:
        """What reads the table's conflict-key values (None: no unique key besides its key)."""
        if table not in self._values:
            info = self.tracker.current(*table)
            unique = info.other_unique_keys() if isinstance(info, TableInfo) else {}
            self._values[table] = ConflictValues(unique) if unique else None
        return self._values[table]

    def _pair(self, table: tuple[str, str], changes) -> None:
        """Each change's (conflict-key value, key) pairs held for the window's end (sink.conflict_keys);
        `changes`: (before, after, before's key text, after's) each."""
        if not self.pairs.wanted(table):
            return
        values = self._conflict_values(table)
        if values is None:
            return
        try:
            pairs = values.pairs(changes)
        except Exception as e:  # noqa: BLE001 - an image without a unique key's column: told apart by none
            log.info("pull tells no conflict keys of %s.%s apart: %s", *table, e)
            self.pairs.tangle_all(table)
            return
        self.pairs.add(table, pairs)

    def _record(self, table: tuple[str, str], key, collations: dict, first: int, last: int) -> None:
        """The changes of `table` from ts `first` to `last`, keyed by `key`, in its spans."""
        span = self._open.get(table)
        if span is not None and span.key == key and span.collations == collations:
            span.last_ts = max(span.last_ts, last)  # the reader's and the stamper's rows of one batch
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
