"""The one reader of DDL text: tokens, a cursor over them, comma splitting.

Lexing is sqlparse's; the quoting rules are MySQL's: backquotes quote names, double
quotes quote names only under ANSI_QUOTES, and executable comments (`/*!40101 ... */`,
MariaDB's `/*M!100100 ... */`) are content, because the server runs them.  Every token
keeps its place in the statement text, so a statement can be rewritten piece by piece.

Those rules are written here because no SQL library applies them: whatever the sql_mode,
sqlparse leaves "..." undecided and sqlglot's MySQL reads it as a string, and both take
executable comments for comments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlparse import lexer
from sqlparse import tokens as T


@dataclass(frozen=True)
class Token:
    kind: str  # 'word' (unquoted name or keyword), 'ident' (quoted name), 'str', 'num', 'punct'
    text: str  # a quoted name unquoted; everything else as written
    start: int = 0  # where it stands in the statement text
    end: int = 0

    @property
    def up(self) -> str | None:
        return self.text.upper() if self.kind == "word" else None

    def is_punct(self, p: str) -> bool:
        return self.kind == "punct" and self.text == p

    @property
    def is_name(self) -> bool:
        return self.kind in ("word", "ident")


_EXEC_COMMENT = re.compile(r"/\*M?!(?:\d{5,6})?(.*)\*/", re.S)
_WORD = re.compile(r"\S+")


def ansi_quotes(sql_mode: str | None) -> bool:
    """Whether a session of this sql_mode reads "..." as a name."""
    modes = {m.strip() for m in (sql_mode or "").upper().split(",")}
    return bool(modes & {"ANSI_QUOTES", "ANSI"})


def _lex(sql: str, ansi: bool, base: int = 0):
    pos = base
    for ttype, value in lexer.tokenize(sql):
        start, pos = pos, pos + len(value)
        if ttype in T.Whitespace:
            continue
        if ttype in T.Comment:
            m = _EXEC_COMMENT.fullmatch(value.strip())
            if m:
                yield from _lex(m.group(1), ansi, start + len(value) - len(value.lstrip()) + m.start(1))
        elif ttype in T.String.Symbol:  # "..." is a name only under ANSI_QUOTES
            yield (Token("ident", value[1:-1].replace('""', '"'), start, pos) if ansi
                   else Token("str", value, start, pos))
        elif ttype in T.String:
            yield Token("str", value, start, pos)
        elif ttype in T.Number:
            yield Token("num", value, start, pos)
        elif value.startswith("`"):
            yield Token("ident", value[1:-1].replace("``", "`"), start, pos)
        elif ttype in T.Keyword or ttype in T.Name or value[:1].isalpha():  # LIKE, NOT: operators
            for w in _WORD.finditer(value):  # sqlparse glues 'IF NOT EXISTS' into one token
                yield Token("word", w.group(), start + w.start(), start + w.end())
        else:
            yield Token("punct", value, start, pos)


def tokenize(sql: str, sql_mode: str | None = "") -> list[Token]:
    """The tokens of one statement (trailing semicolons dropped), as a session of `sql_mode` reads it."""
    out = list(_lex(sql, ansi_quotes(sql_mode)))
    while out and out[-1].is_punct(";"):
        out.pop()
    return out


def first_word(sql: str) -> str | None:
    """The statement's first keyword, upper-cased, without lexing the rest (a row batch may be megabytes)."""
    tok = next(_lex(sql, False), None)
    return tok.up if tok else None


def split_commas(toks: list[Token]) -> list[list[Token]]:
    """Split at the commas outside parentheses."""
    chunks: list[list[Token]] = [[]]
    depth = 0
    for t in toks:
        if t.kind == "punct":
            depth += (t.text == "(") - (t.text == ")")
            if t.text == "," and depth == 0:
                chunks.append([])
                continue
        chunks[-1].append(t)
    return [c for c in chunks if c]


def dropped_parts(parts: list[list[Token]], drop) -> list[tuple[int, int]]:
    """The spans that remove the comma-separated `parts` for which `drop(part)` holds, each with
    the comma that joins it to a kept neighbour (a run of them first: each with the comma after it)."""
    spans, gone = [], [drop(p) for p in parts]
    for i, part in enumerate(parts):
        if not gone[i]:
            continue
        if not all(gone[:i]):
            spans.append((parts[i - 1][-1].end, part[-1].end))  # `, part` after a kept one before it
        elif i + 1 < len(parts):
            spans.append((part[0].start, parts[i + 1][0].start))  # `part, ` before the next
        else:
            spans.append((part[0].start, part[-1].end))
    return spans


def without_spans(query: str, spans: list[tuple[int, int]]) -> str:
    """`query` without the text of `spans` (start, end), which may overlap."""
    out, at = [], 0
    for start, end in sorted(spans):
        out.append(query[at:start])
        at = max(at, end)
    return "".join(out) + query[at:]


class Cursor:
    """A position in a token list, with the look-ahead the DDL readers need."""

    def __init__(self, toks: list[Token]):
        self.toks, self.i = toks, 0

    def peek(self, k: int = 0) -> Token | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def word(self, k: int = 0) -> str | None:
        t = self.peek(k)
        return t.up if t else None

    def at(self, *words: str) -> bool:
        return all(self.word(k) == w for k, w in enumerate(words))

    def at_punct(self, p: str) -> bool:
        t = self.peek()
        return t is not None and t.is_punct(p)

    def take(self, *words: str) -> bool:
        if self.at(*words):
            self.i += len(words)
            return True
        return False

    def take_punct(self, p: str) -> bool:
        if self.at_punct(p):
            self.i += 1
            return True
        return False

    def take_if_exists(self) -> bool:
        """Skip IF [NOT] EXISTS; whether it was there."""
        return self.take("IF", "EXISTS") or self.take("IF", "NOT", "EXISTS")

    def name(self) -> str | None:
        """The name that stands here (consumed), or None."""
        t = self.peek()
        if t is not None and t.is_name:
            self.i += 1
            return t.text
        return None

    def skip_to(self, *words: str) -> None:
        """Move to where `words` stand next (or to the end)."""
        while self.peek() and not self.at(*words):
            self.i += 1

    def group(self) -> list[Token]:
        """The tokens inside the parentheses that start here (consumed)."""
        if not self.take_punct("("):
            return []
        depth, start = 1, self.i
        while self.peek():
            t = self.peek()
            self.i += 1
            if t.kind == "punct":
                depth += (t.text == "(") - (t.text == ")")
                if depth == 0:
                    return self.toks[start:self.i - 1]
        return self.toks[start:]

    def rest(self) -> list[Token]:
        return self.toks[self.i:]
