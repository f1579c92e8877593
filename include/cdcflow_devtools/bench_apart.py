"""The cores-apart line: the floor's statements sent again and the window's CLI cycle, each with
the downstream on cores of its own (bench_cores), in rounds.

On the bench's shared machine the hypervisor at times runs someone else on our cores (the
census's `stolen` column: up to 3 core-seconds in a 6 s cycle), and the same statements cost the
downstream from 2.0 to 3.1 core-seconds from one replay to the next; one floor and one cycle gave
apply / floor anywhere from 0.97 to 1.46.  Each round here runs the floor's replay and a CLI
cycle one right after the other, alternating which goes first (bench_pairs.alternating), each
into cdcflow's downstream reset to the start, and takes the machine's stolen core-seconds over
each.  The part prints every round; the median of the rounds' own ratios with their spread, and
the same over the quiet rounds alone (both runs stole less than QUIET_STEAL of the machine); and
the steadier figure: each run's seconds per core-second of the downstream's, apply's over the
floor's.  With the server alone on its cores that is how densely each kept it busy, whatever its
core's pace in that run (on 2026-12-02, 1.06-1.16 over ten rounds whose raw ratios spread over
0.97-1.46).  Per segment it prints the floor's and apply's seconds, and cdcflow's CPU in each
segment of apply beside the segment's time: which segments waited on cdcflow's one core.
After each run it reads the downstream's CPU for AFTER_SECONDS more, before anything else asks
it: its own background work left over from the run's statements, InnoDB's purge of their old row
versions most of it.  Where one run leaves much more of it after its end than the other, that run
did less of it inside its time: with performance_schema on (slower runs), the floor's replays left
0.16-0.17 core-seconds after them and a cycle 0.003, having spent 0.17-0.19 in its last two
segments; in the bench's own rounds the same evening, 0.14 and 0.13 (docs/performance.md).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from cdcflow_devtools.bench_census import (QUIET_STEAL, apply_idle, apply_segment_seconds, process_cpu, quiet,
                                          stage_core_seconds, stolen_share)
from cdcflow_devtools.bench_common import Servers, reset_settled, run_cycle_measured, say, verify
from cdcflow_devtools.bench_pairs import alternating, spread

DEFAULT_ROUNDS = 3
AFTER_SECONDS = 1.5  # how long the downstream's CPU is read after each run (the purge it left, mostly)


def feed_id(i: int) -> str:
    """Round i's changefeed, created beside the replication part's own before its workload runs
    (bench.main_comparison), so that it starts where that one does."""
    return f"bench-apart-{i}"


def apart_table(servers: Servers, rows: int, log_dir: Path, phases: list, cpu: dict, rounds: int) -> dict | None:
    """`rounds` rounds of the floor's phases sent again and a CLI cycle of the window (feed_id),
    each into cdcflow's downstream reset to the start, with the downstream on cores of its own;
    None on a machine of one core."""
    from cdcflow_devtools import bench_cores, bench_floor

    def floor(i: int) -> dict:
        reset_settled(servers)
        spans: list[float] = []
        (secs, cpu_secs), stolen = stolen_share(lambda: bench_floor.replay(servers.cdcflow, phases, spans))
        after = cpu_after(servers.cdcflow.pid)
        ok = not verify(servers.up, servers.cdcflow, f"cdcflow's downstream (the floor's replay, cores apart, round {i + 1})")
        return {"seconds": secs, "downstream_core_seconds": cpu_secs, "stolen": stolen, "consistent": ok,
                "segments": bench_floor.segment_seconds(phases, spans), "ddls": bench_floor.ddl_seconds(phases, spans),
                "downstream_after": after}

    def cycle(i: int) -> dict:
        reset_settled(servers)
        cyc, stolen = stolen_share(lambda: run_cycle_measured(feed_id(i), rows, log_dir, cpu=cpu))
        after = cpu_after(servers.cdcflow.pid)
        ok = not verify(servers.up, servers.cdcflow, f"cdcflow's downstream (cores apart, round {i + 1})")
        log = log_dir / f"cycle-{feed_id(i)}.log"
        return {"seconds": cyc.stage_seconds("apply"), "stolen": stolen, "consistent": ok,
                "core_seconds": stage_core_seconds(cyc.census, "apply") or {},
                "segments": apply_segment_seconds(log), "idle": apply_idle(log), "downstream_after": after}

    with bench_cores.apart(servers.cdcflow.pid) as halves:
        if halves is None:
            return None
        say(f"cores apart: the downstream on cores {halves[0]}, cdcflow on {halves[1]}; {rounds} rounds of the floor "
            "and a CLI cycle")
        got = alternating(rounds, "cores apart round", {"the floor": floor, "cdcflow's cycle": cycle})
    out = [{"floor": g["the floor"], "cycle": g["cdcflow's cycle"]} for g in got]
    return {"downstream_cores": halves[0], "cdcflow_cores": halves[1], "rounds": out, **summary(out),
            "consistent": all(r["floor"]["consistent"] and r["cycle"]["consistent"] for r in out)}


def cpu_after(pid: int, seconds: float = AFTER_SECONDS) -> float | None:
    """The downstream's CPU seconds over the next `seconds`, nothing sent to it: what a run left it
    to do (None: its process is gone)."""
    before = process_cpu(pid)
    time.sleep(seconds)
    now = process_cpu(pid)
    return None if before is None or now is None else now - before


def after_medians(rounds: list[dict]) -> tuple[float, float] | None:
    """The median over the rounds of the downstream's CPU after the floor's replay and after the
    cycle (cpu_after); None where a round has none."""
    pairs = [(r["floor"].get("downstream_after"), r["cycle"].get("downstream_after")) for r in rounds]
    if not pairs or any(f is None or c is None for f, c in pairs):
        return None
    return statistics.median(f for f, _ in pairs), statistics.median(c for _, c in pairs)


def ratio(r: dict) -> float:
    """A round's apply / floor."""
    return r["cycle"]["seconds"] / r["floor"]["seconds"] if r["floor"]["seconds"] else 0.0


