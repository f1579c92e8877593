"""The one exception type a user can cause, its message format, the code table, and the one
classifier of every other exception a stage meets (classify).

Every message names the changefeed, the commit ts and the statement or key
where they are known, and says what to do.  `retryable` decides the state
transition: warning (retry later) or failed (stop until an operator acts); the
code decides it (TiCDC: pkg/errors holds the codes, ShouldFailChangefeed and
IsRetryableError the classes).
"""

from __future__ import annotations

import re
from typing import Protocol

from cdcflow.core.failures import SinkError, error_code, is_retryable, is_timeout, spark_connect_lost
from cdcflow.core.privileges import missing_privilege


class Code(str):
    """An error code: the text users see (TiCDC's `CDCFLOW:Err…` shape), whether an error of
    this kind is retryable, and what it means."""

    retryable: bool
    meaning: str

    def __new__(cls, name: str, retryable: bool, meaning: str) -> "Code":
        code = super().__new__(cls, f"CDCFLOW:{name}")
        code.retryable, code.meaning = retryable, meaning
        return code

    def __reduce__(self):  # a code travels to a child process (core.child_calls) whole
        return Code, (self.removeprefix("CDCFLOW:"), self.retryable, self.meaning)


# Every code cdcflow raises, with its class: retryable ones put a changefeed in warning (③),
# the others fail it (⑥).  Commands refused at the CLI carry a code but change no state.
# The error reference (docs/reference/errors.md) is generated from it with REMEDIES below.
#            name                                retryable  meaning
GENERIC = Code("ErrGeneric",                     False, "an error with no more specific code")
INVALID_CONFIG = Code("ErrInvalidConfig",        False, "a spec, config, URI or filter rule the user wrote is invalid")
CHANGEFEED_NOT_EXISTS = Code("ErrChangeFeedNotExists", False, "no changefeed of that id")
CHANGEFEED_ALREADY_EXISTS = Code("ErrChangeFeedAlreadyExists", False, "create with an id already taken")
CHANGEFEED_STATE = Code("ErrChangefeedState",    False, "a command or event the changefeed's state does not allow")
CHANGEFEED_UPDATE_REFUSED = Code("ErrChangefeedUpdateRefused", False, "update while running, or to nothing")
CLI_ABORTED = Code("ErrCliAborted",              False, "the operator answered no")
CLI_INVALID_CHECKPOINT_TS = Code("ErrCliInvalidCheckpointTs", False, "--overwrite-checkpoint-ts is not positive")
CLI_CHECKPOINT_TS_IN_FUTURE = Code("ErrCliCheckpointTsIsInFuture", False, "--overwrite-checkpoint-ts is in the future")
CLI_START_TS_IN_FUTURE = Code("ErrCliStartTsIsInFuture", False, "--start-ts is later than the current TSO")
GC_TTL_EXCEEDED = Code("ErrGCTTLExceeded",       False, "stopped or failed longer than gc-ttl")
SNAPSHOT_LOST_BY_GC = Code("ErrSnapshotLostByGC", False, "the upstream purged the binlog at the checkpoint")
START_TS_BEFORE_GC = Code("ErrStartTsBeforeGC",  False, "a new start-ts older than the oldest binlog held")
SOURCE_BEHIND_CHECKPOINT = Code("ErrSourceBehindCheckpoint", False,
                                "a new source lacks transactions the checkpoint's GTID position holds")
CHECKPOINT_GTID_NOT_IN_SOURCE = Code("ErrCheckpointGTIDNotInSource", False,
                                     "a new source's binlog cannot continue the checkpoint's GTID position")
UPSTREAM_UNREACHABLE = Code("ErrUpstreamUnreachable", True, "cannot connect to the upstream")
UPSTREAM_BINLOG = Code("ErrUpstreamBinlog", False,
                       "the upstream's binlog is off, not ROW / FULL / FULL, or in a form the reader does not read")
DOWNSTREAM_UNREACHABLE = Code("ErrDownstreamUnreachable", True, "cannot connect to the downstream in a cycle")
CREDENTIAL_UNRESOLVED = Code("ErrCredentialUnresolved", True, "a URI's password-env / airflow-conn-id names nothing")
MYSQL_CONNECTION_ERROR = Code("ErrMySQLConnectionError", True, "cannot connect to the sink at create / update")
MYSQL_TXN_ERROR = Code("ErrMySQLTxnError",       True, "the downstream refused rows (retried, as TiCDC retries its sink)")
TABLE_NOT_EXISTS = Code("ErrTableNotExists",     True, "a replicated table is missing downstream")
DOWNSTREAM_PRIVILEGE = Code("ErrDownstreamPrivilege", True,
                            "the sink URI's user lacks a privilege a statement needs (access denied)")
