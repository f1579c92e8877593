"""String literals whose bytes the statement's text cannot carry, rewritten as hexadecimal.

A statement is decoded in its session's character set and reaches the downstream as UTF-8
(source.query_text).  That is exact for everything the session's character set reads — except
a literal with a character set introducer other than the session's (`_binary'…'`,
`_latin1'…'` under gbk): the server reads its bytes in the introducer's character set, so
re-encoding them as UTF-8 would change them (or, for binary bytes, they are no text at all).
Such a literal is rewritten as the same introducer before a hexadecimal literal of its bytes
(`_binary X'FF00'`), which the downstream reads as exactly those bytes.  A literal is only
rewritten where re-encoding would change it (a byte above 0x7F).

The scan follows the server's lexer (sql/sql_lex.cc): quoted strings with doubled quotes and,
unless NO_BACKSLASH_ESCAPES, backslash escapes; a multi-byte character of the session's
character set is one unit (charsets.character_length), so a trail byte 0x5C (GBK, SJIS, Big5)
escapes nothing; "…" is an
identifier under ANSI_QUOTES; comments and `identifiers` are skipped.
"""

from __future__ import annotations

import re

from cdcflow.source import charsets

# \x in a literal -> the byte it stands for (sql_lex.cc); \% and \_ keep their backslash
_ESCAPES = {ord("0"): b"\0", ord("b"): b"\b", ord("n"): b"\n", ord("r"): b"\r", ord("t"): b"\t",
            ord("Z"): b"\x1a", ord("%"): b"\\%", ord("_"): b"\\_"}
_INTRODUCER = re.compile(rb"(?<![A-Za-z0-9_$])_([a-z0-9]+)[ \t\r\n]*$", re.I)  # a token of its own
_SAME_AS_UTF8 = {"utf8mb4", "utf8mb3", "utf8", "binary"}  # bytes a UTF-8 session passes unchanged


def _literal(raw: bytes, i: int, charset: str, escapes: bool) -> tuple[bytes, int]:
    """The bytes of the string literal whose opening quote is at `i`, and the index after it."""
    quote, out, i = raw[i], bytearray(), i + 1
    while i < len(raw):
        n = charsets.character_length(raw, i, charset)
        b = raw[i]
        if n > 1:
            out += raw[i:i + n]
        elif b == quote and i + 1 < len(raw) and raw[i + 1] == quote:
            out.append(quote)
            n = 2
        elif b == quote:
            return bytes(out), i + 1
        elif b == 0x5C and escapes and i + 1 < len(raw):
            out += _ESCAPES.get(raw[i + 1], raw[i + 1:i + 2])
            n = 2
        else:
            out.append(b)
        i += n
    return bytes(out), i  # unterminated: the server refused it, so it is not in a binlog


_MAYBE = re.compile(rb"_[a-z0-9]+[ \t\r\n]*['\"]", re.I)


def may_hold_one(raw: bytes) -> bool:
    """Whether `raw` may hold an introducer literal (most statements, BEGIN and COMMIT among
    them, need no scan)."""
    return b"_" in raw and _MAYBE.search(raw) is not None


def rewrite(raw: bytes, charset: str, backslash_escapes: bool = True, ansi_quotes: bool = False) -> bytes:
    """`raw` (a statement in `charset`) with each introducer literal whose bytes its UTF-8
    text cannot carry as `_cs X'…'`; `raw` itself where there is none."""
    if not may_hold_one(raw):
        return raw
    out, i, copied = bytearray(), 0, 0
    quotes = (0x27,) if ansi_quotes else (0x27, 0x22)
    while i < len(raw):
        b = raw[i]
        if b in quotes:
            m = _INTRODUCER.search(raw[max(0, i - 200):i])
            content, end = _literal(raw, i, charset, backslash_escapes)
            if m and _needs_hex(m.group(1).decode("ascii").lower(), charset, content):
                start = i - len(m.group(0))
                out += raw[copied:start] + b"_" + m.group(1) + b" X'" + content.hex().upper().encode() + b"'"
                copied = end
            i = end
        elif b == 0x60 or (b == 0x22 and ansi_quotes):  # an identifier
            i = raw.find(bytes([b]), i + 1) + 1 or len(raw)
        elif raw.startswith(b"/*", i):
            i = raw.find(b"*/", i + 2) + 2 if raw.find(b"*/", i + 2) >= 0 else len(raw)
        elif b == 0x23 or (raw.startswith(b"--", i) and raw[i + 2:i + 3] in (b" ", b"\t", b"\n", b"\r", b"")):
            i = raw.find(b"\n", i) + 1 or len(raw)
        else:
            i += charsets.character_length(raw, i, charset)
    return bytes(out + raw[copied:]) if copied else raw


def _needs_hex(introducer: str, session: str, content: bytes) -> bool:
    if introducer not in charsets.CODECS and introducer != "utf8":
        return False  # no character set's name: not an introducer
    if not any(c > 0x7F for c in content):
        return False  # ASCII: the same bytes in every character set a session may have
    if introducer == session or (session in _SAME_AS_UTF8 and introducer in ("utf8mb4", "utf8mb3", "utf8")):
        return False  # read as the statement is
    if session in ("utf8mb4", "utf8mb3") and introducer == "binary":
        try:
            content.decode("utf-8")
            return False  # valid UTF-8 goes downstream as the same bytes
        except UnicodeDecodeError:
            return True
    return True
