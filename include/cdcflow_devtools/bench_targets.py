"""The bench's targets, in one table: each run's figures set against them, and said met or missed.

The replication part's come from its compared window (a CLI cycle, the warm Connect cycle, the
peers, the cores-apart rounds); the lag part's from the DAG's lag under each load.  A figure the
run did not measure (the cores-apart line without APART=, a shape a target is not for) is left out,
never counted as met."""

from __future__ import annotations

from dataclasses import dataclass

from cdcflow_devtools.bench_common import around_stages, stage_seconds

SYSBENCH = "sysbench"  # the lag part's load after the steady rates (bench_lag)


@dataclass(frozen=True)
class Target:
    figure: str  # the key of replication_figures (a lag result's key, LAG), as the bench's last lines print it
    words: str  # what the summary line calls it
    shapes: tuple  # the workload shapes it is for (the lag part's loads, LAG)
    bound: float
    at_least: bool  # the figure must reach the bound (else stay at or below it)
    unit: str = ""

    def met(self, value: float) -> bool:
        return value >= self.bound if self.at_least else value <= self.bound


BOTH = ("oltp", "bulk")

REPLICATION = (
    Target("ratio_vs_native_replica", "vs the native replica", ("oltp",), 1.5, True),
    Target("ratio_vs_native_replica", "vs the native replica", ("bulk",), 0.5, True),
    Target("warm_ratio_vs_mariadb_binlog", "warm Connect vs mariadb-binlog | mariadb", ("bulk",), 1.2, True),
    Target("pull_events_per_second", "pull events/s", ("oltp",), 250_000, True),
    Target("start_up_prepare_finish_seconds", "start-up, prepare, finish", BOTH, 0.5, False, " s"),
    Target("cores_apart_apply_over_floor", "apply / floor on cores apart", BOTH, 1.1, False),
)

# the lag part's, on the DAG path, by load: p99 lag at 1,000 changes/s; under sysbench, p99 while
# it runs and the seconds until the downstream caught up after it stopped
LAG = (
    Target("p99", "p99", (1000,), 3.0, False, " s"),
    Target("p99", "p99", (SYSBENCH,), 5.0, False, " s"),
    Target("caught_up_seconds", "catch-up", (SYSBENCH,), 5.0, False, " s"),
)


def replication_figures(main: dict) -> dict[str, float]:
    """The figures REPLICATION names, and the CLI cycle's ratio to `mariadb-binlog | mariadb`
    (the bench prints every ratio from here), of the replication part's results
    (bench.main_comparison's); one the run did not measure is absent.  A ratio is cdcflow's
    throughput over the peer's on the same window: the peer's seconds over cdcflow's."""
    cyc, con = main["cdcflow"], main["cdcflow_connect"]
    binlog, replica = main["mariadb_binlog_seconds"], main["native_replica_seconds"]
    out = {}
    if cyc["wall_seconds"]:
        if replica:
            out["ratio_vs_native_replica"] = replica / cyc["wall_seconds"]
        if binlog:
            out["ratio_vs_mariadb_binlog"] = binlog / cyc["wall_seconds"]
        out["start_up_prepare_finish_seconds"] = around_stages(cyc["stats"], cyc["wall_seconds"])
    if con["wall_seconds"] and binlog:
        out["warm_ratio_vs_mariadb_binlog"] = binlog / con["wall_seconds"]
    pull_seconds = stage_seconds(cyc["stats"], "pull")
    if pull_seconds:
        out["pull_events_per_second"] = cyc["stats"].get("pull", {}).get("pulled", 0) / pull_seconds
    apart = main.get("cores_apart")
    if apart:
        out["cores_apart_apply_over_floor"] = apart["apply_over_floor"]["median"]
    return out


@dataclass(frozen=True)
class Verdict:
    target: Target
    value: float

    @property
    def met(self) -> bool:
        return self.target.met(self.value)

    def text(self) -> str:
        t = self.target
        shown = f"{self.value:,.0f}" if t.bound >= 1000 else f"{self.value:.3f}"
        bound = f"{t.bound:,.0f}" if t.bound >= 1000 else f"{t.bound:g}"
        return f"{t.words} {shown}{t.unit} ({'at least' if t.at_least else 'at most'} {bound}): " \
               f"{'met' if self.met else 'MISSED'}"


def replication_verdicts(main: dict) -> list[Verdict]:
    figures = replication_figures(main)
    return [Verdict(t, figures[t.figure]) for t in REPLICATION if main["shape"] in t.shapes and t.figure in figures]


def lag_verdicts(load, result: dict) -> list[Verdict]:
    """A DAG's lag under `load` (a rate, or SYSBENCH) against LAG: what it measured of them."""
    return [Verdict(t, result[t.figure]) for t in LAG if load in t.shapes and result.get(t.figure) is not None]


def as_record(main: dict | None) -> list[dict]:
    """The verdicts as results.json keeps them."""
    return [{"figure": v.target.figure, "value": v.value, "bound": v.target.bound, "at_least": v.target.at_least,
             "met": v.met} for v in replication_verdicts(main)] if main else []


def report(main: dict | None) -> None:
    """The replication part's figures against their targets, one line, and how many were met."""
    if not main:
        return
    verdicts = replication_verdicts(main)
    if not verdicts:
        return
    print(f"targets ({main['shape']}): " + "; ".join(v.text() for v in verdicts))
    print(f"targets_met={sum(v.met for v in verdicts)}/{len(verdicts)}")
