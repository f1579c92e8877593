"""The DDL sink (as tiflow's ddlsink): one replicated DDL at a time on the downstream.

`execute(ddl, replay, checkpoint)` marks the DDL in flight (with the checkpoint the barrier
loop has not written yet), runs it — the operator's replacement, or the statement in the
downstream's dialect (ddl.tidb_only), an index DDL asynchronously on TiDB (async_index) — and
says what happened; a failure leaves as a CdcflowError of the DDL's commit ts whose code says
whether a retry can cure it.  `blockers` says which index builds a DDL must wait for first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import pymysql
from msgspec.structs import replace

from cdcflow.core.ddl_session import DdlSession
from cdcflow.core.errors import classify
from cdcflow.core.failures import is_retryable
from cdcflow.core.sink_params import SinkOptions
from cdcflow.core.uri import DbUri
from cdcflow.ddl import mariadb_only, tidb_only
from cdcflow.sink import connection, pending_indexes
from cdcflow.sink.async_index import IndexDDL
from cdcflow.sink.ddl_exec import execute_ddl
from cdcflow.store import index_jobs, metastore


class Ddl(Protocol):
    """What the sink reads of a DDL: a msgspec Struct with these fields (stages.contracts.DdlEntry)."""

    commit_ts: int
    query: str
    name: str
    type: str | None
    sub_types: list[str]
    tables: list[tuple[str, str]]
    default_schema: str | None
    sql_mode: str | None
    session: DdlSession | None
    replacement: list[str] | None
    statements: list[str]


class DdlSink:
    def __init__(self, changefeed_id: str, conn, args: dict, index_ddl: IndexDDL, ddl_timeout: str):
        self.changefeed_id, self.conn, self.index_ddl = changefeed_id, conn, index_ddl
        self.args = args  # the connection's parameters (credentials resolved once, here)
        self.ddl_timeout = ddl_timeout  # as the sink URI or the config gives it, for messages
        self.flavour = tidb_only.flavour(index_ddl.kind, index_ddl.version)

    @classmethod
    def open(cls, changefeed_id: str, uri: DbUri, options: SinkOptions, event: Callable[..., None]) -> "DdlSink":
        """The sink of one apply, on a session of its own; `event(what, **fields)` is told what
        the downstream is (and so whether index DDL runs asynchronously).  A credential reference
        that does not resolve raises its own error before any connection is tried."""
        args = uri.connection_args(options)
        conn = connection.open_downstream(uri.redacted(), args)
        try:
            index_ddl = IndexDDL.open(changefeed_id, conn, args, uri.scheme, options.ddl_read_timeout(), event)
        except BaseException:
            conn.close()
            raise
        return cls(changefeed_id, conn, args, index_ddl, options.ddl_timeout)

    def close(self) -> None:
        self.conn.close()

    def blockers(self, ddl: Ddl, replay: bool) -> list[index_jobs.IndexJob]:
        """The index builds still running downstream that `ddl` must wait for (empty: run it now)."""
        return self.index_ddl.blockers(ddl, replay)

    def execute(self, ddl: Ddl, replay: bool, checkpoint: tuple[int, dict] | None = None) -> str:
        """Run `ddl` (`replay`: it may have run before a crash, so "exists already" is its own
        earlier success), marked in flight first together with `checkpoint` (ts, position), the
        checkpoint past the DDL before it, not written yet.  Returns what happened."""
        try:
            return self._run(ddl, replay, checkpoint)
        except Exception as e:  # noqa: BLE001 - refused, lost or timed out: classify says which
            raise classify(e, "apply", self.changefeed_id, ddl=ddl, ddl_timeout=self.ddl_timeout) from None

    def _run(self, ddl: Ddl, replay: bool, checkpoint: tuple[int, dict] | None) -> str:
        statements = ddl.replacement
        sources = ddl.statements or [ddl.query]
        # a table created without indexes not built yet: what touches them edits their clauses instead
        edit = None if statements else pending_indexes.edit(self.changefeed_id, self.conn, ddl, sources)
        if edit is not None:
            sources = edit.statements
        # an online schema change's cut-over runs its ALTERs in order, each as any DDL; a statement
        # the downstream has no words for raises here, before anything is marked or runs
        queries = [] if statements else [s for q in sources
                                         for s in mariadb_only.for_flavour(replace(ddl, query=q), self.flavour,
                                                                           self.changefeed_id)]
        metastore.mark_ddl_in_flight(self.changefeed_id, ddl.commit_ts, checkpoint)
        ran = 0
        try:
            if statements:
                for q in statements:
                    execute_ddl(self.conn, q, ddl.default_schema, ddl.sql_mode, replay, ddl.session,
                                self.index_ddl.ddl_timeout)
                    ran += 1
                return f"replaced by {len(statements)} statement(s) (replace-ddl)"
            outcomes = []
            for q in queries:
                outcomes.append(self.index_ddl.execute(replace(ddl, query=q), replay))
                ran += 1
            outcome = ", ".join(outcomes) or f"not run: nothing of it applies to a {self.flavour} downstream"
            if edit is None:
                return outcome
            edit.record()  # once the statements ran: a crash before runs them again as a replay
            return edit.outcome(outcome)
        except pymysql.MySQLError as e:
            if ran == 0 and not replay and not is_retryable(e):
                # the server refused it, so it did not run: a rerun is no replay, and must not take
                # the same refusal ("exists already") for its own earlier success
                metastore.mark_ddl_in_flight(self.changefeed_id, None)
            raise
