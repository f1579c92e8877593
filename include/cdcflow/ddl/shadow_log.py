"""The statements an online schema change tool ran on its shadow tables, by commit ts: what the
cut-over replays on the real table (DM's online-ddl storage, `GhostDDLInfo`).

A shadow table's history is a list of marks: `alter` (a statement that changed its definition,
kept as the tool ran it) and `reset` (the table created, dropped or renamed away: what came
before belongs to an earlier run of the tool).  Kept by commit ts rather than cleared in place,
so a window read again derives the same history, and a cut-over finds the ALTERs of an earlier
cycle: the filter stage loads it from the metadata store (store/shadow_ddls.py), rewinds it to
the window's start, adds to it and saves what it added.
"""

from __future__ import annotations

from dataclasses import dataclass

ALTER, RESET = "alter", "reset"


@dataclass(frozen=True)
class Mark:
    commit_ts: int
    kind: str  # ALTER | RESET
    statement: str = ""  # an ALTER as the tool ran it on the shadow table
    sql_mode: str | None = None  # the mode it ran under


class ShadowLog:
    def __init__(self, marks: dict[tuple[str, str], list[Mark]] | None = None):
        self.marks: dict[tuple[str, str], list[Mark]] = marks or {}  # (schema, shadow table) -> ts ascending

    def add(self, schema: str, table: str, mark: Mark) -> None:
        ms = self.marks.setdefault((schema, table), [])
        while ms and ms[-1].commit_ts >= mark.commit_ts:  # a window read again derives the same marks
            ms.pop()
        ms.append(mark)

    def alters(self, schema: str, table: str, ts: int) -> list[Mark]:
        """The ALTERs run on the shadow table before `ts` since it was last created."""
        out: list[Mark] = []
        for m in self.marks.get((schema, table), ()):
            if m.commit_ts >= ts:
                break
            out = [] if m.kind == RESET else [*out, m]
        return out

    def after(self, ts: int) -> list[tuple[str, str, Mark]]:
        """Every mark above `ts`: what a window starting at `ts` derived."""
        return [(s, t, m) for (s, t), ms in self.marks.items() for m in ms if m.commit_ts > ts]

    def rewind(self, ts: int) -> None:
        """Forget the marks above `ts`: a window read from there derives them again."""
        for key in list(self.marks):
            self.marks[key] = [m for m in self.marks[key] if m.commit_ts <= ts]
            if not self.marks[key]:
                del self.marks[key]

    def gc(self, checkpoint_ts: int) -> list[tuple[str, str, int]]:
        """Forget the marks no cut-over after the checkpoint can read: everything up to a shadow
        table's last reset at or below it.  Returns (schema, table, commit ts) of those gone."""
        gone = []
        for key, ms in list(self.marks.items()):
            last = max((i for i, m in enumerate(ms) if m.kind == RESET and m.commit_ts <= checkpoint_ts), default=-1)
            gone += [(key[0], key[1], m.commit_ts) for m in ms[:last + 1]]
            del ms[:last + 1]
            if not ms:
                del self.marks[key]
        return gone
