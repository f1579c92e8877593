"""Whether one DDL runs downstream, per table it names: table filter and RENAME rules, then
the event filter, then TiCDC's DDL-replication doc's valid-index matrix on the tracked schema.

A statement naming several tables (DROP TABLE a, b; RENAME TABLE a TO b, c TO d) is
decided table by table, as TiDB runs it as one job per table; when only some tables
pass, the statement is rewritten to name those.  Two matrix cases TiCDC's document warns of end
in a later silent divergence, so they stop the changefeed at the DDL instead (a failing
barrier: everything before it is applied, the checkpoint stops just below it):
- a valid index created on a table that was never replicated (it had none): the
  downstream has no such table, or one without the rows of the time it had no key;
- the last valid index dropped: the table would silently stop being replicated.
With `force-replicate = true` neither happens: such tables are replicated anyway.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cdcflow.core.errors import VALID_INDEX_CHANGED, CdcflowError
from cdcflow.core.row_codec import quote_ident
from cdcflow.ddl import types as T
from cdcflow.ddl.table_def import TableInfo
from cdcflow.filter.event_filter import EventFilter
from cdcflow.filter.rename import follow, outside
from cdcflow.filter.table import TableFilter

_VIEW_TYPES = (T.CREATE_VIEW, T.DROP_VIEW)  # views are always eligible (TiCDC IsEligible)
# statements of several tables TiDB runs as a job per table, so decided per table
_MULTI_DROPS = ("DROP TABLE", "DROP VIEW", "DROP SEQUENCE")


@dataclass
class Verdict:
    keep: bool  # runs downstream
    why: str
    query: str  # the statement to run (rewritten when only some of its tables pass)
    error: CdcflowError | None = None
    schema_only: bool = False  # not run, but a replicated table's key changed: still a barrier
    notes: list[str] = field(default_factory=list)


class ValidIndexError(CdcflowError):
    def __init__(self, message: str, **kw):
        kw.setdefault("code", VALID_INDEX_CHANGED)
        super().__init__(message, **kw)


def _name(schema: str, table: str) -> str:
    return f"{schema}.{table}"


def _q(t) -> str:
    return f"{quote_ident(t.schema)}.{quote_ident(t.table)}"


def _states(changes) -> dict[tuple[str, str], tuple]:
    """(schema, table) -> (before, after) over all changes of the statement."""
    out: dict[tuple[str, str], tuple] = {}
    for s, t, before, after in changes:
        first = out.get((s, t), (before, None))[0]
        out[(s, t)] = (first, after)
    return out


def _rename_clauses(renames, states, tf: TableFilter) -> list[tuple]:
    """Per rename clause, of the table it moves (a table renamed twice in one statement is one
    table): its name before the statement, whether the filter leaves it out (outside before
    and after), and its state (before, after) under its names before and after the statement
    (ALTER TABLE … RENAME may change it too).  A table's clauses share one verdict."""
    out: list[tuple] = [()] * len(renames)
    for m in follow(renames):
        before = states.get((m.start.schema, m.start.table), (None, None))[0]
        after = states.get((m.end.schema, m.end.table), (None, None))[1]
        for i in m.clauses:
            out[i] = (m.start, outside(m, tf), before, after)
    return out


def _eligible(info) -> bool | None:
    return info.valid_key() is not None if isinstance(info, TableInfo) else None


def key_changed(changes, tf: TableFilter) -> bool:
    """Did the statement change the valid key of a table the changefeed replicates?"""
    for (s, t), (before, after) in _states(changes).items():
        if tf.match_table(s, t) and isinstance(after, TableInfo) and \
                (not isinstance(before, TableInfo) or before.valid_key() != after.valid_key()):
            return True
    return False


def _targets(info) -> list[tuple]:
    """(label, schema, table to match, table whose state decides, rewrite piece) per target."""
    if info.is_schema_level:
        return [(info.schema, info.schema, None, None, None)]
    if info.renames:
        return [(f"{_name(o.schema, o.table)} TO {_name(n.schema, n.table)}", o.schema, o.table,
                 (n.schema, n.table), f"{_q(o)} TO {_q(n)}") for o, n in info.renames]
    if info.statement_name in _MULTI_DROPS and len(info.tables) > 1:
        return [(_name(t.schema, t.table), t.schema, t.table, (t.schema, t.table), _q(t)) for t in info.tables]
    if not info.tables:  # RECOVER TABLE BY JOB n: names no table
        return [(info.statement_name, None, None, None, None)]
    t = info.tables[0]
    return [(_name(t.schema, t.table), t.schema, t.table, (t.schema, t.table), None)]