EXEC_DDL_FAILED = Code("ErrExecDDLFailed",       False, "the downstream refused a DDL")
EXEC_DDL_INTERRUPTED = Code("ErrExecDDLInterrupted", True,
                            "a DDL the downstream lost or held (connection lost, lock wait, deadlock)")
DDL_UNPARSEABLE = Code("ErrDDLUnparseable",      False, "a DDL statement cdcflow cannot classify")
ROW_CHANGE_AS_STATEMENT = Code("ErrRowChangeAsStatement", False, "a row change logged as a statement (binlog_format STATEMENT)")
CASCADING_FOREIGN_KEY = Code("ErrCascadingForeignKey", False, "a cascading key's child replicated, its parent not")
DDL_UNSUPPORTED_DOWNSTREAM = Code("ErrDDLUnsupportedDownstream", False, "a DDL the downstream kind cannot run")
SYNC_RENAME_TABLE_FAILED = Code("ErrSyncRenameTableFailed", False, "a RENAME the filter rules forbid")
ONLINE_DDL_UNFOLLOWED = Code("ErrOnlineDDLUnfollowed", False, "an online schema change cdcflow cannot follow")
VALID_INDEX_CHANGED = Code("ErrValidIndexChanged", False, "a DDL that changes a table's valid index")
EXPRESSION_COLUMN_ABSENT = Code("ErrExpressionColumnAbsent", False, "an event filter expression names a missing column")
ASYNC_INDEX_FAILED = Code("ErrAsyncIndexFailed", False, "TiDB could not build an index added asynchronously")
ASYNC_INDEX_UNKNOWN = Code("ErrAsyncIndexUnknown", True, "the state of an asynchronous index build cannot be read")
SPARK_UNAVAILABLE = Code("ErrSparkUnavailable", True, "the Spark Connect server is down or lost the stage's session")
LEASE_HELD = Code("ErrLeaseHeld",                True, "another cycle of the changefeed runs")
CYCLE_SUPERSEDED = Code("ErrCycleSuperseded",    False, "a stage of a cycle another cycle replaced: it stops, changing nothing")
CYCLE_INTERRUPTED = Code("ErrCycleInterrupted",  True, "a cycle its operator interrupted (Ctrl-C, SIGINT) in a stage")
SNAPSHOT_UNSUPPORTED = Code("ErrSnapshotUnsupported", False, "--snapshot on an upstream it cannot take a consistent point of")
SNAPSHOT_FAILED = Code("ErrSnapshotFailed",    True, "the initial copy failed; create --snapshot again continues it")
SNAPSHOT_INDEX_FAILED = Code("ErrSnapshotIndexFailed", False, "an index a snapshot deferred could not be built downstream")
SNAPSHOT_REFUSED = Code("ErrSnapshotRefused",  False, "a snapshot of a changefeed that is not stopped (or failed)")
TABLE_COPY_REFUSED = Code("ErrTableCopyRefused", False, "add-tables or resync-tables of a table that cannot join that way")
TABLE_COPY_FAILED = Code("ErrTableCopyFailed",  True, "a chunk of a table joining a running changefeed failed to copy")
TABLE_COPY_INDEX_FAILED = Code("ErrTableCopyIndexFailed", False,
                               "an index a table joining a running changefeed deferred could not be built downstream")
STAGE_FAILED = Code("ErrStageFailed",            True, "a stage failed unexpectedly")
STAGE_BUG = Code("ErrStageBug",                  False, "a stage failed on a ValueError or TypeError: a bug no retry fixes")
API_INVALID_PARAM = Code("ErrAPIInvalidParam",    False, "an HTTP API request parameter is invalid")
TASK_FAILED = Code("ErrTaskFailed",              True, "an Airflow task of the cycle failed")
AIRFLOW_POOL_MISSING = Code("ErrAirflowPoolMissing", False, "a trigger while Airflow lacks the pool of the Spark tasks")

CODES: dict[str, Code] = {c: c for c in globals().values() if isinstance(c, Code)}

