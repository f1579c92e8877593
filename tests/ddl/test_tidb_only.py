"""TiDB-only DDL per downstream flavour (issue item 9): the translation table walked row by row.

A MariaDB upstream never writes TiDB's TTL or RECOVER TABLE to its binlog, so these are unit
tests on classified statements; the index-visibility rewrite also runs end to end in
test_ddl_e2e (MariaDB's IGNORED to a MariaDB downstream)."""

from __future__ import annotations

import pytest

from cdcflow.core.errors import CdcflowError
from cdcflow.ddl import tidb_only as t
from cdcflow.ddl.classify import classify
from cdcflow.source.binlog import Position
from cdcflow.stages.contracts import DdlEntry


def _entry(query: str, ts: int = 4242) -> DdlEntry:
    info = classify(query, "d", "")
    return DdlEntry(commit_ts=ts, query=query, default_schema="d", sql_mode="", start_pos=Position("b.1", 4),
                    end_pos=Position("b.1", 90), name=info.statement_name, type=info.type,
                    sub_types=list(info.sub_types))


@pytest.mark.parametrize("kind, version, expected", [
    ("tidb", "8.0.11-TiDB-v8.5.1", t.TIDB),
    ("tidb", "8.0.11", t.TIDB),  # server-version hidden; the tidb:// scheme said so
    ("mysql", "10.11.6-MariaDB-0+deb12u1", t.MARIADB),
    ("mysql", "8.0.36", t.MYSQL8),
    ("mysql", "8.4.2-log", t.MYSQL8),
    ("mysql", "5.7.44-log", t.MYSQL5),
])
def test_flavour_from_version(kind, version, expected):
    assert t.flavour(kind, version) == expected


# (upstream statement, what TiDB and MySQL 8 run, what MariaDB runs)
VISIBILITY = [
    ("ALTER TABLE t ALTER INDEX i INVISIBLE", "ALTER TABLE t ALTER INDEX i INVISIBLE",
     "ALTER TABLE t ALTER INDEX i IGNORED"),
    ("ALTER TABLE t ALTER INDEX i VISIBLE", "ALTER TABLE t ALTER INDEX i VISIBLE",
     "ALTER TABLE t ALTER INDEX i NOT IGNORED"),
    ("ALTER TABLE t ALTER INDEX i IGNORED", "ALTER TABLE t ALTER INDEX i INVISIBLE",
     "ALTER TABLE t ALTER INDEX i IGNORED"),
    ("alter table t alter key `my key` not  ignored", "alter table t alter key `my key` VISIBLE",
     "alter table t alter key `my key` NOT IGNORED"),
    ("ALTER TABLE t ADD COLUMN invisible INT, ALTER INDEX i INVISIBLE, ALTER INDEX j VISIBLE",
     "ALTER TABLE t ADD COLUMN invisible INT, ALTER INDEX i INVISIBLE, ALTER INDEX j VISIBLE",
     "ALTER TABLE t ADD COLUMN invisible INT, ALTER INDEX i IGNORED, ALTER INDEX j NOT IGNORED"),
]


@pytest.mark.parametrize("query, tidb_mysql8, mariadb", VISIBILITY)
def test_index_visibility_in_the_downstreams_words(query, tidb_mysql8, mariadb):
    runs = {t.TIDB: tidb_mysql8, t.MYSQL8: tidb_mysql8, t.MARIADB: mariadb}
    for flavour, expected in runs.items():
        assert t.for_downstream(_entry(query), flavour, "cf") == expected
    with pytest.raises(CdcflowError) as e:  # MySQL 5.7 has no invisible indexes
        t.for_downstream(_entry(query), t.MYSQL5, "cf")
    assert "before 8.0" in e.value.message


TIDB_ONLY = [
    "ALTER TABLE t TTL = created_at + INTERVAL 1 DAY",
    "ALTER TABLE t TTL_ENABLE = 'OFF'",
    "ALTER TABLE t REMOVE TTL",
    "RECOVER TABLE t",
    "FLASHBACK TABLE t TO t2",
    "ALTER TABLE t ADD COLUMN c INT, TTL = created_at + INTERVAL 1 DAY",  # inside a multi-clause ALTER
]


@pytest.mark.parametrize("query", TIDB_ONLY)
def test_tidb_only_ddl_as_is_to_tidb_and_stops_elsewhere(query):
    assert t.for_downstream(_entry(query), t.TIDB, "cf") == query
    for flavour in (t.MARIADB, t.MYSQL8, t.MYSQL5):
        with pytest.raises(CdcflowError) as e:
            t.for_downstream(_entry(query, ts=777), flavour, "cf")
        err = e.value
        assert not err.retryable and err.ts == 777 and err.statement == query and err.changefeed == "cf"
        assert flavour in err.message
        assert "cdcflow changefeed skip-ddl -c cf --commit-ts 777" in err.hint
        assert "cdcflow changefeed replace-ddl -c cf --commit-ts 777" in err.hint


@pytest.mark.parametrize("query", [
    "ALTER TABLE t AUTO_INCREMENT = 100",  # rebase auto id means the same everywhere
    "ALTER TABLE t ADD COLUMN visible INT",
    "CREATE TABLE t (id INT PRIMARY KEY, note VARCHAR(20) DEFAULT 'ALTER INDEX i INVISIBLE')",
])
def test_other_ddl_runs_as_is_everywhere(query):
    for flavour in (t.TIDB, t.MARIADB, t.MYSQL8, t.MYSQL5):
        assert t.for_downstream(_entry(query), flavour, "cf") == query


def test_every_tidb_only_type_is_allow_listed():
    from cdcflow.ddl.types import ALLOW_LIST

    assert set(t.TIDB_ONLY_TYPES) <= set(ALLOW_LIST)
