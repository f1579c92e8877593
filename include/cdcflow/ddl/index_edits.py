"""A table's secondary indexes by name, in the two texts that name them: the index clauses of
SHOW CREATE TABLE (one line each, as the server prints them), and the parts of a DDL that
drop, rename or hide one (an ALTER TABLE's comma-separated parts, or a whole DROP INDEX … ON),
each with where it stands, so that it can be taken out of the statement and the rest run
(sink/pending_indexes.py: the indexes a table was created without).

The parts read (MariaDB's and MySQL 8's words):

| part                                                 | kind       |
|------------------------------------------------------|------------|
| `DROP INDEX|KEY [IF EXISTS] i`                       | drop       |
| `DROP CONSTRAINT [IF EXISTS] i` (a unique key's too) | drop       |
| `DROP INDEX [IF EXISTS] i ON t` (the statement)      | drop       |
| `RENAME INDEX|KEY i TO j`                            | rename     |
| `ALTER INDEX|KEY i [NOT] IGNORED | [IN]VISIBLE`      | visibility |
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from cdcflow.ddl.lexer import Cursor, Token, dropped_parts, split_commas, tokenize, without_spans
from cdcflow.ddl.table_def import alter_clauses

DROP, RENAME, VISIBILITY = "drop", "rename", "visibility"
# the server's own words after a hidden index's clause in SHOW CREATE TABLE
HIDDEN_SUFFIX = {"IGNORED": " IGNORED", "INVISIBLE": " /*!80000 INVISIBLE */"}
# parts that only say how an ALTER runs: left alone, they change nothing
_HOW_WORDS = ("ALGORITHM", "LOCK")

_INDEX_LINE = re.compile(r"^  (UNIQUE |FULLTEXT |SPATIAL )?(KEY|INDEX) `((?:[^`]|``)*)`")


def index_lines(create: str) -> list[tuple[int, str, str, str]]:
    """(line number, index name, kind word or '', the clause without its trailing comma) of each
    secondary index of a SHOW CREATE TABLE text: one line each, as the server prints them."""
    out = []
    for i, line in enumerate(create.split("\n")):
        m = _INDEX_LINE.match(line)
        if m:
            out.append((i, m.group(3).replace("``", "`"), m.group(1) or "", line.strip().rstrip(",")))
    return out


def clause_name(clause: str) -> str:
    """The index name of one clause index_lines gave."""
    return index_lines("  " + clause)[0][1]


def renamed(clause: str, new: str) -> str:
    """The clause of the index under the name `new`."""
    name = clause_name(clause)
    quoted = "`" + name.replace("`", "``") + "`"
    at = clause.index(quoted)
    return clause[:at] + "`" + new.replace("`", "``") + "`" + clause[at + len(quoted):]


def with_visibility(clause: str, hidden: str | None) -> str:
    """The clause shown (`hidden` None) or hidden by the word `hidden` (IGNORED / INVISIBLE), as
    SHOW CREATE TABLE prints it: the word last."""
    for suffix in HIDDEN_SUFFIX.values():
        if clause.endswith(suffix):
            clause = clause[:-len(suffix)]
    return clause + (HIDDEN_SUFFIX[hidden] if hidden else "")


@dataclass(frozen=True)
class IndexPart:
    kind: str  # DROP, RENAME, VISIBILITY
    index: str
    new: str | None = None  # RENAME: the new name
    hidden: str | None = None  # VISIBILITY: IGNORED / INVISIBLE, or None: shown
    constraint: bool = False  # DROP CONSTRAINT: a unique key's or a CHECK's
    at: int = -1  # which comma-separated part of the ALTER; -1: the whole statement


def index_parts(query: str, sql_mode: str | None) -> list[IndexPart]:
    """The parts of `query` that drop, rename or hide an index by name (the table above)."""
    toks = tokenize(query, sql_mode)
    r = Cursor(toks)
    if r.take("DROP", "INDEX"):
        r.take_if_exists()
        name = r.name()
        return [IndexPart(DROP, name)] if name else []
    if r.word() != "ALTER":
        return []
    out = []
    for at, part in enumerate(split_commas(alter_clauses(toks))):
        found = _part(Cursor(part))
        if found is not None:
            out.append(replace(found, at=at))
    return out


def _part(r: Cursor) -> IndexPart | None:
    if r.take("DROP"):
        constraint = r.take("CONSTRAINT")
        if constraint or r.take("INDEX") or r.take("KEY"):
            r.take_if_exists()
            name = r.name()
            return IndexPart(DROP, name, constraint=constraint) if name else None
    elif r.take("RENAME") and (r.take("INDEX") or r.take("KEY")):
        old, _, new = r.name(), r.take("TO"), r.name()
        return IndexPart(RENAME, old, new=new) if old and new else None
    elif r.take("ALTER") and (r.take("INDEX") or r.take("KEY")):
        name = r.name()
        hide = r.word() if r.at("IGNORED") or r.at("INVISIBLE") else None
        if name and (hide or r.at("NOT", "IGNORED") or r.at("VISIBLE")):
            return IndexPart(VISIBILITY, name, hidden=hide)
    return None


def without_parts(query: str, sql_mode: str | None, gone: list[IndexPart]) -> str | None:
    """`query` without the parts `gone` (index_parts' own); None when nothing that does
    anything is left (a whole DROP INDEX, or an ALTER of only those and ALGORITHM / LOCK)."""
    if not gone:
        return query
    if any(p.at < 0 for p in gone):
        return None
    toks = tokenize(query, sql_mode)
    parts = split_commas(alter_clauses(toks))
    taken = {p.at for p in gone}
    if all(i in taken or _only_how(part) for i, part in enumerate(parts)):
        return None
    taken_parts = {id(parts[i]) for i in taken}
    return without_spans(query, dropped_parts(parts, lambda part: id(part) in taken_parts))


def _only_how(part: list[Token]) -> bool:
    return part[0].up in _HOW_WORDS
