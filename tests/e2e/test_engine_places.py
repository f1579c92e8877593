"""The engine switch, end to end: one changefeed config says where the row steps run, and the
cycle's result says where each ran.  The same window (rows on either side of a DDL, a table the
filter drops, a key-changing update) replicates alike in the stage's process and in Spark tasks."""

from __future__ import annotations

import pytest
from e2e_helpers import assert_consistent, cli_json, create_changefeed, fresh_schema, query

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
# config -> (filter and barrier's place, whether apply writes its segments here or in Spark)
MODES = {
    "spark": ("engine = 'spark'", "spark", "spark"),
    "local": ("engine = 'local'\nlocal-max-events = 1\nlocal-segment-rows = 1", "process", "process"),
    "auto-small": ("", "process", "process"),
    "auto-over-the-bounds": ("local-max-events = 1\nlocal-segment-rows = 1", "spark", "spark"),
}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_the_engine_puts_each_row_step_where_the_config_says(mariadb_pair, spark, cdcflow_home, capsys,
                                                              monkeypatch, mode):
    monkeypatch.delenv("CDCFLOW_ENGINE", raising=False)  # the config decides here, not the suite's --engine
    up, down = mariadb_pair
    schema = "engine_" + mode.replace("-", "_")
    ddl = ["CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))", "CREATE TABLE skipped (id INT PRIMARY KEY)"]
    fresh_schema(up, down, schema, *ddl)
    config, place, apply_place = MODES[mode]
    create_changefeed(capsys, up, down, schema.replace("_", "-"),
                      f"[filter]\nrules = ['{schema}.*', '!{schema}.skipped']\n[cdcflow]\n{config}\n")
    up.execute(*WORKLOAD, database=schema)
    result = cli_json(capsys, "changefeed", "run", "-c", schema.replace("_", "-"))
    assert (result["filter"]["ran_in"], result["barrier"]["ran_in"]) == (place, place)
    assert result["filter"]["rows_copied"]  # the dropped table's rows are left out of the copy either way
    applied = result["apply"]
    assert applied["rows_in"] == 7 and applied["ddl_applied"] == 1
    assert (applied["segments_in_process"], applied["segments_in_spark"]) == (
        (2, 0) if apply_place == "process" else (0, 2))
    # and the last runs `query` (and the Changefeeds page) show say so
    last = query(capsys, schema.replace("_", "-"))["cdcflow"]["last_runs"][0]
    assert last["stage_places"] == {"filter": place, "barrier": place, "apply": apply_place}
    down.execute(f"DROP TABLE {schema}.skipped")  # not replicated: compared without it
    up.execute(f"DROP TABLE {schema}.skipped")
    assert_consistent(up, down, [schema])
    assert down.query(f"SELECT id, v, n FROM {schema}.t ORDER BY id") == [(2, "z", 7), (4, "d", 8), (10, "a", 7)]
