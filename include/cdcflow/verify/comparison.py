"""One verification of a changefeed's tables: plan the tables, cut them into chunks, compare
the chunks in parallel threads (each with its own session on both servers: the servers
compute the checksums, so only a few numbers per chunk travel and no Spark job would earn its
start), narrow a differing chunk down to its rows, re-check the differing ones once the
changefeed has applied what the upstream held when they were seen (live.py), and gather the
result."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass

import pymysql

from cdcflow.core import tls
from cdcflow.core.errors import DOWNSTREAM_UNREACHABLE, UPSTREAM_UNREACHABLE, CdcflowError
from cdcflow.core.row_codec import encode_image
from cdcflow.sink.collation_key import KeyFolder
from cdcflow.sink.connection import ROW_TIME_ZONE
from cdcflow.sink.downstream_errors import error_code
from cdcflow.verify import live
from cdcflow.verify.catalogue import TablePlan, plan_tables
from cdcflow.verify.checksum import checksums, fetch_rows, length_prefixed
from cdcflow.verify.chunks import Chunk, bucket_sql, sub_chunks, table_chunks
from cdcflow.verify.fixsql import fix_file
from cdcflow.verify.rowdiff import keyed_diff, multiset_diff

EQUAL, DIFFERENT, NOT_APPLIED = "equal", "different", "not yet applied"
# exit code of `cdcflow changefeed verify` per status
EXIT_CODES = {EQUAL: 0, DIFFERENT: 2, NOT_APPLIED: 3}
_IMAGES = ("up_image", "down_image")  # a difference's values for the fix SQL, not for showing
ROW_LEVEL_ROWS = 100  # a differing chunk of at most this many rows is read row by row
SPLIT = 10  # sub-chunks a larger differing chunk is cut into
_EMPTY = [0, 0, 0]  # the sums of no rows


@dataclass
class VerifyOptions:
    tables: list[str] | None = None  # filter-rule patterns narrowing the changefeed's tables
    chunk_size: int = 10000  # upstream rows per chunk
    wait_seconds: float = 120.0  # how long differing chunks wait for the checkpoint, in all
    rechecks: int = 3  # re-checks at most, while the upstream keeps writing
    workers: int = 4  # chunks compared at once, each thread with a session on both servers


def summary_line(result: dict) -> str:
    """A verify result in one line, as the CLI and the DAG's verify runs say it."""
    found = len(result["differences"]) + len(result["column_problems"]) + len(result["table_problems"])
    return (f"Changefeed {result['changefeed']}: {result['status']}: {result['tables_checked']} table(s), "
            f"{result['chunks_checked']} chunk(s), {result['rows_compared']} row(s) compared, {found} difference(s)"
            + (f", {len(result['not_yet_applied'])} row(s) the changefeed has not applied yet (its checkpoint did "
               "not pass the upstream's position; run cycles, then verify again)" if result["not_yet_applied"] else "")
            + (f"; fix SQL in {result['fix_sql']}" if result.get("fix_sql") else ""))


def reading_session(args: dict):
    """A reading session on either server: UTC, as the sink writes rows, so a TIMESTAMP
    prints the same instant on both sides."""
    tls.install()
    conn = pymysql.connect(**{**args, "charset": "utf8mb4", "autocommit": True})
    with conn.cursor() as cur:
        cur.execute(f"SET SESSION time_zone = '{ROW_TIME_ZONE}'")
    return conn


def _unreachable(side: str) -> str:
    return UPSTREAM_UNREACHABLE if side == "upstream" else DOWNSTREAM_UNREACHABLE


def _reach(args: dict, side: str):
    """The driver's session on one side; a server it cannot reach is one line saying which."""
    try:
        return reading_session(args)
    except pymysql.MySQLError as e:
        raise CdcflowError(f"verify cannot reach the {side} at {args['host']}:{args['port']}: {e}",
                           code=_unreachable(side),
                           hint=f"start the {side} or fix the changefeed's URI, then verify again") from None


# client errors that mean the session is gone (the server stopped, restarted or killed it)
_LOST = frozenset({2003, 2006, 2013, 2055, 1053, 1927})


