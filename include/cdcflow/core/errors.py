"""The one exception type a user can cause, and its message format.

Every message names the changefeed, the commit ts and the statement or key
where they are known, and says what to do.  `retryable` decides the state
transition: warning (retry later) or failed (stop until an operator acts).
"""

from __future__ import annotations


class Code(str):
    """An error code: the text users see (TiCDC's `CDCFLOW:Err…` shape), whether an error of
    this kind is retryable (None: the raiser decides per case), and what it means."""

    retryable: bool | None
    meaning: str

    def __new__(cls, name: str, retryable: bool | None, meaning: str) -> "Code":
        code = super().__new__(cls, f"CDCFLOW:{name}")
        code.retryable, code.meaning = retryable, meaning
        return code

    def __reduce__(self):  # a code travels to a child process (core.child_calls) whole
        return Code, (self.removeprefix("CDCFLOW:"), self.retryable, self.meaning)


# Every code cdcflow raises, with its class: retryable ones put a changefeed in warning (③),
# the others fail it (⑥).  Commands refused at the CLI carry a code but change no state.
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
UPSTREAM_BINLOG = Code("ErrUpstreamBinlog",      False, "the upstream's binlog is off or not ROW / FULL / FULL")
DOWNSTREAM_UNREACHABLE = Code("ErrDownstreamUnreachable", True, "cannot connect to the downstream in a cycle")
CREDENTIAL_UNRESOLVED = Code("ErrCredentialUnresolved", True, "a URI's password-env / airflow-conn-id names nothing")
MYSQL_CONNECTION_ERROR = Code("ErrMySQLConnectionError", True, "cannot connect to the sink at create / update")
MYSQL_TXN_ERROR = Code("ErrMySQLTxnError",       True, "the downstream refused rows (retried, as TiCDC retries its sink)")
TABLE_NOT_EXISTS = Code("ErrTableNotExists",     True, "a replicated table is missing downstream")
EXEC_DDL_FAILED = Code("ErrExecDDLFailed",       None, "the downstream refused a DDL (retryable per MySQL error)")
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
SNAPSHOT_UNSUPPORTED = Code("ErrSnapshotUnsupported", False, "--snapshot on an upstream it cannot take a consistent point of")
SNAPSHOT_FAILED = Code("ErrSnapshotFailed",    True, "the initial copy failed; create --snapshot again continues it")
SNAPSHOT_INDEX_FAILED = Code("ErrSnapshotIndexFailed", False, "an index a snapshot deferred could not be built downstream")
SNAPSHOT_REFUSED = Code("ErrSnapshotRefused",  False, "a snapshot of a changefeed that is not stopped (or failed)")
STAGE_FAILED = Code("ErrStageFailed",            None, "a stage failed unexpectedly (retryable unless a bug)")
API_INVALID_PARAM = Code("ErrAPIInvalidParam",    False, "an HTTP API request parameter is invalid")
TASK_FAILED = Code("ErrTaskFailed",              True, "an Airflow task of the cycle failed")

CODES: dict[str, Code] = {c: c for c in globals().values() if isinstance(c, Code)}


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
        """`retryable` defaults to the code's class (a code that has none: not retryable)."""
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
