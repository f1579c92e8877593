"""ADD INDEX / CREATE INDEX on a TiDB downstream without waiting for the index build.

TiCDC's DDL-replication doc: on a TiDB downstream TiCDC sends ADD INDEX and CREATE INDEX and returns
at once, so later DML is not held up; since v8.4.0, with the SUPER privilege, it
polls ADMIN SHOW DDL JOBS and lets the next DDL on that table run only once the
index is built, because that DDL would otherwise sit in `queueing` and be sent
again and again until the changefeed fails.

How cdcflow does it:
- the index DDL is sent on a connection of its own that stops reading after
  `SUBMIT_WAIT` seconds.  TiDB runs DDL as jobs of its owner, which carry on when
  the client that sent them goes away (TiCDC's MySQL sink relies on the same).  A
  statement that returns within the wait was simply applied; otherwise the job is
  looked up in ADMIN SHOW DDL JOBS (the first ADD INDEX on the table with a job id
  above the newest one before sending) and kept in the metadata store as pending;
- before any later DDL on that table (or a schema-level DDL on its schema), the
  pending jobs are polled; while one still runs, apply stops at that DDL's barrier
  (checkpoint just below it) and the DAG's wait_index sensor takes over;
- before any DDL on TiDB, a job TiDB still shows queueing or running on a table the
  DDL touches is waited for as well, never joined by a second submission; on a
  replay, such a job that is this very ADD INDEX is adopted instead of sent again;
- without the SUPER privilege (or on MySQL/MariaDB, where index DDL is
  synchronous) every DDL runs synchronously, and the log says why.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import pymysql

from cdcflow.core.errors import ASYNC_INDEX_FAILED, ASYNC_INDEX_UNKNOWN, CdcflowError
from cdcflow.ddl import table_def
from cdcflow.ddl import types as T
from cdcflow.ddl.classify import classify
from cdcflow.ddl.lexer import tokenize
from cdcflow.sink import connection, ddl_exec, downstream, tidb_ddl_jobs
from cdcflow.sink.tidb_ddl_jobs import DONE, FAILED
from cdcflow.store import index_jobs

log = logging.getLogger("cdcflow")

ASYNC_TYPES = (T.ADD_INDEX,)  # both ALTER TABLE ... ADD INDEX and CREATE INDEX
SUBMIT_WAIT = 10.0  # seconds an index DDL may take before cdcflow stops waiting for it (TiCDC: 10 s)
FIND_ATTEMPTS, FIND_PAUSE = 10, 0.5  # looking the submitted job up in ADMIN SHOW DDL JOBS
LOST_DURING_QUERY = 2013  # what pymysql raises when read_timeout passes

def index_name(query: str, sql_mode: str | None = "") -> str | None:
    """The index an ADD INDEX / CREATE INDEX names (None for `ADD INDEX (col)`)."""
    return table_def.index_name(tokenize(query, sql_mode))


class IndexBuildFailed(CdcflowError):
    def __init__(self, job: index_jobs.IndexJob, tidb: tidb_ddl_jobs.DDLJob | None, text: str | None,
                 changefeed_id: str):
        state = tidb.state if tidb else "gone"
        cause = text or (tidb.describe() if tidb else "TiDB no longer lists the job and the index is missing")
        super().__init__(
            f"TiDB could not build {job.what()}: the job ended {state}: {cause}",
            changefeed=changefeed_id, ts=job.commit_ts, statement=job.query, code=ASYNC_INDEX_FAILED,
            hint=f"the rows after it are applied; fix the cause downstream (e.g. duplicate values for a UNIQUE "
                 f"index), create the index there by hand if it is still wanted, then "
                 f"`cdcflow changefeed resume -c {changefeed_id}`",
        )


def poll(conn, changefeed_id: str, jobs: list[index_jobs.IndexJob]) -> list[index_jobs.IndexJob]:
    """Look each job up once; mark the ones that ended.  Returns those still running;
    raises IndexBuildFailed for one that was cancelled or rolled back."""
    still = []
    for job in jobs:
        seen = tidb_ddl_jobs.find(conn, job.job_id)
        if seen is None:
            # not among the running jobs nor the recent history: it ended long ago
            built = job.index_name is None or _has_index(conn, job.schema_name, job.table_name, job.index_name)
            outcome, state = (DONE, "finished") if built else (FAILED, None)
        else:
            outcome, state = seen.outcome, seen.state
        if outcome == DONE:
            index_jobs.mark(changefeed_id, job.job_id, index_jobs.DONE, state)
            log.info("changefeed %s: %s is built (%s)", changefeed_id, job.what(), state)
        elif outcome == FAILED:
            text = tidb_ddl_jobs.error_text(conn, job.job_id)
            err = IndexBuildFailed(job, seen, text, changefeed_id)
            index_jobs.mark(changefeed_id, job.job_id, index_jobs.FAILED, state, err.message)
            raise err
        else:
            index_jobs.mark(changefeed_id, job.job_id, index_jobs.PENDING, state)
            still.append(job)
    return still


def poll_downstream(redacted: str, sink: dict, changefeed_id: str,
                    jobs: list[index_jobs.IndexJob]) -> list[index_jobs.IndexJob]:
    """poll on a session of its own to the downstream `sink` (`redacted`: its URI for errors); a
    downstream that cannot be reached is connection.open_downstream's DOWNSTREAM_UNREACHABLE."""
    conn = connection.open_downstream(redacted, sink)
    try:
        return poll(conn, changefeed_id, jobs)
    finally:
        conn.close()