def _rewrite(info, pieces: list[str]) -> str:
    if info.renames:
        return "RENAME TABLE " + ", ".join(pieces)
    head = info.statement_name + " "
    return head + ("IF EXISTS " if info.if_exists else "") + ", ".join(pieces)


def decide(info, query: str, ts: int, changes, tf: TableFilter, ef: EventFilter, force_replicate: bool,
           table_ok: tuple[bool, str], current=None) -> Verdict:
    """`table_ok` is the table-filter/RENAME-rule verdict (filter.ddl_decision) on the whole
    statement; `changes` what it did to the tracked schema (SchemaTracker.apply); `current`
    (schema, table) -> tracked info, for the tables it named without changing them."""
    keep, why = table_ok
    if not keep:
        return Verdict(False, why, query, schema_only=info.allowed and key_changed(changes, tf))
    states = _states(changes)
    renamed = _rename_clauses(info.renames, states, tf)
    kept, dropped, notes = [], [], []
    for i, (label, schema, table, state_of, piece) in enumerate(_targets(info)):
        if info.renames:  # decided on the table the clause moves, under its name before the statement
            start, left_out, before, after = renamed[i]
            schema, table = start.schema, start.table
        if table is not None and (left_out if info.renames else not tf.match_table(schema, table)):
            dropped.append(f"{label} is filtered out")
            continue
        ignored = ef.ddl_ignored(info.type, query, schema, table) if ef and schema else None
        if ignored:
            dropped.append(f"{label}: {ignored}")
            continue
        if state_of is not None and info.type not in _VIEW_TYPES:
            if not info.renames:
                unchanged = current(*state_of) if current else None
                before, after = states.get(state_of, (unchanged, unchanged))
            decided = after if isinstance(after, TableInfo) else before
            has_key = _eligible(decided)
            if has_key is None:
                notes.append(f"{label}: schema not tracked, treated as having a valid index")
                has_key = True
            if not force_replicate:
                error = _warned_case(info, query, ts, label, before, after)
                if error is not None:
                    return Verdict(True, error.message, query, error=error)
            if not T.should_replicate(info.type, has_key, force_replicate):
                dropped.append(f"{label} has no valid index (primary key or NOT NULL unique key) and "
                               "force-replicate is false")
                continue
        kept.append(piece)
    if not kept:
        return Verdict(False, "; ".join(dropped), query, schema_only=key_changed(changes, tf), notes=notes)
    if dropped:
        new_query = _rewrite(info, kept)
        return Verdict(True, f"runs as {new_query!r}: " + "; ".join(dropped), new_query, notes=notes)
    return Verdict(True, why, query, notes=notes)


# TiCDC's DDL-replication doc's two warned cases, by (valid index before, after): what happens and the ways past it.
_WARNED = {
    (False, True): (
        "{what} gives table {label} a valid index, but the table had none, so it was never replicated "
        "(force-replicate is false): the downstream lacks the table or its rows",
        "copy {label} as it is now from the upstream to the downstream (its structure after this statement "
        "and its rows), then `cdcflow changefeed skip-ddl --commit-ts {ts}` and resume; or set "
        "force-replicate = true and re-create the changefeed"),
    (True, False): (
        "{what} drops the last valid index of table {label}: without one the table stops being replicated "
        "(force-replicate is false) and the downstream would silently fall behind",
        "add a primary key or a NOT NULL unique key to {label} upstream again; or set force-replicate = true "
        "and re-create the changefeed; or accept that {label} is no longer replicated with "
        "`cdcflow changefeed skip-ddl --commit-ts {ts}` and resume"),
}


def _warned_case(info, query: str, ts: int, label: str, before, after) -> ValidIndexError | None:
    case = _WARNED.get((_eligible(before), _eligible(after)))
    if case is None:
        return None
    what = dict(what=info.statement_name, label=label, ts=ts)
    message, hint = case
    return ValidIndexError(message.format(**what), ts=ts, statement=query, hint=hint.format(**what))


def ineligible_ranges(ranges: dict[tuple[str, str], list], force_replicate: bool) -> dict[tuple[str, str], list]:
    """Rows of tables without a valid index at their commit ts are not fed downstream unless
    force-replicate (TiCDC's DDL-replication doc).  `ranges`: (schema, table) -> SchemaTracker.key_ranges().
    Returns {(schema, table): [[from_ts, to_ts or None], ...]}: the commit ts spans (from, to] whose
    rows are dropped (filter.row_rules)."""
    if force_replicate:
        return {}
    dropped: dict[tuple[str, str], list] = {}
    for name, rs in ranges.items():
        for i, (lo, key, known, _) in enumerate(rs):
            if known and key is None:
                hi = rs[i + 1][0] if i + 1 < len(rs) else None
                dropped.setdefault(name, []).append([lo, hi])
    return dropped
