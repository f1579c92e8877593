"""Where a cycle's time goes: per stage, its wall seconds and the core-seconds each kind of
process spent in it.

While `cdcflow changefeed run` runs, every process of interest is sampled every 100 ms (its
user + system CPU time from /proc, by psutil): the CLI process and its descendants (on the
embedded path the Spark JVM and its Python workers are among them), the Spark Connect server's
processes on the warm path, and the upstream's and the downstream's mariadbd.  A process
counts as:

  cdcflow          the CLI's Python process (the driver: pull's decoding, statement planning)
  JVM              a java process (Spark: planning, code generation, tasks)
  Python workers   a Python process under a JVM (Spark's workers: apply's writers)
  downstream       the downstream's mariadbd (the statements' own work)
  upstream         the upstream's mariadbd (serving the binlog, the catalogue reads)
  rest             the rest of the machine: its busy CPU time (/proc/stat, less idle and iowait)
                   less the kinds above: the kernel's writeback of the workload's pages, other
                   processes; on two cores, what is busy here slows the cycle
  stolen           the machine's steal time: its cores were wanted but the hypervisor ran
                   someone else's

Beside the core-seconds, two waits in seconds of the wall clock (WAITS), which tell a stage
that took long with little CPU where it waited:

  queued           the cdcflow processes' threads ready to run but on a core's queue, summed
                   over the threads (/proc/<pid>/task/<tid>/schedstat, the kernel's run-queue
                   delay): the cores were busy with someone else
  disk             the time in which some task of the machine was stalled on the disk
                   (/proc/pressure/io, the kernel's pressure stall information): a page read
                   from the disk, not from the page cache, or a write held up by the writeback

And of the cdcflow processes' core-seconds, what went to the kernel (KERNEL): their system CPU
seconds and their page faults (minor: memory touched for the first time).  On the bench's
virtual machine memory the guest freed is handed back to the host after a few seconds (the
balloon device's free page reporting), and a process's first touch of such memory costs the
host's fault too: pull's system time, most of it those touches of the window it keeps, moved
from 0.3 to 0.8 s between runs of one window (docs/performance.md).

A stage's span is read from the cycle's log, whose events carry the time each stage ended
(window: the prepare's end; pulled, filtered, barriers, applied, finished); the core-seconds of
a kind in a span are its CPU time at the span's end minus at its start.  A process that exits
between two samples loses at most its last 100 ms.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import threading
from contextlib import suppress
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from cdcflow_devtools import process_tree

PROCESSES = ("cdcflow", "JVM", "Python workers", "downstream", "upstream")
MACHINE = ("rest", "stolen")  # not the cycle's nor the servers' time: not in its core-s column
KINDS = PROCESSES + MACHINE
WAITS = ("queued", "disk")  # wall seconds of waiting, not core-seconds (the module's docstring)
KERNEL = ("system", "faults")  # of the cdcflow processes' time: system CPU seconds, page faults
# the log event that ends each stage, in the cycle's order; the first span starts at the process's start
STAGE_ENDS = (("start-up, prepare", "window"), ("pull", "pulled"), ("filter", "filtered"),
              ("barrier", "barriers"), ("apply", "applied"), ("finish", "finished"))
_ENDING = {event for _stage, event in STAGE_ENDS}
_EVENT = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) cdcflow ([a-z ]+) · changefeed")


class CpuSampler:
    """CPU time by kind (KINDS), sampled over time: `roots` are trees (a pid and its
    descendants) classified by process; `fixed` are single processes of a given kind."""

    def __init__(self, roots: list[int], fixed: dict[int, str], interval: float = 0.1):
        import psutil  # lazy: the bench's requirement, not the package's

        self._psutil = psutil
        self.roots, self.fixed, self.interval = roots, fixed, interval
        # Each sample runs on a core the cycle uses (on cores apart, cdcflow's only one), so it
        # reads what changes and little else: a process's psutil handle and its parents' names
        # are kept (a parent outlives its child's sampling), and the trees are listed from the
        # kernel's children files, not by reading every process's stat (psutil's children): a
        # sample took 3.4 ms of CPU, a third of it in that scan, 3.4% of the core it shares with
        # the cycle (in the cores-apart rounds, whose floor's replay runs without a sampler); now
        # 0.5-0.8 ms
        self._procs: dict[int, object] = {}
        self._parent_names: dict[int, set[str]] = {}
        self.seen: dict[int, tuple[str, float]] = {}  # pid -> (kind, CPU seconds at its last sample)
        self.kernel: dict[int, tuple[float, int]] = {}  # a cdcflow pid -> (system seconds, page faults) then
        # (pid, tid) -> its run-queue seconds at its last sample: a thread gone keeps its last
        self.queued: dict[tuple[int, int], float] = {}
        self.disk_base = disk_stalled()
        self.base: dict[int, float] = {}  # the fixed processes' CPU seconds at the start (servers run before)
        for pid, _kind in fixed.items():
            self.base[pid] = self._cpu(pid) or 0.0
        # the machine's busy and stolen seconds, and this process's own, at the start ("rest", "stolen")
        self.busy_base, self.stolen_base = machine_busy()
        self.own_base = process_cpu(os.getpid()) or 0.0
        self.samples: list[tuple[float, dict[str, float]]] = []
        # (sample time, resident bytes of the roots' trees): each stage's peak memory (Census.peaks)
        self.memory: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._sample()
        self._thread.start()

    def _cpu(self, pid: int) -> float | None:
        try:
            t = self._proc(pid).cpu_times()
        except self._psutil.Error:
            return None
        return t.user + t.system

    def _kind(self, proc) -> str:
        try:
            if proc.name() == "java":
                return "JVM"
            parents = self._parent_names.get(proc.pid)
            if parents is None:
                parents = self._parent_names[proc.pid] = {p.name() for p in proc.parents()}
        except self._psutil.Error:
            return "cdcflow"
        return "Python workers" if "java" in parents else "cdcflow"

    def _proc(self, pid: int):
        p = self._procs.get(pid)
        if p is None:
            p = self._procs[pid] = self._psutil.Process(pid)
        return p

    def _sample(self) -> None:
        psutil = self._psutil
        rss = 0
        for root in self.roots:
            for pid in process_tree.sampled(root):
                with suppress(psutil.Error):  # gone since it was listed: its memory and time are no one's now
                    p = self._proc(pid)
                    with p.oneshot():
                        rss += p.memory_info().rss
                        t = p.cpu_times()
                        # classified at each sample: spark-submit's shell script becomes the JVM by exec
                        self.seen[pid] = (kind := self._kind(p), t.user + t.system)
                    if kind == "cdcflow":
                        self.queued.update(thread_queued(pid))
                        faults = page_faults(pid)  # None: gone since; its last sample's stands
                        if faults is not None:
                            self.kernel[pid] = (t.system, faults)
        for pid, kind in self.fixed.items():
            cpu = self._cpu(pid)
            if cpu is not None:
                self.seen[pid] = (kind, cpu - self.base[pid])
        totals = dict.fromkeys(KINDS, 0.0)
        for kind, cpu in self.seen.values():
            totals[kind] += cpu
        # processes seen before the sampler started count from their start, the machine from the
        # sampler's: a root's time before then is not "rest" (floored at zero, and it is 100 ms at
        # most); nor is this process's own, the sampling's
        busy, stolen = machine_busy()
        own = (process_cpu(os.getpid()) or 0.0) - self.own_base
        totals["rest"] = max(0.0, busy - self.busy_base - own - sum(totals[k] for k in PROCESSES))
        totals["stolen"] = stolen - self.stolen_base
        totals["queued"] = sum(self.queued.values())
        totals["disk"] = disk_stalled() - self.disk_base
        totals["system"] = sum(sys_s for sys_s, _ in self.kernel.values())
        totals["faults"] = sum(faults for _, faults in self.kernel.values())
        now = time.time()
        self.samples.append((now, totals))
        self.memory.append((now, rss))

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def at(self, t: float) -> dict[str, float]:
        """The totals of the last sample at or before `t` (the first sample's before it)."""
        best = self.samples[0][1]
        for when, totals in self.samples:
            if when > t:
                break
            best = totals
        return best

    def peak(self, lo: float, hi: float) -> int:
        """The most resident bytes the roots' trees held in a sample taken in [lo, hi]."""
        return max([0, *(rss for when, rss in self.memory if lo <= when <= hi)])


@dataclass
class Census:
    """Per stage: (stage, wall seconds, {kind: core-seconds}); `peaks`, per stage, the most
    memory the cycle's processes (the roots' trees, not the servers) held in it; `waits`, per
    stage, {wait: seconds} (WAITS); `kernel`, per stage, the cdcflow processes' {"system":
    seconds, "faults": page faults} (KERNEL)."""

    stages: list[tuple[str, float, dict[str, float]]] = field(default_factory=list)
    peaks: dict[str, int] = field(default_factory=dict)
    waits: dict[str, dict[str, float]] = field(default_factory=dict)
    kernel: dict[str, dict[str, float]] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"stages": [{"stage": s, "seconds": w, "core_seconds": c, "peak_rss_bytes": self.peaks.get(s),
                            "waits": self.waits.get(s, {}), "kernel": self.kernel.get(s, {})}
                           for s, w, c in self.stages]}

    @classmethod
    def of(cls, d: dict) -> "Census":
        """A census as as_dict gave it (a results file's; one from before the waits or the
        kernel's share has none)."""
        stages = d.get("stages", [])
        return cls([(e["stage"], e["seconds"], e["core_seconds"]) for e in stages],
                   {e["stage"]: e.get("peak_rss_bytes") for e in stages},
                   {e["stage"]: e.get("waits") or {} for e in stages},
                   {e["stage"]: e["kernel"] for e in stages if e.get("kernel")})


