"""The engine switch, end to end: one changefeed config says where the row steps run, and the
cycle's result says where each ran.  The same window (rows on either side of a DDL, a table the
filter drops, a key-changing update) replicates alike in the stage's process and in Spark tasks."""

from __future__ import annotations

import logging

import pytest
from e2e_helpers import assert_consistent, cli_json, create_changefeed, fresh_schema, query

from cdcflow.core import log_line

pytestmark = pytest.mark.e2e

WORKLOAD = [
    "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')",
    "INSERT INTO skipped VALUES (1)",
    "UPDATE t SET id = 10 WHERE id = 1",  # the key changes: DELETE + INSERT
    "ALTER TABLE t ADD COLUMN n INT DEFAULT 7",
    "INSERT INTO t VALUES (4, 'd', 8)",
    "UPDATE t SET v = 'z' WHERE id = 2",
    "DELETE FROM t WHERE id = 3",
]
# config -> (filter and barrier's place, whether apply writes its segments here or in Spark,
# whether pull kept the window in memory for them: only where they read it here and it is within
# a segment's bounds, so local's stages read the same window from its files)
MODES = {
    "spark": ("engine = 'spark'", "spark", "spark", False),
    # local: every part in process, whatever its rows; the bound of 1 row cuts the segments into
    # slices of one transaction each (stages.engine.Engine.slices)
    "local": ("engine = 'local'\nlocal-max-events = 1\nlocal-segment-rows = 1", "process", "process", False),
    "auto-small": ("", "process", "process", True),
    "auto-over-the-bounds": ("local-max-events = 1\nlocal-segment-rows = 1", "spark", "spark", False),
}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_the_engine_puts_each_row_step_where_the_config_says(mariadb_pair, spark, cdcflow_home, capsys,
                                                              monkeypatch, caplog, mode):
    monkeypatch.delenv("CDCFLOW_ENGINE", raising=False)  # the config decides here, not the suite's --engine
    up, down = mariadb_pair
    schema = "engine_" + mode.replace("-", "_")
    ddl = ["CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))", "CREATE TABLE skipped (id INT PRIMARY KEY)"]
    fresh_schema(up, down, schema, *ddl)
    config, place, apply_place, kept = MODES[mode]
    create_changefeed(capsys, up, down, schema.replace("_", "-"),
                      f"[filter]\nrules = ['{schema}.*', '!{schema}.skipped']\n[cdcflow]\n{config}\n")
    up.execute(*WORKLOAD, database=schema)
    with caplog.at_level(logging.INFO, logger="cdcflow"):
        result = cli_json(capsys, "changefeed", "run", "-c", schema.replace("_", "-"))
    assert result["pull"]["kept_in_process"] is kept
    assert (result["filter"]["ran_in"], result["barrier"]["ran_in"]) == (place, place)
    assert result["filter"]["rows_copied"]  # the dropped table's rows are left out of the copy either way
    applied = result["apply"]
    assert applied["rows_in"] == 7 and applied["ddl_applied"] == 1
    # local's two segments in five slices: (3 rows; the key-changing update), (insert; update; delete)
    parts = 5 if mode == "local" else 2
    assert (applied["segments_in_process"], applied["segments_in_spark"]) == (
        (parts, 0) if apply_place == "process" else (0, parts))
    # where every statement was the stage's own, apply says when none of them was in flight
    # (sink.statement_timeline); statements Spark tasks sent it does not see, and says nothing
    timed = [e for e in map(log_line.parse, (r.getMessage() for r in caplog.records))
             if e and e["event"] == "apply timeline"]
    if apply_place == "process":
        assert len(timed) == 1 and (timed[0]["statements"], timed[0]["ddls"]) == (applied["statements"], 1), timed
        idle = timed[0]
        assert 0 < idle["idle_ms"] < idle["seconds"] * 1000
        assert idle["idle_ms"] == pytest.approx(sum(idle["idle_ms_by_kind"].values()), abs=0.5)
    else:
        assert timed == []
    # and the last runs `query` (and the Changefeeds page) show say so
    last = query(capsys, schema.replace("_", "-"))["cdcflow"]["last_runs"][0]
    assert last["stage_places"] == {"filter": place, "barrier": place, "apply": apply_place}
    down.execute(f"DROP TABLE {schema}.skipped")  # not replicated: compared without it
    up.execute(f"DROP TABLE {schema}.skipped")
    assert_consistent(up, down, [schema])
    assert down.query(f"SELECT id, v, n FROM {schema}.t ORDER BY id") == [(2, "z", 7), (4, "d", 8), (10, "a", 7)]


