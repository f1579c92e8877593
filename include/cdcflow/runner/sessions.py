"""The Spark session of a changefeed's stages, for every launcher: on a Spark Connect server
or embedded, as its config says; started in the background with an embedded session's
Python workers; released when the launcher is done with it."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager

from cdcflow.spark.session import get_session, is_remote, release, would_start_locally
from cdcflow.spark.warm_up import python_workers

log = logging.getLogger("cdcflow")


def session_for(cfg, changefeed_id: str, spark_remote: str | None = None, unless_local: bool = False):
    """The Spark session of a changefeed's stages, as its config says (every launcher):
    on a Spark Connect server (`spark_remote`, else `cdcflow.spark-remote`), else embedded.
    `unless_local`: None where that would start an embedded session on this machine's cores
    (spark.session.would_start_locally), for a caller that does the same work without it."""
    if unless_local and not (spark_remote or cfg.spark_remote) and would_start_locally(cfg.spark_master):
        return None
    return get_session(f"cdcflow-{changefeed_id}", cfg.spark_master, cfg.shuffle_partitions,
                       remote=spark_remote or cfg.spark_remote, driver_memory=cfg.spark_driver_memory)


def start_session(cfg, changefeed_id: str, spark_remote: str | None) -> Future:
    """The cycle's Spark session, being built in a background thread; an embedded one's
    Python workers are started there too (a Connect server's were at its start)."""
    def start():
        spark = session_for(cfg, changefeed_id, spark_remote)
        if not is_remote(spark):
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
def command_sessions(changefeed_id: str, spark_remote: Callable = lambda cfg: None) -> Iterator[Callable]:
    """`spark_for(config, **how)` for a command (verify, snapshot) run by a launcher: sessions on
    the stages' Spark (`spark_remote(config)`, else as the config says; `how`: session_for's),
    released when the block ends."""
    sessions = []

    def spark_for(cfg, **how):
        spark = session_for(cfg, changefeed_id, spark_remote(cfg), **how)
        if spark is not None:
            sessions.append(spark)
        return spark

    try:
        yield spark_for
    finally:
        for spark in sessions:
            release(spark)
