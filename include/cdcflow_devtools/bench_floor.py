"""The downstream's floor for an apply: the statements cdcflow sent, sent again prebuilt.

The bench's warm Spark Connect cycle runs with the general query log of cdcflow's downstream
on (a table: mysql.general_log, every statement with its connection and the moment it came).
Afterwards that downstream is reset to the start's schema and the same row statements and DDLs
into the bench schema are sent again, with no Spark, no decoding, no statement building: each
connection of the cycle that wrote rows becomes a connection of the replay that sends its
statements in their order, as many at once as ran at once in the cycle.  What ran at once is
read from the log: between two DDLs, each connection's statements span an interval, and
overlapping intervals form one phase (a Spark job's partitions); phases run one after the
other, a DDL alone; the parts of a segment (its slices: apply's writers all end one before
the next begins) are phases of their own too, told apart by the catalogue question apply asks
before each.  The sum is the floor: what apply would take if everything but the downstream's
own work cost nothing.  The replay's downstream is checked against the upstream like every
other, which proves the log held every statement.
"""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pymysql

from cdcflow.sink import compiled_params, prepared_statements
from cdcflow.sink.connection import DML_SESSION
from cdcflow.sink.row_writer import LOCK_CONFLICTS, STATEMENT_ATTEMPTS, conflict_wait
from cdcflow_devtools.bench_census import process_cpu
from cdcflow_devtools.bench_workload import SCHEMA

# a statement that writes the bench schema's rows or changes its tables (not cdcflow's own
# bookkeeping, nor the bench's reads)
_ROWS = re.compile(rf"^\s*(REPLACE|INSERT|DELETE|UPDATE)\b.*?`?{SCHEMA}`?\.", re.I | re.S)
_DDL = re.compile(rf"^\s*(ALTER|CREATE|DROP|RENAME|TRUNCATE)\b.*?`?{SCHEMA}`?\.", re.I | re.S)
# apply's question to the downstream's catalogue before each part it writes (sink.row_sink's
# plan: the tables' columns), asked once the writers of the part before have all ended: the
# writers of two parts may hold one key on two sessions, so the parts replay one after the other
_PART_START = re.compile(r"^[\s(]*SELECT\b.*\binformation_schema\.COLUMNS\b", re.I | re.S)


@dataclass
class Phase:
    """Statements that ran at once in the cycle: per connection, its statements in order."""

    connections: dict[int, list[str]] = field(default_factory=dict)
    ddl: str | None = None

    def statements(self) -> int:
        return 1 if self.ddl else sum(map(len, self.connections.values()))


def start_capture(server) -> None:
    server.execute("TRUNCATE TABLE mysql.general_log", "SET GLOBAL log_output = 'TABLE'", "SET GLOBAL general_log = 1")


def captured(server) -> list[Phase]:
    """Stop the log and read the cycle's statements into phases.  A prepared statement's
    execution (logged with its parameters written in) is replayed prepared too, with the same
    parameters (`prepared_again`), so that the floor is the downstream's work for what the
    writers sent."""
    server.execute("SET GLOBAL general_log = 0")
    rows = server.query("SELECT event_time, thread_id, command_type, argument FROM mysql.general_log "
                        "WHERE command_type IN ('Query', 'Prepare', 'Execute') ORDER BY event_time")
    server.execute("TRUNCATE TABLE mysql.general_log")
    return phases_of(rows)


def phases_of(rows) -> list[Phase]:
    """The logged (event time, thread, command, argument) rows of a cycle, in time order, as the
    phases `captured` replays."""
    phases: list[Phase] = []
    segment: list[tuple] = []
    prepared: dict[int, list[str]] = {}  # per connection, the statements it prepared
    for at, thread, command, arg in rows:
        sql = arg.decode("utf-8", "surrogateescape") if isinstance(arg, (bytes, bytearray)) else arg
        if command == "Prepare":
            prepared.setdefault(thread, []).append(sql)
        elif _DDL.match(sql):
            phases += _overlapping(segment)
            phases.append(Phase(ddl=sql))
            segment = []
        elif _PART_START.match(sql):
            phases += _overlapping(segment)
            segment = []
        elif _ROWS.match(sql):
            segment.append((at, thread, prepared_again(prepared.get(thread, []), sql) if command == "Execute" else sql))
    return phases + _overlapping(segment)


