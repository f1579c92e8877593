"""Row changes the binlog carries as statements, not rows.

A session that sets binlog_format = STATEMENT or MIXED (a privileged client may, whatever the
server's default) logs its INSERT/UPDATE/DELETE/REPLACE/LOAD DATA as a QueryEvent: the rows it
changed are not in the binlog, so no changefeed can replicate them.  Passing over one silently
would leave the downstream diverged, so it stops the changefeed, unless every table it writes
is filtered out (then the downstream is not concerned).
"""

from __future__ import annotations

from cdcflow.core.errors import ROW_CHANGE_AS_STATEMENT, CdcflowError
from cdcflow.filter.table import TableFilter

_HINT = ("write upstream with binlog_format=ROW in every session (SET GLOBAL binlog_format=ROW, and revoke "
         "from the writers the privilege to change it: SUPER / BINLOG ADMIN); repair the rows downstream "
         "by hand, then `cdcflow changefeed skip-ddl -c <changefeed> --commit-ts <ts>` and resume")


def passed_over(info, tf: TableFilter) -> str:
    """Why a row change logged as a statement (classify's kind 'dml') does not concern the
    downstream; raises where it does, or where the tables it writes cannot be read."""
    names = ", ".join(f"{t.schema}.{t.table}" for t in info.tables)
    if info.tables and not any(tf.match_table(t.schema, t.table) for t in info.tables):
        return f"{info.statement_name} logged as a statement: {names} is filtered out"
    where = f"on {names}" if names else "on tables that cannot be read from the statement"
    raise CdcflowError(
        f"{info.statement_name} {where} was logged as a statement (the session's binlog_format was "
        "STATEMENT or MIXED): the rows it changed are not in the binlog and cannot be replicated",
        code=ROW_CHANGE_AS_STATEMENT, hint=_HINT)
