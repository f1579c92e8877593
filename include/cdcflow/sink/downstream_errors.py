"""Errors the downstream returns, as the sink's writers use them: which ones a retry may cure
and which mean a value the column cannot hold (core.failures, where the classifier reads
them too), SinkError (the form in which they leave Spark workers), and the refused row a
value error names."""

from __future__ import annotations

import re

from cdcflow.core.failures import VALUE_ERRORS, SinkError, error_code, is_retryable, is_timeout
from cdcflow.core.row_codec import sql_literal

__all__ = ["VALUE_ERRORS", "SinkError", "error_code", "is_retryable", "is_timeout", "offending_row"]


def offending_row(e: Exception, rows: list | None, key: list[str] | None) -> tuple[str | None, int | None]:
    """(the refused row named by its key, its commit ts) for a value error, else (None, None)."""
    m = re.search(r"at row (\d+)", str(e))
    if error_code(e) not in VALUE_ERRORS or not rows or not key or not m or int(m.group(1)) > len(rows):
        return None, None
    image, ts = rows[int(m.group(1)) - 1]
    return " AND ".join(f"{k} = {sql_literal(image.get(k))}" for k in key), ts
