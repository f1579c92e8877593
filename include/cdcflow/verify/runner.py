"""One verification of a changefeed's tables: plan the tables, cut them into chunks, compare
the chunks in parallel Spark tasks (each opens its own connections to both servers), re-check
the differing ones once the changefeed has applied what the upstream held when they were
seen (live.py), and gather the result."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass

import pymysql

from cdcflow.core import tls
from cdcflow.core.errors import DOWNSTREAM_UNREACHABLE, UPSTREAM_UNREACHABLE, CdcflowError
from cdcflow.core.row_codec import encode_image
from cdcflow.sink.collation_key import KeyFolder
from cdcflow.sink.connection import ROW_TIME_ZONE
from cdcflow.verify import live
from cdcflow.verify.catalogue import TablePlan, plan_tables
from cdcflow.verify.checksum import checksum, fetch_rows
from cdcflow.verify.chunks import Chunk, table_chunks
from cdcflow.verify.fixsql import fix_file
from cdcflow.verify.rowdiff import keyed_diff, multiset_diff

EQUAL, DIFFERENT, NOT_APPLIED = "equal", "different", "not yet applied"
# exit code of `cdcflow changefeed verify` per status
EXIT_CODES = {EQUAL: 0, DIFFERENT: 2, NOT_APPLIED: 3}
_IMAGES = ("up_image", "down_image")  # a difference's values for the fix SQL, not for showing


@dataclass
class VerifyOptions:
    tables: list[str] | None = None  # filter-rule patterns narrowing the changefeed's tables
    chunk_size: int = 10000  # upstream rows per chunk
    wait_seconds: float = 120.0  # how long differing chunks wait for the checkpoint, in all
    rechecks: int = 3  # re-checks at most, while the upstream keeps writing
    workers: int = 4  # Spark tasks comparing chunks


def summary_line(result: dict) -> str:
    """A verify result in one line, as the CLI and the DAG's verify runs say it."""
    found = len(result["differences"]) + len(result["column_problems"]) + len(result["table_problems"])
    return (f"Changefeed {result['changefeed']}: {result['status']}: {result['tables_checked']} table(s), "
            f"{result['chunks_checked']} chunk(s), {result['rows_compared']} row(s) compared, {found} difference(s)"
            + (f", {len(result['not_yet_applied'])} row(s) the changefeed has not applied yet (its checkpoint did "
               "not pass the upstream's position; run cycles, then verify again)" if result["not_yet_applied"] else "")
            + (f"; fix SQL in {result['fix_sql']}" if result.get("fix_sql") else ""))


def connect(args: dict):
    """A reading session on either server: UTC, as the sink writes rows, so a TIMESTAMP
    prints the same instant on both sides."""
    tls.install()
    conn = pymysql.connect(**{**args, "charset": "utf8mb4", "autocommit": True})
    with conn.cursor() as cur:
        cur.execute(f"SET SESSION time_zone = '{ROW_TIME_ZONE}'")
    return conn


def _reach(args: dict, side: str):
    """The driver's session on one side; a server it cannot reach is one line saying which."""
    try:
        return connect(args)
    except pymysql.MySQLError as e:
        code = UPSTREAM_UNREACHABLE if side == "upstream" else DOWNSTREAM_UNREACHABLE
        raise CdcflowError(f"verify cannot reach the {side} at {args['host']}:{args['port']}: {e}", code=code,
                           hint=f"start the {side} or fix the changefeed's URI, then verify again") from None


def compare_chunk(up, down, plan: TablePlan, chunk: Chunk, down_args: dict) -> dict:
    """Both checksums of one chunk, and its differing rows when they differ."""
    where, args = chunk.where(plan.key) if plan.key else ("", [])
    up_types, down_types = plan.types("up"), plan.types("down")
    sums = {"up": checksum(up, plan.quoted, plan.columns, up_types, where, args),
            "down": checksum(down, plan.quoted, plan.columns, down_types, where, args)}
    out = {"table": plan.name, "chunk": chunk.index, "range": chunk.describe(), **sums, "diffs": []}
    if sums["up"] == sums["down"]:
        return out
    up_rows = fetch_rows(up, plan.quoted, plan.columns, up_types, where, args)
    down_rows = fetch_rows(down, plan.quoted, plan.columns, down_types, where, args)
    if not plan.key:
        out["diffs"] = multiset_diff(plan.name, plan.columns, up_rows, down_rows)
        return out
    folder = KeyFolder({plan.name: plan.key_collations}, down_args)
    try:
        folder.prepare([(plan.name, values) for values, _ in up_rows + down_rows])
        out["diffs"] = keyed_diff(plan.name, plan.columns, plan.key, up_rows, down_rows,
                                  lambda v: encode_image({c: folder.value(plan.name, c, v[c]) for c in plan.key}))
    finally:
        folder.close()
    return out


