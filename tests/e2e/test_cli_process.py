"""`cdcflow changefeed run` in a process of its own, as a user runs it, starts its embedded Spark
only when a stage uses it (spark/lazy.py).  In the test's own process a Spark session is always
up, so only a fresh process shows that every stage's path builds its plan after the session:
the same window as the in-process run, with a value filter (which needs Spark) and DDL between
the rows, takes the same decisions and leaves the same downstream; a window of a keyed table
alone starts no Spark at all."""

from __future__ import annotations

from e2e_helpers import assert_consistent, compare_twins, cycle_result, run_in_own_process, twin_changefeeds

from cdcflow_devtools.mariadb import MariaDB, free_port

S = "cli_process"
CIDS = ("cli-here", "cli-process")


def test_a_cycle_in_its_own_process_starts_spark_only_where_a_stage_needs_it(mariadb_pair, spark, cdcflow_home,
                                                                              capsys, tmp_path):
    up, down = mariadb_pair
    other = MariaDB(tmp_path, name="down-process", port=free_port()).start()
    try:
        twin_changefeeds(capsys, up, down, other, S, CIDS)
        result = cycle_result(run_in_own_process(CIDS[1]))
        assert result["spark_session"]  # the value filter's rows are read in Spark
        compare_twins(up, down, other, S, CIDS)

        up.execute(f"INSERT INTO {S}.u VALUES (7, 'q', 70)", f"UPDATE {S}.u SET w = 71 WHERE code = 'q'")
        result = cycle_result(run_in_own_process(CIDS[1]))
        assert result["apply"]["rows_in"] == 2 and not result["spark_session"]
        assert_consistent(up, other, [S], allow={f"{S}.t": {"rows"}})  # the value filter's 'skip' row of t
        assert other.query(f"SELECT * FROM {S}.u WHERE code = 'q'") == [(7, "q", 71)]
    finally:
        other.stop()
        for s in (up, down):
            s.execute(f"DROP DATABASE IF EXISTS {S}")
