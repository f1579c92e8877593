"""A window of 2,000 DDLs -- creates, alters, drops, a few renames and truncates -- with rows
between them, replicated in one cycle (issue 27): rows written to a table after an ALTER land
in its new shape, rows of a dropped table go with it, and the downstream ends equal to the
upstream, definitions included."""

from __future__ import annotations

import time

import pytest
from e2e_helpers import assert_consistent, create_changefeed, query

from cdcflow.launch.in_process import run_cycle
from cdcflow.store.engine import listening_to_commits

pytestmark = pytest.mark.e2e

SCHEMA = "ddl_window"
CREATES = 900
# The steps an ALTER takes a table through, in order; `_row` writes a row in the shape each leaves.
ALTERS = (
    "ADD COLUMN extra INT NOT NULL DEFAULT 7 AFTER tenant",
    "ADD INDEX ix_tenant (tenant)",
    "MODIFY tenant VARCHAR(40)",
    "DROP COLUMN n",
    "ADD UNIQUE INDEX ux_extra (extra, id), COMMENT 'altered'",
)


class Window:
    """The upstream's statements, and how many of them are DDLs of each kind."""

    def __init__(self) -> None:
        self.sql: list[str] = [f"CREATE DATABASE {SCHEMA}"]
        self.kinds = {"create database": 1, "create": 0, "alter": 0, "drop": 0, "rename": 0, "truncate": 0}
        self.live: dict[int, str] = {}  # table number -> its current name
        self.steps: dict[int, int] = {}  # table number -> ALTERs applied
        self.next_id: dict[int, int] = {}

    @property
    def ddls(self) -> int:
        return sum(self.kinds.values())

    def ddl(self, kind: str, sql: str) -> None:
        self.kinds[kind] += 1
        self.sql.append(sql)

    def row(self, t: int, tenant: str | None = None) -> None:
        """One INSERT in the table's current shape: `extra` once added, no `n` once dropped."""
        step = self.steps[t]
        self.next_id[t] += 1
        cols, vals = ["id", "tenant"], [str(self.next_id[t]), "NULL" if tenant is None else f"'{tenant}'"]
        if step >= 1:
            cols.append("extra"), vals.append(str(100 + step))
        if step < 4:
            cols.append("n"), vals.append(str(t * 10 + step))
        self.sql.append(f"INSERT INTO {SCHEMA}.{self.live[t]} ({', '.join(cols)}) VALUES ({', '.join(vals)})")

    def create(self, t: int) -> None:
        self.ddl("create", f"CREATE TABLE {SCHEMA}.t{t} (id INT PRIMARY KEY, tenant VARCHAR(20), n INT)")
        self.live[t], self.steps[t], self.next_id[t] = f"t{t}", 0, 0

    def alter(self, t: int) -> None:
        if t in self.live and self.steps[t] < len(ALTERS):
            self.ddl("alter", f"ALTER TABLE {SCHEMA}.{self.live[t]} {ALTERS[self.steps[t]]}")
            self.steps[t] += 1
            self.row(t, f"after alter {self.steps[t]}")  # must land in the new shape

    def drop(self, t: int) -> None:
        if t in self.live:
            self.ddl("drop", f"DROP TABLE {SCHEMA}.{self.live.pop(t)}")


def build_window() -> Window:
    w = Window()
    for i in range(CREATES):
        w.create(i)
        if i % 3 == 0:  # rows between DDLs; runs of empty segments between the others
            w.row(i, f"tenant {i}"), w.row(i)
        for back in (5, 40, 120, 150, 190):  # every 7th table through all of ALTERS, between other DDLs
            if (i - back) % 7 == 0:
                w.alter(i - back)
        if (i - 5) % 7 == 3:
            w.alter(i - 5)
        if i % 2 == 0 and i >= 200:
            w.drop(i - 200)
        if i % 40 == 7 and i - 60 in w.live:  # rows in an older table after many DDLs
            t = i - 60
            w.sql.append(f"UPDATE {SCHEMA}.{w.live[t]} SET tenant = 'moved' WHERE id = 1")
            w.sql.append(f"DELETE FROM {SCHEMA}.{w.live[t]} WHERE id = 2")
        if i % 150 == 149 and i - 30 in w.live:
            t = i - 30
            w.ddl("rename", f"RENAME TABLE {SCHEMA}.{w.live[t]} TO {SCHEMA}.renamed{t}")
            w.live[t] = f"renamed{t}"
            w.row(t, "after rename")
        if i % 180 == 100 and i - 20 in w.live:
            w.ddl("truncate", f"TRUNCATE TABLE {SCHEMA}.{w.live[i - 20]}")
            w.row(i - 20, "after truncate")
    for t in sorted(w.live)[::8]:  # the tail: drops among the newest tables, rows between
        w.drop(t)
        if t + 1 in w.live:
            w.row(t + 1, "last")
    return w


def test_window_builder_mixes_two_thousand_ddls():
    w = build_window()
    assert w.ddls >= 2000
    assert w.kinds["create"] == CREATES and w.kinds["alter"] >= 650 and w.kinds["drop"] >= 380
    assert w.kinds["rename"] >= 3 and w.kinds["truncate"] >= 3
    assert sum(1 for s in w.sql if s.startswith(("INSERT", "UPDATE", "DELETE"))) > 1000


def test_two_thousand_ddls_with_rows_between_in_one_cycle(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {SCHEMA}")
    create_changefeed(capsys, up, down, "e2e-ddl-window", f"[filter]\nrules = ['{SCHEMA}.*']\n")
    w = build_window()
    t0 = time.time()
    up.execute(*w.sql)
    upstream_seconds = time.time() - t0
    commits = []
    with listening_to_commits(lambda: commits.append(1)):
        result = run_cycle("e2e-ddl-window", spark=spark)
    with capsys.disabled():  # the numbers docs/performance.md reports
        print(f"\n{w.ddls} DDLs {w.kinds}: upstream {upstream_seconds:.1f} s, cycle {result['seconds']} s "
              f"(apply {result['apply']['apply_seconds']} s), segments {result['barrier']['segments']}, "
              f"metadata-store commits {len(commits)}")
    assert result["apply"]["ddl_applied"] == w.ddls
    assert result["barrier"]["barriers"] == w.ddls
    assert query(capsys, "e2e-ddl-window")["state"] == "normal"
    # one metadata-store commit per DDL (its in-flight mark, with the checkpoint past the DDL before
    # it), one more per segment that writes rows (the checkpoint before them), a few per cycle
    with_rows = sum(1 for s in w.sql if s.startswith(("INSERT", "UPDATE", "DELETE")))
    assert len(commits) <= w.ddls + with_rows + 40
    assert {r[0] for r in down.query(f"SHOW TABLES IN {SCHEMA}")} == set(w.live.values())
    # a row written after the last ALTER of a table is in the table's final shape downstream
    altered = next(t for t, s in w.steps.items() if s == len(ALTERS) and t in w.live)
    assert down.query(f"SELECT extra FROM {SCHEMA}.{w.live[altered]} WHERE tenant = 'after alter 5'") == [(105,)]
    assert_consistent(up, down, [SCHEMA])