class _SideError(Exception):
    """A server's error in a chunk thread, with the side it came from."""

    def __init__(self, side: str, error: pymysql.MySQLError):
        super().__init__(side, error)
        self.side, self.error = side, error


@contextmanager
def _on(side: str):
    """Marks a server error raised inside with the side that raised it."""
    try:
        yield
    except pymysql.MySQLError as e:
        raise _SideError(side, e) from None


def _chunk_error(sessions: "Sessions", e: _SideError, table: str, where: str) -> CdcflowError:
    """A server lost or refusing mid-verify as one line: the changefeed, side, table and chunk."""
    args = sessions.up_args if e.side == "upstream" else sessions.down_args
    lost = isinstance(e.error, pymysql.err.InterfaceError) or error_code(e.error) in _LOST
    at = f"the {e.side} at {args['host']}:{args['port']}"
    if lost:
        return CdcflowError(
            f"verify lost {at} while comparing {table} {where}: {e.error}", changefeed=sessions.changefeed_id,
            code=_unreachable(e.side),
            hint=f"nothing was changed; once the {e.side} is up again, verify again")
    return CdcflowError(
        f"{at} refused verify's query on {table} {where}: {e.error}", changefeed=sessions.changefeed_id,
        hint=f"give the changefeed's {e.side} user SELECT on {table} (or fix the table), then verify again")


class Sessions:
    """One reading session on each server per worker thread, opened on first use."""

    def __init__(self, up_args: dict, down_args: dict, changefeed_id: str | None = None):
        self.up_args, self.down_args, self.changefeed_id = up_args, down_args, changefeed_id
        self._local = threading.local()
        self._opened: list = []
        self._lock = threading.Lock()

    def pair(self):
        if not hasattr(self._local, "pair"):
            with _on("upstream"):
                up = reading_session(self.up_args)
            try:
                with _on("downstream"):
                    down = reading_session(self.down_args)
            except BaseException:
                up.close()
                raise
            self._local.pair = (up, down)
            with self._lock:
                self._opened.append(self._local.pair)
        return self._local.pair

    def close(self) -> None:
        for pair in self._opened:
            for conn in pair:
                conn.close()


def _sums(up, down, plan: TablePlan, chunk: Chunk, subs: list[Chunk] | None = None) -> tuple[dict, dict]:
    """Each side's {bucket: [rows, xor, sum]} of `chunk`: one bucket (0), or one per sub-chunk."""
    where, args = chunk.where(plan.key) if plan.key else ("", [])
    bucket, bucket_args = bucket_sql(plan.key, subs) if subs else ("0", [])
    prefixed = length_prefixed(plan.columns, plan.types("up"), plan.types("down"))
    sums = []
    for side, name, conn in (("up", "upstream", up), ("down", "downstream", down)):
        with _on(name):
            sums.append(checksums(conn, plan.quoted, plan.columns, plan.types(side), prefixed, where, args,
                                  bucket, bucket_args))
    return sums[0], sums[1]


def compare_chunk(sessions: Sessions, plan: TablePlan, chunk: Chunk) -> dict:
    """Both checksums of one chunk, and its differing rows when they differ; a server lost or
    refusing meanwhile is cdcflow's one-line error naming the table and chunk."""
    try:
        return _compare_chunk(sessions, plan, chunk)
    except _SideError as e:
        raise _chunk_error(sessions, e, plan.name, f"chunk {chunk.index} ({chunk.describe()})") from None


def _compare_chunk(sessions: Sessions, plan: TablePlan, chunk: Chunk) -> dict:
    up, down = sessions.pair()
    up_sums, down_sums = _sums(up, down, plan, chunk)
    sums = {"up": up_sums.get(0, _EMPTY), "down": down_sums.get(0, _EMPTY)}
    out = {"table": plan.name, "chunk": chunk.index, "range": chunk.describe(), **sums, "diffs": []}
    if sums["up"] != sums["down"]:
        out["diffs"] = _differing_rows(up, down, plan, chunk, max(sums["up"][0], sums["down"][0]),
                                       sessions.down_args)
    return out