def prepared_again(templates: list[str], logged: str) -> tuple[str, bytes] | str:
    """A logged execution as (the statement prepared, its parameters), the parameters read back
    from the literals the log wrote in place of its placeholders; the text where no template
    fits or a literal has no parameter."""
    for template in reversed(templates):
        literals = _filled(template, logged)
        if literals is not None:
            params = compiled_params.literal_params(literals)
            return logged if params is None else (template, params)
    return logged


def _filled(template: str, logged: str) -> list[str] | None:
    """The literals `logged` has where `template` has a placeholder; None: not its execution."""
    out, j = [], 0
    for i, ch in enumerate(template):
        if ch != "?":
            if logged[j:j + 1] != ch:
                return None
            j += 1
            continue
        k = j
        if logged[j:j + 1] == "'":  # a quoted string, its quotes escaped with a backslash
            k += 1
            while k < len(logged) and logged[k] != "'":
                k += 2 if logged[k] == "\\" else 1
            k += 1
        else:
            while k < len(logged) and logged[k] not in ",) ":
                k += 1
        out.append(logged[j:k])
        j = k
    return out if j == len(logged) else None


def _overlapping(statements: list[tuple]) -> list[Phase]:
    """Between two DDLs: each connection's interval, overlapping ones merged into a phase."""
    spans: dict[int, list] = {}
    for at, thread, sql in statements:
        span = spans.setdefault(thread, [at, at, []])
        span[1] = at
        span[2].append(sql)
    phases, end = [], None
    for first, last, sqls in sorted(spans.values(), key=lambda s: s[0]):
        if end is None or first > end:
            phases.append(Phase())
        phases[-1].connections[len(phases[-1].connections)] = sqls
        end = last if end is None or last > end else end
    return phases


DUPLICATE_ENTRY = 1062


def replay(server, phases: list[Phase], spans: list[float] | None = None) -> tuple[float, float]:
    """The phases sent again, one after the other: the seconds they took and the downstream's
    core-seconds in them (on a machine it shares with cdcflow, what apply's own work competes
    with: bench.apply_bound); each phase's seconds appended to `spans`.  A statement the
    downstream refuses for a duplicate was refused in the cycle too (an UPSERT the writer then
    sent again as DELETE + REPLACE, both in the log): it is passed over as the cycle passed it;
    one refused for a lock conflict is sent again, as the writers send it."""
    width = max([len(p.connections) for p in phases] + [1])
    conns = [server.connect(SCHEMA, autocommit=True) for _ in range(width)]
    try:
        for c in conns:
            with c.cursor() as cur:
                for s in DML_SESSION:
                    cur.execute(s)

        def send(conn, sqls: list) -> None:
            held = prepared_statements.of(conn)
            with conn.cursor() as cur:
                for sql in sqls:
                    for attempt in range(STATEMENT_ATTEMPTS):
                        try:
                            if isinstance(sql, tuple):
                                held.execute(*sql)
                            else:
                                cur.execute(sql)
                        except pymysql.err.IntegrityError as e:
                            if e.args[0] != DUPLICATE_ENTRY:
                                raise
                        except pymysql.err.OperationalError as e:
                            # statements of two connections on the same unique values lock each
                            # other: run again, as the writers do (RowWriter._run)
                            if e.args[0] not in LOCK_CONFLICTS or attempt == STATEMENT_ATTEMPTS - 1:
                                raise
                            time.sleep(conflict_wait(attempt))
                            continue
                        break

        took, cpu = 0.0, process_cpu(server.pid)
        with ThreadPoolExecutor(width) as pool:
            for p in phases:
                t0 = time.perf_counter()
                if p.ddl:
                    send(conns[0], [p.ddl])
                else:
                    list(pool.map(send, conns, p.connections.values()))
                secs = time.perf_counter() - t0
                took += secs
                if spans is not None:
                    spans.append(secs)
        return took, process_cpu(server.pid) - cpu
    finally:
        for c in conns:
            c.close()


def segment_seconds(phases: list[Phase], spans: list[float]) -> list[float]:
    """The replay's seconds per segment of the cycle: its row phases and the DDL that ends it (the
    last segment ends without one), as apply's segments run (apply_segment_seconds)."""
    out, acc = [], 0.0
    for p, secs in zip(phases, spans):
        acc += secs
        if p.ddl:
            out.append(acc)
            acc = 0.0
    return out + [acc]


def ddl_seconds(phases: list[Phase], spans: list[float]) -> list[float]:
    """The replay's seconds of each DDL alone, in order (the `ddl_ms` of apply's timeline)."""
    return [secs for p, secs in zip(phases, spans) if p.ddl]

