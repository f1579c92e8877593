"""The changefeed's filter, built once from its config (TiCDC's pkg/filter.NewFilter).

One Filter holds the compiled table filter (with its case-sensitivity) and event filters
(ignore-event / ignore-sql; the value expressions), and answers what the filter stage asks:
whether a DDL runs downstream (table filter and RENAME rules, event filter, the valid-index
matrix under force-replicate), and which row events go.  `create` and `update` build it too,
so a config whose rules do not compile is refused there with the messages a cycle would give.
(The ignore-txn-* lists apply where a stage reads the window: stages.rows, filter.txn.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from cdcflow.config.keys import ChangefeedConfig
from cdcflow.filter import cascade_fk, ddl_gate, value_expr
from cdcflow.filter.event_filter import EventFilter
from cdcflow.filter.online_ddl import CutOver, OnlineDdl, Step, decide_cut_over
from cdcflow.filter.rename import REPLICATE, rename_decision
from cdcflow.filter.statement_rows import passed_over
from cdcflow.filter.table import TableFilter


def ddl_decision(info, tf: TableFilter) -> tuple[bool, str]:
    """Whether a classified DDL is replicated by the table filter, and why (for the log)."""
    if info.kind != "ddl":
        return False, "not a DDL"
    if not info.allowed:
        return False, f"{info.statement_name} is not in the DDL allow list"
    if info.is_schema_level:
        ok = info.schema is not None and tf.match_schema(info.schema)
        return ok, "schema matches the filter" if ok else f"schema {info.schema} is filtered out"
    if info.renames:
        verdict, why = rename_decision(info.renames, tf)
        return verdict == REPLICATE, why
    first = info.tables[0]
    ok = tf.match_table(first.schema, first.table)
    return ok, f"{first.schema}.{first.table} " + ("matches the filter" if ok else "is filtered out")


@dataclass(frozen=True)
class Filter:
    """The config and its compiled rules; `build` compiles them once per cycle (or command)."""

    config: ChangefeedConfig
    tables: TableFilter
    events: EventFilter

    @classmethod
    def build(cls, config: ChangefeedConfig) -> Filter:
        """Compile the config's rules; raises ConfigError naming the first rule that does not."""
        tables = TableFilter(list(config.rules), config.case_sensitive)
        # every matcher compiles, a rule's that ignores nothing (yet) too
        for i, rule in enumerate(config.event_filters):
            TableFilter(list(rule.matcher), config.case_sensitive, f"filter.event-filters[{i}].matcher")
        return cls(config, tables, EventFilter(config.event_filters, config.case_sensitive))

    def match_table(self, schema: str, table: str) -> bool:
        return self.tables.match_table(schema, table)

    @cached_property
    def online(self) -> OnlineDdl | None:
        """The online schema change tools' tables (filter.online_ddl); None where online-ddl is off."""
        return OnlineDdl.of(self.config)

    def replicates_rows(self, schema: str, table: str) -> bool:
        """Whether the table's row changes go downstream: it matches the filter and is no online
        schema change tool's shadow or trash table."""
        return self.match_table(schema, table) and not (self.online and self.online.skips_rows(table))

    def sql_mode(self, recorded: str | None) -> str:
        """The mode a DDL ran under: as the binlog recorded it, else the config's sql-mode."""
        return recorded if recorded is not None else self.config.sql_mode

    # -- DDL events

    def statement_rows(self, info) -> str:
        """Why a row change logged as a statement does not concern the downstream (raises where
        it does: filter.statement_rows)."""
        return passed_over(info, self.tables)

    def key_changed(self, changes) -> bool:
        return ddl_gate.key_changed(changes, self.tables)

    def decide_ddl(self, info, query: str, mode: str, ts: int, changes, current) -> ddl_gate.Verdict:
        """Whether a DDL the tracked schema already followed (`changes`) runs downstream; raises
        a CdcflowError for a rule it breaks (a cascading foreign key, a RENAME rule)."""
        cascade_fk.check_ddl(info, query, mode, self.tables)
        if cascade_fk.runs_downstream(info, query, mode, self.tables):
            child = info.tables[0]
            ignored = self.events.ddl_ignored(info.type, query, child.schema, child.table) if self.events else None
            if not ignored:
                return ddl_gate.Verdict(True, "a foreign key the downstream needs to redo the upstream's cascades "
                                              "(outside TiCDC's allow list)", query)
        return ddl_gate.decide(info, query, ts, changes, self.tables, self.events, self.config.force_replicate,
                               ddl_decision(info, self.tables), current)

    def online_step(self, info, query: str, mode: str, ts: int, shadows) -> Step | None:
        """What becomes of a DDL on an online schema change tool's tables (None: not one)."""
        return self.online.step(info, query, mode, ts, shadows) if self.online and shadows is not None else None

    def decide_cut_over(self, step: Step, default_schema: str | None, mode: str, ts: int, changes,
                        current) -> CutOver:
        """A cut-over's ALTERs decided as any ALTER of the real table (decide_ddl)."""
        return decide_cut_over(step, default_schema, mode,
                               lambda info, q: self.decide_ddl(info, q, mode, ts, changes, current))

    # -- row events: what filter.row_rules needs, decided here once per cycle

    def ignored_ops(self, tables: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
        """The (schema, table, op) triples of `tables` whose row events ignore-event drops."""
        return self.events.dropped_ops(tables) if self.events else []

    def value_tests(self, tracker, lo: int, hi: int, connect: Callable[[], object], changefeed: str,
                    tables: list[tuple[str, str]], has_rows) -> list[value_expr.ValueTest]:
        """The value expressions of `tables`' versions in the window (lo, hi] (filter.value_expr)."""
        return value_expr.value_rules(self.config, tracker, lo, hi, connect, changefeed, tables, has_rows)

    def ineligible(self, ranges: dict[tuple[str, str], list]) -> dict[tuple[str, str], list]:
        """The commit ts spans of tables with no valid index, unless force-replicate (filter.ddl_gate)."""
        return ddl_gate.ineligible_ranges(ranges, self.config.force_replicate)

    # -- at create

    def check_value_expressions(self, connect: Callable[[], object], changefeed: str) -> None:
        """Refuse value expressions that do not parse or name a column a matched upstream table
        lacks (the upstream's catalogue, read on a connection from `connect`)."""
        if not value_expr.has_expressions(self.config):
            return
        conn = connect()
        try:
            columns = value_expr.upstream_columns(conn)
        finally:
            conn.close()
        value_expr.check_expressions(self.config, columns, changefeed)
