"""The variables cdcflow sets for the libraries it loads (core.environment.SETTINGS) reach the
library, in cdcflow's process and in the processes it starts, and an operator's own value wins."""

from __future__ import annotations

import os
import subprocess
import sys

from cdcflow.core import environment

# mimalloc prints its options as it starts when verbose; a fresh interpreter imports cdcflow,
# then pyarrow, as every cdcflow process does
_IMPORT_BOTH = "import cdcflow, pyarrow; pyarrow.array([1])"


def _mimalloc_options(env: dict, code: str = _IMPORT_BOTH) -> dict[str, str]:
    out = subprocess.run([sys.executable, "-c", code], env={**env, "MIMALLOC_VERBOSE": "1"},
                         capture_output=True, text=True, check=True)
    options = {}
    for line in out.stderr.splitlines():
        if line.startswith("option '"):
            name, _, value = line.removeprefix("option '").partition("':")
            options[name] = value.strip()
    assert options, f"mimalloc printed no options: {out.stderr[-500:]!r}"
    return options


def _clean_env() -> dict:
    return {k: v for k, v in os.environ.items() if k not in {s.name for s in environment.SETTINGS}}


def test_pyarrows_allocator_takes_the_setting_when_cdcflow_is_imported_first():
    assert _mimalloc_options(_clean_env())["arena_eager_commit"] == "0"


def test_without_cdcflow_the_allocator_keeps_its_own_default():
    # the check above can fail: pyarrow alone commits its arenas eagerly (2: where the kernel overcommits)
    assert _mimalloc_options(_clean_env(), "import pyarrow; pyarrow.array([1])")["arena_eager_commit"] != "0"


def test_an_operators_own_value_wins():
    assert _mimalloc_options({**_clean_env(), "MIMALLOC_ARENA_EAGER_COMMIT": "1"})["arena_eager_commit"] == "1"


def test_a_process_cdcflow_starts_has_the_settings_even_where_pyarrow_loaded_first():
    code = ("import pyarrow, cdcflow, subprocess, sys; "
            "subprocess.run([sys.executable, '-c', 'import os; print(os.environ[\"MIMALLOC_ARENA_EAGER_COMMIT\"])'])")
    out = subprocess.run([sys.executable, "-c", code], env=_clean_env(), capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"


def test_every_setting_names_its_library_and_says_why():
    for s in environment.SETTINGS:
        assert s.name and s.value and s.read_by and len(s.why) > 40, s


def test_sparks_python_workers_have_the_settings(spark):
    """The row steps run in Spark's Python workers too (mapInArrow): the embedded session's JVM
    starts them with this process's environment."""
    names = [s.name for s in environment.SETTINGS]
    seen = spark.sparkContext.parallelize([0], 1).map(lambda _: [os.environ.get(n) for n in names]).collect()
    assert seen == [[s.value for s in environment.SETTINGS]]


def _threads_after(code: str, env: dict) -> int:
    """The threads of a fresh interpreter once `code` ran (the kernel's list: OpenBLAS's are native)."""
    out = subprocess.run([sys.executable, "-c", f"{code}; import os; print(len(os.listdir('/proc/self/task')))"],
                         env=env, capture_output=True, text=True, check=True)
    return int(out.stdout)


def test_numpy_loaded_after_cdcflow_starts_no_blas_threads():
    # the check can fail: numpy alone starts OpenBLAS's threads, one per further core
    if (os.cpu_count() or 1) > 1:
        assert _threads_after("import numpy", _clean_env()) > 1
    assert _threads_after("import cdcflow, numpy", _clean_env()) == 1  # (pyarrow adds jemalloc's own)
    assert _threads_after("import cdcflow, numpy", {**_clean_env(), "OPENBLAS_NUM_THREADS": "2"}) == 2
