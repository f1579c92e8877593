"""A stand-in for a TiDB downstream, for tests: TiDB cannot run on these machines.

A real MariaDB server executes every statement except the few only TiDB can
answer, which come from recorded result sets instead:
- `SELECT VERSION()` answers a TiDB version string;
- `ADMIN SHOW DDL JOBS ...` answers the recorded set the test has put on show
  (or TiDB's access-denied error when the user is to lack SUPER);
- `SELECT job_meta FROM mysql.tidb_ddl_history` answers the recorded job meta;
- an index DDL sent on a connection with a read timeout (cdcflow's asynchronous
  submission) is applied to MariaDB, then the set named `on_submit` goes on show
  and, while that set shows the job unfinished, the client gets what pymysql
  raises when TiDB is still building after the read timeout (error 2013).
A row statement on a sequence is refused, as TiDB refuses it (its sequences are no tables:
error 1347, "is not BASE TABLE"); MariaDB, underneath, would take it.
It also notes every DDL sent to a table while the set on show has a job
queueing or running on it: TiDB would queue such a DDL behind the job, the
double submission cdcflow must never make.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pymysql

from cdcflow.ddl.classify import DDLParseError, classify
from cdcflow.ddl.lexer import first_word
from cdcflow.sink.async_index import ASYNC_TYPES
from cdcflow.sink.tidb_ddl_jobs import DDLJob, parse

VERSION = "8.0.11-TiDB-v8.5.1"
_DDL_VERBS = frozenset({"ALTER", "CREATE", "DROP", "RENAME", "TRUNCATE"})
# the table a row statement as cdcflow writes it acts on: `schema`.`table`
_ROW_TARGET = re.compile(r"^(?:INSERT(?:\s+IGNORE)?\s+INTO|REPLACE\s+INTO|UPDATE|DELETE\s+FROM)\s+`((?:[^`]|``)+)`\.`((?:[^`]|``)+)`",
                         re.IGNORECASE)


def _ddl_targets(text: str) -> tuple[set[str], bool] | None:
    """(the names of the tables DDL `text` acts on, whether TiDB runs it as an ADD INDEX job);
    None when it is no DDL.  Tables are matched by name only, so any default schema will do."""
    if first_word(text) not in _DDL_VERBS:
        return None
    try:
        info = classify(text, "standin")
    except DDLParseError:
        return set(), False
    return {t.table.lower() for t in info.tables}, info.type in ASYNC_TYPES


class TiDBStandIn:
    def __init__(self, recorded: Path | dict, real_connect, *, show: str = "before", on_submit: str | None = None,
                 super_privilege: bool = True):
        self.recorded = json.loads(Path(recorded).read_text()) if not isinstance(recorded, dict) else recorded
        self.real_connect = real_connect
        self.showing = show
        self.on_submit = on_submit
        self.super_privilege = super_privilege
        self.statements: list[str] = []  # every DDL sent to it, in order
        self.async_submissions: list[str] = []  # index DDL sent on a connection with a read timeout
        self.queued_behind: list[tuple[str, int]] = []  # (DDL, job id) sent while a job ran on its table

    def show(self, name: str) -> None:
        if name not in self.recorded["sets"]:
            raise KeyError(f"no recorded set {name!r}")
        self.showing = name

    def jobs(self) -> list[DDLJob]:
        return parse([(c,) for c in self.recorded["columns"]], self.recorded["sets"][self.showing])

    def connect(self, sink: dict, **kw) -> "_Conn":
        return _Conn(self, self.real_connect(sink, **kw), kw.get("read_timeout"))


class _Conn:
    def __init__(self, standin: TiDBStandIn, real, read_timeout):
        self.standin, self.real, self.read_timeout = standin, real, read_timeout

    @property
    def _read_timeout(self):
        # the sink sets a statement's read timeout on the connection (sink.connection.read_timeout)
        return self.real._read_timeout

    @_read_timeout.setter
    def _read_timeout(self, seconds) -> None:
        self.real._read_timeout = seconds

    def cursor(self) -> "_Cursor":
        return _Cursor(self)

    def close(self) -> None:
        self.real.close()

    def __getattr__(self, name):  # begin, commit, rollback, server_status: the real connection's
        return getattr(self.real, name)


class _Cursor:
    def __init__(self, conn: _Conn):
        self.conn = conn
        self.real = conn.real.cursor()
        self._rows: list[tuple] | None = None
        self._description = None

    def __enter__(self) -> "_Cursor":
        return self

    def __exit__(self, *exc) -> None:
        self.real.close()

    @property
    def description(self):
        return self._description if self._rows is not None else self.real.description

    def _answer(self, columns, rows) -> None:
        self._description = tuple((c, None, None, None, None, None, None) for c in columns)
        self._rows = [tuple(r) for r in rows]

    def execute(self, sql: str, args=None):
        s, text = self.conn.standin, sql.strip()
        upper = " ".join(text.upper().split())
        self._rows = None
        if upper.startswith("SELECT VERSION()"):
            return self._answer(["VERSION()"], [(VERSION,)])
        if upper.startswith("ADMIN SHOW DDL JOBS"):
            if not s.super_privilege:
                raise pymysql.err.OperationalError(
                    1227, "Access denied; you need (at least one of) the SUPER privilege(s) for this operation")
            return self._answer(s.recorded["columns"], s.recorded["sets"][s.showing])
        if "MYSQL.TIDB_DDL_HISTORY" in upper:
            meta = s.recorded.get("ddl_history_job_meta", {}).get(s.showing)
            return self._answer(["job_meta"], [(json.dumps(meta),)] if meta else [])
        target = _ROW_TARGET.match(text)
        if target and self._is_sequence(*(part.replace("``", "`") for part in target.groups())):
            raise pymysql.err.OperationalError(1347, f"'{target.group(1)}.{target.group(2)}' is not BASE TABLE")
        names, index_ddl = _ddl_targets(text) or (None, False)
        if names is not None:
            s.statements.append(text)
            for job in s.jobs():
                if job.outcome == "pending" and job.table_name.lower() in names:
                    s.queued_behind.append((text, job.job_id))
        result = self.real.execute(sql, args)
        if self.conn.read_timeout is not None and index_ddl:
            s.async_submissions.append(text)
            if s.on_submit:
                s.show(s.on_submit)
            if any(j.outcome == "pending" and j.is_add_index for j in s.jobs()):
                self.conn.real.close()
                raise pymysql.err.OperationalError(2013, "Lost connection to MySQL server during query (timed out)")
        return result

    def _is_sequence(self, schema: str, table: str) -> bool:
        with self.conn.real.cursor() as cur:
            cur.execute("SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s "
                        "AND TABLE_TYPE = 'SEQUENCE'", (schema, table))
            return cur.fetchone() is not None

    def fetchone(self):
        if self._rows is not None:
            return self._rows.pop(0) if self._rows else None
        return self.real.fetchone()

    def fetchall(self):
        if self._rows is not None:
            rows, self._rows = self._rows, []
            return rows
        return self.real.fetchall()

    def __getattr__(self, name):
        return getattr(self.real, name)