# What an operator does about each code: the error reference (docs/reference/errors.md, generated
# by cdcflow_devtools.docs_reference) shows it beside the class; tests/core/test_errors.py checks
# that every code has one.  An error's own hint says the same for its case, with its names.
REMEDIES: dict[str, str] = {
    GENERIC: "read the message; `cdcflow --debug` shows the trace",
    INVALID_CONFIG: "fix the key, URI, filter rule or expression the message names; `update --config` "
                    "(paused), then `resume`",
    CHANGEFEED_NOT_EXISTS: "`cdcflow changefeed list -a` shows the ids; check CDCFLOW_HOME",
    CHANGEFEED_ALREADY_EXISTS: "choose another id, or `remove` the old changefeed first",
    CHANGEFEED_STATE: "the message says which commands the state takes (pause first, or resume)",
    CHANGEFEED_UPDATE_REFUSED: "pause the changefeed, then update it; give a change",
    CLI_ABORTED: "nothing changed; run the command again and answer y, or give --no-confirm",
    CLI_INVALID_CHECKPOINT_TS: "give a positive TSO, a date-time or `now`",
    CLI_CHECKPOINT_TS_IN_FUTURE: "give a ts at or before the current one (`cdcflow tso query`)",
    CLI_START_TS_IN_FUTURE: "give a ts at or before the current one (`cdcflow tso query`)",
    GC_TTL_EXCEEDED: "`resume --overwrite-checkpoint-ts` at a point the upstream still holds, or re-create "
                     "the changefeed (with `--snapshot`)",
    SNAPSHOT_LOST_BY_GC: "`resume --overwrite-checkpoint-ts` at a point the upstream still holds, or re-create "
                         "the changefeed (with `--snapshot`); keep binlogs longer",
    START_TS_BEFORE_GC: "give a start-ts within the binlogs the upstream holds, or create with `--snapshot`",
    SOURCE_BEHIND_CHECKPOINT: "promote the replica that has everything, let this one catch up first, or "
                              "re-create the changefeed with `--snapshot`",
    CHECKPOINT_GTID_NOT_IN_SOURCE: "move only within one replication topology to a server that holds the "
                                   "binlog after the checkpoint; else re-create with `--snapshot`",
    UPSTREAM_UNREACHABLE: "none needed when it comes back: the next cycle after the backoff retries",
    UPSTREAM_BINLOG: "set binlog_format=ROW, binlog_row_image=FULL, binlog_row_metadata=FULL on the upstream, "
                     "and leave binlog_row_value_options empty and log_bin_compress OFF",
    DOWNSTREAM_UNREACHABLE: "none needed when it comes back: the next cycle after the backoff retries",
    CREDENTIAL_UNRESOLVED: "set the environment variable or create the Airflow connection the URI names; for a "
                           "changefeed Airflow runs, a password-env variable must be in the environment its "
                           "processes start with: use an Airflow connection (`?airflow-conn-id=`) there",
    MYSQL_CONNECTION_ERROR: "check the sink URI, the server and the login; run the command again",
    MYSQL_TXN_ERROR: "fix the downstream (a column, a key, a value it cannot hold, a table gone); the next "
                     "cycle after the backoff writes the rows",
    TABLE_NOT_EXISTS: "create (or load) the table downstream, or exclude it with a filter rule; to copy it with "
                      "its rows: `cdcflow changefeed resync-tables` (or `create --snapshot` a new changefeed)",
    DOWNSTREAM_PRIVILEGE: "run the GRANT the message gives on the downstream as an administrator; the next cycle "
                          "after the backoff goes on (the privileges: docs/getting-started.md)",
    EXEC_DDL_FAILED: "run the change downstream by hand, then `skip-ddl` (or `replace-ddl`), then `resume`",
    EXEC_DDL_INTERRUPTED: "none: the next cycle runs it again (one that did run is taken as a replay)",
    DDL_UNPARSEABLE: "apply the statement downstream by hand, then `skip-ddl` (or `replace-ddl`), then `resume`",
    ROW_CHANGE_AS_STATEMENT: "binlog_format=ROW for every session; repair the rows downstream by hand, "
                             "`skip-ddl` the statement, `resume`",
    CASCADING_FOREIGN_KEY: "replicate the parent too, leave the child out, or make the key RESTRICT / NO ACTION",
    DDL_UNSUPPORTED_DOWNSTREAM: "the message names the way past it; then `skip-ddl` (or `replace-ddl`), `resume`",
    SYNC_RENAME_TABLE_FAILED: "rename the replicated tables downstream by hand as the statement did, then "
                              "`skip-ddl` it and `resume`",
    ONLINE_DDL_UNFOLLOWED: "run the change on the downstream's table by hand, then `skip-ddl` (or `replace-ddl`)",
    VALID_INDEX_CHANGED: "copy the table and skip the DDL, or set force-replicate",
    EXPRESSION_COLUMN_ABSENT: "fix the event filter's expression (`update --config`), then `resume`",
    ASYNC_INDEX_FAILED: "fix the cause downstream (TiDB's error names it), then `resume`",
    ASYNC_INDEX_UNKNOWN: "none needed when TiDB answers again (ADMIN SHOW DDL JOBS needs SUPER)",
    SPARK_UNAVAILABLE: "start the Spark Connect server again; the next cycle after the backoff retries",
    LEASE_HELD: "none: the next cycle runs once the other one ends",
    CYCLE_SUPERSEDED: "none: the changefeed goes on in the cycle that replaced it",
    CYCLE_INTERRUPTED: "none: the changefeed's state is as it was; the next run goes on from its checkpoint",
    SNAPSHOT_UNSUPPORTED: "grant the source user RELOAD and REPLICATION CLIENT, or use snapshot-point "
                          "consistent-snapshot on MariaDB",
    SNAPSHOT_FAILED: "`create --snapshot` again (or trigger mode snapshot again) continues the copy",
    SNAPSHOT_INDEX_FAILED: "fix the rows the message names downstream, then `resume`: the next cycle builds "
                           "what is left",
    SNAPSHOT_REFUSED: "pause the changefeed first",
    TABLE_COPY_REFUSED: "do what the message says for the table it names; nothing was recorded",
    TABLE_COPY_FAILED: "fix the cause the message names; the next cycle copies on from the chunk that failed",
    TABLE_COPY_INDEX_FAILED: "fix the rows the message names downstream, then `resume`: the next cycle builds "
                             "what is left; or `resync-tables` the table",
    STAGE_FAILED: "read the message; the next cycle after the backoff retries",
    STAGE_BUG: "a bug no retry fixes: report it with the message and `cdcflow --debug`'s trace",
    API_INVALID_PARAM: "fix the request parameter the message names",
    TASK_FAILED: "read the failed task's log; the next cycle after the backoff retries",
    AIRFLOW_POOL_MISSING: "create the pool: `make airflow-bootstrap` (airflow_settings.yaml), or "
                          "`airflow pools set cdcflow_spark 2 'cdcflow Spark work'`; then trigger again",
}