def _differing_rows(up, down, plan: TablePlan, chunk: Chunk, rows: int, down_args: dict) -> list[dict]:
    """The rows of a chunk whose checksums differ.  A chunk of more than ROW_LEVEL_ROWS rows is
    cut into SPLIT sub-chunks, all summed by one query on each side, and only the sub-chunks
    that differ are searched further (bisection, as pt-table-sync narrows a differing chunk):
    a difference costs reading about ROW_LEVEL_ROWS rows of each side, not the whole chunk."""
    if plan.key and rows > ROW_LEVEL_ROWS:
        with _on("upstream"):
            subs = sub_chunks(up, plan.quoted, plan.key, chunk, max(ROW_LEVEL_ROWS, -(-rows // SPLIT)))
        if len(subs) > 1:  # one: the upstream's rows are too few to cut (the downstream has the rest)
            up_sums, down_sums = _sums(up, down, plan, chunk, subs)
            out = []
            for i, sub in enumerate(subs):
                u, d = up_sums.get(i, _EMPTY), down_sums.get(i, _EMPTY)
                if u != d:
                    out += _differing_rows(up, down, plan, sub, max(u[0], d[0]), down_args)
            return out
    return _row_diff(up, down, plan, chunk, down_args)


def _row_diff(up, down, plan: TablePlan, chunk: Chunk, down_args: dict) -> list[dict]:
    """A chunk read from both sides and compared row by row."""
    where, args = chunk.where(plan.key) if plan.key else ("", [])
    with _on("upstream"):
        up_rows = fetch_rows(up, plan.quoted, plan.columns, plan.types("up"), where, args)
    with _on("downstream"):
        down_rows = fetch_rows(down, plan.quoted, plan.columns, plan.types("down"), where, args)
    if not plan.key:
        return multiset_diff(plan.name, plan.columns, up_rows, down_rows)
    with _on("downstream"):
        folder = KeyFolder({plan.name: plan.key_collations}, down_args)
    try:
        with _on("downstream"):
            folder.prepare([(plan.name, values) for values, _ in up_rows + down_rows])
        return keyed_diff(plan.name, plan.columns, plan.key, up_rows, down_rows,
                          lambda v: encode_image({c: folder.value(plan.name, c, v[c]) for c in plan.key}))
    finally:
        folder.close()


def _compare_all(pool: ThreadPoolExecutor, sessions: Sessions, todo: list[tuple[TablePlan, Chunk]]) -> list[dict]:
    return list(pool.map(lambda t: compare_chunk(sessions, *t), todo))


def _cut_and_compare(pool: ThreadPoolExecutor, sessions: Sessions, plans: list[TablePlan],
                     chunk_size: int) -> tuple[dict, dict]:
    """Every table cut into chunks (the tables at once) and each chunk compared as soon as its
    table is cut.  Returns the chunks and their results, both by (table, chunk index)."""
    def cut(plan):
        try:
            up = sessions.pair()[0]
            with _on("upstream"):
                return plan, table_chunks(up, plan.quoted, plan.key, chunk_size)
        except _SideError as e:
            raise _chunk_error(sessions, e, plan.name, "(cutting it into chunks)") from None

    tasks, pending = {}, []
    for done in as_completed([pool.submit(cut, p) for p in plans]):
        plan, chunks = done.result()
        for c in chunks:
            tasks[(plan.name, c.index)] = (plan, c)
            pending.append(pool.submit(compare_chunk, sessions, plan, c))
    results = [f.result() for f in pending]
    return tasks, {(r["table"], r["chunk"]): r for r in results}


def verify(changefeed_id: str, source, up_args: dict, down_args: dict, rules: list[str], case_sensitive: bool,
           options: VerifyOptions, checkpoint_moves: Callable[[], bool]) -> tuple[dict, str]:
    """Compare the changefeed's tables.  `source` is the upstream's DbUri (its binlog head),
    `up_args` / `down_args` both servers' connection arguments, `checkpoint_moves()` says
    whether waiting for the checkpoint can help.  Returns (result, fix SQL text)."""
    t0 = time.time()
    up = _reach(up_args, "upstream")
    try:
        down = _reach(down_args, "downstream")
    except CdcflowError:
        up.close()
        raise
    try:
        plans, table_problems = plan_tables(up, down, rules, case_sensitive, options.tables)
    finally:
        up.close()
        down.close()

    sessions = Sessions(up_args, down_args, changefeed_id)
    try:
        with ThreadPoolExecutor(max_workers=options.workers, thread_name_prefix="verify") as pool:
            seen_at = live.head(source)
            already = live.applied(changefeed_id, seen_at)
            tasks, results = _cut_and_compare(pool, sessions, plans, options.chunk_size)
            head = live.head(source)
            differing = [k for k, r in results.items() if r["up"] != r["down"]]
            # without writes during the pass, and everything before it applied, a difference is final
            final = already and head.key() == seen_at.key()
            watched = {k: _rows(results[k]) for k in differing}  # the rows the first pass found differing
            rechecks, applied, deadline = 0, True, time.monotonic() + options.wait_seconds
            while differing and not final and rechecks < options.rechecks:
                applied = live.wait_applied(changefeed_id, head, max(0.0, deadline - time.monotonic()),
                                            checkpoint_moves)
                if not applied:
                    break
                results.update({(r["table"], r["chunk"]): r
                                for r in _compare_all(pool, sessions, [tasks[k] for k in differing])})
                rechecks += 1
                head = live.head(source)
                final = True
                for k in differing:
                    settled, watched[k] = _recheck(results[k], watched[k])
                    final &= settled
                differing = [k for k in differing if results[k]["diffs"]]
            # a difference whose upstream row kept changing was never seen applied: not yet applied
            applied = applied and (final or not differing)
    finally:
        sessions.close()
    return _result(changefeed_id, plans, table_problems, results, differing, applied, rechecks, t0)


def _row_id(diff: dict) -> str:
    return json.dumps(diff["key"], sort_keys=True, default=str)


def _rows(result: dict) -> dict[str, dict | None]:
    """A chunk's differing rows: the upstream's values of each, by its key."""
    return {_row_id(d): d["upstream"] for d in result["diffs"]}


def _recheck(result: dict, watched: dict[str, dict | None]) -> tuple[bool, dict[str, dict | None]]:
    """A chunk compared again once the checkpoint passed the upstream's head of the pass before,
    narrowed to the rows that pass found differing (`watched`): a row that differs only now was
    written while this verify ran, after the state it compares.  Returns whether every row still
    differing is final (its upstream values are those the pass before saw, so the change that
    made them is applied, and the row still differs), and the rows to watch next."""
    result["diffs"] = [d for d in result["diffs"] if _row_id(d) in watched]
    now = _rows(result)
    return all(watched[row] == values for row, values in now.items()), now


def _result(changefeed_id, plans, table_problems, results, differing, applied, rechecks, t0) -> tuple[dict, str]:
    diffs = [d for k in differing for d in results[k]["diffs"]]
    columns = [{"table": p.name, **c} for p in plans for c in p.problems]
    shown = [{k: v for k, v in d.items() if k not in _IMAGES} for d in diffs]
    if table_problems or columns or (diffs and applied):
        status = DIFFERENT
    elif differing:
        status = NOT_APPLIED
    else:
        status = EQUAL
    per_table = {p.name: {"table": p.name, "key": p.key, "chunks": 0, "rows_upstream": 0, "rows_downstream": 0,
                          "differing_chunks": 0} for p in plans}
    compared = 0  # a row and its counterpart are one row compared; a chunk's longer side counts its rows
    for (table, _), r in sorted(results.items()):
        t = per_table[table]
        t["chunks"] += 1
        t["rows_upstream"] += r["up"][0]
        t["rows_downstream"] += r["down"][0]
        compared += max(r["up"][0], r["down"][0])
    for table, _ in differing:
        per_table[table]["differing_chunks"] += 1
    result = {
        "changefeed": changefeed_id, "status": status, "equal": status == EQUAL,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "seconds": round(time.time() - t0, 3),
        "tables_checked": len(plans), "chunks_checked": len(results),
        "rows_compared": compared,
        "rechecks": rechecks,
        "tables": list(per_table.values()),
        "table_problems": table_problems,
        "column_problems": columns,
        "differences": shown if applied else [],
        "not_yet_applied": [] if applied else shown,
    }
    fix = fix_file([(p, [d for d in diffs if d["table"] == p.name]) for p in plans] if applied else [])
    return result, fix
