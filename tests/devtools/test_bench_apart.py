"""The cores-apart line's rounds: every round kept, the quiet ones told apart by the steal."""

import pytest

from cdcflow.core.uri import validate_changefeed_id
from cdcflow_devtools import bench_apart, bench_census


def _round(floor: float, apply: float, floor_stolen: float, cycle_stolen: float, segments=((0.5, 0.6), (0.7, 0.8))):
    return {"floor": {"seconds": floor, "stolen": floor_stolen, "consistent": True, "downstream_core_seconds": floor,
                      "segments": [f for f, _ in segments]},
            "cycle": {"seconds": apply, "stolen": cycle_stolen, "consistent": True,
                      "core_seconds": {"cdcflow": 1.1, "downstream": 2.2}, "segments": [a for _, a in segments]}}


def test_each_round_has_a_changefeed_of_its_own():
    ids = [bench_apart.feed_id(i) for i in range(3)]
    assert len(set(ids)) == 3 and all(validate_changefeed_id(i) == i for i in ids)


def test_the_ratio_is_the_median_of_the_rounds_own_and_the_quiet_ones_are_counted_apart():
    rounds = [_round(2.0, 2.0, 0.01, 0.005), _round(2.0, 2.6, 0.01, 0.05), _round(3.0, 3.3, 0.04, 0.01),
              _round(2.5, 2.4, 0.0, 0.0)]
    got = bench_apart.summary(rounds)
    assert got["apply_over_floor"] == pytest.approx({"median": (1.0 + 1.1) / 2, "min": 0.96, "max": 1.3})
    # a round is quiet only when neither of its runs lost QUIET_STEAL of the machine
    assert got["quiet_rounds"] == 2
    assert got["quiet_apply_over_floor"] == pytest.approx({"median": (1.0 + 0.96) / 2, "min": 0.96, "max": 1.0})
    assert bench_apart.summary([_round(2.0, 2.6, 0.05, 0.0)])["quiet_apply_over_floor"] is None


def test_the_steadier_ratio_takes_each_run_per_core_second_of_the_downstream_s():
    # the floor kept the downstream busy all through (2.0 core-s in 2.0 s), apply 2.2 core-s in 2.75 s
    # (80%): 1.25 however fast the downstream's core ran in either
    r = _round(2.0, 2.75, 0.0, 0.0)
    assert bench_apart.density_ratio(r) == pytest.approx(1.25)
    assert bench_apart.summary([r])["apply_over_floor_per_downstream_cpu"]["median"] == pytest.approx(1.25)


def test_the_report_prints_every_round_and_both_medians(capsys):
    rounds = [_round(2.0, 2.0, 0.01, 0.005, segments=((0.5, 0.9), (0.7, 0.8))),
              _round(2.0, 2.6, 0.01, 0.05, segments=((0.5, 0.6), (0.7, 1.4)))]
    bench_apart.report({"downstream_cores": [0], "cdcflow_cores": [1], "rounds": rounds, "consistent": True,
                        **bench_apart.summary(rounds)})
    out = capsys.readouterr().out
    # each round's segment most over the floor: the second's stall in its last segment stands out
    assert "1: 0.50 / 0.90" in out and "2: 0.70 / 1.40" in out
    assert "2 rounds" in out and "1.30" in out and "5.0%" in out
    # the downstream's core-seconds over each run's seconds: 2.0 of 2.0 in the floor, 2.2 of 2.6 in apply
    assert "100% / 85%" in out
    assert "over the 1 rounds that stole less than 2%: median 1.00" in out
    assert "cores_apart_apply_over_floor=1.15 quiet_cores_apart_apply_over_floor=1.00 " \
           "cores_apart_apply_over_floor_per_downstream_cpu=" in out
    assert "per core-second of the downstream's (the floor's busy share over apply's): median" in out
    assert "per segment, with the DDL that ends it (floor / apply, s, the rounds' medians): 0.50/0.75, 0.70/1.10" in out


def test_segments_are_left_out_when_a_cycle_log_gave_another_count():
    rounds = [_round(2.0, 2.0, 0.0, 0.0), _round(2.0, 2.0, 0.0, 0.0, segments=((0.5, 0.6),))]
    rounds[1]["floor"]["segments"] = [0.5, 0.7]
    assert bench_apart.segment_medians(rounds) is None
    assert bench_apart.most_over(rounds[1]) == "-"
    assert bench_apart.most_over(_round(2.0, 2.0, 0.0, 0.0, segments=((0.5, 0.9), (0.7, 0.8)))) == "1: 0.50 / 0.90"