class CdcflowError(Exception):
    def __init__(
        self,
        message: str,
        *,
        changefeed: str | None = None,
        ts: int | None = None,
        statement: str | None = None,
        hint: str | None = None,
        code: str = GENERIC,
        retryable: bool | None = None,
    ):
        """`retryable` is the code's class; it is given only where an error is rebuilt from what
        was recorded of it (a run's stored error), which keeps the class it was raised with."""
        super().__init__(message)
        self.message = message
        self.changefeed = changefeed
        self.ts = ts
        self.statement = statement
        self.hint = hint
        self.remedy = hint  # the hint alone: kept when an error is rebuilt from its record (stages.finish),
        # whose message already ends with it
        self.code = str(code)  # plain text: it is stored and compared as such
        if retryable is None:
            retryable = bool(getattr(CODES.get(code), "retryable", False))
        self.retryable = retryable

    def with_context(self, *, changefeed: str | None = None, ts: int | None = None) -> "CdcflowError":
        """Fill in what the raiser could not know (it returns self, for `raise e.with_context(...)`)."""
        if changefeed and not self.changefeed:
            self.changefeed = changefeed
        if ts is not None and self.ts is None:
            self.ts = ts
        return self

    def __str__(self) -> str:
        parts = []
        if self.changefeed:
            parts.append(f"changefeed {self.changefeed}")
        if self.ts is not None:
            parts.append(f"commit ts {self.ts}")
        head = (", ".join(parts) + ": ") if parts else ""
        text = head + self.message
        if self.statement:
            stmt = " ".join(self.statement.split())
            if len(stmt) > 300:
                stmt = stmt[:297] + "..."
            text += f" [statement: {stmt}]"
        if self.hint:
            text += f" — {self.hint}"
        return text

    def to_dict(self) -> dict:
        return {"code": self.code, "message": str(self), "retryable": self.retryable, "hint": self.remedy}


class ConfigError(CdcflowError):
    """A changefeed spec or config the user wrote is invalid: never retryable."""

    def __init__(self, message: str, **kw):
        kw.setdefault("code", INVALID_CONFIG)
        super().__init__(message, **kw)