def log_events(log_path: Path) -> Iterator[tuple[str, float]]:
    """A cycle's log's events in order: (event, its time in epoch seconds)."""
    for line in log_path.read_text(errors="replace").splitlines():
        m = _EVENT.match(line)
        if m:
            yield m.group(2), dt.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()


def stage_ends(log_path: Path) -> dict[str, float]:
    """The time (epoch seconds) of each stage-ending event in a cycle's log."""
    return {event: when for event, when in log_events(log_path) if event in _ENDING}


def census(sampler: CpuSampler, started: float, ended: float, log_path: Path) -> Census:
    """The stages' spans (from the log) and each kind's core-seconds in them; the time after the
    last event (the process's exit) goes to the last stage."""
    ends = stage_ends(log_path)
    out, lo = Census(), started
    marks = [(stage, ends[event]) for stage, event in STAGE_ENDS if event in ends]
    for i, (stage, hi) in enumerate(marks):
        hi = ended if i == len(marks) - 1 else hi
        a, b = sampler.at(lo), sampler.at(hi)
        out.stages.append((stage, hi - lo, {k: max(0.0, b[k] - a[k]) for k in KINDS}))
        out.waits[stage] = {k: max(0.0, b[k] - a[k]) for k in WAITS}
        out.kernel[stage] = {k: max(0, b[k] - a[k]) for k in KERNEL}
        out.peaks[stage] = sampler.peak(lo, hi)
        lo = hi
    return out


