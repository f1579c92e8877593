"""A value filter compares a TIMESTAMP column with a datetime literal that carries a time-zone
offset as TiDB does (MySQL too from 8.0.19): the literal is converted to an instant, so a row
written as '2021-01-01 12:34:56.5678' from a +08:00 session is the literal's
'2021-01-01 12:34:56.5678+08:00' and is ignored; the same row written from a UTC session is a
later instant and replicates.  The issue's case as written, end to end (make test runs it in the
stage's process and with the engine forced to Spark)."""

from __future__ import annotations

import pytest
from e2e_helpers import cli_run, create_changefeed, fresh_schema

pytestmark = pytest.mark.e2e

S = "vf_temporal"
CONFIG = f"""
[filter]
rules = ['{S}.*']

[[filter.event-filters]]
matcher = ['{S}.t']
ignore-insert-value-expr = "c_timestamp = '2021-01-01 12:34:56.5678+08:00'"
"""


def test_a_literal_with_an_offset_is_the_instant_it_names(mariadb_pair, spark, cdcflow_home, capsys):
    up, down = mariadb_pair
    fresh_schema(up, down, S, "CREATE TABLE t (id INT PRIMARY KEY, c_timestamp TIMESTAMP(4) NULL)")
    create_changefeed(capsys, up, down, S.replace("_", "-"), CONFIG)
    with up.connect(S) as c, c.cursor() as cur:
        cur.execute("SET time_zone = '+08:00'")
        cur.execute("INSERT INTO t VALUES (1, '2021-01-01 12:34:56.5678'), (2, '2021-01-01 12:34:56.5679')")
        cur.execute("SET time_zone = '+00:00'")
        cur.execute("INSERT INTO t VALUES (3, '2021-01-01 12:34:56.5678')")  # 8 hours later as an instant
    rc, err = cli_run(capsys, S.replace("_", "-"))
    assert rc == 0, err
    assert down.query(f"SELECT id FROM {S}.t ORDER BY id") == [(2,), (3,)]
    with down.connect(S) as c, c.cursor() as cur:
        cur.execute("SET time_zone = '+00:00'")
        cur.execute("SELECT id, CAST(c_timestamp AS CHAR) FROM t ORDER BY id")
        assert cur.fetchall() == ((2, "2021-01-01 04:34:56.5679"), (3, "2021-01-01 12:34:56.5678"))