def density_ratio(r: dict) -> float:
    """A round's apply / floor, each run's seconds taken per core-second of the downstream's: the
    floor's busy share over apply's (busy_shares)."""
    floor, apply = busy_shares(r)
    return floor / apply if apply else 0.0


def busy_shares(r: dict) -> tuple[float, float]:
    """How much of each run of a round, the floor's and apply's, the downstream's server was on
    its core: with the server alone on its cores, the share of the run it kept it busy (on
    2026-12-02: the floor's replays 91-97%, apply 81-86%)."""
    f, c = r["floor"], r["cycle"]
    return (f["downstream_core_seconds"] / f["seconds"] if f["seconds"] else 0.0,
            c["core_seconds"].get("downstream", 0.0) / c["seconds"] if c["seconds"] else 0.0)


def most_over(r: dict) -> str:
    """A round's segment whose apply took the most over the floor's replay of it, as "segment:
    floor / apply" (seconds): where a round's excess sits, such as one segment's stall (an oltp
    round on 2026-12-02 whose last segment took 1.23 s against 0.29-0.54 s in the others); "-"
    where the cycle's log did not give one span per segment of the floor."""
    f, a = r["floor"]["segments"], r["cycle"]["segments"]
    if not f or len(f) != len(a):
        return "-"
    k = max(range(len(f)), key=lambda k: a[k] - f[k])
    return f"{k + 1}: {f[k]:.2f} / {a[k]:.2f}"


def summary(rounds: list[dict]) -> dict:
    """The median and spread of the rounds' own ratios, over all of them and over the quiet ones
    (None when none was quiet), and of their density_ratio."""
    calm = [ratio(r) for r in rounds if quiet(r["floor"]["stolen"], r["cycle"]["stolen"])]
    return {"apply_over_floor": spread([ratio(r) for r in rounds]), "quiet_rounds": len(calm),
            "quiet_apply_over_floor": spread(calm) if calm else None,
            "apply_over_floor_per_downstream_cpu": spread([density_ratio(r) for r in rounds])}