def table(title: str, c: Census) -> list[str]:
    """The census as printed lines."""
    head = (f"{'':20}{'wall s':>8}" + "".join(f"{k:>16}" for k in KINDS) + f"{'core-s':>9}"
            + "".join(f"{k + ' s':>10}" for k in WAITS))
    lines = [title, head]
    total = dict.fromkeys(KINDS + WAITS, 0.0)
    wall = 0.0
    for stage, secs, cores in c.stages:
        waits = c.waits.get(stage, {})
        lines.append(f"{stage:20}{secs:>8.1f}" + "".join(f"{cores[k]:>16.1f}" for k in KINDS)
                     + f"{sum(cores[k] for k in PROCESSES):>9.1f}" + "".join(_wait(waits, k) for k in WAITS))
        wall += secs
        for k in KINDS:
            total[k] += cores[k]
        for k in WAITS:
            total[k] += waits.get(k, 0.0)
    lines.append(f"{'whole cycle':20}{wall:>8.1f}" + "".join(f"{total[k]:>16.1f}" for k in KINDS)
                 + f"{sum(total[k] for k in PROCESSES):>9.1f}"
                 + "".join(_wait(total if c.waits else {}, k) for k in WAITS))
    kernel = kernel_line(c)
    return lines + ([kernel] if kernel else [])


def kernel_line(c: Census) -> str | None:
    """Of the cdcflow processes' core-seconds, those in the kernel, by stage, with its page faults
    (KERNEL); None for a census from before they were sampled, or one with no stage over 0.05 s."""
    shown = [f"{stage} {k['system']:.2f} s ({int(k['faults']):,} page faults)" for stage, _secs, _cores in c.stages
             if (k := c.kernel.get(stage)) and k.get("system", 0.0) >= 0.05]
    return f"  of cdcflow's, in the kernel: {', '.join(shown)}" if shown else None


