"""The files the bench's timed programs load, read into the page cache before each timed run.

This machine's kernel lets file pages go after a minute or so without memory pressure (the
file pages it faults in again grow while it counts no reclaim: /proc/vmstat's
`workingset_refault_file` against `pgsteal_*`), so a program first run a while after its last
run reads part of itself from the disk.  A bulk bench's first CLI cycle, run after the workload,
took 38 major page faults and had the disk stalled 0.36 s of its 0.7 s start-up, against 4-17
faults for the cycles after it (docs/performance.md).  Each timed run, cdcflow's or a peer's,
now starts with the files of every contender's program in the page cache, as it starts on
settled servers (bench_common.settled): what it then waits on is its own work.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from cdcflow_devtools.checkout import PROJECT, child_env

# what a CLI cycle imports, its stages' lazy imports included; every file of each package these
# load is read, so the modules and libraries they load later (a compute kernel's) are in too
CYCLE_MODULES = ("cdcflow.cli", "cdcflow.launch.in_process", "cdcflow.stages.pull", "cdcflow.stages.filter_stage",
                 "cdcflow.stages.barrier", "cdcflow.stages.apply", "pyarrow.dataset", "pyarrow.compute")
PEER_PROGRAMS = ("mariadb-binlog", "mariadb", "mariadbd")  # the pipe's two ends; the replica's server
_LOADED = re.compile(r"\.(py|pyc|so)$|\.so\.")  # a package's files its import may read


@functools.cache
def program_files() -> tuple[Path, ...]:
    """The files of the timed programs: for cdcflow's cycle, every module or library file of each
    package its CYCLE_MODULES load (a child process imports them and names the files), the
    standard library's modules they load and the interpreter (pandas held back, as the command
    holds it: core.pandas_hold); for the peers, PEER_PROGRAMS and
    the libraries each links (ldd)."""
    named = subprocess.run(
        [sys.executable, "-c", "import importlib, json, sys\n"
         "from cdcflow.core import pandas_hold\n"
         "pandas_hold.hold()\n"  # as the command holds it (cli.entry)
         f"for m in {CYCLE_MODULES!r}: importlib.import_module(m)\n"
         "print(json.dumps([getattr(m, '__file__', None) for m in list(sys.modules.values())]))"],
        capture_output=True, text=True, check=True, env=child_env()).stdout
    roots = [Path(p) for p in sys.path if p.endswith("site-packages")] + [PROJECT / "include"]
    files, packages = {Path(sys.executable).resolve()}, set()
    for f in filter(None, json.loads(named)):
        path = Path(f).resolve()
        root = next((r for r in roots if path.is_relative_to(r)), None)
        if root is None or path.parent == root:
            files.add(path)  # the standard library's, or a module of its own
        else:
            packages.add(root / path.relative_to(root).parts[0])
    for package in packages:
        files.update(p for p in package.rglob("*") if _LOADED.search(p.name) and p.is_file())
    for program in [sys.executable, *filter(None, map(shutil.which, PEER_PROGRAMS))]:
        files.add(Path(program).resolve())
        files.update(_linked(program))
    return tuple(sorted(files))


def _linked(program: str) -> set[Path]:
    """The shared libraries `program` links, as ldd finds them."""
    found = subprocess.run(["ldd", program], capture_output=True, text=True).stdout
    return {Path(m).resolve() for m in re.findall(r"=> (/\S+)", found)}


def read_in() -> tuple[int, float]:
    """Every file of program_files read whole, so that its pages are in the page cache: the
    bytes read and the seconds it took."""
    t0, read = time.monotonic(), 0
    for path in program_files():
        try:
            with open(path, "rb", buffering=0) as f:
                while chunk := f.read(1 << 20):
                    read += len(chunk)
        except OSError:  # gone since it was listed (a reinstall): nothing of it to load
            continue
    return read, time.monotonic() - t0