def test_the_stolen_share_is_over_the_run_and_the_machine_s_cores(monkeypatch):
    steal = iter([10.0, 10.5])
    monkeypatch.setattr(bench_census, "machine_busy", lambda: (0.0, next(steal)))
    monkeypatch.setattr(bench_census.os, "cpu_count", lambda: 2)
    clock = iter([100.0, 105.0])
    monkeypatch.setattr(bench_census.time, "perf_counter", lambda: next(clock))
    out, share = bench_census.stolen_share(lambda: "ran")
    assert out == "ran" and share == 0.5 / (5.0 * 2)


def test_each_round_says_when_nothing_of_cdcflow_s_was_in_flight(tmp_path, capsys):
    """The cycle's `apply timeline` event (sink.statement_timeline) read from its log, printed per
    round and as the rounds' medians; a round whose log has none prints '-'."""
    from cdcflow.core.log_line import event_line
    from cdcflow.sink.statement_timeline import Timeline

    log = tmp_path / "cycle.log"
    timeline = Timeline(started=0.0, statements=[(0.07, 0.2), (0.21, 0.3)], ddls=[(0.2005, 0.205)])
    log.write_text("2026-12-03 08:37:51,864 cdcflow barriers · changefeed f · {\"event\": \"barriers\"}\n"
                   f"2026-12-03 08:37:53,864 cdcflow {event_line('apply timeline', 'f', **timeline.summary(0.4))}\n")
    idle = bench_census.apply_idle(log)
    assert idle["idle_ms"] == pytest.approx(175.5) and idle["statements"] == 2
    (tmp_path / "none.log").write_text("")
    assert bench_census.apply_idle(tmp_path / "none.log") is None
    rounds = [_round(2.0, 2.0, 0.0, 0.0), _round(2.0, 2.2, 0.0, 0.0)]
    rounds[0]["cycle"]["idle"] = idle
    # 70 before the first statement, 5 after the DDL and 0.5 before it, 100 after the last
    assert bench_apart.idle_text(rounds[0]) == "176: 70 / 6 / 0"
    assert bench_apart.idle_text(rounds[1]) == "-"
    bench_apart.report({"downstream_cores": [0], "cdcflow_cores": [1], "rounds": rounds, "consistent": True,
                        **bench_apart.summary(rounds)})
    out = capsys.readouterr().out
    assert "nothing in flight ms: first / DDLs / between" in out and "176: 70 / 6 / 0" in out
    assert "nothing of cdcflow's in flight (the rounds' medians): 176 ms, 43.9% of the barrier walk; before the " \
           "first statement 70 ms, at the DDLs' edges 6 ms, between statements 0 ms" in out


def test_cdcflow_s_cpu_in_each_segment_is_set_beside_the_segment_s_time(capsys):
    """The cycle's CPU per segment (sink.statement_timeline) over the segment's seconds in apply:
    near 1 where apply waited on cdcflow's one core; left out where a round's log gave none."""
    from cdcflow.sink.statement_timeline import Timeline

    def walked(first_cpu: float, second_cpu: float) -> dict:
        return Timeline(started=0.0, statements=[(0.1, 0.5), (0.7, 1.3)], ddls=[(0.55, 0.6)],
                        cpu=[1.0, 1.0 + first_cpu]).summary(1.4, cpu_ended=1.0 + first_cpu + second_cpu)

    rounds = [_round(2.0, 2.0, 0.0, 0.0), _round(2.0, 2.2, 0.0, 0.0)]  # apply's segments: 0.6 and 0.8 s
    rounds[0]["cycle"]["idle"], rounds[1]["cycle"]["idle"] = walked(0.57, 0.2), walked(0.33, 0.44)
    assert bench_apart.segment_cpu(rounds) == [pytest.approx((0.45, 0.75)), pytest.approx((0.32, 0.4))]
    bench_apart.report({"downstream_cores": [0], "cdcflow_cores": [1], "rounds": rounds, "consistent": True,
                        **bench_apart.summary(rounds)})
    assert "cdcflow's CPU in each segment of apply (core-seconds, and per second of the segment; the rounds' " \
           "medians): 0.45 (0.75), 0.32 (0.40)" in capsys.readouterr().out
    del rounds[1]["cycle"]["idle"]["cpu_s_by_segment"]  # a cycle logged before it, or of many segments
    assert bench_apart.segment_cpu(rounds) is None
    rounds[1]["cycle"]["idle"] = walked(0.3, 0.3)
    rounds[1]["cycle"]["segments"] = [0.6]  # its log gave another count of segments
    assert bench_apart.segment_cpu(rounds) is None


