"""Which tables are verified and how: the tables the changefeed's filter keeps (narrowed by
`--tables` patterns), each side's columns, the key chunks are cut on, and the column
definitions that differ (a column missing on one side, or of another type)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from cdcflow.core.row_codec import quote_ident
from cdcflow.filter.table import TableFilter
from cdcflow.store.schema_versions import read_catalogue

# Integer display widths are cosmetic and shown differently by servers
# (MariaDB and TiDB print `int(11)`, MySQL 8.0.19+ prints `int`).
_INT_WIDTH = re.compile(r"^(tinyint|smallint|mediumint|int|integer|bigint)\(\d+\)")


def normalize_column_type(column_type: str) -> str:
    return _INT_WIDTH.sub(r"\1", column_type.strip().lower())


@dataclass
class TablePlan:
    """One table to verify: its columns on both sides (name -> column type), the columns
    compared (the upstream's order, present on both sides), the key chunks are cut on
    (None: compared as a multiset) and the downstream's collations of the key's columns."""

    schema: str
    table: str
    up_types: dict[str, str]
    down_types: dict[str, str]
    columns: list[str]
    key: list[str] | None
    key_collations: dict[str, str | None] = field(default_factory=dict)
    problems: list[dict] = field(default_factory=list)  # column definitions that differ

    @property
    def name(self) -> str:
        return f"{self.schema}.{self.table}"

    @property
    def quoted(self) -> str:
        return f"{quote_ident(self.schema)}.{quote_ident(self.table)}"

    def types(self, side: str) -> dict[str, str]:
        """Column types of one side ("up" or "down") by the compared columns' names."""
        types = self.up_types if side == "up" else self.down_types
        low = {c.lower(): t for c, t in types.items()}
        return {c: low[c.lower()] for c in self.columns}

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d: dict) -> "TablePlan":
        return cls(**d)


def column_problems(up: dict[str, str], down: dict[str, str]) -> list[dict]:
    """Columns missing on one side or of another type (types compared without integer
    display widths), named; columns are matched by name, case-insensitively as MySQL does."""
    down_low = {c.lower(): c for c in down}
    up_low = {c.lower() for c in up}
    out = []
    for col, typ in up.items():
        other = down_low.get(col.lower())
        if other is None:
            out.append({"column": col, "problem": "missing downstream", "upstream": typ, "downstream": None})
        elif normalize_column_type(typ) != normalize_column_type(down[other]):
            out.append({"column": col, "problem": "different type", "upstream": typ, "downstream": down[other]})
    out += [{"column": col, "problem": "extra downstream", "upstream": None, "downstream": typ}
            for col, typ in down.items() if col.lower() not in up_low]
    return out


def plan_tables(up_conn, down_conn, rules: list[str], case_sensitive: bool,
                patterns: list[str] | None) -> tuple[list[TablePlan], list[dict]]:
    """The tables both filters keep, planned; and the tables only one side has
    ({"table", "problem"})."""
    keep = TableFilter(list(rules), case_sensitive)
    narrow = TableFilter(list(patterns), case_sensitive, "--tables") if patterns else None

    def wanted(catalogue):
        return {k: v for k, v in catalogue.items()
                if keep.match_table(*k) and (narrow is None or narrow.match_table(*k))}

    up, down = wanted(read_catalogue(up_conn)), wanted(read_catalogue(down_conn))
    plans, missing = [], []
    for (s, t), info in sorted(up.items()):
        dinfo = down.get((s, t))
        if dinfo is None:
            missing.append({"table": f"{s}.{t}", "problem": "missing downstream"})
            continue
        up_types = {c["name"]: c["type"] for c in info.columns}
        down_types = {c["name"]: c["type"] for c in dinfo.columns}
        down_names = {c.lower() for c in down_types}
        key = info.valid_key()
        if key and not all(c.lower() in down_names for c in key):
            key = None  # a key column the downstream lacks: no chunk bounds both sides share
        plans.append(TablePlan(
            schema=s, table=t, up_types=up_types, down_types=down_types,
            columns=[c for c in up_types if c.lower() in down_names], key=key,
            key_collations={c: (dinfo.column(c) or {}).get("collation") for c in key or []},
            problems=column_problems(up_types, down_types)))
    missing += [{"table": f"{s}.{t}", "problem": "extra downstream"} for (s, t) in sorted(down) if (s, t) not in up]
    return plans, missing