def idle_parts(by_kind: dict) -> tuple[float, float, float]:
    """Of apply's time with nothing in flight (statement_timeline's idle_ms_by_kind), the ms before
    the first statement, at the DDLs' edges (after and before them), and between statements."""
    return by_kind["before the first"], by_kind["after a DDL"] + by_kind["before a DDL"], by_kind["between statements"]


def idle_text(r: dict) -> str:
    """A round's apply with nothing of cdcflow's in flight, in ms: all of it, then idle_parts; "-"
    where the cycle's log gave none."""
    idle = r["cycle"].get("idle")
    if not idle:
        return "-"
    return f"{idle['idle_ms']:.0f}: " + " / ".join(f"{ms:.0f}" for ms in idle_parts(idle["idle_ms_by_kind"]))


def segment_medians(rounds: list[dict]) -> list[tuple[float, float]] | None:
    """Per segment, the median over the rounds of the floor's and apply's seconds; None where a
    round's cycle log did not give one span per segment of the floor."""
    if not rounds or any(len(r["cycle"]["segments"]) != len(r["floor"]["segments"]) for r in rounds):
        return None
    return [(statistics.median(r["floor"]["segments"][k] for r in rounds),
             statistics.median(r["cycle"]["segments"][k] for r in rounds))
            for k in range(len(rounds[0]["floor"]["segments"]))]


def segment_cpu(rounds: list[dict]) -> list[tuple[float, float]] | None:
    """Per segment of apply, the median over the rounds of cdcflow's CPU seconds in it (the cycle's
    `apply timeline`, sink.statement_timeline) and of those seconds over the segment's own
    (near 1: apply waited on cdcflow's one core there, not on the downstream); None where a round's
    log gave no CPU per segment or another count of segments than its spans."""
    cpus = [(r["cycle"].get("idle") or {}).get("cpu_s_by_segment") for r in rounds]
    if not rounds or any(not c or len(c) != len(r["cycle"]["segments"]) for c, r in zip(cpus, rounds)) \
            or len({len(c) for c in cpus}) != 1:
        return None
    return [(statistics.median(c[k] for c in cpus),
             statistics.median(c[k] / r["cycle"]["segments"][k] if r["cycle"]["segments"][k] else 0.0
                               for c, r in zip(cpus, rounds)))
            for k in range(len(cpus[0]))]


def ddl_medians(rounds: list[dict]) -> list[tuple[float, float]] | None:
    """Per DDL, the median over the rounds of its own seconds in the floor's replay and in apply
    (the cycle's `apply timeline`: from its send to its answer); None where a round's log gave
    none or another count of DDLs than the floor's."""
    apply = [[ms / 1000 for ms in (r["cycle"].get("idle") or {}).get("ddl_ms") or ()] for r in rounds]
    if not rounds or any(not a or len(a) != len(r["floor"].get("ddls") or ()) for a, r in zip(apply, rounds)):
        return None
    return [(statistics.median(r["floor"]["ddls"][k] for r in rounds), statistics.median(a[k] for a in apply))
            for k in range(len(apply[0]))]


