"""The pending ADD INDEX jobs of a changefeed, in the metadata store.

A row is written when TiDB accepted an ADD INDEX / CREATE INDEX that cdcflow
did not wait for (or when TiDB showed a job of its own running on a table a
DDL is about to touch); it stays `pending` until a poll of ADMIN SHOW DDL JOBS
sees the job end, then becomes `done` or `failed`.  Any process (a restarted
Airflow worker, `cdcflow changefeed run`) resumes the wait from these rows.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from cdcflow.store.engine import engine
from cdcflow.store.tables import index_jobs

PENDING, DONE, FAILED = "pending", "done", "failed"


@dataclass(frozen=True)
class IndexJob:
    changefeed_id: str
    job_id: int
    commit_ts: int | None
    schema_name: str
    table_name: str
    index_name: str | None
    query: str | None
    status: str
    tidb_state: str | None
    error: str | None
    submitted_at: float
    checked_at: float | None

    @property
    def table(self) -> str:
        return f"{self.schema_name}.{self.table_name}"

    def what(self) -> str:
        index = f"index {self.index_name}" if self.index_name else "a DDL job"
        origin = f"commit ts {self.commit_ts}" if self.commit_ts is not None else "not submitted by cdcflow"
        return f"{index} on {self.table} (TiDB job {self.job_id}, {origin})"


def record(changefeed_id: str, job_id: int, *, commit_ts: int | None, schema: str, table: str, index_name: str | None,
           query: str | None, tidb_state: str | None) -> None:
    """Remember a job to wait for (again, if it is known already: a replay adopts it)."""
    now = time.time()
    with engine().begin() as c:
        c.delete(index_jobs, "changefeed_id = ? AND job_id = ?", changefeed_id, job_id)
        c.insert(index_jobs, dict(
            changefeed_id=changefeed_id, job_id=job_id, commit_ts=commit_ts, schema_name=schema, table_name=table,
            index_name=index_name, query=query, status=PENDING, tidb_state=tidb_state, submitted_at=now,
            checked_at=now))


def pending(changefeed_id: str) -> list[IndexJob]:
    with engine().connect() as c:
        rows = c.select(index_jobs, "changefeed_id = ? AND status = ?", changefeed_id, PENDING, order="job_id")
        return [IndexJob(**r) for r in rows.mappings()]


def mark(changefeed_id: str, job_id: int, status: str, tidb_state: str | None, error: str | None = None) -> None:
    with engine().begin() as c:
        c.update(index_jobs, dict(status=status, tidb_state=tidb_state, error=error, checked_at=time.time()),
                 "changefeed_id = ? AND job_id = ?", changefeed_id, job_id)
