"""MariaDB's own DDL towards a downstream without it: the statements each flavour runs.

A MariaDB downstream runs them as they are.  TiDB and MySQL get (ddl.types' `elsewhere` says
the same per type):
- system versioning: nothing of it.  They have none, and the rows reach them without the period
  columns (filter.system_versioning), so CREATE TABLE loses `WITH SYSTEM VERSIONING`, the period
  columns and `PERIOD FOR SYSTEM_TIME`, and an ALTER TABLE its versioning clauses (one made of
  nothing else does not run);
- `CONVERT PARTITION p TO TABLE t` and `CONVERT TABLE t TO PARTITION p …`: the partition
  exchange both have, with the table made or dropped around it;
- sequences: TiDB has them and runs the statement as is; MySQL has none, so the changefeed stops.
"""

from __future__ import annotations

from cdcflow.core.row_codec import quote_ident
from cdcflow.ddl import types as T
from cdcflow.ddl.lexer import Cursor, Token, dropped_parts, split_commas, tokenize, without_spans
from cdcflow.ddl.table_def import alter_clauses, create_table_body
from cdcflow.ddl.tidb_only import MARIADB, TIDB, for_downstream, unsupported

_SEQUENCE_TYPES = frozenset({T.CREATE_SEQUENCE, T.ALTER_SEQUENCE, T.DROP_SEQUENCE})
_VERSIONING = ("SYSTEM", "VERSIONING")


def for_flavour(ddl, target: str, changefeed_id: str) -> list[str]:
    """The statements a downstream of flavour `target` runs for the DDL entry `ddl`
    (stages.contracts.DdlEntry): TiDB's own and MariaDB's own DDL each in its words; raises a
    non-retryable CdcflowError where the downstream has no equivalent."""
    return statements(ddl, target, for_downstream(ddl, target, changefeed_id), changefeed_id)


def statements(ddl, target: str, query: str, changefeed_id: str) -> list[str]:
    """What a downstream of flavour `target` runs for the DDL entry `ddl` (stages.contracts.DdlEntry)
    whose statement, in that downstream's words otherwise, is `query`: none, one or several."""
    if target == MARIADB:
        return [query]
    types = {ddl.type, *ddl.sub_types}
    if types & _SEQUENCE_TYPES:
        if target != TIDB:
            raise unsupported(ddl, changefeed_id, target, "MySQL has no sequences")
        return [query]
    toks = tokenize(query, ddl.sql_mode)
    tables = [f"{quote_ident(s)}.{quote_ident(t)}" for s, t in ddl.tables]
    if T.CONVERT_PARTITION in types:
        src, made = tables[:2]
        r = Cursor(toks)
        r.skip_to("CONVERT", "PARTITION")
        part = quote_ident(r.toks[r.i + 2].text)
        return [f"CREATE TABLE {made} LIKE {src}", f"ALTER TABLE {made} REMOVE PARTITIONING",
                f"ALTER TABLE {src} EXCHANGE PARTITION {part} WITH TABLE {made}",
                f"ALTER TABLE {src} DROP PARTITION {part}"]
    if T.CONVERT_TABLE in types:
        src, taken = tables[:2]
        r = Cursor(toks)
        r.skip_to("TO", "PARTITION")
        definition = query[r.toks[r.i + 1].start:]  # PARTITION p VALUES …
        return [f"ALTER TABLE {src} ADD PARTITION ({definition})",
                f"ALTER TABLE {src} EXCHANGE PARTITION {quote_ident(r.toks[r.i + 2].text)} WITH TABLE {taken}",
                f"DROP TABLE {taken}"]
    if T.CREATE_TABLE in types:
        return [without_spans(query, _create_versioning(toks))]
    if T.ALTER_TABLE_SYSTEM_VERSIONING in types:
        return _alter_without_versioning(query, toks)
    return [query]


def _is_period_column(part: list[Token]) -> bool:
    """A column definition generated AS ROW START / ROW END."""
    words = [t.up for t in part]
    return any(words[i:i + 3] in (["AS", "ROW", "START"], ["AS", "ROW", "END"]) for i in range(len(words)))


def _versioning_words(toks: list[Token]) -> list[tuple[int, int]]:
    """The spans of `WITH SYSTEM VERSIONING` / `WITHOUT SYSTEM VERSIONING` among `toks`."""
    words = [t.up for t in toks]
    return [(toks[i].start, toks[i + 2].end) for i in range(len(toks) - 2)
            if words[i] in ("WITH", "WITHOUT") and tuple(words[i + 1:i + 3]) == _VERSIONING]


def _is_period(part: list[Token]) -> bool:
    return Cursor(part).at("PERIOD", "FOR", "SYSTEM_TIME")


def _create_versioning(toks: list[Token]) -> list[tuple[int, int]]:
    body = create_table_body(toks)
    if body is None:
        return []
    elements, options = body
    parts = split_commas(elements)
    spans = dropped_parts(parts, lambda p: _is_period(p) or _is_period_column(p))
    for part in parts:
        spans += _versioning_words(part)
    return spans + _versioning_words(list(options))


def _is_versioning_clause(part: list[Token]) -> bool:
    r = Cursor(part)
    if r.at("ADD", *_VERSIONING) or r.at("DROP", *_VERSIONING) or r.at("ADD", "PERIOD") or r.at("DROP", "PERIOD"):
        return True
    return r.word() == "ADD" and _is_period_column(part)


def _alter_without_versioning(query: str, toks: list[Token]) -> list[str]:
    parts = split_commas(alter_clauses(toks))
    if all(_is_versioning_clause(p) for p in parts):
        return []
    return [without_spans(query, dropped_parts(parts, _is_versioning_clause))]
