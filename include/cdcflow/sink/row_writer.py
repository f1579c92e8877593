"""Writing rows to a MySQL-compatible downstream (MySQL, MariaDB, TiDB) on one connection.

Row changes arrive compacted to one final image per key, so every statement
is idempotent: `DELETE … WHERE key IN (…)` then `REPLACE INTO … VALUES (…),(…)` for rows
that exist at the end of the segment, the DELETE alone for rows that do not.  Rows are
matched by the upstream's key whatever keys the downstream table has (TiCDC's safe mode:
DELETE by the handle key, then REPLACE): a REPLACE alone only finds the old row through a
unique key the downstream shares, and left it beside the new one where the downstream's keys
differ.  Where the downstream has a unique index on exactly the upstream's key, the REPLACE
finds the row itself and goes without the DELETE, and outside safe mode a row that was there
before the segment is written with `INSERT … ON DUPLICATE KEY UPDATE` every column instead
(UPSERT), in safe mode every row whose image sets each column the downstream table has
(StreamingWriter's docstring says why each is exact).  TiCDC's non-safe mode writes
UPDATE, which measured four times slower than UPSERT here (docs/performance.md).
Replaying a segment after a crash writes the same final images again.  Columns the
downstream generates are never written.  Tables without a valid index take their changes one
by one instead (apply_ordered).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from operator import attrgetter
from typing import Callable, Iterable

import pymysql
from pymysql.constants import COMMAND

from cdcflow.sink import prepared_statements, row_literals, statement_timeline
from cdcflow.sink.prepared_statements import NotPrepared, placeholders
from cdcflow.core.row_codec import (decode_image, decoded, quote_ident, raw_image, raw_literal, raw_values,
                                    sql_literal, values_text)
from cdcflow.sink.downstream_errors import SinkError, error_code, offending_row
from cdcflow.sink.enum_error_value import write_error_values
from cdcflow.sink.sequence_state import setval_statement

MAX_STATEMENT_BYTES = 4 * 1024 * 1024
DUPLICATE_ENTRY = 1062
# a deadlock and a lock wait timeout: another writer held the rows (concurrent REPLACEs over
# shared unique values, the downstream's own traffic); the statement's effect is undone
LOCK_CONFLICTS = (1213, 1205)
STATEMENT_ATTEMPTS = 8  # waits of 0.05 s doubling to 3.2 s, 6.35 s in all, each with jitter


def conflict_wait(attempt: int) -> float:
    """The wait before the next attempt after `attempt` (0-based) lock conflicts: doubling, with
    jitter, so that the writers that collided do not collide again in step."""
    return 0.05 * 2 ** attempt * random.uniform(0.5, 1.5)


class TransactionRolledBack(Exception):
    """A lock conflict inside the writer's explicit transaction: a deadlock rolls the whole
    transaction back, so the statement alone cannot be run again; the caller runs the
    transaction again (partitions.apply_partition_txns)."""

    def __init__(self, what: str, cause: Exception):
        super().__init__(what, cause)
        self.what, self.cause = what, cause


def qualified(schema: str, table: str) -> str:
    return f"{quote_ident(schema)}.{quote_ident(table)}"


@dataclass(frozen=True)
class ImageForm:
    """How a writer holds the row images it is given: `read` makes one from an image's text,
    `columns` gives its column names (rows are grouped by them: one statement's rows share
    them), `values` the VALUES tuples of some images over some columns, `literals` their
    literals of one column, and `decoded` an image as decode_image gives it (to name a refused
    row and to prove the ENUM error value: only when a statement is refused).  `params`, where
    the form has it: the binary protocol's parameters of some images over some columns (None:
    a value has none; sink.prepared_statements)."""

    read: Callable[[str], object]
    columns: Callable[[object], tuple]
    values: Callable[[list, tuple], list[str]]
    literals: Callable[[list, str], list[str]]
    decoded: Callable[[object], dict]
    params: Callable[[list, tuple], bytes | None] | None = None


# images of Python values (the snapshot's rows as pymysql decoded them)
DECODED = ImageForm(decode_image, tuple, lambda images, columns: [values_text(sql_literal, i, columns) for i in images],
                    lambda images, column: [sql_literal(i[column]) for i in images], lambda img: img)
# images as row_codec.raw_image reads them, each literal taken from the image's text: the
# reference of the compiled form
RAW = ImageForm(raw_image, tuple, lambda images, columns: [raw_values(i, columns) for i in images],
                lambda images, column: [raw_literal(i[column]) for i in images], decoded)


def raw_form(prepared: bool = True) -> ImageForm:
    """The apply stage writers' form: each image's text read once to its literals by the compiled
    module (sink.row_literals: where make setup built it), else the reference, RAW; with
    `prepared` (the sink's cache-prep-stmts) and the compiled parameters built, their binary
    parameters too."""
    compiled = row_literals.compiled()
    if compiled is None:
        return RAW
    return ImageForm(compiled.scan, attrgetter("names"), compiled.image_values, compiled.image_literals,
                     lambda img: decode_image(img.text), row_literals.params() if prepared else None)


# _Statement.sent: the statement went as text; it goes as text through a cursor when it is read
# (a connection that is not pymysql's: the tests' fakes)
_TEXT, _CURSOR = object(), object()


@dataclass
class _Statement:
    """A statement of RowWriter._run's, with what acting on its answer needs; `sent`: what its
    answer is read as (the prepared statement's handle, _TEXT), None before it is sent."""

    sql: object
    what: str
    rows: object
    key: list[str] | None
    table: tuple[str, str] | None
    on_duplicate: Callable[[], None] | None
    holds: object
    prepared: tuple[str, bytes] | None
    written: int
    sent: object = None
    at: float = 0.0
    lost: Exception | None = None  # what a send that closed the connection raised

    def text(self) -> str | bytes:
        """The statement's text, built here where `sql` builds it."""
        return self.sql() if callable(self.sql) else self.sql


class RowWriter:
    """Batches final row images into multi-row statements on one connection."""

    def __init__(self, conn, batch_rows: int, max_bytes: int = MAX_STATEMENT_BYTES, form: ImageForm = DECODED):
        self.conn = conn
        self.form = form
        self.batch_rows = batch_rows
        self.max_bytes = max_bytes
        self.rows_written = 0
        self.statements = 0
        self.fallbacks = 0  # UPSERT statements refused for a duplicate and written as DELETE + REPLACE
        self.in_transaction = False  # statements run inside the caller's explicit transaction
        # each statement's answer read when the next is sent (or at settle), not before: the next
        # is built while the downstream runs this one.  A writer whose statements wait for their
        # answers leaves its session idle while it builds the next; with the answers of the
        # writers' statements arriving together (the downstream shares its core among them), the
        # downstream had nothing of theirs to run until one was built (docs/performance.md)
        self.defer = False
        self.framed = prepared_statements.speaks(conn)  # pymysql's: sent and read in two halves
        self._pending: _Statement | None = None
        # the statements this connection holds prepared, where the form gives parameters
        self.prepared = _held(conn, form.params is not None)

    def counts(self) -> tuple[int, int, int]:
        return self.rows_written, self.statements, self.fallbacks

    def restore(self, counts: tuple[int, int, int]) -> None:
        """The counts as they were before a transaction that was rolled back."""
        self.rows_written, self.statements, self.fallbacks = counts

    def _run(self, sql: str | bytes | Callable[[], str], what: str, rows: list | None = None,
             key: list[str] | None = None, table: tuple[str, str] | None = None, on_duplicate=None, holds=None,
             prepared: tuple[str, bytes] | None = None, written: int = 0) -> None:
        """`sql`: the statement's text, or what builds it where `prepared` (its text with
        placeholders, and their parameters) is sent instead: the text is built only if the
        downstream refuses the statement, or will not prepare it.  `rows`: the statement's
        (image, commit ts) in VALUES order (images as self.form reads them), or what makes them
        (only a refused statement needs them), to name the one a value error points at (and to
        tell the ENUM error value from a value the column would alter: enum_error_value).
        `on_duplicate`: what writes the rows instead when the downstream refuses the statement
        for a duplicate unique value (a transactional table undid all of it; the rows are written
        again whole in any case).  `holds`: enum_error_value's, for rows without images.
        `written`: the rows it writes, counted once it did (on_duplicate counts its own).
        With `defer`, outside a transaction, the statement is sent and its answer read by the
        next statement's _run (or `settle`): see `defer`."""
        self.settle()
        st = _Statement(sql, what, rows, key, table, on_duplicate, holds, prepared, written)
        if self.defer and self.framed and not self.in_transaction:
            try:
                self._send(st)
            except pymysql.MySQLError as e:
                st.sent = None  # sent again by _complete, which acts on what it raises
                # unless the send closed the connection (a write or a prepare's read timed out):
                # sent again it would meet only pymysql's bare InterfaceError(0) of a closed
                # socket, and the timeout and its remedy would go unreported
                if not getattr(self.conn, "open", True):
                    st.lost = e
            else:
                self._pending = st
                return
        self._complete(st)

    def settle(self) -> None:
        """Read the answer to the statement sent last and act on it as _run would have: the
        writer's counts are whole only after it, and nothing else may use the connection before
        it.  A refusal's remedy (on_duplicate) may leave statements of its own sent: read too."""
        while self._pending is not None:
            st, self._pending = self._pending, None
            self._complete(st)

    def _send(self, st: "_Statement") -> None:
        st.at = time.perf_counter()
        if st.prepared is not None:
            try:
                st.sent = self.prepared.send(*st.prepared)
                return
            except NotPrepared:
                st.prepared = None  # the text instead, now and at any later attempt
        if not self.framed:
            st.sent = _CURSOR
            return
        text = st.text()
        # pymysql's Connection.query in two halves (_complete reads the answer)
        self.conn._execute_command(COMMAND.COM_QUERY, text.encode(self.conn.encoding) if isinstance(text, str) else text)
        st.sent = _TEXT

    def _complete(self, st: "_Statement") -> None:
        """The answer to `st` (sent already, or sent now), and what a refusal calls for."""
        timeline = statement_timeline.active()
        for attempt in range(STATEMENT_ATTEMPTS):
            try:
                if st.lost is not None:
                    raise st.lost
                if st.sent is None:
                    self._send(st)
                sent, st.sent = st.sent, None
                if sent is _TEXT:
                    self.conn._affected_rows = self.conn._read_query_result()
                elif sent is _CURSOR:
                    with self.conn.cursor() as cur:
                        cur.execute(st.text())
                else:
                    self.prepared.finish(sent)
                if timeline is not None:
                    timeline.statements.append((st.at, time.perf_counter()))
                self.statements += 1
                self.rows_written += st.written
                return
            except pymysql.err.OperationalError as e:
                # partitions that touch the same unique values lock each other: the statement
                # (autocommitted) is run again once the other has gone on
                if error_code(e) in LOCK_CONFLICTS:
                    if self.in_transaction:
                        raise TransactionRolledBack(st.what, e) from None
                    if attempt < STATEMENT_ATTEMPTS - 1:
                        time.sleep(conflict_wait(attempt))
                        continue
                raise SinkError(st.what, e) from None
            except pymysql.MySQLError as e:
                rows = st.rows() if callable(st.rows) else st.rows
                if rows and self.form is not DECODED:
                    rows = [(self.form.decoded(img), ts) for img, ts in rows]
                # a refused ENUM error value is written non-strict; what stands then may be a duplicate
                text = st.text()
                stands = e if error_code(e) == DUPLICATE_ENTRY else write_error_values(self.conn, text, e, rows,
                                                                                        st.table, st.holds)
                if stands is None:
                    self.statements += 1
                    self.rows_written += st.written
                    return
                if st.on_duplicate is not None and error_code(stands) == DUPLICATE_ENTRY:
                    self.fallbacks += 1
                    st.on_duplicate()
                    return
                raise SinkError(st.what, stands, *offending_row(stands, rows, st.key)) from None

    def delete_keys(self, schema: str, table: str, key: list[str], images: list[dict],
                    counted: int | None = None) -> None:
        """`counted`: how many of the rows count as written (the others are written again
        right after, by REPLACE); all of them when not given."""
        target = qualified(schema, table)
        if len(key) == 1:
            head = f"DELETE FROM {target} WHERE {quote_ident(key[0])} IN ("
            tuples = self.form.literals(images, key[0])
        else:
            head = f"DELETE FROM {target} WHERE ({', '.join(quote_ident(k) for k in key)}) IN ("
            tuples = self.form.values(images, tuple(key))
        counted = len(images) if counted is None else counted
        # the statement a refusal names: rows written again right after are not deletes of the stream's
        what = f"DELETE from {schema}.{table}" + (
            f" (clearing the keys of {len(images) - counted} row(s) written right after)" if counted < len(images) else "")
        done = 0
        for chunk in self._chunks(tuples, len(head)):
            prepared = self._prepared(head, ")", tuple(key), images[done:done + len(chunk)], in_list=True)
            self._run(lambda chunk=chunk: head + ", ".join(chunk) + ")", what, prepared=prepared)
            done += len(chunk)
        self.rows_written += counted

    def replace_rows(self, schema: str, table: str, columns: tuple[str, ...], images: list[dict],
                     verb: str = "REPLACE", commit_ts: list | None = None, key: list[str] | None = None) -> None:
        """REPLACE (safe mode: overwrites whatever holds the key or a unique value), INSERT
        for rows that must be new (fails on a conflicting row), or UPSERT: `INSERT … ON
        DUPLICATE KEY UPDATE` every column, for rows whose key the downstream holds, a
        statement refused for a duplicate unique value written again as DELETE by `key` and
        REPLACE.  `commit_ts`: each image's, and `key`: the table's, to name a row the
        downstream refuses."""
        cols = ", ".join(quote_ident(c) for c in columns)
        head = f"{'INSERT' if verb == 'UPSERT' else verb} INTO {qualified(schema, table)} ({cols}) VALUES "
        tail = "" if verb != "UPSERT" else \
            " ON DUPLICATE KEY UPDATE " + ", ".join(f"{c} = VALUES({c})" for c in map(quote_ident, columns))
        tuples = self.form.values(images, tuple(columns))
        stamps = commit_ts or [None] * len(images)
        done = 0
        for chunk in self._chunks(tuples, len(head) + len(tail)):
            # the chunk's images and commit ts, paired only where a refusal names a row
            part, part_ts = images[done:done + len(chunk)], stamps[done:done + len(chunk)]
            prepared = self._prepared(head, tail, columns, part)

            def instead(part=part, part_ts=part_ts) -> None:
                # a stale row of another key holds one of the unique values: REPLACE removes it
                # (its own final image is written by its partition, or its DELETE is due)
                self.delete_keys(schema, table, key, part, counted=0)
                self.replace_rows(schema, table, columns, part, "REPLACE", part_ts, key)

            self._run(lambda chunk=chunk: head + ",".join(chunk) + tail, f"{verb} into {schema}.{table}",
                      lambda part=part, part_ts=part_ts: list(zip(part, part_ts)), key, (schema, table),
                      instead if verb == "UPSERT" else None, prepared=prepared, written=len(chunk))
            done += len(chunk)

    def _prepared(self, head: str, tail: str, columns: tuple[str, ...], images: list,
                  in_list: bool = False) -> tuple[str, bytes] | None:
        """The statement with placeholders and the images' parameters (`in_list`: a DELETE's
        list of keys, else a VALUES list), where the form gives them and every value has one;
        None: the text is sent.  Only a full batch goes prepared: a statement of another row
        count would be prepared for its one execution, a parse as costly as the text's."""
        if self.prepared is None or len(images) != self.batch_rows \
                or len(images) * len(columns) > prepared_statements.MAX_PARAMS:
            return None
        params = self.form.params(images, tuple(columns))
        return None if params is None else (placeholders(head, len(images), len(columns), tail, in_list), params)

    def write_literals(self, schema: str, table: str, columns: tuple[str, ...], tuples: list[bytes],
                       verb: str = "REPLACE", marks: list[dict] | None = None) -> None:
        """Rows already written as SQL text, b"(v1,v2,…)" each (utf8mb4, as the session reads
        it), in multi-row statements: what the snapshot's copy gets from the upstream.
        `marks`: per row, its ENUM columns, '' where it holds the ENUM error value (so that
        strict mode's refusal of that value can be told from a member the downstream lacks)."""
        head = self._values_head(schema, table, columns, verb)
        done = 0
        for chunk in self._chunks(tuples, len(head)):
            images = None if marks is None else [(m, None) for m in marks[done:done + len(chunk)]]
            self.write_values(schema, table, columns, b",".join(chunk), len(chunk), verb, images=images)
            done += len(chunk)

    def write_values(self, schema: str, table: str, columns: tuple[str, ...], values: bytes, rows: int,
                     verb: str = "REPLACE", holds=None, on_duplicate=None, images: list | None = None) -> None:
        """One statement of `rows` rows whose VALUES list, b"(…),(…)", is already SQL text;
        `holds` or `images` (the rows' (image, commit ts), an image holding at least the ENUM
        columns): how a refused ENUM error value is proved (enum_error_value); `on_duplicate`:
        _run's (the rows are counted by whichever writes them)."""
        self._run(self._values_head(schema, table, columns, verb) + values, f"{verb} into {schema}.{table}",
                  rows=images, table=(schema, table), holds=holds, on_duplicate=on_duplicate, written=rows)

    @staticmethod
    def _values_head(schema: str, table: str, columns: tuple[str, ...], verb: str) -> bytes:
        return f"{verb} INTO {qualified(schema, table)} ({', '.join(quote_ident(c) for c in columns)}) VALUES ".encode()

    def _chunks(self, items: list, head_len: int) -> Iterable[list[str]]:
        """`items` (literal texts) in runs of at most batch_rows whose statement stays within
        max_bytes.  A flushed batch is one such run as a rule: found without a look per item."""
        if len(items) <= self.batch_rows and head_len + sum(map(len, items)) + 2 * len(items) <= self.max_bytes:
            if items:
                yield items
            return
        chunk, size = [], head_len
        for it in items:
            if chunk and (len(chunk) >= self.batch_rows or size + len(it) + 2 > self.max_bytes):
                yield chunk
                chunk, size = [], head_len
            chunk.append(it)
            size += len(it) + 2
        if chunk:
            yield chunk



class StreamingWriter:
    """Pending multi-row statements, flushed when full; a table's pending DELETEs always go
    out before any of its upserts, so memory stays bounded by the batch size.  A row written
    with REPLACE is also deleted by its key first (the module's first lines say why), except
    in the tables of `key_indexed`, whose downstream has a unique index on exactly the key's
    columns: there the REPLACE itself removes the key's row, as the DELETE would.  With
    `insert_new`, rows of kind I (new keys) are written with INSERT instead of REPLACE (they
    cannot exist yet: no DELETE).  With `upsert` (outside safe mode), rows of kind U of those
    tables are written with UPSERT, no DELETE: the index finds the key's row, so an UPSERT
    that succeeds turned one row into the final image and left no other row holding its
    unique values, which is what a REPLACE ends with (it removes every row holding one of
    them); where a second row holds one (a stale row another partition has not written yet),
    the statement is refused with a duplicate and written as DELETE + REPLACE.  Columns only
    the downstream has keep their values, as under TiCDC's UPDATE.  In safe mode the rows of
    kinds I and U of a table in `in_place` (key-indexed, no trigger on it) whose image sets
    every column it names (the downstream's columns but the generated ones) are written with
    UPSERT too: such an UPSERT ends exactly as the REPLACE would (a row holding the key is
    overwritten whole, where the REPLACE deletes it and inserts the image: twice the
    downstream's work on every index; a duplicate elsewhere goes to DELETE + REPLACE as above),
    and a table with a column of its own keeps the REPLACE, which sets that column to its
    default as TiCDC's safe mode does.  `generated`: per table,
    the columns left out of rows.  `held`: the row images pending now (one REPLACEd row, in
    both lists, counts once), and `most_held` the most at any time: at most max-txn-row per
    table and column set."""

    def __init__(self, writer: RowWriter, keys: dict[str, list[str]], insert_new: bool = False,
                 generated: dict[str, frozenset[str]] | None = None, key_indexed: frozenset[str] = frozenset(),
                 upsert: bool = False, in_place: dict[str, frozenset[str]] | None = None):
        self.writer = writer
        self.keys = keys
        self.insert_new = insert_new
        self.key_indexed = key_indexed
        self.upsert = upsert
        self.in_place = in_place or {}  # "schema.table" -> the downstream's columns, lower-cased
        self.generated = generated or {}
        # pending rows as two lists side by side (no pair made per row): a table's deletes, their
        # images and whether each ends deleted (not REPLACEd after); a group's upserts, their
        # images and commit ts
        self.deletes: dict[tuple[str, str], tuple[list, list]] = {}
        self.upserts: dict[tuple[str, str, tuple, str], tuple[list, list]] = {}
        self.held = self.most_held = 0
        self.columns = writer.form.columns

    def add(self, schema: str, table: str, kind: str, img: dict, commit_ts: int | None = None) -> None:
        self.add_run(schema, table, (kind,), (img,), (commit_ts,))

    def add_run(self, schema: str, table: str, kinds: Iterable[str], imgs: Iterable, stamps: Iterable) -> None:
        """Rows of one table in order (their kinds, images and commit ts side by side), each as
        add() takes it: what only the table decides is worked out once (a partition's rows come
        a table at a time: working it out per row was a quarter of the writers' time), and the
        pending lists a row goes to are looked up again only when a flush took them or its column
        set changes (the loop is most of the writers' own CPU on a bulk window)."""
        name = f"{schema}.{table}"
        indexed = name in self.key_indexed
        verbs = {"D": "DELETE", "I": "INSERT" if self.insert_new else "REPLACE",
                 "U": "UPSERT" if self.upsert and indexed else "REPLACE"}
        # the columns a REPLACE's image must set to be written as an UPSERT instead (in_place)
        whole = self.in_place.get(name) if indexed else None
        # per kind: its verb, whether its key is deleted first (a DELETE; a REPLACE where no unique
        # index on the key removes the old row itself) and whether its image is written
        plan = {k: (v, v == "DELETE" or v == "REPLACE" and not indexed, v != "DELETE") for k, v in verbs.items()}
        batch, columns, dkey = self.writer.batch_rows, self.columns, (schema, table)
        deletes, upserts = self.deletes, self.upserts
        # this table's pending deletes (images, whether each ends deleted); the last row's group and
        # its pending rows (images, commit ts)
        dimgs = dends = group = uimgs = ustamps = names_in = verb_in = None
        held, most = self.held, self.most_held
        try:
            for kind, img, commit_ts in zip(kinds, imgs, stamps):
                verb, delete_first, written = plan[kind]
                held += 1
                if held > most:
                    most = held
                if delete_first:
                    if dimgs is None:
                        dimgs, dends = deletes.setdefault(dkey, ([], []))
                    dimgs.append(img)
                    dends.append(not written)  # a row that ends deleted counts as written
                    if len(dimgs) >= batch:
                        self.held, held = held, None  # the flush's own count, whatever it raises
                        self._flush_deletes(schema, table)
                        held, dimgs = self.held, None
                if written:
                    names = columns(img)
                    if group is None or names_in is not names or verb_in != verb:
                        names_in, verb_in = names, verb
                        group = (schema, table, names, "UPSERT" if verb == "REPLACE" and whole is not None
                                 and whole <= {n.lower() for n in names} else verb)
                        uimgs, ustamps = upserts.setdefault(group, ([], []))
                    uimgs.append(img)
                    ustamps.append(commit_ts)
                    if len(uimgs) >= batch:
                        self.held, held = held, None
                        self._flush_deletes(schema, table)
                        self._upsert(group, upserts.pop(group))
                        held, dimgs, group = self.held, None, None
        finally:
            self.most_held = most
            if held is not None:
                self.held = held

    def _upsert(self, group: tuple, pending: tuple[list, list]) -> None:
        schema, table, cols, verb = group
        images, stamps = pending
        generated = self.generated.get(f"{schema}.{table}")
        if generated:
            cols = tuple(c for c in cols if c not in generated)
        self.writer.replace_rows(schema, table, cols, images, verb, stamps, self.keys.get(f"{schema}.{table}"))
        self.held -= len(images)

    def _flush_deletes(self, schema: str, table: str) -> None:
        images, ends = self.deletes.pop((schema, table), ((), ()))
        if images:
            deleted = sum(ends)
            self.writer.delete_keys(schema, table, self.keys[f"{schema}.{table}"], images, counted=deleted)
            self.held -= deleted  # a REPLACEd row is held until its upsert is written

    def discard(self) -> None:
        """Forget what is pending (its transaction was rolled back and runs again)."""
        self.deletes.clear()
        self.upserts.clear()
        self.held = 0

    def close(self) -> None:
        for schema, table in list(self.deletes):
            self._flush_deletes(schema, table)
        for group, pending in list(self.upserts.items()):
            self._upsert(group, pending)
        self.upserts.clear()
        self.writer.settle()


def apply_ordered(conn, schema: str, table: str, changes: Iterable[dict],
                  generated: frozenset[str] = frozenset(), prepared: bool = False) -> int:
    """Changes of a table without a valid index (force-replicate): one by one, in commit order.

    No compaction is possible without a key, so UPDATE and DELETE match the whole old
    row NULL-safely and touch one row (LIMIT 1), which keeps duplicate rows right.  The
    `generated` columns are neither written nor matched: the downstream computes them from
    the others.  `prepared`: the sink's cache-prep-stmts (each statement prepared, kept by shape).
    """
    n, held = 0, _held(conn, prepared)
    with conn.cursor() as cur:
        for ch in changes:
            _apply_change(conn, cur, schema, table, ch, None, generated, "(no valid index)", held=held)
            n += 1
    return n


def _held(conn, prepared: bool):
    """The connection's prepared statements where statements go prepared (the sink's
    cache-prep-stmts, and the compiled parameters built), else None."""
    if not prepared or row_literals.literal_params() is None or not prepared_statements.speaks(conn):
        return None
    return prepared_statements.of(conn)


def apply_in_commit_order(conn, changes: Iterable[dict], keys: dict[str, list[str] | None],
                          generated: dict[str, frozenset[str]], parents: set[str], upsert: bool,
                          versioned: frozenset[str] = frozenset(), setval: frozenset[str] = frozenset(),
                          prepared: bool = False) -> int:
    """The changes of tables bound by foreign keys whose actions change rows (sink.foreign_keys),
    across those tables in commit order, one statement each, as a native replica runs them: an
    UPDATE stays an UPDATE by the upstream's key (one that changes the key changes it in place, so
    ON UPDATE CASCADE fires), a DELETE deletes by the key, and an INSERT never deletes (with
    `upsert`, safe mode: `ON DUPLICATE KEY UPDATE`).  UPDATEs and DELETEs of a table in `parents`
    run with foreign_key_checks = 1, so the downstream's key redoes the cascade the binlog left
    out, unless the upstream ran them with the checks off (`fk_checks_off`: no action ran there,
    and a change it let through, such as an orphan, must not be refused here); everything else
    with them off, as every row is written.  `keys`: per table, its key (None: no valid index,
    matched by the whole old row).  An UPDATE of a table in `versioned` (the downstream versions it)
    sets only the columns it changes: one setting only columns WITHOUT SYSTEM VERSIONING makes no
    history row, as upstream.  A sequence in `setval` (a TiDB downstream's) takes each row of its
    state as a SETVAL (sink.sequence_state).  `prepared`: apply_ordered's.  Runs in the caller's
    transaction."""
    n, checks, held = 0, False, _held(conn, prepared)
    with conn.cursor() as cur:
        try:
            for ch in changes:
                name = f"{ch['schema']}.{ch['table']}"
                wanted = ch["op"] != "insert" and name in parents and not ch.get("fk_checks_off")
                if wanted != checks:
                    cur.execute(f"SET SESSION foreign_key_checks = {int(wanted)}")
                    checks = wanted
                if name in setval:
                    _set_sequence(cur, ch)
                    n += 1
                    continue
                _apply_change(conn, cur, ch["schema"], ch["table"], ch, keys.get(name),
                              generated.get(name, frozenset()), "(foreign keys)", upsert, name in versioned, held)
                n += 1
        finally:
            if checks:
                cur.execute("SET SESSION foreign_key_checks = 0")
    return n


def _set_sequence(cur, ch: dict) -> None:
    """A sequence's new state (an insert or update of its one row) as a SETVAL; it has no row
    to delete."""
    if ch["op"] == "delete":
        return
    sql = setval_statement(qualified(ch["schema"], ch["table"]), decode_image(ch["after"]))
    try:
        cur.execute(sql)
    except pymysql.MySQLError as e:  # no ENUM value to retry: the refusal stands as it is
        raise SinkError(f"SETVAL of sequence {ch['schema']}.{ch['table']}", e) from None


def _apply_change(conn, cur, schema: str, table: str, ch: dict, key: list[str] | None,
                  generated: frozenset[str], why: str, upsert: bool = False, changed_only: bool = False,
                  held=None) -> None:
    """One change as one statement (change_statement); a refusal raised as a SinkError.  `held`:
    the connection's prepared statements, to send it prepared (the sink's cache-prep-stmts):
    one statement a row is where the parse is the largest share of the downstream's work."""
    before, after = (None if img is None else {c: v for c, v in img.items() if c not in generated}
                     for img in (decode_image(ch["before"]), decode_image(ch["after"])))
    if changed_only and before is not None and after is not None:
        after = {c: v for c, v in after.items() if before.get(c) != v} or after
    target, op = qualified(schema, table), ch["op"]
    try:
        if held is None or not _sent_prepared(held, target, op, before, after, key, upsert):
            sql = change_statement(target, op, before, after, key, upsert)
            cur.execute(sql)
    except pymysql.MySQLError as e:
        sql = change_statement(target, op, before, after, key, upsert)
        stands = write_error_values(conn, sql, e, [(after, None)] if after else None, (schema, table))
        if stands is not None:
            raise SinkError(f"{ch['op'].upper()} on {schema}.{table} {why}", stands) from None


def _sent_prepared(held, target: str, op: str, before: dict | None, after: dict | None, key: list[str] | None,
                   upsert: bool) -> bool:
    """The change sent as a prepared statement; False where a value has no parameter or the
    downstream would not prepare it (the caller sends the text)."""
    literals: list[str] = []
    template = change_statement(target, op, before, after, key, upsert, collecting(literals))
    params = row_literals.literal_params()(literals)
    if params is None:
        return False
    try:
        held.execute(template, params)
    except NotPrepared:
        return False
    return True


def change_statement(target: str, op: str, before: dict | None, after: dict | None, key: list[str] | None,
                     upsert: bool = False, literal: Callable = sql_literal) -> str:
    """An INSERT of `after` (with `upsert`, one that updates the row already there), or an UPDATE
    to `after` / a DELETE of the row whose `key` columns hold `before`'s values; without a key,
    of one row (LIMIT 1) equal to the whole of `before` (NULL-safe).  `literal` writes each
    value, in the statement's order (placeholders: `collecting`)."""
    if op == "insert":
        cols = [quote_ident(c) for c in after]
        sql = (f"INSERT INTO {target} ({', '.join(cols)}) VALUES ("
               + ", ".join(literal(v) for v in after.values()) + ")")
        return sql + " ON DUPLICATE KEY UPDATE " + ", ".join(f"{c} = VALUES({c})" for c in cols) if upsert else sql
    sets = "" if op == "delete" else ", ".join(f"{quote_ident(c)} = {literal(v)}" for c, v in after.items())
    match = before if key is None else {c: before[c] for c in key}
    where = " AND ".join(f"{quote_ident(c)} <=> {literal(v)}" for c, v in match.items())
    limit = " LIMIT 1" if key is None else ""
    if op == "delete":
        return f"DELETE FROM {target} WHERE {where}{limit}"
    return f"UPDATE {target} SET {sets} WHERE {where}{limit}"


def collecting(literals: list) -> Callable:
    """A change_statement `literal` that writes a placeholder and keeps the value's literal."""
    def placeholder(v) -> str:
        literals.append(sql_literal(v))
        return "?"
    return placeholder
