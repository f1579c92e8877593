"""One place that builds the Spark session every stage uses: embedded (`local[*]` or a
master, a JVM in this process) or remote (a Spark Connect server, `sc://host:port`)."""

from __future__ import annotations

import contextlib
import os
import sys
import uuid
import weakref

from cdcflow.spark.class_archive import java_option
from cdcflow.spark.lazy import built, was_built

# Session settings every stage relies on, in both kinds of session.
SQL_CONF = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
}

# An embedded session's JVM lives for one cycle (or one DAG task): the C1 compiler alone makes
# its hot code fast soon enough, while C2's compiler threads take the cores the stages need.
# Measured with make bench's cycle on 2 cores: 300k row changes 31.4-32.3 s -> 27.1-27.4 s, 1M
# 65.0 s -> 58.1 s.  CDCFLOW_DRIVER_JAVA_OPTIONS replaces it ("" for the JVM's default).
SHORT_LIVED_JVM = "-XX:TieredStopAtLevel=1"

# An embedded JVM's heap (the driver's and, in local mode, the executor's): the JVM's resident
# memory stays below about heap + 0.45 GiB whatever a segment holds, since Spark's sorts and
# shuffles spill to local disk beyond their share of it (docs/performance.md, "One large
# transaction in bounded memory").  [cdcflow] spark-driver-memory sets it per changefeed.
DRIVER_MEMORY = "2g"

# A Connect server that is down is retried this long (gRPC UNAVAILABLE: about 10 s in
# all), then the stage fails retryably; pyspark's default policy keeps trying ~10 min.
CONNECT_RETRIES = 5
CONNECT_MAX_BACKOFF_MS = 4000


def get_session(app_name: str = "cdcflow", master: str | None = None, shuffle_partitions: int = 4,
                remote: str | None = None, driver_memory: str | None = None, shared: str | None = None):
    """A SparkSession for the stages: on the Spark Connect server `remote` when given,
    else embedded, `local[*]` unless a master is given, its JVM's heap `driver_memory`
    (else CDCFLOW_DRIVER_MEMORY, else DRIVER_MEMORY; a JVM this process already runs keeps its own).

    `shared`: the name of a Spark Connect session a changefeed's cycles share (connect_session).
    Under spark-submit the master is already set by the launcher and wins.
    Executors must run the same interpreter as the driver, so cdcflow and its
    pinned libraries are importable in the Python workers.
    """
    if remote:
        return connect_session(remote, shuffle_partitions, shared)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # lazy: the DAG parse loads this module (the driver's Java options), without pyspark
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName(app_name)
    if (chosen := _master(master)) is not None:
        builder = builder.master(chosen)
    builder = (
        builder.config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.default.parallelism", str(shuffle_partitions))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")  # a progress bar breaks log lines
        .config("spark.driver.memory", driver_memory or os.environ.get("CDCFLOW_DRIVER_MEMORY", DRIVER_MEMORY))
        # prepended to spark.driver.extraJavaOptions, whose flags win
        .config("spark.driver.defaultJavaOptions", driver_java_options())
        .config("spark.python.worker.reuse", "true")
        # the event store's files stay private, as everything under CDCFLOW_HOME (config.spec_store)
        .config("spark.hadoop.fs.permissions.umask-mask", "077")
    )
    for key, value in SQL_CONF.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("CDCFLOW_SPARK_LOG_LEVEL", "WARN"))
    return spark


def _master(master: str | None) -> str | None:
    """The embedded session's master: the one given, else CDCFLOW_SPARK_MASTER, else local[*];
    None under spark-submit, whose launcher has set it."""
    if master or not os.environ.get("SPARK_SUBMIT_ARGS_SET_BY_LAUNCHER"):
        return master or os.environ.get("CDCFLOW_SPARK_MASTER", "local[*]")
    return None


def would_start_locally(master: str | None) -> bool:
    """Whether an embedded session with this master would be a new JVM whose tasks run on this
    machine's cores: no session is up in this process and the master is local.  A caller
    whose tasks only wait on servers can then do the same work here, without the JVM."""
    chosen = _master(master)
    if chosen is None or not chosen.startswith("local"):
        return False
    context = sys.modules.get("pyspark.core.context")  # not imported: no session is up
    return context is None or context.SparkContext._active_spark_context is None


def driver_java_options() -> str:
    """SHORT_LIVED_JVM and, once built, the class archive's option (spark.class_archive)."""
    if "CDCFLOW_DRIVER_JAVA_OPTIONS" in os.environ:
        return os.environ["CDCFLOW_DRIVER_JAVA_OPTIONS"]
    return " ".join(o for o in (SHORT_LIVED_JVM, java_option()) if o)