def test_each_ddl_s_own_time_in_the_floor_and_in_apply_is_set_side_by_side(capsys):
    """Each DDL from its send to its answer, the floor's replay's and apply's (its timeline's ddl_ms),
    the rounds' medians; left out where a round's log gave none or another count."""
    from cdcflow.sink.statement_timeline import Timeline

    rounds = [_round(2.0, 2.2, 0.0, 0.0), _round(2.0, 2.1, 0.0, 0.0), _round(2.1, 2.3, 0.0, 0.0)]
    for r, (floor, (first, second)) in zip(rounds, [((0.02, 0.1), (0.03, 0.15)), ((0.03, 0.12), (0.02, 0.09)),
                                                     ((0.01, 0.2), (0.025, 0.4))]):
        r["floor"]["ddls"] = list(floor)
        r["cycle"]["idle"] = Timeline(started=0.0, statements=[(0.0, 0.5), (0.6, 1.0)],
                                      ddls=[(0.5, 0.5 + first), (1.0, 1.0 + second)]).summary(1.5)
    assert bench_apart.ddl_medians(rounds) == [pytest.approx((0.02, 0.025)), pytest.approx((0.12, 0.15))]
    bench_apart.report({"downstream_cores": [0], "cdcflow_cores": [1], "rounds": rounds, "consistent": True,
                        **bench_apart.summary(rounds)})
    assert "each DDL alone, from its send to its answer (floor / apply, s, the rounds' medians): 0.020/0.025, " \
           "0.120/0.150" in capsys.readouterr().out
    rounds[2]["cycle"]["idle"]["ddl_ms"] = [25.0]  # another count of DDLs than the floor's
    assert bench_apart.ddl_medians(rounds) is None
    del rounds[2]["cycle"]["idle"]  # a cycle whose log gave no timeline
    assert bench_apart.ddl_medians(rounds) is None


def test_the_downstream_s_work_left_after_each_run_is_set_beside_the_line(capsys, monkeypatch):
    """What the downstream did in the seconds after the floor's replay and after the cycle (its purge
    of their old row versions, mostly), the rounds' medians; left out where a round has none."""
    rounds = [_round(2.0, 2.2, 0.0, 0.0), _round(2.0, 2.1, 0.0, 0.0), _round(2.1, 2.3, 0.0, 0.0)]
    for r, (f, c) in zip(rounds, [(0.16, 0.01), (0.17, 0.0), (0.15, 0.02)]):
        r["floor"]["downstream_after"], r["cycle"]["downstream_after"] = f, c
    assert bench_apart.after_medians(rounds) == pytest.approx((0.16, 0.01))
    bench_apart.report({"downstream_cores": [0], "cdcflow_cores": [1], "rounds": rounds, "consistent": True,
                        **bench_apart.summary(rounds)})
    assert "after the floor 0.16 core-seconds, after cdcflow's cycle 0.01" in capsys.readouterr().out
    rounds[2]["cycle"]["downstream_after"] = None  # its process gone
    assert bench_apart.after_medians(rounds) is None
    bench_apart.report({"downstream_cores": [0], "cdcflow_cores": [1], "rounds": rounds, "consistent": True,
                        **bench_apart.summary(rounds)})
    assert "after the floor" not in capsys.readouterr().out


def test_the_cpu_after_a_run_is_read_from_the_process_over_the_seconds_given(monkeypatch):
    """cpu_after: the process's CPU at the end less at the start, the seconds slept between; None
    when the process is gone."""
    clock = iter([3.0, 3.25])
    monkeypatch.setattr(bench_apart, "process_cpu", lambda pid: next(clock))
    slept = []
    monkeypatch.setattr("time.sleep", slept.append)
    assert bench_apart.cpu_after(1, 0.5) == pytest.approx(0.25) and slept == [0.5]
    monkeypatch.setattr(bench_apart, "process_cpu", lambda pid: None)
    assert bench_apart.cpu_after(1, 0.5) is None
