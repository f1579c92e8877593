"""TiCDC's RENAME TABLE rules (TiCDC's DDL-replication doc), decided from names and the table filter.

A statement is replayed clause by clause, as the upstream ran it, and each table it moves
is followed from the name it had before the statement to the name it has after
(`RENAME TABLE a TO d, b TO a, c TO b` moves a to d, b to a and c to b: a chain).

- A single-table rename replicates when the old name matches the filter; an old name that
  does not match with a new name that does is an error (the downstream has no table to
  rename); neither matching: ignored.
- A multi-table rename leaves out every table whose names before and after the statement
  are both outside the filter: its clauses do not run downstream (TiCDC's DDL puller drops
  such clauses, `handleRenameTables`).  Every other table must start under a name that
  matches and each clause moving it must name a new schema that matches (TiCDC's documented rule);
  otherwise the statement fails, naming the clause.
- A swap cannot be replicated: tables of the statement that end under each other's names
  (t1 under t3's and t3 under t1's, or any longer cycle).  Only the tables the filter keeps
  count: a swap among tables it leaves out fails nothing.

Errors stop the changefeed: it goes to `failed`.
"""

from __future__ import annotations

from dataclasses import dataclass

from cdcflow.core.errors import SYNC_RENAME_TABLE_FAILED, CdcflowError
from cdcflow.ddl.classify import TableName
from cdcflow.filter.table import TableFilter

REPLICATE, IGNORE = "replicate", "ignore"
_SKIP = "`cdcflow changefeed skip-ddl -c <changefeed> --commit-ts <ts>`"


class RenameRuleError(CdcflowError):
    def __init__(self, message: str, **kw):
        kw.setdefault("code", SYNC_RENAME_TABLE_FAILED)
        kw.setdefault("hint", "rename the tables back upstream, or change the filter rules so the old and new "
                              "names are both in or both out, then re-create the changefeed from a start-ts "
                              f"after this statement (or skip it with {_SKIP})")
        super().__init__(message, **kw)


@dataclass
class Moved:
    """One table a RENAME statement moves: its name before the statement, its name after it,
    and the clauses (indexes into the statement's renames) that move it, in order."""

    start: TableName
    end: TableName
    clauses: list[int]


def follow(renames) -> list[Moved]:
    """The tables a statement moves, replaying its clauses in order: a clause renames the
    table that holds its old name once the clauses before it have run."""
    at: dict = {}
    moved: list[Moved] = []
    for i, (old, new) in enumerate(renames):
        m = at.pop(old, None)
        if m is None:
            m = Moved(old, old, [])
            moved.append(m)
        m.end = new
        m.clauses.append(i)
        at[new] = m
    return moved


def _name(t) -> str:
    return f"{t.schema}.{t.table}"


def _clauses(renames, indexes) -> str:
    return ", ".join(f"{_name(renames[i][0])} TO {_name(renames[i][1])}" for i in indexes)


def outside(m: Moved, tf: TableFilter) -> bool:
    """Is the table outside the filter before and after the statement?  Then the statement
    runs downstream without its clauses."""
    return not tf.match_table(m.start.schema, m.start.table) and not tf.match_table(m.end.schema, m.end.table)


def _cycles(moved: list[Moved]) -> list[list[Moved]]:
    """Groups of two or more tables that end under each other's starting names.  Starting
    names are distinct, and so are ending names, so following a table's end to the table that
    started there either comes back to it or stops."""
    by_start = {m.start: m for m in moved}
    cycles, seen = [], set()
    for m in moved:
        if id(m) in seen:
            continue
        path, nxt = [m], by_start.get(m.end)
        while nxt is not None and nxt is not m and len(path) <= len(moved):
            path.append(nxt)
            nxt = by_start.get(nxt.end)
        if nxt is m and len(path) > 1:  # one table back under its own name exchanges nothing
            seen.update(id(p) for p in path)
            cycles.append(path)
    return cycles


def rename_decision(renames, tf: TableFilter) -> tuple[str, str]:
    """(REPLICATE | IGNORE, why) for the (old, new) pairs of one statement; RenameRuleError
    when the statement breaks a rule.  A replicated statement runs without the clauses of
    the tables `outside` the filter."""
    if len(renames) == 1:
        old, new = renames[0]
        if tf.match_table(old.schema, old.table):
            return REPLICATE, f"{_name(old)} matches the filter"
        if tf.match_table(new.schema, new.table):
            raise RenameRuleError(
                f"RENAME TABLE {_name(old)} TO {_name(new)} is not allowed: the old name {_name(old)} does not "
                f"match the filter rules but the new name {_name(new)} does")
        return IGNORE, f"{_name(old)} does not match the filter"
    moved = follow(renames)
    kept = [m for m in moved if not outside(m, tf)]
    for cycle in _cycles(moved):
        if not all(outside(m, tf) for m in cycle):
            ends = [f"{_name(m.start)} {'ends as' if k == 0 else 'as'} {_name(m.end)}" for k, m in enumerate(cycle)]
            ends = ", ".join(ends[:-1]) + " and " + ends[-1]
            raise RenameRuleError(
                f"a RENAME TABLE that swaps names in one statement cannot be replicated: {ends} "
                f"({_clauses(renames, sorted(i for m in cycle for i in m.clauses))})",
                hint="rename the replicated tables on the downstream by hand as the statement did, then skip it with "
                     f"{_SKIP} and resume")
    bad = []
    for m in kept:
        if not tf.match_table(m.start.schema, m.start.table):
            bad.append(f"{_clauses(renames, m.clauses)}: the old name {_name(m.start)} does not match but the "
                       f"new name {_name(m.end)} does")
            continue
        bad += [f"{_clauses(renames, [i])}: the new schema {renames[i][1].schema} does not match"
                for i in m.clauses if not tf.match_schema(renames[i][1].schema)]
    if bad:
        raise RenameRuleError(
            "a multi-table RENAME TABLE replicates a table only when its old name and every new schema it is "
            "given match the filter rules (a table outside them before and after is left out); "
            + "; ".join(bad))
    if not kept:
        return IGNORE, "no table it renames matches the filter, before or after"
    return REPLICATE, "the old names and new schemas match the filter"
