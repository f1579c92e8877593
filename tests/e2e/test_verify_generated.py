"""`cdcflow changefeed verify` on a table with generated columns (virtual and stored, both
indexed) whose downstream copy has an index of its own: equal when the rows are, and the row
named when a stored generated value differs downstream."""

from __future__ import annotations

import json

import pytest
from e2e_helpers import create_changefeed

from cdcflow import cli

pytestmark = pytest.mark.e2e

S = "vfy_gen"
TABLE = (f"CREATE TABLE {S}.g (id INT PRIMARY KEY, a INT NOT NULL, b VARCHAR(20), "
         "v INT AS (a * 2) VIRTUAL, s VARCHAR(30) AS (CONCAT(b, '-', a)) STORED, KEY k_v (v), KEY k_s (s))")


def _verify(capsys, *args: str) -> tuple[int, dict]:
    capsys.readouterr()
    rc = cli.main(["changefeed", "verify", "-c", "vfy-gen", "--wait", "0s", "--chunk-size", "7", *args])
    out = capsys.readouterr()
    return rc, json.loads(out.out) if out.out.strip() else {"err": out.err}


def test_generated_columns_equal_then_a_stored_value_differs(mariadb_pair, cdcflow_home, capsys):
    up, down = mariadb_pair
    for s in (up, down):
        s.execute(f"DROP DATABASE IF EXISTS {S}", f"CREATE DATABASE {S}", TABLE,
                  f"INSERT INTO {S}.g (id, a, b) SELECT seq, seq * 3, CONCAT('b', seq) FROM {S}.seq_1_to_40")
    down.execute(f"ALTER TABLE {S}.g ADD INDEX k_down_only (b, a)")  # the downstream's own index
    try:
        create_changefeed(capsys, up, down, "vfy-gen", f"[filter]\nrules = ['{S}.*']\n")
        rc, result = _verify(capsys)
        assert rc == 0 and result["status"] == "equal", result
        assert result["rows_compared"] == 40 and result["column_problems"] == []
        # the stored column's definition changed downstream for one row's sake: its stored value
        # differs there while every base column is equal
        down.execute(f"ALTER TABLE {S}.g MODIFY s VARCHAR(30) AS (IF(id = 23, 'other', CONCAT(b, '-', a))) STORED")
        rc, result = _verify(capsys)
        assert rc == 2 and result["status"] == "different", result
        assert [(d["table"], d["key"], d["kind"], d["columns"]) for d in result["differences"]] == [
            (f"{S}.g", {"id": "23"}, "different", ["s"])]
        assert result["differences"][0]["upstream"]["s"] == "b23-69"
        assert result["differences"][0]["downstream"]["s"] == "other"
    finally:
        for s in (up, down):
            s.execute(f"DROP DATABASE IF EXISTS {S}")
