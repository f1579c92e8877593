"""Key-range chunks of a table: boundaries taken from the upstream's key order, every
`size`-th key, so each chunk holds about `size` upstream rows; a chunk is cut the same way
into sub-chunks when it differs (comparison.py).  The first and last chunks
are open-ended, so rows only the downstream has fall in some chunk too.  A table without a
valid key is one chunk, compared as a multiset."""

from __future__ import annotations

from dataclasses import dataclass

from cdcflow.core.row_codec import decode_image, encode_image, quote_ident

@dataclass(frozen=True)
class Chunk:
    """Rows whose key is above `lo` (exclusive) and at most `hi` (inclusive); None: no bound.
    The bounds are row-image JSON (core.row_codec) of the key's values, so they travel to
    Spark tasks and come back as the same values."""

    index: int
    lo: str | None = None
    hi: str | None = None

    def where(self, key: list[str]) -> tuple[str, list]:
        """The chunk's condition over `key` and its arguments ("" when it has no bound)."""
        parts, args = [], []
        for op, bound in ((">", self.lo), ("<=", self.hi)):
            if bound is None:
                continue
            values = decode_image(bound)
            if len(key) > 1:  # MariaDB scans the whole index for a row comparison: a range on the first column
                parts.append(f"{quote_ident(key[0])} {op[0]}= %s")
                args.append(values[key[0]])
            parts.append(f"{_tuple(key)} {op} {_tuple(['%s'] * len(key), quote=False)}")
            args += [values[c] for c in key]
        return " AND ".join(parts), args

    def describe(self) -> str:
        return f"({self.lo or '-inf'}, {self.hi or '+inf'}]"


def _tuple(items: list[str], quote: bool = True) -> str:
    names = [quote_ident(i) if quote else i for i in items]
    return names[0] if len(names) == 1 else "(" + ", ".join(names) + ")"


def chunks_from_bounds(bounds: list[dict], within: Chunk | None = None) -> list[Chunk]:
    """Chunks between consecutive boundary keys (each a {column: value} of the key, in key
    order): (lo, b1], (b1, b2], ..., (bn, hi] where lo and hi are `within`'s bounds (None,
    open, for a whole table)."""
    outer = within or Chunk(0)
    texts = [encode_image(b) for b in bounds]
    edges = [outer.lo, *texts, outer.hi]
    return [Chunk(i, edges[i], edges[i + 1]) for i in range(len(edges) - 1)]


def next_bound_sql(table: str, key: list[str], where: str, size: int) -> str:
    """The `size`-th key in key order among the rows `where` keeps: the index is walked by
    the server, only that key travels (cheaper than numbering every row of the table)."""
    cols = ", ".join(quote_ident(c) for c in key)
    return (f"SELECT {cols} FROM {table}" + (f" WHERE {where}" if where else "")
            + f" ORDER BY {cols} LIMIT 1 OFFSET {int(size) - 1}")


def table_chunks(conn, table: str, key: list[str] | None, size: int) -> list[Chunk]:
    """The chunks of `table` ("`s`.`t`") on the upstream connection `conn`: every `size`-th key,
    or spans of `size` keys where the key is a dense integer (_even_bounds)."""
    if not key:
        return [Chunk(0)]
    bounds, lo = [], None
    with conn.cursor() as cur:
        even = _even_bounds(cur, table, key, size)
        if even is not None:
            return chunks_from_bounds(even)
        while True:
            where, args = Chunk(0, lo).where(key)
            cur.execute(next_bound_sql(table, key, where, size), args)
            row = cur.fetchone()
            if row is None:
                return chunks_from_bounds(bounds)
            bounds.append(dict(zip(key, row)))
            lo = encode_image(bounds[-1])


def integer_span(cur, table: str, key: list[str], chunk: Chunk) -> tuple[int, int] | None:
    """The first and last key of `chunk` of `table` (two index dives) when `key` is a single
    integer column; else, or when the chunk holds no row, None."""
    if len(key) != 1:
        return None
    col = quote_ident(key[0])
    where, args = chunk.where(key)
    cur.execute(f"SELECT MIN({col}), MAX({col}) FROM {table}" + (f" WHERE {where}" if where else ""), args)
    first, last = cur.fetchone()
    return (first, last) if type(first) is int and type(last) is int else None


def _even_bounds(cur, table: str, key: list[str], size: int) -> list[dict] | None:
    """Bounds `size` keys apart, for a single integer key whose span (MIN to MAX) is at most
    1.5 times the server's estimate of the table's rows (an auto-increment key: a span of
    `size` keys then holds `size` rows or two thirds as many, the estimate's error aside): two
    index dives and the estimate instead of a walk of the whole index (0.1 to 0.4 s before the
    bench's copy could start).
    None where it does not apply: the key order is walked."""
    span = integer_span(cur, table, key, Chunk(0))
    if span is None:
        return None
    lo, hi = span
    cur.execute(f"EXPLAIN SELECT * FROM {table}")
    estimate = int(cur.fetchone()[[d[0] for d in cur.description].index("rows")] or 0)
    if 2 * (hi - lo + 1) > 3 * estimate:
        return None  # sparse keys, or an estimate too low to trust
    return [{key[0]: b} for b in range(lo + size - 1, hi, size)]


def sub_chunks(conn, table: str, key: list[str], chunk: Chunk, size: int) -> list[Chunk]:
    """`chunk` cut into sub-chunks of `size` upstream rows, its keys numbered in one query (a
    chunk is small: no index walk needed)."""
    cols = ", ".join(quote_ident(c) for c in key)
    where, args = chunk.where(key)
    cur_sql = (f"SELECT {cols} FROM (SELECT {cols}, ROW_NUMBER() OVER (ORDER BY {cols}) AS cdcflow_rn FROM {table}"
               + (f" WHERE {where}" if where else "") + f") AS k WHERE MOD(cdcflow_rn, {int(size)}) = 0 ORDER BY {cols}")
    with conn.cursor() as cur:
        cur.execute(cur_sql, args)
        bounds = [dict(zip(key, row)) for row in cur.fetchall()]
    if bounds and encode_image(bounds[-1]) == chunk.hi:
        bounds.pop()  # the chunk's own upper bound: no empty last sub-chunk
    return chunks_from_bounds(bounds, chunk)


def bucket_sql(key: list[str], subs: list[Chunk]) -> tuple[str, list]:
    """An expression numbering the sub-chunk (0, 1, …, by `subs`' order) a row of their
    parent chunk falls in, and its arguments: one query sums every sub-chunk."""
    whens, args = [], []
    for i, sub in enumerate(subs[:-1]):
        values = decode_image(sub.hi)
        whens.append(f"WHEN {_tuple(key)} <= {_tuple(['%s'] * len(key), quote=False)} THEN {i}")
        args += [values[c] for c in key]
    return (f"CASE {' '.join(whens)} ELSE {len(subs) - 1} END" if whens else "0"), args