def report(res: dict | None) -> None:
    if not res:
        return
    yes = {True: "yes", False: "NO"}
    print(f"with the downstream on cores of its own (cores {res['downstream_cores']}, cdcflow on "
          f"{res['cdcflow_cores']}), {len(res['rounds'])} rounds of the floor and a CLI cycle, alternating which goes "
          f"first (stolen: the share of the machine's cores the hypervisor took over the run):")
    print(f"  {'round':>5} {'floor s':>8} {'apply s':>8} {'apply / floor':>14} {'stolen floor':>13} {'stolen cycle':>13}"
          f" {'apply core-s cdcflow / downstream':>35} {'downstream busy floor / apply':>31}"
          f" {'most over the floor: segment, floor / apply s':>47}"
          f" {'nothing in flight ms: first / DDLs / between':>45}")
    for i, r in enumerate(res["rounds"], 1):
        f, c = r["floor"], r["cycle"]
        spent = f"{c['core_seconds'].get('cdcflow', 0.0):.1f} / {c['core_seconds'].get('downstream', 0.0):.1f}"
        busy = " / ".join(f"{share:.0%}" for share in busy_shares(r))
        print(f"  {i:>5} {f['seconds']:>8.2f} {c['seconds']:>8.2f} {ratio(r):>14.2f} {f['stolen']:>12.1%} "
              f"{c['stolen']:>12.1%} {spent:>35} {busy:>31} {most_over(r):>47} {idle_text(r):>45}"
              + ("" if f["consistent"] and c["consistent"] else "  DIFFERS"))
    s, q = res["apply_over_floor"], res["quiet_apply_over_floor"]
    calm = (f"over the {res['quiet_rounds']} rounds that stole less than {QUIET_STEAL:.0%}: median {q['median']:.2f}"
            f" (from {q['min']:.2f} to {q['max']:.2f})" if q else f"no round stole less than {QUIET_STEAL:.0%}")
    d = res["apply_over_floor_per_downstream_cpu"]
    print(f"  apply / floor: median {s['median']:.2f} (from {s['min']:.2f} to {s['max']:.2f}); {calm} "
          f"(consistent: {yes[res['consistent']]})")
    print(f"  per core-second of the downstream's (the floor's busy share over apply's): median {d['median']:.2f} "
          f"(from {d['min']:.2f} to {d['max']:.2f})")
    idles = [r["cycle"]["idle"] for r in res["rounds"] if r["cycle"].get("idle")]
    if idles:
        kinds = {k: statistics.median(i["idle_ms_by_kind"][k] for i in idles) for k in idles[0]["idle_ms_by_kind"]}
        first, edges, between = idle_parts(kinds)
        total = statistics.median(i["idle_ms"] for i in idles)
        share = statistics.median(i["idle_ms"] / 1000 / i["seconds"] for i in idles if i["seconds"])
        print(f"  nothing of cdcflow's in flight (the rounds' medians): {total:.0f} ms, {share:.1%} of the barrier walk;"
              f" before the first statement {first:.0f} ms, at the DDLs' edges {edges:.0f} ms, between statements "
              f"{between:.0f} ms")
    seg = segment_medians(res["rounds"])
    if seg:
        print("  per segment, with the DDL that ends it (floor / apply, s, the rounds' medians): "
              + ", ".join(f"{f:.2f}/{a:.2f}" for f, a in seg))
    cpu = segment_cpu(res["rounds"])
    if cpu:
        print("  cdcflow's CPU in each segment of apply (core-seconds, and per second of the segment; the rounds' "
              "medians): " + ", ".join(f"{c:.2f} ({share:.2f})" for c, share in cpu))
    ddls = ddl_medians(res["rounds"])
    if ddls:
        print("  each DDL alone, from its send to its answer (floor / apply, s, the rounds' medians): "
              + ", ".join(f"{f:.3f}/{a:.3f}" for f, a in ddls))
    after = after_medians(res["rounds"])
    if after:
        print(f"  the downstream's CPU in the {AFTER_SECONDS:g} s after each run, left over from its statements "
              f"(InnoDB's purge, mostly; the rounds' medians): after the floor {after[0]:.2f} core-seconds, after "
              f"cdcflow's cycle {after[1]:.2f}")
    print(f"cores_apart_apply_over_floor={s['median']:.2f}"
          + (f" quiet_cores_apart_apply_over_floor={q['median']:.2f}" if q else "")
          + f" cores_apart_apply_over_floor_per_downstream_cpu={d['median']:.2f}")
