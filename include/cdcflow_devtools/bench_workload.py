"""The benchmark's workload: a schema snapshot and a deterministic stream of transactions.

Inserts come in transactions of `TXN_ROWS` rows, made by the server from MariaDB's
sequence engine (`seq_1_to_100`).  Updates and deletes are OLTP-shaped by default: one row
by its key per transaction, `TXN_ROWS` of them sent as one compound statement (`FOR i IN
lo..hi DO UPDATE … WHERE id = i; END FOR`), in which each statement commits on its own
(shape "oltp"); shape "bulk" makes them one range statement per transaction instead.
Each table keeps its live ids as one range [lo, hi): inserts append at hi, deletes remove
from lo, updates touch a window inside it, so every batch hits exactly its 100 rows and
the number of row changes is known without asking the server.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

SCHEMA = "bench"
TXN_ROWS = 100


def table_definitions(schema: str) -> tuple[str, ...]:
    """The four tables, in `schema`: the replication workload's (SCHEMA) and the snapshot
    bench's copy (bench_snapshot) have the same column types."""
    return (
        f"CREATE TABLE {schema}.accounts (id BIGINT PRIMARY KEY, email VARCHAR(80) NOT NULL, name VARCHAR(80),"
        " balance DECIMAL(14,2) NOT NULL, updated DATETIME(6), UNIQUE KEY uk_email (email))",
        f"CREATE TABLE {schema}.orders (id BIGINT PRIMARY KEY, account_id BIGINT NOT NULL, amount DECIMAL(12,2),"
        " note VARCHAR(200), created DATETIME, KEY k_account (account_id))",
        f"CREATE TABLE {schema}.events (id BIGINT NOT NULL, shard INT NOT NULL, kind INT NOT NULL, payload TEXT,"
        " at TIMESTAMP(3) NULL, PRIMARY KEY (id, shard))",
        f"CREATE TABLE {schema}.items (id BIGINT PRIMARY KEY, code VARCHAR(32) NOT NULL, name VARCHAR(100),"
        " qty INT NOT NULL, price DOUBLE, UNIQUE KEY uk_code (code))",
    )


# The snapshot every downstream starts from: the schema as it is at the start position.
SNAPSHOT = (f"CREATE DATABASE {SCHEMA}", *table_definitions(SCHEMA))

# Row values as functions of the id `i` (the sequence's `seq` shifted by a base).
_INSERTS = {
    "accounts": "SELECT {i}, CONCAT('a', {i}, '@example.com'), CONCAT('Account ', {i}), ({i} * 37 % 100000) / 100,"
                " TIMESTAMP('2026-01-01 00:00:00.000001') + INTERVAL {i} SECOND",
    "orders": "SELECT {i}, {i} % 997, ({i} * 53 % 1000000) / 100, CONCAT('order ', {i}, ' ', REPEAT('x', {i} % 60)),"
              " TIMESTAMP('2026-01-01') + INTERVAL {i} MINUTE",
    "events": "SELECT {i}, {i} % 8, {i} % 13, CONCAT('{{\"n\":', {i}, ',\"pad\":\"', REPEAT('p', {i} % 90), '\"}}'),"
              " FROM_UNIXTIME(1767225600 + {i} / 1000)",
    "items": "SELECT {i}, CONCAT('sku-', {i}), CONCAT('item ', {i}), {i} % 500, {i} * 1.25",
}
_COLUMNS = {
    "accounts": "id, email, name, balance, updated",
    "orders": "id, account_id, amount, note, created",
    "events": "id, shard, kind, payload, at",
    "items": "id, code, name, qty, price",
}
# Updates of columns outside every key, and (where the table has one) of a unique key.
_UPDATE = {
    "accounts": "balance = balance + 1.5, updated = updated + INTERVAL 1 SECOND",
    "orders": "amount = amount + 1, note = CONCAT('upd ', {step}, ' ', id)",
    "events": "kind = kind + 1, payload = CONCAT('{{\"u\":', {step}, '}}')",
    "items": "qty = qty + 1, price = price * 1.01",
}
_UNIQUE_UPDATE = {
    "accounts": "email = CONCAT('e', {step}, '-', id, '@example.com')",
    "items": "code = CONCAT('k', {step}, '-', id)",
}
TABLES = tuple(_INSERTS)

# One round of operations per table: net growth of three batches, never below one batch
# live when an update or delete comes.  I insert, U update, K unique-key update, D delete.
_ROUND = "IIUIKIDUID"

# DDLs between the transactions, at these fractions of the workload.
DDLS = (
    (0.2, f"ALTER TABLE {SCHEMA}.orders ADD COLUMN status VARCHAR(16) NOT NULL DEFAULT 'new'"),
    (0.4, f"CREATE INDEX k_kind ON {SCHEMA}.events (kind)"),
    (0.6, f"ALTER TABLE {SCHEMA}.items MODIFY COLUMN name VARCHAR(160)"),
    (0.8, f"ALTER TABLE {SCHEMA}.accounts ADD COLUMN tier TINYINT NOT NULL DEFAULT 0"),
)


SHAPES = ("oltp", "bulk")


@dataclass(frozen=True)
class Statement:
    sql: str
    rows: int  # row changes it makes (0 for a DDL)
    kind: str  # insert | update | unique-update | delete | ddl
    transactions: int = 1


@dataclass
class _Live:
    lo: int = 1
    hi: int = 1  # next id to insert

    @property
    def count(self) -> int:
        return self.hi - self.lo