# One segment of many transactions, cut into slices of at most 4 rows: a key updated in one slice
# and again in a later one, unique values handed between keys across slices, a key that changes
# and its old value taken again, a transaction over the bound (its own slice: in Spark tasks on
# auto, in process on local), tables a cascading foreign key binds and a keyless table (both in
# commit order, slice by slice).
SLICE_TABLES = (
    "CREATE TABLE k (id INT PRIMARY KEY, u INT UNIQUE, v VARCHAR(20))",
    "CREATE TABLE parent (id INT PRIMARY KEY)",
    "CREATE TABLE child (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE CASCADE)",
    "CREATE TABLE nokey (a INT, b VARCHAR(10))",
)
SLICED = [
    "INSERT INTO k VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c'), (4, 40, 'd'), (5, 50, 'e'), (6, 60, 'f')",
    "UPDATE k SET v = 'a2' WHERE id = 1",
    "UPDATE k SET u = NULL WHERE id = 1",
    "UPDATE k SET u = 10 WHERE id = 2",
    "UPDATE k SET u = 20 WHERE id = 1",
    "UPDATE k SET id = 100 WHERE id = 3",
    "INSERT INTO k VALUES (3, 31, 'c again')",
    "DELETE FROM k WHERE id = 4",
    "INSERT INTO k VALUES (4, 40, 'd again')",
    "INSERT INTO parent VALUES (1), (2)",
    "INSERT INTO child VALUES (1, 1), (2, 1), (3, 2)",
    "DELETE FROM parent WHERE id = 1",
    "INSERT INTO nokey VALUES (1, 'x'), (1, 'x'), (2, 'y')",
    "UPDATE nokey SET b = 'z' WHERE a = 2",
    "DELETE FROM nokey WHERE a = 1 LIMIT 1",
    "UPDATE k SET v = CONCAT(v, '!')",
    "UPDATE k SET v = 'last' WHERE id = 100",
]


@pytest.mark.parametrize("engine,sink", [("auto", "safe-mode = false"), ("local", "transaction-atomicity = 'table'")],
                         ids=["auto-normal", "local-atomic-tables"])
def test_a_segment_over_the_bounds_is_written_in_slices_and_ends_equal(mariadb_pair, spark, cdcflow_home, capsys,
                                                                       monkeypatch, engine, sink):
    """Apply writes a segment too large for its process in slices of whole transactions, each
    compacted on its own, in order (stages.engine.Engine.slices): the downstream ends as the
    upstream, tables and definitions, in safe-mode = false (a second cycle: the first is safe
    whatever the config) and with transactions kept whole."""
    monkeypatch.delenv("CDCFLOW_ENGINE", raising=False)
    up, down = mariadb_pair
    schema = "sliced_" + engine
    cid = schema.replace("_", "-")
    fresh_schema(up, down, schema, *SLICE_TABLES)
    create_changefeed(capsys, up, down, cid, f"force-replicate = true\n[filter]\nrules = ['{schema}.*']\n"
                                             f"[sink]\n{sink}\n[cdcflow]\nengine = '{engine}'\nlocal-segment-rows = 4\n")
    up.execute("INSERT INTO k VALUES (7, 70, 'before')", database=schema)
    cli_json(capsys, "changefeed", "run", "-c", cid)
    up.execute(*SLICED, database=schema)
    result = cli_json(capsys, "changefeed", "run", "-c", cid)
    applied = result["apply"]
    assert applied["rows_in"] == 34 and not applied["safe_mode"]
    here, there = applied["segments_in_process"], applied["segments_in_spark"]
    # one segment in slices; on auto the two transactions over 4 rows (the 6-row insert, the
    # update of every row) are slices of their own, written in Spark tasks
    assert here > 3 and there == (2 if engine == "auto" else 0), applied
    assert_consistent(up, down, [schema])
    assert down.query(f"SELECT id, u, v FROM {schema}.k ORDER BY id") == up.query(
        f"SELECT id, u, v FROM {schema}.k ORDER BY id")
