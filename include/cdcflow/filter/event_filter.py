"""`[[filter.event-filters]]`: `ignore-event` and `ignore-sql` per `matcher` (TiCDC's
event-type filter, TiCDC's pkg/filter sqlEventFilter).

A rule applies to an event when its matcher (table-filter rules) matches the event's
table, or for a database DDL its schema.  A DDL is ignored when its TiCDC event name,
`all ddl`, or (for ALTER TABLE's sub-types) `alter table` is in `ignore-event`, or when
an `ignore-sql` pattern is found in its text; a row change when `insert`/`update`/`delete`
or `all dml` is.  An ignored DDL still changes the tracked schema (it happened upstream)
but is not run downstream, and the table's rows keep flowing (TiCDC's DDL-replication doc's last table).
The four value expressions and ignore-txn-start-ts are other filters.
"""

from __future__ import annotations

from dataclasses import dataclass

from cdcflow.config.keys import EventFilterRule
from cdcflow.ddl.types import ALTER_TABLE_TYPES, DDL_EVENT_NAMES
from cdcflow.filter.table import TableFilter

DML_OPS = ("insert", "update", "delete")


@dataclass(frozen=True)
class _Rule:
    index: int
    matcher: TableFilter
    events: frozenset[str]
    sql: object  # compiled ignore-sql pattern or None

    def ignores_ddl(self, ddl_type: str, query: str) -> str | None:
        name = DDL_EVENT_NAMES.get(ddl_type)
        if name is not None:
            for ev in (name, "all ddl", "alter table" if ddl_type in ALTER_TABLE_TYPES else None):
                if ev in self.events:
                    return f"event filter {self.index} ignores {ev!r}"
        if self.sql is not None and query and self.sql.search(query):
            return f"event filter {self.index} ignore-sql matches"
        return None


class EventFilter:
    def __init__(self, rules: tuple[EventFilterRule, ...], case_sensitive: bool = False):
        self.rules = [
            _Rule(i, TableFilter(list(r.matcher), case_sensitive, f"filter.event-filters[{i}].matcher"),
                  frozenset(r.ignore_event),
                  r.sql_pattern())
            for i, r in enumerate(rules) if r.ignore_event or r.ignore_sql]

    def __bool__(self) -> bool:
        return bool(self.rules)

    def _matching(self, schema: str, table: str | None):
        for r in self.rules:
            if (r.matcher.match_schema(schema) if not table else r.matcher.match_table(schema, table)):
                yield r

    def ddl_ignored(self, ddl_type: str, query: str, schema: str, table: str | None) -> str | None:
        """Why a DDL of this type on (schema, table) is ignored, or None.  `table` is None for
        a database DDL; for a rename it is the old name, as TiCDC matches it."""
        for r in self._matching(schema, table):
            why = r.ignores_ddl(ddl_type, query)
            if why:
                return why
        return None

    def ignored_ops(self, schema: str, table: str) -> frozenset[str]:
        """The row-change kinds of this table that the rules drop."""
        out: set[str] = set()
        for r in self._matching(schema, table):
            if "all dml" in r.events:
                return frozenset(DML_OPS)
            out |= r.events & set(DML_OPS)
        return frozenset(out)

    def dropped_ops(self, tables: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
        """The (schema, table, op) triples of `tables` whose row events the rules ignore (filter.row_rules)."""
        return [(s, t, op) for s, t in tables for op in sorted(self.ignored_ops(s, t))]