# While set, pyspark.sql.functions build Spark Connect columns, not the JVM's: a process is
# in one mode at a time, so it is set for a Connect session and cleared when that ends.
CONNECT_MODE = "SPARK_CONNECT_MODE_ENABLED"


# A Spark Connect server starts Python workers per session (a worker daemon of the session's
# own): a new session's first Arrow job paid 1.4-2.0 s for them, in every cycle and in each of a
# DAG run's stage tasks.  The sessions of a changefeed's cycles are one server-side session,
# named by the changefeed (`shared`): its workers serve the next cycle and the next task while
# Spark keeps them (a minute idle), and it is never released, only left to the server's idle
# timeout.  A name the server closed (that timeout, a release) is refused for good, so the next
# of a fixed series is taken; past SHARED_NAMES of them, a session of its own.
_SHARED = weakref.WeakSet()
SHARED_NAMES = 32
_NAMESPACE = uuid.UUID("6f1c2a7e-3c1d-5b8e-9a57-1e0f6c2d4b11")


def connect_session(remote: str, shuffle_partitions: int = 4, shared: str | None = None):
    """A session on a Spark Connect server: no JVM here; with `shared` (a changefeed's cycles)
    the server-side session of that name (above), else a new one.  Its first call is made with
    a short retry policy, so a server that is down fails the stage in seconds (retryably, see
    core.failures.spark_connect_lost) instead of hanging.  End it with release()."""
    if shared is None or "session_id=" in remote:
        return _new_client(remote, shuffle_partitions)
    for n in range(SHARED_NAMES):
        name = uuid.uuid5(_NAMESPACE, f"{shared}/{n}")
        try:
            spark = _new_client(f"{remote.rstrip('/')}{'' if '/;' in remote else '/'};session_id={name}",
                                shuffle_partitions)
        except Exception as e:
            if "SESSION_CLOSED" in str(e):
                continue  # closed by the server: the next name of the series
            raise
        _SHARED.add(spark)
        return spark
    return _new_client(remote, shuffle_partitions)


def _new_client(remote: str, shuffle_partitions: int):
    # lazy: the DAG parse loads this module (the driver's Java options), without pyspark
    from pyspark.sql.connect.client.retries import DefaultPolicy
    from pyspark.sql.connect.session import SparkSession

    os.environ[CONNECT_MODE] = "1"
    spark = None
    try:
        spark = SparkSession.builder.remote(remote).create()  # no call to the server yet
        spark.client.set_retry_policies(
            [DefaultPolicy(max_retries=CONNECT_RETRIES, max_backoff=CONNECT_MAX_BACKOFF_MS)])
        for key, value in {**SQL_CONF, "spark.sql.shuffle.partitions": str(shuffle_partitions)}.items():
            spark.conf.set(key, value)
    except BaseException:
        os.environ.pop(CONNECT_MODE, None)  # no session: the process is not in Connect mode
        if spark is not None:
            _close_channel(spark)
        raise
    return spark


def _close_channel(spark) -> None:
    """Close a Connect client's channel without a call to the server.  pyspark calls an open
    client's server once more at the process's exit, with its default retries: with the
    server gone that held the exit some 17 s and printed a logging traceback after the
    stage's own error."""
    with contextlib.suppress(Exception):  # closing a channel to a server that is gone
        if not spark.client.is_closed:  # stop() closed it unless it failed first
            spark.client.close()


def is_remote(spark) -> bool:
    return type(spark).__module__.startswith("pyspark.sql.connect")


def tasks_run_in(spark) -> str:
    """Where a session's tasks run: "connect" (a Spark Connect server's), "cluster" (executors a
    master that is not local[...] launched) or "embedded" (this process's JVM)."""
    if is_remote(spark):
        return "connect"
    return "embedded" if spark.sparkContext.master.startswith("local") else "cluster"


def release(spark) -> None:
    """Stop a session: a Connect one is closed on the server and the process leaves Connect
    mode (an embedded session of the same process works again); an embedded one stops its
    JVM.  A failed stop must not hide the stage's outcome, so it is only swallowed.  A Lazy
    nothing used was never opened: there is nothing to stop."""
    if spark is None or not was_built(spark):
        return
    spark = built(spark)
    try:
        if spark not in _SHARED:  # a shared one stays on the server for the next cycle
            spark.stop()
    except Exception:  # noqa: BLE001 - the server may be gone already
        pass
    finally:
        if is_remote(spark):
            _close_channel(spark)
            os.environ.pop(CONNECT_MODE, None)
