"""The one exception type a user can cause, and its message format.

Every message names the changefeed, the commit ts and the statement or key
where they are known, and says what to do.  `retryable` decides the state
transition: warning (retry later) or failed (stop until an operator acts).
"""

from __future__ import annotations


class CdcflowError(Exception):
    def __init__(
        self,
        message: str,
        *,
        changefeed: str | None = None,
        ts: int | None = None,
        statement: str | None = None,
        hint: str | None = None,
        code: str = "CDCFLOW:ErrGeneric",
        retryable: bool = False,
    ):
        super().__init__(message)
        self.message = message
        self.changefeed = changefeed
        self.ts = ts
        self.statement = statement
        self.hint = hint
        self.code = code
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
        return {"code": self.code, "message": str(self), "retryable": self.retryable}


class ConfigError(CdcflowError):
    """A changefeed spec or config the user wrote is invalid: never retryable."""

    def __init__(self, message: str, **kw):
        kw.setdefault("code", "CDCFLOW:ErrInvalidConfig")
        kw.setdefault("retryable", False)
        super().__init__(message, **kw)
