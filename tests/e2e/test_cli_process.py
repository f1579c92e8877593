"""`cdcflow changefeed run` in a process of its own, as a user runs it, starts its embedded Spark
only when a stage uses it (spark/lazy.py).  In the test's own process a Spark session is always
up, so only a fresh process shows that every stage's path builds its plan after the session:
the same window as the in-process run, with a value filter and DDL between the rows, run with the
engine forced to Spark, takes the same decisions and leaves the same downstream; a window of
keyed tables alone starts no Spark at all on the default engine, whatever filter's rules."""

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
        result = cycle_result(run_in_own_process(CIDS[1], env={"CDCFLOW_ENGINE": "spark"}))
        assert result["spark_session"] and result["filter"]["ran_in"] == "spark"  # the value filter in Spark tasks
        assert result["apply"]["segments_in_spark"] > 0
        compare_twins(up, down, other, S, CIDS, places_differ=True)

        up.execute(f"INSERT INTO {S}.u VALUES (7, 'q', 70)", f"UPDATE {S}.u SET w = 71 WHERE code = 'q'",
                   f"INSERT INTO {S}.t VALUES (8, 'skip', 8, 8)")
        result = cycle_result(run_in_own_process(CIDS[1], env={"CDCFLOW_ENGINE": "auto"}))
        # the value filter ran in the stage's process: no Spark at all
        assert result["apply"]["rows_in"] == 2 and not result["spark_session"] and result["filter"]["rows_copied"]
        assert_consistent(up, other, [S], allow={f"{S}.t": {"rows"}})  # the value filter's 'skip' row of t
        assert other.query(f"SELECT * FROM {S}.u WHERE code = 'q'") == [(7, "q", 71)]
    finally:
        other.stop()
        for s in (up, down):
            s.execute(f"DROP DATABASE IF EXISTS {S}")
