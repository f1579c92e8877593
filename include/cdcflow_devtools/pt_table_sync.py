"""Percona's `pt-table-sync --print` between two servers, and row-change statements read back:
which rows of which tables pt-table-sync (or `cdcflow changefeed verify --fix-sql`) would
change, so the two can be held against each other row by row.

pt-table-sync (percona-toolkit) checksums key-range chunks on both servers, narrows a
differing chunk down to its rows and prints one statement per row that makes the destination
equal to the source: `DELETE … WHERE key LIMIT 1` for a row only the destination has,
`UPDATE … SET … WHERE key LIMIT 1` for a row that differs, `INSERT INTO t(cols) VALUES (…)`
for a missing one (`REPLACE` instead of INSERT and UPDATE with `--replace`), each followed by a
`/*percona-toolkit …*/` comment.  cdcflow's fix SQL is REPLACE and DELETE … WHERE key.
Debian's 3.2.1 ignores `--port`: the port goes in the DSN.  Key values are compared as their
text ('3' and 3 are the same key).
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass

from cdcflow_devtools.mariadb import HOST, ROOT_PASSWORD, ROOT_USER

_TOKEN = re.compile(r"""
    \s*(?:
      (?P<ident>`(?:[^`]|``)*`)
    | (?P<string>'(?:[^'\\]|\\.|'')*')
    | (?P<hex>[Xx]'[0-9A-Fa-f]*')
    | (?P<comment>/\*.*?\*/|--[^\n]*|\#[^\n]*)
    | (?P<word>[A-Za-z_][A-Za-z_0-9]*)
    | (?P<number>[-+]?[0-9][0-9.]*(?:[eE][-+]?[0-9]+)?)
    | (?P<punct>\S)
    )""", re.X | re.S)
_ESCAPES = {"0": "\0", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a", "b": "\b"}
_KEYWORDS = {"INSERT", "REPLACE", "UPDATE", "DELETE", "INTO", "FROM", "VALUES", "SET", "WHERE", "AND", "LIMIT", "NULL"}


@dataclass(frozen=True)
class Change:
    """One printed statement: its verb (DELETE, UPDATE, INSERT, REPLACE), table ("schema.table"),
    the key it names in its WHERE (DELETE, UPDATE) and the row it writes (INSERT, REPLACE,
    UPDATE's SET), values as text (None for NULL)."""

    verb: str
    table: str
    where: dict[str, str | None]
    row: dict[str, str | None]


def dsn(port: int, host: str = HOST, user: str = ROOT_USER, password: str = ROOT_PASSWORD) -> str:
    return f"h={host},P={port},u={user},p={password}"


def run(source_port: int, dest_port: int, databases: list[str], tables: list[str] | None = None,
        timeout: float | None = None, extra: list[str] | None = None) -> str:
    """`pt-table-sync --print` from the server at `source_port` to the one at `dest_port`
    (root on 127.0.0.1, the devtools' servers), `extra` options added: its statements,
    nothing executed."""
    args = ["pt-table-sync", "--print", "--databases", ",".join(databases), *(extra or [])]
    if tables:
        args += ["--tables", ",".join(tables)]
    res = subprocess.run(args + [dsn(source_port), dsn(dest_port)], capture_output=True, text=True, timeout=timeout)
    if res.returncode not in (0, 2):  # 2: differences found (printed, not synced)
        raise RuntimeError(f"pt-table-sync failed (exit {res.returncode}): {res.stderr.strip()[-800:]}")
    return res.stdout


def _unquote(text: str) -> str:
    body = text[1:-1].replace("''", "'")
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), body, flags=re.S)


def _tokens(text: str):
    """(kind, value) of each token outside comments: identifiers unquoted, strings unescaped,
    X'..' kept as written, keywords upper-cased."""
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            break
        pos = m.end()
        kind = m.lastgroup
        v = m.group(kind)
        if kind == "comment":
            continue
        if kind == "ident":
            v = v[1:-1].replace("``", "`")
        elif kind == "string":
            v = _unquote(v)
        elif kind == "word" and v.upper() in _KEYWORDS:
            v = v.upper()
        yield kind, v


