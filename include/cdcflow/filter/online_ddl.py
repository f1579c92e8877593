"""Online schema change tools (pt-online-schema-change, gh-ost), followed as DM's online-ddl does
(tiflow dm/syncer/online-ddl-tools): the tool's copy is not replicated, its ALTER is.

Such a tool changes table `t` by creating a shadow table (pt-osc `_t_new`, gh-ost `_t_gho`),
ALTERing it, copying t's rows into it (and every later change, by triggers or by reading the
binlog), then swapping it in: `RENAME TABLE t TO _t_old, _t_new TO t` (gh-ost: `t TO _t_del,
_t_gho TO t`), and dropping the old table.  Tables are told apart by name, with the config's
`shadow-table-rules` and `trash-table-rules` (regular expressions whose first group is the real
table's name; DM's defaults):
- rows written to shadow and trash tables (the copy, the triggers' copies, gh-ost's changelog
  `_t_ghc`) are not replicated, whatever the table filter says;
- DDL on them (CREATE, DROP, the tool's triggers) does not run downstream; an ALTER TABLE,
  CREATE INDEX or DROP INDEX on a shadow table is recorded (ddl/shadow_log.py);
- at the cut-over the clause `shadow TO real` runs as the recorded ALTERs rewritten onto the
  real table, decided by the rules any ALTER of it meets (table filter, event filter, valid
  index); `real TO trash` and the clauses of trash tables are left out.
What DM refuses is refused (ErrOnlineDDLUnfollowed): a rename onto a shadow table, a cut-over
with nothing recorded, and a rename mixing tool tables with others.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from cdcflow.core.errors import ONLINE_DDL_UNFOLLOWED, CdcflowError
from cdcflow.core.row_codec import quote_ident
from cdcflow.ddl import types as T
from cdcflow.ddl.classify import DDLInfo, TableName, classify
from cdcflow.ddl.lexer import Cursor, tokenize
from cdcflow.ddl.shadow_log import ALTER, RESET, Mark, ShadowLog

REAL, SHADOW, TRASH = "real", "shadow", "trash"
# pt-online-schema-change's triggers on the real table: pt_osc_<db>_<table>_ins / _upd / _del
PT_OSC_TRIGGER = re.compile(r"^pt_osc_.+_(?:ins|upd|del)$")
# statements on a shadow table that change its definition: recorded for the cut-over
_RECORDED = ("ALTER TABLE", "CREATE INDEX", "DROP INDEX")


@dataclass
class Step:
    """What becomes of one DDL that concerns a tool's tables."""

    why: str
    cut_over: list[tuple[TableName, list[str]]] = field(default_factory=list)  # (real table, its ALTERs)
    error: CdcflowError | None = None


def _name(t: TableName) -> str:
    return f"{t.schema}.{t.table}"


def _refuse(what: str, query: str, ts: int, hint: str) -> Step:
    return Step(what, error=CdcflowError(f"online-ddl: {what}", ts=ts, statement=query, code=ONLINE_DDL_UNFOLLOWED,
                                         hint=hint))


_BY_HAND = ("run what the tool changed on the downstream's table by hand, then `cdcflow changefeed skip-ddl -c "
            "<changefeed> --commit-ts <ts>` and resume (or `replace-ddl` with the statements to run instead); "
            "`[cdcflow] online-ddl = false` replicates the tool's tables as any others")