def page_faults(pid: int) -> int | None:
    """A process's minor page faults so far (/proc/<pid>/stat: pages it touched for the first time,
    or again after they were handed back); None when it is gone."""
    with suppress(OSError, ValueError, IndexError):
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[7])
    return None


def _wait(waits: dict, k: str) -> str:
    # a census from before the waits were sampled shows none, not zero
    return f"{waits[k]:>10.2f}" if k in waits else f"{'-':>10}"


def stage_core_seconds(census: dict | None, stage: str) -> dict | None:
    """A census's core-seconds by process in one stage (`census` as CycleResult keeps it), if it
    has them."""
    return next((e["core_seconds"] for e in (census or {}).get("stages", []) if e["stage"] == stage), None)


def stage_kernel(census: dict | None, stage: str) -> dict | None:
    """A census's KERNEL figures of the cdcflow processes in one stage, if it has them."""
    return next((e.get("kernel") or None for e in (census or {}).get("stages", []) if e["stage"] == stage), None)


# a run is quiet when the hypervisor stole less than this share of the machine's cores over it
# (bench_apart, bench_pairs).  Steal is not all that moves a run: on 2026-12-02 the same replayed
# statements cost the downstream 2.0-3.1 core-seconds with under 1% stolen or over 10%.
QUIET_STEAL = 0.02


def quiet(*stolen: float) -> bool:
    """Whether runs that lost these shares of the machine (stolen_share) were all quiet."""
    return all(share < QUIET_STEAL for share in stolen)


def stolen_share(run):
    """run() and the share of the machine's cores the hypervisor took while it ran."""
    t0, before = time.perf_counter(), machine_busy()[1]
    out = run()
    secs = time.perf_counter() - t0
    return out, (machine_busy()[1] - before) / (secs * (os.cpu_count() or 1)) if secs > 0 else 0.0


def machine_busy() -> tuple[float, float]:
    """The machine's busy and stolen CPU seconds so far, over all cores: busy is its time less
    idle, iowait and steal (guest time is counted in user already)."""
    import psutil

    t = psutil.cpu_times()
    stolen = getattr(t, "steal", 0.0)
    busy = sum(t) - t.idle - getattr(t, "iowait", 0.0) - stolen - getattr(t, "guest", 0.0) - getattr(t, "guest_nice", 0.0)
    return busy, stolen


def thread_queued(pid: int) -> dict[tuple[int, int], float]:
    """Each thread of a process: the seconds it has waited on a core's run queue, ready to run
    (the second field of the kernel's schedstat); {} when the process is gone."""
    out = {}
    with suppress(OSError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with suppress(OSError, ValueError, IndexError):  # a thread gone since the listing
                out[pid, int(tid)] = int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[1]) / 1e9
    return out


def disk_stalled() -> float:
    """The seconds in which some task of the machine was stalled on the disk, so far (the
    `some` line of /proc/pressure/io); 0.0 where the kernel does not keep it."""
    with suppress(OSError):
        for line in Path("/proc/pressure/io").read_text().splitlines():
            if line.startswith("some "):
                return int(line.rsplit("total=", 1)[1]) / 1e6
    return 0.0


def process_cpu(pid: int) -> float | None:
    """A process's user + system CPU seconds so far; None when it is gone."""
    import psutil

    try:
        t = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return None
    return t.user + t.system


def apply_idle(log_path: Path) -> dict | None:
    """A cycle's `apply timeline` event (sink.statement_timeline): apply's time with none of its
    statements or DDLs in flight, in all and by where it fell; None where the cycle logged none
    (a statement was sent by Spark tasks, or none was sent)."""
    from cdcflow.core.log_line import parse

    for line in log_path.read_text(errors="replace").splitlines():
        event = parse(line)
        if event and event.get("event") == "apply timeline":
            return event
    return None


def apply_segment_seconds(log_path: Path) -> list[float]:
    """Each segment's seconds in a cycle's apply, as its log has them: from apply's start (its
    `downstream` event) to each DDL applied, then to `applied` (bench_floor.segment_seconds)."""
    marks = [when for event, when in log_events(log_path) if event in ("downstream", "ddl applied", "applied")]
    return [b - a for a, b in zip(marks, marks[1:])]

