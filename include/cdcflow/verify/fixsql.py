"""The statements that make the downstream equal to the upstream, as sync-diff-inspector's
fix SQL: a row missing downstream or different is written with the upstream's values
(REPLACE; INSERT for a keyless table), a row only the downstream has is deleted by its key
(a keyless table's by all its values' text forms, byte for byte, one copy per statement).  The file starts
with the session the sink writes rows in (UTC, so a TIMESTAMP literal is the upstream's
instant; the sink's SQL mode), and holds one statement per line."""

from __future__ import annotations

from cdcflow.core.row_codec import decode_image, quote_ident, sql_literal
from cdcflow.sink.connection import DML_SESSION
from cdcflow.verify.catalogue import TablePlan
from cdcflow.verify.checksum import text_form
from cdcflow.verify.rowdiff import EXTRA

HEADER = "-- cdcflow changefeed verify: run on the downstream to make it equal to the upstream"


def _hex(text: str | None) -> str:
    # the text form's bytes: compared exactly, where the text itself would compare under a collation
    return "NULL" if text is None else "'" + text.encode("utf-8").hex().upper() + "'"


def statements(plan: TablePlan, diffs: list[dict]) -> list[str]:
    """One statement per differing row of `plan`'s table, in the order of `diffs`."""
    cols = plan.columns
    names = ", ".join(quote_ident(c) for c in cols)
    out = []
    for d in diffs:
        if d["kind"] != EXTRA:
            row = decode_image(d["up_image"])
            verb = "REPLACE" if plan.key else "INSERT"
            values = ", ".join(sql_literal(row[c]) for c in cols)
            out.append(f"{verb} INTO {plan.quoted} ({names}) VALUES ({values});")
        elif plan.key:
            row = decode_image(d["down_image"])
            cond = " AND ".join(f"{quote_ident(c)} = {sql_literal(row[c])}" for c in plan.key)
            out.append(f"DELETE FROM {plan.quoted} WHERE {cond} LIMIT 1;")
        else:
            types = plan.types("down")
            cond = " AND ".join(f"HEX({text_form(c, types[c])}) <=> {_hex(d['downstream'][c])}" for c in cols)
            out.append(f"DELETE FROM {plan.quoted} WHERE {cond} LIMIT 1;")
    return out


def fix_file(parts: list[tuple[TablePlan, list[dict]]]) -> str:
    """The whole fix-SQL file for the differing rows of each table."""
    lines = [HEADER, *(f"{s};" for s in DML_SESSION)]
    for plan, diffs in parts:
        if diffs:
            lines.append(f"-- {plan.name}: {len(diffs)} row(s)")
            lines += statements(plan, diffs)
    return "\n".join(lines) + "\n"
