"""TiDB's DDL jobs as `ADMIN SHOW DDL JOBS` reports them, and what their states mean.

`ADMIN SHOW DDL JOBS [NUM] [WHERE ...]` lists the queued and running jobs plus
the last NUM finished ones, with the columns of `COLUMNS` (CREATE_TIME is
missing before TiDB v6.x; later versions may add columns such as QUERY or
COMMENTS).  Rows are read by column name from the cursor's description, so
any of those shapes parses.  It needs the SUPER privilege: without it TiDB
answers with an access-denied error (1227).

Every function takes a DB-API connection (pymysql), so a real TiDB and a
recorded result set served by a stand-in go through the same code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pymysql

COLUMNS = ("JOB_ID", "DB_NAME", "TABLE_NAME", "JOB_TYPE", "SCHEMA_STATE", "SCHEMA_ID", "TABLE_ID",
           "ROW_COUNT", "CREATE_TIME", "START_TIME", "END_TIME", "STATE")

PENDING, DONE, FAILED = "pending", "done", "failed"

# TiDB's job STATE values (docs: ADMIN SHOW DDL JOBS) -> what cdcflow makes of them.
STATE_OUTCOME = {
    "none": PENDING,  # not started yet
    "queueing": PENDING,  # waiting for an earlier job
    "running": PENDING,
    "pausing": PENDING,  # ADMIN PAUSE DDL JOBS: waits for ADMIN RESUME DDL JOBS
    "paused": PENDING,
    "done": DONE,  # done on the owner, other TiDB instances not yet synced: the index is public
    "synced": DONE,
    "cancelling": FAILED,  # cannot end well any more
    "cancelled": FAILED,
    "rollingback": FAILED,
    "rollback done": FAILED,
}

# Errors that mean "this user may not run ADMIN SHOW DDL JOBS" (no SUPER privilege).
ACCESS_DENIED = {1044, 1142, 1227}

# How many finished jobs a lookup asks for; a job finished longer ago is checked
# through the table's indexes instead.
HISTORY = 64


@dataclass(frozen=True)
class DDLJob:
    job_id: int
    db_name: str
    table_name: str
    job_type: str
    schema_state: str
    state: str
    row_count: int = 0
    schema_id: int | None = None
    table_id: int | None = None
    create_time: str | None = None
    start_time: str | None = None
    end_time: str | None = None

    @property
    def outcome(self) -> str:
        state = self.state.strip().lower()
        if state not in STATE_OUTCOME:
            raise ValueError(f"TiDB DDL job {self.job_id} has state {self.state!r}, which cdcflow does not know")
        return STATE_OUTCOME[state]

    @property
    def is_add_index(self) -> bool:
        # 'add index', 'add index /* txn-merge */', 'add index /* ingest */', ...
        return self.job_type.strip().lower().startswith("add index")

    def on_table(self, schema: str, table: str) -> bool:
        # TiDB compares schema and table names case-insensitively
        return self.db_name.lower() == schema.lower() and self.table_name.lower() == table.lower()

    def describe(self) -> str:
        return (f"TiDB DDL job {self.job_id} ({self.job_type} on {self.db_name}.{self.table_name}): "
                f"state {self.state}, schema state {self.schema_state}, {self.row_count} rows"
                + (f", ended {self.end_time}" if self.end_time else ""))


def _text(v) -> str | None:
    if v is None:
        return None
    if isinstance(v, bytes):
        v = v.decode("utf-8", "replace")
    v = str(v)
    return None if v.upper() == "NULL" else v


def _int(v) -> int | None:
    v = _text(v)
    return int(v) if v not in (None, "") else None


def parse(description, rows) -> list[DDLJob]:
    """A result set of ADMIN SHOW DDL JOBS (cursor.description and rows) as jobs."""
    names = [d[0].upper() for d in description or ()]
    missing = [c for c in ("JOB_ID", "DB_NAME", "TABLE_NAME", "JOB_TYPE", "SCHEMA_STATE", "STATE") if c not in names]
    if missing:
        raise ValueError(f"ADMIN SHOW DDL JOBS answered without column(s) {', '.join(missing)}: {names}")
    jobs = []
    for row in rows:
        r = dict(zip(names, row))
        jobs.append(DDLJob(
            job_id=_int(r["JOB_ID"]), db_name=_text(r["DB_NAME"]) or "", table_name=_text(r["TABLE_NAME"]) or "",
            job_type=_text(r["JOB_TYPE"]) or "", schema_state=_text(r["SCHEMA_STATE"]) or "",
            state=_text(r["STATE"]) or "", row_count=_int(r.get("ROW_COUNT")) or 0,
            schema_id=_int(r.get("SCHEMA_ID")), table_id=_int(r.get("TABLE_ID")),
            create_time=_text(r.get("CREATE_TIME")), start_time=_text(r.get("START_TIME")),
            end_time=_text(r.get("END_TIME")),
        ))
    return jobs


def show_jobs(conn, num: int = HISTORY, where: str = "", args: tuple = ()) -> list[DDLJob]:
    sql = f"ADMIN SHOW DDL JOBS {int(num)}" + (f" WHERE {where}" if where else "")
    with conn.cursor() as cur:
        cur.execute(sql, args or None)
        return parse(cur.description, cur.fetchall())


def is_access_denied(e: Exception) -> bool:
    return isinstance(e, pymysql.MySQLError) and bool(e.args) and e.args[0] in ACCESS_DENIED


def can_show_jobs(conn) -> tuple[bool, str | None]:
    """Whether this session may run ADMIN SHOW DDL JOBS; else why not."""
    try:
        show_jobs(conn, 1)
        return True, None
    except pymysql.MySQLError as e:
        text = e.args[1] if len(e.args) > 1 else str(e)
        if is_access_denied(e):
            return False, f"the downstream user lacks the SUPER privilege that ADMIN SHOW DDL JOBS needs ({text})"
        return False, f"ADMIN SHOW DDL JOBS failed on the downstream ({text})"


def newest_job_id(conn) -> int:
    """The highest job id TiDB has handed out so far (job ids only grow)."""
    return max((j.job_id for j in show_jobs(conn, 1)), default=0)


def active_on(conn, schema: str, table: str) -> list[DDLJob]:
    """Jobs on this table that have not ended (queueing, running, paused, ...)."""
    jobs = show_jobs(conn, 1, "DB_NAME = %s AND TABLE_NAME = %s", (schema, table))
    # TiDB applies the WHERE itself; filtering again keeps the rule in one place
    return [j for j in jobs if j.on_table(schema, table) and j.outcome == PENDING]


def find(conn, job_id: int) -> DDLJob | None:
    jobs = show_jobs(conn, HISTORY, "JOB_ID = %s", (int(job_id),))
    return next((j for j in jobs if j.job_id == int(job_id)), None)


def submitted_after(conn, after_job_id: int, schema: str, table: str) -> DDLJob | None:
    """The ADD INDEX job this session submitted: the first one on the table past `after_job_id`."""
    jobs = show_jobs(conn, HISTORY, "DB_NAME = %s AND TABLE_NAME = %s", (schema, table))
    mine = sorted((j for j in jobs if j.job_id > after_job_id and j.on_table(schema, table) and j.is_add_index),
                  key=lambda j: j.job_id)
    return mine[0] if mine else None


def error_text(conn, job_id: int) -> str | None:
    """TiDB's own error for a failed job, from its DDL history (JSON job meta), when readable.

    The statement's error went to the session that submitted the job, which had
    already moved on; the history table keeps it.  Best effort: None when the
    table or the field is not readable.
    """
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT job_meta FROM mysql.tidb_ddl_history WHERE job_id = %s", (int(job_id),))
            row = cur.fetchone()
    except pymysql.MySQLError:
        return None
    if not row or row[0] is None:
        return None
    try:
        meta = json.loads(row[0].decode() if isinstance(row[0], bytes) else row[0])
    except (ValueError, UnicodeDecodeError):
        return None
    err = meta.get("err") if isinstance(meta, dict) else None
    if isinstance(err, dict):
        text = err.get("msg") or err.get("message") or err.get("Message")
        code = err.get("code")
        return f"[{code}] {text}" if text and code else text
    return err if isinstance(err, str) and err else None
