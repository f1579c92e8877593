"""Key-range chunks of a table: boundaries taken from the upstream's key order, every
`size`-th key, so each chunk holds about `size` upstream rows.  The first and last chunks
are open-ended, so rows only the downstream has fall in some chunk too.  A table without a
valid key is one chunk, compared as a multiset."""

from __future__ import annotations

from dataclasses import dataclass

from cdcflow.core.row_codec import decode_image, encode_image, quote_ident

ROW_NUMBER = "cdcflow_rn"  # a name no user column is expected to carry


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


def chunks_from_bounds(bounds: list[dict]) -> list[Chunk]:
    """Chunks between consecutive boundary keys (each a {column: value} of the key, in key
    order): (-inf, b1], (b1, b2], ..., (bn, +inf)."""
    texts = [encode_image(b) for b in bounds]
    edges = [None, *texts, None]
    return [Chunk(i, edges[i], edges[i + 1]) for i in range(len(edges) - 1)]


def boundary_sql(table: str, key: list[str], size: int) -> str:
    """Every `size`-th key of the table in key order, read by the server (only keys travel)."""
    cols = ", ".join(quote_ident(c) for c in key)
    return (f"SELECT {cols} FROM (SELECT {cols}, ROW_NUMBER() OVER (ORDER BY {cols}) AS {ROW_NUMBER} "
            f"FROM {table}) AS k WHERE {ROW_NUMBER} % {int(size)} = 0 ORDER BY {cols}")


def table_chunks(conn, table: str, key: list[str] | None, size: int) -> list[Chunk]:
    """The chunks of `table` ("`s`.`t`") on the upstream connection `conn`."""
    if not key:
        return [Chunk(0)]
    with conn.cursor() as cur:
        cur.execute(boundary_sql(table, key, size))
        bounds = [dict(zip(key, row)) for row in cur.fetchall()]
    return chunks_from_bounds(bounds)
