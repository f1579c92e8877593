"""TiCDC's RENAME TABLE rules (seeds 000/003), decided from names and the table filter.

A single-table rename replicates when the old name matches the filter; an old name
that does not match with a new name that does is an error (the downstream has no
table to rename).  A multi-table rename replicates only when every old schema and
table name and every new schema name match; one that reuses a name inside the same
statement (a swap) is an error.  Errors stop the changefeed: it goes to `failed`.
"""

from __future__ import annotations

from cdcflow.core.errors import SYNC_RENAME_TABLE_FAILED, CdcflowError
from cdcflow.filter.table import TableFilter

REPLICATE, IGNORE = "replicate", "ignore"


class RenameRuleError(CdcflowError):
    def __init__(self, message: str, **kw):
        kw.setdefault("code", SYNC_RENAME_TABLE_FAILED)
        kw.setdefault("hint", "rename the tables back upstream, or change the filter rules so the old and new "
                              "names are both in or both out, then re-create the changefeed from a start-ts "
                              "after this statement (or skip it with `cdcflow changefeed skip-ddl`)")
        super().__init__(message, **kw)


def _name(t) -> str:
    return f"{t.schema}.{t.table}"


def rename_decision(renames, tf: TableFilter) -> tuple[str, str]:
    """(REPLICATE | IGNORE, why) for the (old, new) pairs of one statement; RenameRuleError
    when the statement breaks a rule."""
    if len(renames) == 1:
        old, new = renames[0]
        if tf.match_table(old.schema, old.table):
            return REPLICATE, f"{_name(old)} matches the filter"
        if tf.match_table(new.schema, new.table):
            raise RenameRuleError(
                f"RENAME TABLE {_name(old)} TO {_name(new)} is not allowed: the old name {_name(old)} does not "
                f"match the filter rules but the new name {_name(new)} does")
        return IGNORE, f"{_name(old)} does not match the filter"
    olds = {(o.schema, o.table) for o, _ in renames}
    reused = [n for _, n in renames if (n.schema, n.table) in olds]
    if reused:
        raise RenameRuleError(
            f"a RENAME TABLE that swaps names in one statement cannot be replicated ({_name(reused[0])} is both "
            "renamed and a rename target)")
    old_ok = [tf.match_table(o.schema, o.table) for o, _ in renames]
    new_ok = [tf.match_schema(n.schema) for _, n in renames]
    if all(old_ok) and all(new_ok):
        return REPLICATE, "all old names and new schema names match the filter"
    if not any(old_ok) and not any(tf.match_table(n.schema, n.table) for _, n in renames):
        return IGNORE, "no old or new name matches the filter"
    bad = [f"old name {_name(o)}" for (o, _), ok in zip(renames, old_ok) if not ok] + \
          [f"new schema {n.schema}" for (_, n), ok in zip(renames, new_ok) if not ok]
    raise RenameRuleError(
        "a multi-table RENAME TABLE replicates only when every old schema and table name and every new schema "
        f"name match the filter rules; {', '.join(bad)} does not")