def _statements(text: str):
    stmt: list[tuple[str, str]] = []
    for tok in _tokens(text):
        if tok == ("punct", ";"):
            if stmt:
                yield stmt
            stmt = []
        else:
            stmt.append(tok)
    if stmt:
        yield stmt


def _table(toks, i: int) -> tuple[str, int]:
    """The table name at toks[i] (schema.table or table) and the index after it."""
    if i + 2 < len(toks) and toks[i + 1] == ("punct", "."):
        return f"{toks[i][1]}.{toks[i + 2][1]}", i + 3
    return toks[i][1], i + 1


def _literal(tok: tuple[str, str]) -> str | None:
    return None if tok == ("word", "NULL") else tok[1]


def _list(toks, i: int) -> tuple[list[tuple[str, str]], int]:
    """The comma-separated items of the parenthesised list at toks[i]; the index after it."""
    assert toks[i] == ("punct", "("), toks[i]
    items, i = [], i + 1
    while toks[i] != ("punct", ")"):
        if toks[i] != ("punct", ","):
            items.append(toks[i])
        i += 1
    return items, i + 1


def _assignments(toks, i: int, stop: str) -> dict[str, str | None]:
    """`col = literal [AND|,] …` from toks[i] to the keyword `stop` or the end."""
    out = {}
    while i < len(toks) and toks[i] != ("word", stop):
        if toks[i][0] == "ident" and i + 2 < len(toks) and toks[i + 1] == ("punct", "="):
            out[toks[i][1]] = _literal(toks[i + 2])
            i += 3
        else:
            i += 1
    return out


def _keyword(toks, word: str, i: int) -> int:
    while toks[i] != ("word", word):
        i += 1
    return i


def _change(toks) -> Change | None:
    verb = toks[0][1].upper() if toks[0][0] == "word" else ""
    if verb in ("INSERT", "REPLACE"):  # INSERT INTO t(cols) VALUES (values)
        table, i = _table(toks, 2 if toks[1] == ("word", "INTO") else 1)
        cols, i = _list(toks, i)
        values, _ = _list(toks, _keyword(toks, "VALUES", i) + 1)
        return Change(verb, table, {}, dict(zip((c[1] for c in cols), map(_literal, values))))
    if verb == "DELETE":  # DELETE FROM t WHERE … LIMIT 1
        table, i = _table(toks, 2)
        return Change(verb, table, _assignments(toks, _keyword(toks, "WHERE", i) + 1, "LIMIT"), {})
    if verb == "UPDATE":  # UPDATE t SET … WHERE … LIMIT 1
        table, i = _table(toks, 1)
        where = _keyword(toks, "WHERE", i)
        return Change(verb, table, _assignments(toks, where + 1, "LIMIT"), _assignments(toks[:where], i + 1, ""))
    return None


def parse_statement(statement: str) -> Change | None:
    """One statement read back (None for one that changes no row, e.g. SET …)."""
    return next(iter(parse(statement)), None)


def parse(text: str) -> list[Change]:
    """Every row change of `text`: pt-table-sync's printed output or a fix-SQL file."""
    return [c for c in map(_change, _statements(text)) if c is not None]


def changed_keys(changes: list[Change], keys: dict[str, list[str] | tuple[str, ...]]) -> set[tuple[str, tuple]]:
    """(table, key values in `keys[table]`'s order) of every change: the rows it makes equal."""
    out = set()
    for c in changes:
        named = c.where or c.row
        out.add((c.table, tuple(named[k] for k in keys[c.table])))
    return out


def fix_rows(text: str, keys: dict[str, list[str] | tuple[str, ...]]) -> set[tuple[str, tuple]]:
    """changed_keys of every statement in `text`."""
    return changed_keys(parse(text), keys)