@dataclass
class Plan:
    statements: list[Statement] = field(default_factory=list)

    @property
    def row_changes(self) -> int:
        return sum(s.rows for s in self.statements)

    live: dict[str, tuple[int, int]] = field(default_factory=dict)  # table -> ids [lo, hi) at the end

    @property
    def transactions(self) -> int:
        return sum(s.transactions for s in self.statements)

    @property
    def ddls(self) -> int:
        return sum(1 for s in self.statements if s.kind == "ddl")

    def by_kind(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for s in self.statements:
            out[s.kind] = out.get(s.kind, 0) + s.rows
        return out


def plan(row_changes: int, seed: int = 7, shape: str = "oltp") -> Plan:
    """About `row_changes` row changes (rounded up to whole batches of 100) and the DDLs."""
    if shape not in SHAPES:
        raise ValueError(f"workload shape {shape!r}: choose one of {', '.join(SHAPES)}")
    rng = random.Random(seed)
    n = max(1, -(-row_changes // TXN_ROWS))
    live = {t: _Live() for t in TABLES}
    ddl_at = [(int(frac * n), sql) for frac, sql in DDLS]
    out = Plan()
    for i in range(n):
        while ddl_at and ddl_at[0][0] == i:
            out.statements.append(Statement(ddl_at.pop(0)[1], 0, "ddl"))
        table = TABLES[i % len(TABLES)]
        op = _ROUND[(i // len(TABLES)) % len(_ROUND)]
        out.statements.append(_statement(table, op, live[table], rng, i, shape == "oltp"))
    out.statements += [Statement(sql, 0, "ddl") for _, sql in ddl_at]
    out.live = {t: (r.lo, r.hi) for t, r in live.items()}
    return out


def _statement(table: str, op: str, live: _Live, rng: random.Random, step: int, point: bool) -> Statement:
    target = f"{SCHEMA}.{table}"
    if op == "I" or live.count < TXN_ROWS:
        base = live.hi - 1
        select = _INSERTS[table].format(i=f"({base} + seq)")
        live.hi += TXN_ROWS
        return Statement(f"INSERT INTO {target} ({_COLUMNS[table]}) {select} FROM seq_1_to_{TXN_ROWS}",
                         TXN_ROWS, "insert")
    if op == "D":
        lo = live.lo
        live.lo += TXN_ROWS
        return _batch(f"DELETE FROM {target}", lo, "delete", point)
    lo = rng.randint(live.lo, live.hi - TXN_ROWS)
    if op == "K" and table in _UNIQUE_UPDATE:
        return _batch(f"UPDATE {target} SET {_UNIQUE_UPDATE[table].format(step=step)}", lo, "unique-update", point)
    return _batch(f"UPDATE {target} SET {_UPDATE[table].format(step=step)}", lo, "update", point)


def _batch(head: str, lo: int, kind: str, point: bool) -> Statement:
    """Rows lo .. lo+99: one transaction per row by its key, or one range statement."""
    hi = lo + TXN_ROWS - 1
    if point:
        return Statement(f"FOR i IN {lo}..{hi} DO {head} WHERE id = i; END FOR", TXN_ROWS, kind, TXN_ROWS)
    return Statement(f"{head} WHERE id BETWEEN {lo} AND {hi}", TXN_ROWS, kind)


def create_snapshot(server) -> None:
    """The schema as of the start position, on any server (upstream or downstream)."""
    server.execute(f"DROP DATABASE IF EXISTS {SCHEMA}", *SNAPSHOT)


def fill(server, schema: str, rows: int, slice_rows: int = 100_000) -> int:
    """`schema` created anew with the four tables holding about `rows` rows in all (the
    workload's row values, ids 1..rows/4 each), inserted by the server `slice_rows` at a time."""
    per_table = max(1, rows // len(TABLES))
    server.execute(f"DROP DATABASE IF EXISTS {schema}", f"CREATE DATABASE {schema}", *table_definitions(schema))
    conn = server.connect(schema)
    try:
        with conn.cursor() as cur:
            for table in TABLES:
                for lo in range(1, per_table + 1, slice_rows):
                    hi = min(per_table, lo + slice_rows - 1)
                    cur.execute(f"INSERT INTO {schema}.{table} ({_COLUMNS[table]}) "
                                f"{_INSERTS[table].format(i='seq')} FROM seq_{lo}_to_{hi}")
    finally:
        conn.close()
    return per_table * len(TABLES)


def run(server, workload: Plan) -> int:
    """Execute the plan on the upstream (autocommit); returns its row changes after checking
    that every table holds exactly the rows the plan leaves live."""
    conn = server.connect(SCHEMA)  # the sequence engine's tables live in the current database
    try:
        with conn.cursor() as cur:
            for st in workload.statements:
                cur.execute(st.sql)
            for table, (lo, hi) in workload.live.items():
                cur.execute(f"SELECT COUNT(*), COALESCE(MIN(id), {lo}), COALESCE(MAX(id), {hi - 1}) FROM {table}")
                got = tuple(cur.fetchone())
                if got != (hi - lo, lo, hi - 1):
                    raise RuntimeError(f"after the workload {SCHEMA}.{table} holds (rows, min id, max id) {got}, "
                                       f"the plan leaves {(hi - lo, lo, hi - 1)}")
    finally:
        conn.close()
    return workload.row_changes