# -- classify: any exception a stage meets, as a CdcflowError with a code and so a class

# the stages that talk to the downstream; the others read the upstream
DOWNSTREAM_STAGES = ("apply", "wait_index")
TIMEOUT_HINT = ("check that the {side} runs and is not frozen or overloaded; the checkpoint has not passed these "
                "rows and the next cycle retries after the backoff (raise read-timeout / write-timeout on the "
                "{side} URI if its statements legitimately take longer)")
# a row the downstream refused (SinkError), by what the refusal was
ROW_REFUSED_HINTS = {
    "timed_out": TIMEOUT_HINT.format(side="sink"),
    "value_error": "the downstream column cannot hold the upstream's value: widen it (or change its type) "
                   "downstream; the checkpoint has not passed the row and the next cycle writes it after the "
                   "backoff",
    None: "the checkpoint has not passed these rows; fix the downstream table and the next cycle writes them "
          "after the backoff",
}


class FailedDdl(Protocol):
    """What classify reads of a DDL that failed downstream (stages.contracts.DdlEntry is one)."""

    name: str
    commit_ts: int
    query: str


def classify(exc: BaseException, stage: str, changefeed: str | None = None, *, ddl: FailedDdl | None = None,
             ddl_timeout: str | None = None, rows: tuple[int, int] | None = None) -> CdcflowError:
    """`exc`, raised in `stage` of a cycle of `changefeed`, as the one error type, its code
    deciding its class: running `ddl` downstream (`ddl_timeout` as configured), or writing the
    row changes committed in `rows` = (lo, hi], or elsewhere in the stage.  A CdcflowError keeps
    its code and gains the ts it lacked."""
    if isinstance(exc, CdcflowError):
        return exc.with_context(changefeed=changefeed, ts=ddl.commit_ts if ddl else rows[1] if rows else None)
    if ddl is not None:
        return _ddl_failed(exc, ddl, ddl_timeout, changefeed)
    err = _failed(exc, stage, changefeed)
    if rows and err.ts is None:  # a refused row with no key to name: the ts range its statement wrote
        err.message += f" (in the row changes committed in ({rows[0]}, {rows[1]}])"
    return err


def _failed(exc: BaseException, stage: str, changefeed: str | None) -> CdcflowError:
    """In this order: a lost Spark Connect server (SPARK_UNAVAILABLE), a row the downstream refused
    (MYSQL_TXN_ERROR: every sink error is retried, as TiCDC retries every sink error it does not
    name unretryable), a statement that outlasted its timeout (the side's UNREACHABLE), a
    ValueError or TypeError (STAGE_BUG), any other (STAGE_FAILED)."""
    lost = spark_connect_lost(exc)
    if lost:
        return CdcflowError(
            f"stage {stage}: the Spark Connect server was lost: {lost}", changefeed=changefeed,
            code=SPARK_UNAVAILABLE,
            hint="start the server again (make airflow / make demo start one on 127.0.0.1); the next "
                 "cycle retries the window, the checkpoint has not passed it")
    refused = SinkError.parse(str(exc))
    if refused and refused["code"] == NO_SUCH_TABLE:
        return _table_missing(refused, stage, changefeed)
    denied = access_denied(exc, f"stage {stage}", changefeed)
    if denied:
        return denied
    if refused:
        row = f" (the row with key {refused['row']})" if refused.get("row") else ""
        kind = next((k for k in ("timed_out", "value_error") if refused.get(k)), None)
        return CdcflowError(
            f"stage {stage}: {refused['what']} failed on the downstream: ({refused['code']}) {refused['text']}{row}",
            changefeed=changefeed, ts=refused.get("ts"), code=MYSQL_TXN_ERROR, hint=ROW_REFUSED_HINTS[kind])
    if is_timeout(exc):
        downstream = stage in DOWNSTREAM_STAGES
        return CdcflowError(
            f"stage {stage}: the {'downstream' if downstream else 'upstream'} did not answer in time: {exc}",
            changefeed=changefeed, code=DOWNSTREAM_UNREACHABLE if downstream else UPSTREAM_UNREACHABLE,
            hint=TIMEOUT_HINT.format(side="sink" if downstream else "source"))
    return CdcflowError(
        f"stage {stage} failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
        changefeed=changefeed, code=STAGE_BUG if isinstance(exc, (ValueError, TypeError)) else STAGE_FAILED,
        hint=f"run `cdcflow --debug changefeed run -c {changefeed}` for the full trace")


