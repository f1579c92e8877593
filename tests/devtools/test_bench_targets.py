"""The bench's targets: one table, each run's figures said met or missed, nothing unmeasured counted."""

import json

import pytest

from cdcflow_devtools import bench_lag, bench_targets


def _main(shape="bulk", cycle=2.4, replica=1.4, pipe=3.2, warm=2.4, pull=0.6, pulled=300_004, apply=1.3,
          apart=1.0):
    stats = {"pull_seconds": pull, "filter_seconds": 0.1, "barrier_seconds": 0.0, "apply_seconds": apply,
             "pull": {"pulled": pulled}}
    main = {"shape": shape, "cdcflow": {"wall_seconds": cycle, "stats": stats},
            "cdcflow_connect": {"wall_seconds": warm, "stats": {}},
            "native_replica_seconds": replica, "mariadb_binlog_seconds": pipe}
    if apart is not None:
        main["cores_apart"] = {"apply_over_floor": {"median": apart, "min": apart, "max": apart}}
    return main


def test_a_bulk_run_is_set_against_the_bulk_targets_only():
    got = {v.target.figure: (round(v.value, 3), v.met) for v in bench_targets.replication_verdicts(_main())}
    # 1.4 / 2.4 of the replica, 3.2 / 2.4 of the pipe, 2.4 - (0.6 + 0.1 + 1.3) around the stages
    assert got == {"ratio_vs_native_replica": (0.583, True), "warm_ratio_vs_mariadb_binlog": (1.333, True),
                   "start_up_prepare_finish_seconds": (0.4, True), "cores_apart_apply_over_floor": (1.0, True)}


def test_the_cli_cycle_s_ratio_to_the_pipe_is_a_figure_the_bench_prints_but_no_target():
    figures = bench_targets.replication_figures(_main(cycle=2.4, pipe=3.2))
    assert figures["ratio_vs_mariadb_binlog"] == pytest.approx(3.2 / 2.4)
    assert "ratio_vs_mariadb_binlog" not in {t.figure for t in bench_targets.REPLICATION}
    # a peer that did not run gives no ratio, not one of zero
    assert "ratio_vs_native_replica" not in bench_targets.replication_figures(_main(replica=None))


def test_an_oltp_run_has_the_pull_target_and_its_own_bound_against_the_replica():
    verdicts = bench_targets.replication_verdicts(_main("oltp", cycle=2.9, replica=5.1, pull=0.8, pulled=300_004,
                                                        apply=1.6, apart=1.17))
    got = {v.target.figure: v.met for v in verdicts}
    assert got == {"ratio_vs_native_replica": True, "pull_events_per_second": True,
                   "start_up_prepare_finish_seconds": True, "cores_apart_apply_over_floor": False}
    assert [v.target.bound for v in verdicts if v.target.figure == "ratio_vs_native_replica"] == [1.5]


def test_a_figure_the_run_did_not_measure_is_left_out_not_counted_as_met(capsys):
    verdicts = bench_targets.replication_verdicts(_main(apart=None))
    assert "cores_apart_apply_over_floor" not in {v.target.figure for v in verdicts}
    bench_targets.report(_main(apart=None, cycle=3.0, replica=1.4))
    out = capsys.readouterr().out
    # 1.4 / 3.0 of the replica, and 1.0 s around the stages' 2.0
    assert "vs the native replica 0.467 (at least 0.5): MISSED" in out
    assert "start-up, prepare, finish 1.000 s (at most 0.5): MISSED" in out
    assert out.strip().endswith("targets_met=1/3")


def test_the_record_is_what_results_json_keeps():
    record = bench_targets.as_record(_main(warm=3.3, pipe=2.7))
    assert json.loads(json.dumps(record)) == record
    assert {r["figure"]: r["met"] for r in record}["warm_ratio_vs_mariadb_binlog"] is False
    assert bench_targets.as_record(None) == []


@pytest.mark.parametrize("p99, words", [(1.66, "met"), (6.03, "MISSED")])
def test_the_lag_part_says_its_dag_p99_against_the_same_table(p99, words):
    entry = {"dag-binlog": {"p50": 1.0, "p99": p99, "max": p99, "cycles_per_minute": 22.0, "caught_up_seconds": 0.95,
                            "sysbench": {"transactions_per_second": 929.2}},
             "cli": {"p50": 1.0, "p99": 7.0, "max": 7.0, "cycles_per_minute": 30.0}}
    line = bench_lag.summary_line(bench_targets.SYSBENCH, entry)
    assert f"[p99 {p99:.3f} s (at most 5): {words}; catch-up 0.950 s (at most 5): met]" in line
    assert line.count("at most") == 2  # the CLI loop is not held to the DAG's targets


def test_the_lag_targets_are_by_load():
    at_rate = bench_targets.lag_verdicts(1000, {"p99": 2.5, "caught_up_seconds": 9.0})
    assert [(v.target.figure, v.target.bound, v.met) for v in at_rate] == [("p99", 3.0, True)]
    assert bench_targets.lag_verdicts(5000, {"p99": 2.5}) == []  # no target at 5,000/s
    assert bench_targets.lag_verdicts(bench_targets.SYSBENCH, {"p99": None}) == []  # not measured: left out