def compare_partition(batches, plans: dict, up_args: dict, down_args: dict):
    """Spark mapInArrow body: chunk tasks (JSON) in, one result (JSON) per chunk out."""
    import pyarrow as pa

    up = down = None
    try:
        for batch in batches:
            results = []
            for text in batch.column(0).to_pylist():
                task = json.loads(text)
                if up is None:
                    up, down = connect(up_args), connect(down_args)
                plan = TablePlan.from_dict(plans[task["table"]])
                results.append(json.dumps(compare_chunk(up, down, plan, Chunk(**task["chunk"]), down_args)))
            yield pa.RecordBatch.from_pydict({"result": results})
    finally:
        for conn in (up, down):
            if conn is not None:
                conn.close()


def _run(spark, tasks: list[dict], plans: dict, up_args: dict, down_args: dict, workers: int) -> list[dict]:
    if not tasks:
        return []
    df = spark.createDataFrame([(json.dumps(t),) for t in tasks], "task string")
    df = df.repartition(max(1, min(workers, len(tasks))))
    rows = df.mapInArrow(lambda it: compare_partition(it, plans, up_args, down_args), "result string").collect()
    return [json.loads(r["result"]) for r in rows]


def verify(changefeed_id: str, source, up_args: dict, down_args: dict, rules: list[str], case_sensitive: bool,
           spark_for: Callable[[], object], options: VerifyOptions,
           checkpoint_moves: Callable[[], bool]) -> tuple[dict, str]:
    """Compare the changefeed's tables.  `source` is the upstream's DbUri (its binlog head),
    `up_args` / `down_args` both servers' connection arguments, `spark_for()` opens the
    Spark session (only when there is a chunk to compare), `checkpoint_moves()` says whether
    waiting for the checkpoint can help.  Returns (result, fix SQL text)."""
    t0 = time.time()
    up = _reach(up_args, "upstream")
    try:
        down = _reach(down_args, "downstream")
    except CdcflowError:
        up.close()
        raise
    try:
        plans, table_problems = plan_tables(up, down, rules, case_sensitive, options.tables)
        tasks = [{"table": p.name, "chunk": c.__dict__} for p in plans
                 for c in table_chunks(up, p.quoted, p.key, options.chunk_size)]
    finally:
        up.close()
        down.close()
    plan_dicts = {p.name: p.to_dict() for p in plans}
    spark = spark_for() if tasks else None

    def run(todo):
        return _run(spark, todo, plan_dicts, up_args, down_args, options.workers)

    seen_at = live.head(source)
    already = live.applied(changefeed_id, seen_at)
    results = {(r["table"], r["chunk"]): r for r in run(tasks)}
    head = live.head(source)
    differing = [k for k, r in results.items() if r["up"] != r["down"]]
    # without writes during the pass, and everything before it applied, a difference is final
    final = already and head.key() == seen_at.key()
    rechecks, applied, deadline = 0, True, time.monotonic() + options.wait_seconds
    while differing and not final and rechecks < options.rechecks:
        applied = live.wait_applied(changefeed_id, head, max(0.0, deadline - time.monotonic()), checkpoint_moves)
        if not applied:
            break
        seen_at = head
        by_key = {(t["table"], t["chunk"]["index"]): t for t in tasks}
        results.update({(r["table"], r["chunk"]): r for r in run([by_key[k] for k in differing])})
        rechecks += 1
        head = live.head(source)
        differing = [k for k in differing if results[k]["up"] != results[k]["down"]]
        final = head.key() == seen_at.key()
    return _result(changefeed_id, plans, table_problems, results, differing, applied, rechecks, t0)


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
    for (table, _), r in sorted(results.items()):
        t = per_table[table]
        t["chunks"] += 1
        t["rows_upstream"] += r["up"][0]
        t["rows_downstream"] += r["down"][0]
    for table, _ in differing:
        per_table[table]["differing_chunks"] += 1
    result = {
        "changefeed": changefeed_id, "status": status, "equal": status == EQUAL,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "seconds": round(time.time() - t0, 3),
        "tables_checked": len(plans), "chunks_checked": len(results),
        "rows_compared": sum(t["rows_upstream"] + t["rows_downstream"] for t in per_table.values()),
        "rechecks": rechecks,
        "tables": list(per_table.values()),
        "table_problems": table_problems,
        "column_problems": columns,
        "differences": shown if applied else [],
        "not_yet_applied": [] if applied else shown,
    }
    fix = fix_file([(p, [d for d in diffs if d["table"] == p.name]) for p in plans] if applied else [])
    return result, fix