NO_SUCH_TABLE = 1146  # ER_NO_SUCH_TABLE, as MySQL, MariaDB and TiDB answer it


def _table_missing(refused: dict, stage: str, changefeed: str | None) -> CdcflowError:
    """Row changes for a table the downstream does not have.  The statement that met it says
    little (a safe-mode replay clears each key before writing it, so a cycle of inserts fails on
    a DELETE): the error names the table, not the statement, and what gives the downstream one,
    from the command line and from Airflow."""
    named = re.search(r"Table '([^']+)' doesn't exist", refused["text"])
    table = named.group(1) if named else refused["what"].split()[-1]
    return CdcflowError(
        f"stage {stage}: table {table} does not exist downstream, so its row changes cannot be written "
        f"(the downstream answered ({refused['code']}) {refused['text']})",
        changefeed=changefeed, ts=refused.get("ts"), code=TABLE_NOT_EXISTS,
        hint=f"create {table} downstream as the upstream has it, and the next cycle writes its changes after the "
             f"backoff; or copy it from the upstream with its rows: `cdcflow changefeed resync-tables -c {changefeed} "
             f"--tables {table}` (in Airflow: a run of mode resync-tables with tables {table}), and the next cycle "
             f"copies it and goes on")


CYCLE_GOES_ON = "the next cycle after the backoff goes on from the checkpoint, which has not passed it"


def access_denied(exc: BaseException, what: str, changefeed: str | None = None, then: str = CYCLE_GOES_ON,
                  **where) -> CdcflowError | None:
    """`exc` as ErrDownstreamPrivilege, naming the privilege the downstream user lacks and the GRANT
    that gives it, if it is an access-denied refusal (a pymysql error, or a SinkError's text); `what`
    says what was refused (the statement's kind is added where the SinkError names it), `then` what
    follows the GRANT."""
    refused = SinkError.parse(str(exc))
    if refused:
        code, text, what = refused["code"], refused["text"], f"{what}: {refused['what']}"
    else:
        args = getattr(exc, "args", ())
        code, text = error_code(exc), str(args[1]) if len(args) > 1 else str(exc)
    missing = missing_privilege(code, text)
    if missing is None:
        return None
    return CdcflowError(
        f"{what} was refused: the downstream user lacks {missing.what} ({code}: {text})",
        changefeed=changefeed, code=DOWNSTREAM_PRIVILEGE, **where,
        hint=f"run `{missing.grant()}` on the downstream as an administrator"
             + (" (the host part as the account was created)" if "'@'%'" in missing.account else "")
             + f"; {then}")


def _ddl_failed(exc: BaseException, ddl: FailedDdl, ddl_timeout: str | None, changefeed: str | None) -> CdcflowError:
    """A DDL that did not run downstream.  One that outlasted ddl-timeout stays marked in flight, so
    that if the downstream was only slow (a long ADD INDEX) the next cycle takes the statement's own
    completion for a replay.  A refusal (a statement the downstream cannot run) is the operator's to
    fix or skip; a lost connection, a lock wait or a deadlock is not a refusal, and skipping the DDL
    for it would lose it: the next cycle runs it again."""
    where = dict(changefeed=changefeed, ts=ddl.commit_ts, statement=ddl.query)
    denied = access_denied(exc, f"DDL {ddl.name}", **where)
    if denied:  # not a refusal of the statement: skipping it would lose it
        return denied
    if is_timeout(exc):
        return CdcflowError(
            f"the downstream did not finish DDL {ddl.name} within ddl-timeout {ddl_timeout}", **where,
            code=DOWNSTREAM_UNREACHABLE,
            hint="the checkpoint stays just below this DDL and the next cycle retries it after the backoff; check "
                 "the downstream runs and is not frozen, and raise ddl-timeout on the sink URI if the statement "
                 "legitimately takes longer")
    if is_retryable(exc):
        return CdcflowError(
            f"DDL {ddl.name} did not complete on the downstream: {exc}", **where, code=EXEC_DDL_INTERRUPTED,
            hint="the downstream was lost or busy; the checkpoint is below this DDL and the next cycle runs it "
                 "again (a DDL that did run before the connection was lost is taken as a replay)")
    return CdcflowError(
        f"the downstream rejected DDL {ddl.name}: {exc}", **where, code=EXEC_DDL_FAILED,
        hint="fix the downstream so it accepts the statement, or skip it with "
             f"`cdcflow changefeed skip-ddl -c {changefeed} --commit-ts {ddl.commit_ts}`")