class OnlineDdl:
    def __init__(self, shadow_rules: tuple[str, ...], trash_rules: tuple[str, ...]):
        self.shadow = [re.compile(p) for p in shadow_rules]
        self.trash = [re.compile(p) for p in trash_rules]

    @classmethod
    def of(cls, config) -> OnlineDdl | None:
        """The config's rules; None where `online-ddl` is off."""
        return cls(config.shadow_table_rules, config.trash_table_rules) if config.online_ddl else None

    def role(self, table: str) -> str:
        if any(p.search(table) for p in self.shadow):
            return SHADOW
        return TRASH if any(p.search(table) for p in self.trash) else REAL

    def real_name(self, table: str) -> str:
        """The table a shadow or trash table stands for (the rule's first group)."""
        for p in (*self.shadow, *self.trash):
            m = p.search(table)
            if m:
                return m.group(1)
        return table

    def skips_rows(self, table: str) -> bool:
        return self.role(table) != REAL

    def _what(self, t: TableName) -> str:
        return f"{_name(t)} is the {self.role(t.table)} table of an online schema change of " \
               f"{t.schema}.{self.real_name(t.table)}"

    def step(self, info: DDLInfo, query: str, mode: str | None, ts: int, log: ShadowLog) -> Step | None:
        """What becomes of a classified DDL at commit ts `ts`, recording in `log` what a later
        cut-over replays; None where it concerns no tool's table (the usual rules decide)."""
        if info.kind != "ddl" or info.is_schema_level:
            return None
        if info.statement_name in ("CREATE TRIGGER", "DROP TRIGGER"):
            name = _trigger_name(query, mode)
            if name and PT_OSC_TRIGGER.match(name):
                return Step(f"trigger {name} is pt-online-schema-change's copy of the rows into its shadow table")
            return None
        if info.renames:
            return self._renames(info, query, ts, log)
        if not info.tables:
            return None
        # CREATE TABLE _t_gho LIKE t names the real table second: the first decides
        named = info.tables[:1] if info.type == T.CREATE_TABLE else info.tables
        roles = [self.role(t.table) for t in named]
        if all(r == REAL for r in roles):
            return None
        if REAL in roles:
            return _refuse(f"{info.statement_name} names tables of an online schema change and other tables",
                           query, ts, _BY_HAND)
        recorded = info.statement_name.startswith(_RECORDED) and not info.renames
        for t, role in zip(named, roles):
            if role == SHADOW and recorded:
                log.add(t.schema, t.table, Mark(ts, ALTER, query, mode))
            elif role == SHADOW and info.type in (T.CREATE_TABLE, T.DROP_TABLE):
                log.add(t.schema, t.table, Mark(ts, RESET))  # a run of the tool starts or ends
        return Step("; ".join(self._what(t) for t in named) + (" (recorded for the cut-over)" if recorded else ""))

    def _renames(self, info: DDLInfo, query: str, ts: int, log: ShadowLog) -> Step | None:
        roles = [(old, new, self.role(old.table), self.role(new.table)) for old, new in info.renames]
        if all(ro == REAL and rn == REAL for _, _, ro, rn in roles):
            return None
        cut_over, why = [], []
        for old, new, ro, rn in roles:
            clause = f"{_name(old)} TO {_name(new)}"
            if ro == REAL and rn == REAL:
                return _refuse(f"RENAME TABLE mixes the cut-over of an online schema change with {clause}", query,
                               ts, _BY_HAND)
            if rn == SHADOW:
                return _refuse(f"{clause} renames a table to a shadow table", query, ts, _BY_HAND)
            if ro != SHADOW:
                why.append(f"{clause} left out ({self._what(new if ro == REAL else old)})")
                continue
            alters = log.alters(old.schema, old.table, ts)
            log.add(old.schema, old.table, Mark(ts, RESET))
            if rn == TRASH:
                why.append(f"{clause} left out ({self._what(old)})")
                continue
            if not alters:
                return _refuse(f"{clause} is the cut-over of an online schema change, but no ALTER of "
                               f"{_name(old)} was read (it ran before the changefeed's start?)", query, ts, _BY_HAND)
            cut_over.append((new, [_onto(m.statement, m.sql_mode, old, new) for m in alters]))
            why.append(f"{clause} runs as the {len(alters)} ALTER(s) recorded on {_name(old)}")
        return Step("online schema change: " + "; ".join(why), cut_over=cut_over)


@dataclass
class CutOver:
    """The cut-over's statements as the usual rules decided on them."""

    statements: list[str]  # those that run downstream, in order
    infos: list[DDLInfo]  # theirs
    why: str
    error: CdcflowError | None = None
    notes: list[str] = field(default_factory=list)


def decide_cut_over(step: Step, default_schema: str | None, mode: str | None,
                    decide: Callable[[DDLInfo, str], object]) -> CutOver:
    """Each statement of a cut-over decided by `decide(info, query)` (filter.ddl_gate's Verdict)
    as any ALTER of the real table is: the table filter, the event filter, the valid index."""
    out = CutOver([], [], step.why)
    for _, queries in step.cut_over:
        for q in queries:
            info = classify(q, default_schema, mode or "")
            verdict = decide(info, q)
            out.notes += verdict.notes
            if verdict.error is not None:
                out.error, out.why = verdict.error, verdict.why
                return out
            if verdict.keep:
                out.statements.append(verdict.query)
                out.infos.append(info)
            else:
                out.why += f"; {q!r} does not run: {verdict.why}"
    return out


def _onto(statement: str, mode: str | None, shadow: TableName, real: TableName) -> str:
    """`statement` (an ALTER of the shadow table) with its table named as the real one."""
    toks = tokenize(statement, mode)
    for i, t in enumerate(toks):
        if t.is_name and t.text == shadow.table:
            qualified = i >= 2 and toks[i - 1].is_punct(".") and toks[i - 2].is_name
            start = toks[i - 2].start if qualified else t.start
            return f"{statement[:start]}{quote_ident(real.schema)}.{quote_ident(real.table)}{statement[t.end:]}"
    return statement  # classify found the table in it, so this is not reached


def _trigger_name(query: str, mode: str | None) -> str | None:
    r = Cursor(tokenize(query, mode))
    r.skip_to("TRIGGER")
    r.take("TRIGGER")
    r.take_if_exists()
    name = r.name()
    if r.take_punct("."):
        name = r.name()
    return name
