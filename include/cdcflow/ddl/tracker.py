"""Multi-version table info (TiCDC's multi-version schema storage): for every upstream table, the
versions of its definition by the commit ts of the DDL that made them.

Initialised from the upstream's information_schema when the changefeed is created, then
evolved by every DDL the binlog carries, replicated or not (an ignored or filtered DDL
still changed the upstream).  A row change at ts T is read with the newest version made
before T.  Versions are persisted per changefeed (schema_store) so a restart resumes
from them instead of re-deriving them.
"""

from __future__ import annotations

import bisect
import json
import logging

from cdcflow.ddl import types as T
from cdcflow.ddl.lexer import tokenize
from cdcflow.ddl.table_def import (
    PRIMARY,
    TableInfo,
    alter_clauses,
    alter_table,
    create_index,
    create_table_body,
    create_table_info,
    drop_index,
)

log = logging.getLogger(__name__)


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


# The tracker holds no version of the table at that ts (e.g. before the snapshot).
UNKNOWN = _Unknown()


class SchemaTracker:
    def __init__(self):
        # (schema, table) -> [(version ts, TableInfo | None for dropped)], ts ascending
        self.versions: dict[tuple[str, str], list[tuple[int, TableInfo | None]]] = {}
        # versions made since loading, by (schema, table, ts): a dict, so a re-derived version
        # replaces its first derivation without a scan of all of them (a window of thousands of DDLs)
        self._added: dict[tuple[str, str, int], TableInfo | None] = {}

    # -- reading
    def at(self, schema: str, table: str, ts: int):
        """The table as a row change committed at `ts` sees it: TableInfo, None (no such
        table) or UNKNOWN."""
        vs = self.versions.get((schema, table))
        if not vs:
            return UNKNOWN
        i = bisect.bisect_left([v for v, _ in vs], ts)  # versions made strictly before ts
        return vs[i - 1][1] if i else UNKNOWN

    def current(self, schema: str, table: str):
        vs = self.versions.get((schema, table))
        return vs[-1][1] if vs else UNKNOWN

    def versions_in(self, schema: str, table: str, lo: int, hi: int) -> list[tuple]:
        """[(from_ts, TableInfo | None | UNKNOWN), ...] covering (lo, hi]: the base version and
        every version made inside the window; rows above a from_ts (up to the next) read it."""
        out = [(lo, self.at(schema, table, lo + 1))]
        return out + [(vts, info) for vts, info in self.versions.get((schema, table), ()) if lo < vts <= hi]

    def key_ranges(self, schema: str, table: str, lo: int, hi: int) -> list[list]:
        """[[from_ts, valid key or None, known, collations of the key's string columns], ...]
        covering (lo, hi] (versions_in)."""
        return [_key_range(ts, info) for ts, info in self.versions_in(schema, table, lo, hi)]

    def period_ranges(self, schema: str, table: str, lo: int, hi: int) -> list[list]:
        """[[from_ts, system-time period (start, end) or None], ...] covering (lo, hi] (versions_in)."""
        return [[ts, info.period if isinstance(info, TableInfo) else None]
                for ts, info in self.versions_in(schema, table, lo, hi)]

    # -- writing
    def put(self, schema: str, table: str, ts: int, info: TableInfo | None) -> None:
        vs = self.versions.setdefault((schema, table), [])
        while vs and vs[-1][0] >= ts:  # a re-read window re-derives the same versions
            vs.pop()
        vs.append((ts, info))
        self._added.pop((schema, table, ts), None)  # re-derived: now the newest
        self._added[(schema, table, ts)] = info

    @property
    def added(self) -> list[tuple[str, str, int, TableInfo | None]]:
        """The versions made since loading, in the order they were (last) made."""
        return [(s, t, ts, info) for (s, t, ts), info in self._added.items()]

    def apply(self, info, query: str, sql_mode: str | None, ts: int) -> list[tuple]:
        """Evolve the schema by one classified DDL at commit ts `ts`.  Returns the tables it
        changed as (schema, table, before, after)."""
        changes: list[tuple] = []
        if info.kind != "ddl":
            return changes

        def change(schema, table, after):
            vs = self.versions.get((schema, table))
            if vs and ts < vs[0][0]:
                # older than the oldest version known (a window re-read from before the snapshot
                # the changefeed was created with): that version already includes this DDL
                return
            before = self.current(schema, table)
            self.put(schema, table, ts, after)
            changes.append((schema, table, before, after))

        toks = tokenize(query, sql_mode)
        name = info.statement_name
        if name == "DROP DATABASE":
            for (s, t), vs in list(self.versions.items()):
                if s == info.schema and vs and vs[-1][1] is not None:
                    change(s, t, None)
        elif info.type == T.CREATE_TABLE:
            self._create_table(info, toks, query, change)
        elif info.type == T.CREATE_SEQUENCE:
            target = info.tables[0]
            if not (info.if_exists and isinstance(self.current(target.schema, target.table), TableInfo)):
                change(target.schema, target.table, TableInfo.of_sequence())
        elif name in ("DROP TABLE", "DROP SEQUENCE"):
            for t in info.tables:
                if self.current(t.schema, t.table) is not None:
                    change(t.schema, t.table, None)
        elif name == "RENAME TABLE":
            for old, new in info.renames:
                moved = self.current(old.schema, old.table)
                change(old.schema, old.table, None)
                change(new.schema, new.table, moved.copy() if isinstance(moved, TableInfo) else moved)
        elif name == "CREATE INDEX":
            self._edit(info.tables[0], change, lambda t: create_index(t, toks))
        elif name == "DROP INDEX":
            self._edit(info.tables[0], change, lambda t: drop_index(t, toks))
        elif name.startswith("ALTER TABLE"):
            self._alter_table(info, toks, query, change)
        return changes

    def _create_table(self, info, toks, query: str, change) -> None:
        """CREATE TABLE, of its own body or LIKE another table; IF NOT EXISTS of a table that
        exists changes nothing."""
        target = info.tables[0]
        existing = self.current(target.schema, target.table)
        if info.if_exists and isinstance(existing, TableInfo):
            return
        if len(info.tables) > 1:  # CREATE TABLE a LIKE b
            src = self.current(info.tables[1].schema, info.tables[1].table)
            after = src.copy() if isinstance(src, TableInfo) else None
        else:
            body = create_table_body(toks)
            after = create_table_info(*body) if body is not None else None
        if after is None:
            log.warning("schema of %s.%s not derivable from %r", target.schema, target.table, query)
            after = UNKNOWN
        change(target.schema, target.table, after)

    def _alter_table(self, info, toks, query: str, change) -> None:
        """ALTER TABLE's clauses, a partition made a table or a table made a partition, and a
        RENAME TO among its clauses."""
        target = info.tables[0]
        rename_to = []

        def edit(t):
            new, understood = alter_table(t, alter_clauses(toks))
            if not understood:
                log.warning("a clause of %r does not change the tracked schema of %s.%s", query,
                            target.schema, target.table)
            if new:
                rename_to.append(new)
        self._edit(target, change, edit)
        if T.CONVERT_PARTITION in info.sub_types:  # a partition's rows become a table of its own
            made, src = info.tables[1], self.current(target.schema, target.table)
            change(made.schema, made.table, src.copy() if isinstance(src, TableInfo) else UNKNOWN)
        elif T.CONVERT_TABLE in info.sub_types:  # a table's rows become a partition
            gone = info.tables[1]
            change(gone.schema, gone.table, None)
        if rename_to and info.renames:
            old, new = info.renames[0]
            moved = self.current(old.schema, old.table)
            change(old.schema, old.table, None)
            change(new.schema, new.table, moved)

    def _edit(self, target, change, fn) -> None:
        cur = self.current(target.schema, target.table)
        if not isinstance(cur, TableInfo):
            return  # unknown or absent: nothing to evolve
        after = cur.copy()
        fn(after)
        change(target.schema, target.table, after)

    def rewind(self, ts: int) -> None:
        """Forget versions made after `ts`: a window re-read from there re-derives them, and
        must see each DDL's table as it was before that DDL."""
        for vs in self.versions.values():
            # the oldest version stays, even when made after `ts`: it is the only knowledge of
            # the table then (the catalogue's snapshot at create), and DDLs before it are in it
            while len(vs) > 1 and vs[-1][0] > ts:
                vs.pop()

    def gc(self, checkpoint_ts: int) -> list[tuple[str, str, int]]:
        """Forget the versions no row change after the checkpoint can read: for each table
        everything older than its newest version at or below the checkpoint."""
        gone = []
        for key, vs in list(self.versions.items()):
            keep_from = max((i for i, (v, _) in enumerate(vs) if v <= checkpoint_ts), default=0)
            if len(vs) == keep_from + 1 and vs[-1][1] is None:
                keep_from += 1  # dropped for good below the checkpoint: nothing left to read
            gone += [(key[0], key[1], v) for v, _ in vs[:keep_from]]
            del vs[:keep_from]
            if not vs:
                del self.versions[key]
        return gone


