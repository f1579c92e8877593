"""The Spark session of a changefeed's stages, for every launcher: on a Spark Connect server
or embedded, as its config says; started in the background with an embedded session's
Python workers; released when the launcher is done with it."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from cdcflow.core.home import current
from cdcflow.spark.place import SparkPlace
from cdcflow.spark.session import get_session, is_remote, release, would_start_locally
from cdcflow.spark.warm_up import python_workers

log = logging.getLogger("cdcflow")


def session_for(cfg, changefeed_id: str, spark_remote: str | None = None, unless_local: bool = False):
    """The Spark session of a changefeed's stages for the CLI's --spark-remote (`spark_remote`):
    open_session at the place SparkPlace.resolve makes of it and the config."""
    return open_session(SparkPlace.resolve(cfg, spark_remote), cfg, changefeed_id, unless_local)


def open_session(place: SparkPlace, cfg, changefeed_id: str, unless_local: bool = False, cycle: bool = False):
    """The Spark session of a changefeed's stages at `place` (every launcher), with the config's
    settings.  `unless_local`: None where that would start an embedded session on this machine's
    cores (spark.session.would_start_locally), for a caller that does the same work without it.
    `cycle`: a cycle's stages, whose sessions on a Spark Connect server are one server-side
    session per changefeed and home (spark.session.connect_session: its Python workers serve
    the next stage task and the next cycle)."""
    if unless_local and not place.is_remote and would_start_locally(place.master):
        return None
    shared = f"{Path(current().folder()).expanduser().resolve()}/{changefeed_id}" if cycle else None
    return get_session(f"cdcflow-{changefeed_id}", place.master, cfg.shuffle_partitions,
                       remote=place.url(), driver_memory=cfg.spark_driver_memory, shared=shared)


def start_session(cfg, changefeed_id: str, place: SparkPlace | None = None, workers: bool = True) -> Future:
    """The cycle's Spark session at `place` (None: as the config says), being built in a
    background thread, with its Python workers started there too: an embedded session's, and a
    Spark Connect session's, which are its own (the server starts a worker daemon per client
    session: the warm-up at the server's start does not serve them; a cycle's first Arrow job
    paid 1.4-2.0 s for them).  `workers` False: a Connect session's are not started (a cycle
    whose row steps all run in its process; an embedded session starts only when Spark runs)."""
    place = place or SparkPlace.resolve(cfg)

    def start():
        spark = open_session(place, cfg, changefeed_id, cycle=True)
        if not workers and is_remote(spark):
            return spark
        try:
            log.info("Spark's Python workers started in %.1f s", python_workers(spark))
        except Exception as e:  # noqa: BLE001 - the stage that needs them says why, in context
            log.warning("Spark's Python workers did not start ahead of the stages: %s", e)
        return spark

    pool = ThreadPoolExecutor(1, thread_name_prefix="spark-start")
    try:
        return pool.submit(start)
    finally:
        pool.shutdown(wait=False)


def release_once_started(session: Future) -> None:
    """Release a session started in the background once it is up, without waiting for it."""
    session.add_done_callback(lambda f: f.exception() is None and release(f.result()))


@contextmanager
def command_sessions(changefeed_id: str, connection: Callable[[], str] | None = None) -> Iterator[Callable]:
    """`spark_for(config, **how)` for a command (verify, snapshot) run by a launcher: sessions on
    the stages' Spark (SparkPlace.resolve of the config and the launcher's `connection`; `how`:
    open_session's), released when the block ends."""
    sessions = []

    def spark_for(cfg, **how):
        spark = open_session(SparkPlace.resolve(cfg, connection=connection), cfg, changefeed_id, **how)
        if spark is not None:
            sessions.append(spark)
        return spark

    try:
        yield spark_for
    finally:
        for spark in sessions:
            release(spark)
