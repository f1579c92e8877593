"""The Query events that steer a transaction rather than change data, and the savepoints
of the transaction being read.

What the server writes (MariaDB 10.11 and MySQL, binlog_format=ROW, checked with
mariadb-binlog -v): a transaction's rows go to its transaction cache, except a
non-transactional table's (MyISAM, Aria), which go to the statement cache and are written
at once as a transaction of their own, before the one they were part of.  A SAVEPOINT is
written into the transaction cache; at ROLLBACK TO the server truncates the cache back to
it, unless the transaction has already changed a non-transactional table (or made a
temporary table), in which case it writes ``ROLLBACK TO `name``` instead and keeps what
came before.  Likewise a transaction that changed such a table and then rolled back is
written whole, ending in ``ROLLBACK``.  So every row event between a SAVEPOINT and its
ROLLBACK TO, and every row event of a transaction ending in ROLLBACK, is a transactional
table's row that a replica undoes; the non-transactional rows that made the server write
them are already in their own committed transaction.
"""

from __future__ import annotations

import re

# the statement's first words (upper case, whitespace folded) -> what it does to the transaction
_KINDS: tuple[tuple[str, str], ...] = (
    ("BEGIN", "begin"),
    ("START TRANSACTION", "begin"),
    ("XA START", "begin"),
    ("COMMIT", "commit"),
    ("XA COMMIT", "commit"),
    ("XA END", "inside"),  # an XA transaction's end and prepare: it commits or rolls back later
    ("XA PREPARE", "inside"),
    ("ROLLBACK TO", "rollback_to"),  # before ROLLBACK: the longer prefix wins
    ("ROLLBACK", "rollback"),
    ("XA ROLLBACK", "rollback"),
    ("SAVEPOINT", "savepoint"),
    ("RELEASE SAVEPOINT", "release"),
)
SAVEPOINT_KINDS = frozenset({"savepoint", "rollback_to", "release"})  # inside the transaction
_SPACE = re.compile(r"\s+")
_BY_LENGTH = sorted(_KINDS, key=lambda k: -len(k[0]))  # ROLLBACK TO before ROLLBACK
_NAMED = re.compile(r"^(?:SAVEPOINT|ROLLBACK\s+(?:WORK\s+)?TO(?:\s+SAVEPOINT)?|RELEASE\s+SAVEPOINT)\s*(.+?)\s*;?\s*$",
                    re.I | re.S)


def kind(query: str) -> str | None:
    """What a Query event's statement does to the transaction (begin, commit, rollback,
    savepoint, rollback_to, release, inside), or None: a statement of its own (a DDL)."""
    words = _SPACE.sub(" ", query.strip().rstrip(";").strip()).upper().replace(" WORK", "")
    words = words.replace("`", " `", 1) if words.startswith("SAVEPOINT`") else words
    for prefix, what in _BY_LENGTH:
        if words == prefix or words.startswith(prefix + " "):
            return what
    return None


def savepoint_name(query: str) -> str:
    """The savepoint a SAVEPOINT, ROLLBACK TO or RELEASE SAVEPOINT statement names, unquoted
    and folded: the server compares savepoint names case-insensitively."""
    m = _NAMED.match(query.strip())
    name = m.group(1) if m else query.strip()
    if len(name) > 1 and name[0] == name[-1] == "`":
        name = name[1:-1].replace("``", "`")
    return name.lower()


class Savepoints:
    """The savepoints of the transaction being read: each the seq of the first row after it.
    `rollback_to` gives the seqs a ROLLBACK TO undoes, as the server undoes them: the named
    savepoint stays, those set after it go."""

    def __init__(self) -> None:
        self._marks: list[tuple[str, int]] = []

    def clear(self) -> None:
        self._marks = []

    def set(self, name: str, seq: int) -> None:
        self._marks = [m for m in self._marks if m[0] != name] + [(name, seq)]  # a name set again moves

    def rollback_to(self, name: str, seq: int) -> tuple[int, int] | None:
        """(first seq undone, seq after the last undone), or None: nothing to undo (an unknown
        name: the server refuses it, so it is not in a binlog)."""
        for i, (n, at) in enumerate(self._marks):
            if n == name:
                del self._marks[i + 1:]
                return (at, seq) if seq > at else None
        return None

    def release(self, name: str) -> None:
        for i, (n, _at) in enumerate(self._marks):
            if n == name:
                del self._marks[i:]
                return
