"""The environment variables cdcflow, its development tools and its tests read: one table; and
the ones cdcflow sets for a library it loads: another.

The code reads each where it is used (os.environ, with the default this table states); the
environment reference (docs/reference/environment.md) is generated from this table, and
tests/docs/test_reference.py fails when the code reads a CDCFLOW_* variable the table lacks, or
the table names one nothing reads.
"""

from __future__ import annotations

import os
from typing import NamedTuple


class Variable(NamedTuple):
    name: str
    default: str  # in words: what applies when it is not set
    read_by: str  # LIBRARY, DEVTOOLS or TESTS
    meaning: str


LIBRARY, DEVTOOLS, TESTS = "cdcflow", "development tools", "tests"

VARIABLES: tuple[Variable, ...] = (
    Variable("CDCFLOW_HOME", "`~/.cdcflow`", LIBRARY,
             "where changefeed specs (`changefeeds/<id>.json`), the embedded metadata store (`metadata.db`) "
             "and the event store (`events/`) live; in Airflow the `cdcflow_home` variable when this is unset"),
    Variable("CDCFLOW_METASTORE_URL", "a SQLite file under `CDCFLOW_HOME`", LIBRARY,
             "the metadata store in a shared MySQL/TiDB, `mysql://USER:PASSWORD@HOST:PORT/DATABASE` (`mysql+pymysql://` "
             "and `tidb://` too; `?charset=` the one parameter), for cycles on several machines"),
    Variable("CDCFLOW_SPARK_MASTER", "`local[*]`", LIBRARY,
             "the master of an embedded Spark session when the changefeed's config names none"),
    Variable("CDCFLOW_DRIVER_MEMORY", "`2g`", LIBRARY,
             "the heap of a JVM cdcflow starts (`spark.driver.memory`) when `[cdcflow] spark-driver-memory` "
             "is unset"),
    Variable("CDCFLOW_DRIVER_JAVA_OPTIONS", "`-XX:TieredStopAtLevel=1` and the class archive", LIBRARY,
             "replaces the Java options of a short-lived JVM (an embedded session, a spark-submit stage's "
             "driver); empty: the JVM's defaults"),
    Variable("CDCFLOW_SPARK_LOG_LEVEL", "`WARN`", LIBRARY, "the log level of an embedded Spark session"),
    Variable("CDCFLOW_BINLOG_READER", "`compiled`", LIBRARY,
             "`compiled`: pull reads the binlog with the compiled reader `make setup` builds (the Python "
             "reader where it is missing, said once in the log); `python`: the reference reader "
             "(mysql-replication with cdcflow's decoders)"),
    Variable("CDCFLOW_ROW_LITERALS", "`compiled`", LIBRARY,
             "`compiled`: apply's writers read each row image's text to its SQL literals with the compiled "
             "module `make setup` builds (the Python reference where it is missing, said once in the log); "
             "`python`: the reference (`row_codec.raw_image` and `raw_literal`)"),
    Variable("CDCFLOW_COMPACTION", "`compiled`", LIBRARY,
             "`compiled`: apply keys a part's changes, spreads them over its writers and compacts each writer's share in "
             "passes of the compiled module `make setup` builds "
             "(its Arrow reference where it is missing, said once in the log); `python`: the Arrow reference"),
    Variable("CDCFLOW_ENGINE", "each changefeed's `[cdcflow] engine`", LIBRARY,
             "`auto`, `local` or `spark`: where every changefeed's row steps run on this machine, over its "
             "config's `engine` (the test suite's `--engine spark` sets it)"),
    Variable("CDCFLOW_LOCAL", "`.local/` in the checkout", DEVTOOLS,
             "where `make demo`, `make airflow` and `make bench` keep servers, homes and logs"),
    Variable("CDCFLOW_RANDOM_SEED", "the three fixed seeds", TESTS,
             "replays one run of the random workload (`tests/e2e/test_random_workload.py`) with this seed"),
    Variable("CDCFLOW_RANDOM_SEEDS", "the three fixed seeds", TESTS,
             "runs the random workload with this many seeds drawn at random (`make random-workload SEEDS=N`)"),
    Variable("CDCFLOW_DDL_HEAVY_TABLES", "`1200`", TESTS,
             "how many tables the DDL-heavy window creates (`tests/e2e/test_ddl_heavy.py`)"),
    Variable("CDCFLOW_PAGE_SCREENSHOTS", "a temporary folder", TESTS,
             "where the browser test of the Changefeeds page saves its screenshots"),
)

BY_NAME: dict[str, Variable] = {v.name: v for v in VARIABLES}


class Setting(NamedTuple):
    """A variable cdcflow sets for a library it loads, in its process and so in the processes it
    starts (Spark's JVM and Python workers), unless the environment has it already."""

    name: str
    value: str
    read_by: str  # the library
    why: str


SETTINGS: tuple[Setting, ...] = (
    Setting("MIMALLOC_ARENA_EAGER_COMMIT", "0", "pyarrow's allocator (mimalloc)",
            "commits Arrow's memory as it is used, not each 1 GiB arena whole at once: an arena "
            "committed whole is backed by the kernel's 2 MiB pages, each zeroed whole at its first touch "
            "and again after a purge; a cycle's batches come and go, and that zeroing took a sixth of "
            "the CLI cycle's CPU on the bench's windows (docs/performance.md)"),
    Setting("OPENBLAS_NUM_THREADS", "1", "numpy's BLAS (OpenBLAS), which numpy loads with pyarrow",
            "one thread: cdcflow does no linear algebra, and OpenBLAS starts a thread per further core as it "
            "loads, which spins waiting for work before it sleeps: 0.1 core-second of every process that "
            "loads numpy (a CLI cycle's, each Spark worker's) on the 2-core bench machine, taken from the "
            "servers and the stage beside it (docs/performance.md)"),
)


def set_for_libraries() -> None:
    """SETTINGS in this process's environment where unset.  mimalloc reads its options once, as
    pyarrow loads it: cdcflow/__init__.py calls this first, so a process that imports cdcflow
    before pyarrow has them; one that loaded pyarrow before still passes them to the processes
    it starts (Spark's Python workers)."""
    for s in SETTINGS:
        os.environ.setdefault(s.name, s.value)