def _has_index(conn, schema: str, table: str, name: str) -> bool:
    with conn.cursor() as cur:
        cur.execute("SELECT 1 FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s "
                    "AND INDEX_NAME = %s LIMIT 1", (schema, table, name))
        return cur.fetchone() is not None


class IndexDDL:
    """Runs the DDL of one apply on one downstream connection, the TiDB way where it applies."""

    def __init__(self, changefeed_id: str, conn, sink: dict, kind: str, can_poll: bool, why_sync: str | None,
                 submit_wait: float = SUBMIT_WAIT, version: str = "", ddl_timeout: float | None = None):
        self.changefeed_id, self.conn, self.sink, self.version = changefeed_id, conn, sink, version
        self.ddl_timeout = ddl_timeout  # a synchronous DDL's read timeout (the sink's ddl-timeout)
        self.kind, self.can_poll, self.why_sync = kind, can_poll, why_sync
        self.submit_wait = submit_wait
        self._adopted: dict[int, tidb_ddl_jobs.DDLJob] = {}

    @classmethod
    def open(cls, changefeed_id: str, conn, sink: dict, scheme: str, ddl_timeout: float | None,
             event: Callable[..., None]) -> "IndexDDL":
        """The index DDL of `conn`, a connection to the downstream `sink` of URI scheme `scheme`:
        what the downstream is decides whether index DDL may run asynchronously, and
        `event(what, **fields)` is told."""
        kind, version = downstream.detect(conn, scheme)
        can_poll, why = False, None
        if kind == downstream.TIDB:
            can_poll, why = tidb_ddl_jobs.can_show_jobs(conn)
            if not can_poll:
                why = f"ADD INDEX and CREATE INDEX run synchronously: {why}"
                log.warning("changefeed %s: %s", changefeed_id, why)
        event("downstream", kind=kind, version=version, async_index=can_poll, why_sync=why)
        return cls(changefeed_id, conn, sink, kind, can_poll, why, version=version, ddl_timeout=ddl_timeout)

    def is_async(self, ddl) -> bool:
        return self.can_poll and ddl.type in ASYNC_TYPES and len(ddl.tables) == 1

    def blockers(self, ddl, replay: bool) -> list[index_jobs.IndexJob]:
        """The jobs this DDL must wait for (empty: run it now).  Polls them first."""
        if self.kind != downstream.TIDB:
            return []
        tables, schema = _touched(ddl)
        waiting = [j for j in index_jobs.pending(self.changefeed_id)
                   if (j.schema_name.lower(), j.table_name.lower()) in tables
                   or (schema is not None and j.schema_name.lower() == schema)]
        if waiting and not self.can_poll:
            raise CdcflowError(
                f"{len(waiting)} index job(s) on tables this DDL touches may still run, and ADMIN SHOW DDL JOBS "
                f"cannot be read: {self.why_sync}", ts=ddl.commit_ts, statement=ddl.query,
                code=ASYNC_INDEX_UNKNOWN,
                hint="grant the downstream user SUPER again; the next cycle retries")
        still = poll(self.conn, self.changefeed_id, waiting)
        if not self.can_poll:
            return still
        known = {j.job_id for j in still}
        for s, t in sorted(tables):
            for job in tidb_ddl_jobs.active_on(self.conn, s, t):
                if job.job_id in known:
                    continue
                mine = replay and self.is_async(ddl) and job.is_add_index
                index_jobs.record(self.changefeed_id, job.job_id, commit_ts=ddl.commit_ts if mine else None,
                                  schema=job.db_name, table=job.table_name,
                                  index_name=index_name(ddl.query, ddl.sql_mode) if mine else None,
                                  query=ddl.query if mine else None, tidb_state=job.state)
                if mine:  # this ADD INDEX, sent before a crash: wait for it like any other, never send it twice
                    self._adopted[ddl.commit_ts] = job
                    log.info("changefeed %s: adopting %s instead of sending it again", self.changefeed_id,
                             job.describe())
                    continue
                known.add(job.job_id)
                still.extend(j for j in index_jobs.pending(self.changefeed_id) if j.job_id == job.job_id)
        return still

    def execute(self, ddl, replay: bool) -> str:
        if not self.is_async(ddl):
            return ddl_exec.execute_ddl(self.conn, ddl.query, ddl.default_schema, ddl.sql_mode, replay, ddl.session,
                                        self.ddl_timeout)
        if ddl.commit_ts in self._adopted:
            return "submitted before; still building"
        schema, table = ddl.tables[0]
        before = tidb_ddl_jobs.newest_job_id(self.conn)
        submitter = connection.connect(self.sink, read_timeout=self.submit_wait)
        try:
            return ddl_exec.execute_ddl(submitter, ddl.query, ddl.default_schema, ddl.sql_mode, replay, ddl.session)
        except pymysql.err.OperationalError as e:
            if not (e.args and e.args[0] == LOST_DURING_QUERY):
                raise
        finally:
            try:
                submitter.close()
            except pymysql.MySQLError:
                pass  # the connection that timed out is gone already
        job = None
        for _ in range(FIND_ATTEMPTS):
            job = tidb_ddl_jobs.submitted_after(self.conn, before, schema, table)
            if job is not None:
                break
            time.sleep(FIND_PAUSE)
        if job is None:
            raise CdcflowError(
                f"the index DDL was sent to TiDB but ADMIN SHOW DDL JOBS shows no ADD INDEX job on {schema}.{table} "
                f"after job {before}", ts=ddl.commit_ts, statement=ddl.query,
                code=ASYNC_INDEX_UNKNOWN,
                hint="the next cycle sends it again (a replay tolerates an index that exists already)")
        index_jobs.record(self.changefeed_id, job.job_id, commit_ts=ddl.commit_ts, schema=schema, table=table,
                          index_name=index_name(ddl.query, ddl.sql_mode), query=ddl.query,
                          tidb_state=job.state)
        still = poll(self.conn, self.changefeed_id,
                     [j for j in index_jobs.pending(self.changefeed_id) if j.job_id == job.job_id])
        return f"submitted as TiDB job {job.job_id}; still building" if still else "applied"


def _touched(ddl) -> tuple[set[tuple[str, str]], str | None]:
    """(schema, table) pairs a DDL names, lower-cased; and its schema when it is schema-level."""
    tables = {(s.lower(), t.lower()) for s, t in ddl.tables}
    if tables:
        return tables, None
    try:
        info = classify(ddl.query, ddl.default_schema, ddl.sql_mode or "")
    except CdcflowError:
        return tables, None
    return tables, (info.schema.lower() if info.is_schema_level and info.schema else None)
