"""Copying one chunk: read in its own consistent-snapshot transaction on the upstream, streamed
(a server-side cursor, `batch_rows` at a time, so memory stays bounded whatever the chunk's
size), written downstream with the sink's multi-row writer in its row-writing session
(UTC, strict).  REPLACE for a keyed table, so a chunk copied twice converges."""

from __future__ import annotations

import datetime as dt
import json
import time

import pymysql

from cdcflow.core.row_codec import quote_ident
from cdcflow.sink import mysql_sink
from cdcflow.verify.chunks import Chunk
from cdcflow.verify.runner import connect as reading_session


def _value(v):
    """pymysql gives TIME as a timedelta, which has no SQL literal of its own: its text."""
    if isinstance(v, dt.timedelta):
        sign, secs = ("-", -v) if v < dt.timedelta(0) else ("", v)
        total = secs.days * 86400 + secs.seconds
        return f"{sign}{total // 3600:02d}:{total // 60 % 60:02d}:{total % 60:02d}.{secs.microseconds:06d}"
    return v


def copy_rows(up, writer: mysql_sink.RowWriter, task: dict, verb: str = "REPLACE") -> int:
    """The rows of `task`'s chunk, read on `up` (already in the transaction to read in), written
    through `writer`.  Returns the rows copied."""
    key = task["key"]
    where, args = Chunk(**task["chunk"]).where(key) if key else ("", [])
    table = f"{quote_ident(task['schema'])}.{quote_ident(task['name'])}"
    copied = 0
    with up.cursor(pymysql.cursors.SSCursor) as cur:
        cur.execute(f"SELECT * FROM {table}" + (f" WHERE {where}" if where else ""), args)
        columns = tuple(d[0] for d in cur.description)
        while rows := cur.fetchmany(writer.batch_rows):
            images = [{c: _value(v) for c, v in zip(columns, row)} for row in rows]
            writer.replace_rows(task["schema"], task["name"], columns, images, verb=verb, key=key)
            copied += len(images)
    return copied


def copy_chunk(up, writer: mysql_sink.RowWriter, task: dict) -> dict:
    t0 = time.monotonic()
    with up.cursor() as cur:
        cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
    try:
        rows = copy_rows(up, writer, task)
    finally:
        up.rollback()  # it only read
    return {"table": task["table"], "index": task["chunk"]["index"], "rows": rows,
            "seconds": round(time.monotonic() - t0, 3)}


def copy_partition(batches, up_args: dict, down_args: dict, batch_rows: int):
    """Spark mapInArrow body: chunk tasks (JSON) in, one result (JSON) per chunk out; a
    downstream error travels as mysql_sink.SinkError's text."""
    import pyarrow as pa

    up = down = None
    try:
        for batch in batches:
            out = []
            for text in batch.column(0).to_pylist():
                if up is None:
                    up, down = reading_session(up_args), mysql_sink.connect(down_args)
                    writer = mysql_sink.RowWriter(down, batch_rows)
                out.append(json.dumps(copy_chunk(up, writer, json.loads(text))))
            yield pa.RecordBatch.from_pydict({"result": out})
    finally:
        for conn in (up, down):
            if conn is not None:
                conn.close()
