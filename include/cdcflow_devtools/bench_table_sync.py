"""The snapshot part's verify anchor, what is bench-specific about it: `pt-table-sync --print`
timed between the upstream and a downstream, differences injected into the downstream, and
the explanation of rows pt-table-sync misses.  Running pt-table-sync and reading statements
back (its and `verify --fix-sql`'s) is pt_table_sync's.

pt-table-sync sums a chunk as BIT_XOR(CRC32(row text)): two differing rows of one chunk whose
texts change by the same bits cancel, and it passes the chunk as equal.  Injected updates
therefore take seeded random values per row (real differences do not come as identical
deltas); a row it still misses is explained when pt-table-sync with `--function MD5`,
restricted to the missed rows, names it.
"""

from __future__ import annotations

import random
import string
import time

from cdcflow_devtools import pt_table_sync


def primary_keys(server, schema: str) -> dict[str, tuple[str, ...]]:
    """schema.table -> its primary key's columns, in order."""
    found: dict[str, list[str]] = {}
    for table, col in server.query(
            "SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = %s "
            "AND INDEX_NAME = 'PRIMARY' ORDER BY TABLE_NAME, SEQ_IN_INDEX", (schema,)):
        found.setdefault(f"{schema}.{table}", []).append(col)
    return {t: tuple(c) for t, c in found.items()}


def timed_print(up, down, schema: str, tables: list[str], extra: list[str] | None = None) -> tuple[float, str]:
    """`pt-table-sync --print` of `tables` from the upstream to the downstream (nothing is
    executed): its seconds and the statements it printed."""
    t0 = time.perf_counter()
    text = pt_table_sync.run(up.port, down.port, [schema], tables, extra=extra)
    return time.perf_counter() - t0, text


def _text(rnd: random.Random) -> str:
    return "changed " + "".join(rnd.choices(string.ascii_letters + string.digits, k=rnd.randint(4, 40)))


# Injected changes, per row: columns outside every key (no unique key is hit), each value drawn
# on its own so no two rows change alike.
_CHANGE = {
    "accounts": lambda r: f"balance = balance + {r.randint(1, 999_999) / 100:.2f}, name = '{_text(r)}'",
    "orders": lambda r: f"amount = COALESCE(amount, 0) + {r.randint(1, 999_999) / 100:.2f}, note = '{_text(r)}'",
    "events": lambda r: f"kind = kind + {r.randint(1, 1_000_000)}, payload = '{_text(r)}'",
    "items": lambda r: f"qty = qty + {r.randint(1, 1_000_000)}, price = COALESCE(price, 0) + {r.random() * 1e4 + 1:.6f}",
}
_EXTRA = {
    "accounts": "({i}, CONCAT('extra-', {i}, '@example.com'), 'extra', 1.00, NULL)",
    "orders": "({i}, 1, 1.00, 'extra', NULL)",
    "events": "({i}, {i} % 8, 1, 'extra', NULL)",
    "items": "({i}, CONCAT('extra-', {i}), 'extra', 1, 1.0)",
}


def inject(down, schema: str, per_table_rows: int, n: int, seed: int = 29) -> set[tuple[str, tuple]]:
    """`n` differences in the downstream's four tables (ids 1..per_table_rows; events' shard is
    id % 8), a third each of updated rows, deleted rows and extra rows, spread over the tables
    by a seeded random draw; returns their (schema.table, key) as fix_rows gives them."""
    rnd = random.Random(seed)
    tables = list(_CHANGE)
    counts = {t: 0 for t in tables}
    for _ in range(n):
        counts[rnd.choice(tables)] += 1
    expected, statements = set(), []
    for t, count in counts.items():
        ids = rnd.sample(range(1, per_table_rows + 1), 2 * count // 3)
        changed, deleted = ids[: count // 3], ids[count // 3:]
        extra = [per_table_rows + k for k in range(1, count - len(ids) + 1)]
        name = f"{schema}.{t}"
        statements += [f"UPDATE {name} SET {_CHANGE[t](rnd)} WHERE id = {i}" for i in changed]
        if deleted:
            statements.append(f"DELETE FROM {name} WHERE id IN ({', '.join(map(str, deleted))})")
        if extra:
            statements.append(f"INSERT INTO {name} VALUES " + ", ".join(_EXTRA[t].format(i=i) for i in extra))
        for i in changed + deleted + extra:
            expected.add((name, (str(i), str(i % 8)) if t == "events" else (str(i),)))
    down.execute(*statements)
    return expected


def _quote(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'"


def md5_named(up, down, rows: set[tuple[str, tuple]], keys: dict[str, tuple[str, ...]]) -> set[tuple[str, tuple]]:
    """The rows of `rows` pt-table-sync names when it sums with MD5 instead of CRC32 and reads
    only those rows (`--where` their keys): a row of `rows` it names is one CRC32 cancelled."""
    named = set()
    by_table: dict[str, list[tuple]] = {}
    for table, key in rows:
        by_table.setdefault(table, []).append(key)
    for table, ks in sorted(by_table.items()):
        schema, name = table.split(".", 1)
        cols = ", ".join(f"`{c}`" for c in keys[table])
        where = f"({cols}) IN ({', '.join('(' + ', '.join(map(_quote, k)) + ')' for k in ks)})"
        text = pt_table_sync.run(up.port, down.port, [schema], [name], extra=["--function", "MD5", "--where", where])
        named |= pt_table_sync.fix_rows(text, keys) & rows
    return named