def _key_range(ts: int, info) -> list:
    key = info.valid_key() if isinstance(info, TableInfo) else None
    return [ts, key, info is not UNKNOWN, info.key_collations(key) if key else {}]


def lookup_key(ranges: list[list], ts: int) -> tuple[list[str] | None, bool, dict[str, str | None]]:
    """(key, known, collations of its string columns) of the version a row change at `ts`
    reads, from key_ranges()."""
    pick = ranges[0]
    for r in ranges:
        if r[0] < ts:
            pick = r
    return pick[1], pick[2], pick[3]


def _not_null_unique_keys(info: TableInfo) -> list[list[str]]:
    """InnoDB takes a table without a primary key by its first NOT NULL unique key, and the
    binlog's table map names that key as the primary one: no drift."""
    out = []
    for ix in info.indexes.values():
        cols = [info.column(c) for c in ix["columns"]]
        if ix["unique"] and cols and all(c is not None and not c["nullable"] for c in cols):
            out.append([c["name"].lower() for c in cols])
    return out


def disagreements(tracker: SchemaTracker, samples) -> list[str]:
    """Where the binlog's own description of a row disagrees with the tracked version at the
    row's commit ts: a column the tracked table lacks, or another primary key.  `samples`:
    (schema, table, commit ts, primary key JSON from the table map, row image JSON).
    A row image is named by the binlog's table map (binlog_row_metadata=FULL), so drift
    shows here first, e.g. after a DDL the tracker could not read was skipped."""
    out = []
    for schema, table, ts, pk_text, image in samples:
        info = tracker.at(schema, table, ts)
        if not isinstance(info, TableInfo) or image is None:
            continue
        # a versioned table's rows carry its period, which information_schema may not list
        period = {c.lower() for c in info.period or ()}
        tracked = {c["name"].lower() for c in info.columns} | period
        extra = [c for c in json.loads(image) if c.lower() not in tracked]
        if extra:
            out.append(f"{schema}.{table} at commit ts {ts}: the binlog's row has column(s) {', '.join(extra)} "
                       "the tracked schema does not")
        pk = [p.lower() for p in json.loads(pk_text) if p.lower() not in period] if pk_text else []
        tracked_pk = [c.lower() for c in info.indexes.get(PRIMARY, {}).get("columns", []) if c.lower() not in period]
        if pk and pk != tracked_pk and not (not tracked_pk and pk in _not_null_unique_keys(info)):
            out.append(f"{schema}.{table} at commit ts {ts}: the binlog's primary key is ({', '.join(pk)}), "
                       f"the tracked one ({', '.join(tracked_pk) or 'none'})")
    return out
