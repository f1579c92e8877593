"""Where a changefeed's Spark runs, as one value every launcher resolves once per task (or
cycle) and hands down: a Spark Connect server, else a master (a cluster, or local[N]), else an
embedded session on this machine's cores.  Spark-free: the DAG's tasks and the CLI build it
before they know whether a session is needed at all."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SparkPlace:
    """`remote`: a Spark Connect server's URL.  `master`: the config's master (None: local[*],
    or spark-submit's).  `connection`: the launcher's own Spark Connect server for a config that
    names neither (the DAG's: its Airflow connection), asked only when a session is opened, so
    a cycle that needs no Spark needs no connection either."""

    remote: str | None = None
    master: str | None = None
    connection: Callable[[], str] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def resolve(cls, cfg, remote: str | None = None, connection: Callable[[], str] | None = None) -> SparkPlace:
        """The place for a changefeed's config `cfg`: `remote` (the CLI's --spark-remote), else the
        config's spark-remote, else its spark-master, else the launcher's `connection`, else embedded."""
        remote = remote or cfg.spark_remote
        return cls(remote, cfg.spark_master, None if remote or cfg.spark_master else connection)

    def url(self) -> str | None:
        """The Spark Connect server a session goes to (the connection asked now); None: a master
        or an embedded session."""
        return self.remote or (self.connection() if self.connection else None)

    @property
    def is_remote(self) -> bool:
        """Whether sessions go to a Spark Connect server (without asking the connection)."""
        return bool(self.remote or self.connection)

    @property
    def elsewhere(self) -> bool:
        """Whether its tasks run on cores other than this machine's: a Spark Connect server, or a
        master that is not local[...] (a cluster's executors)."""
        return self.is_remote or bool(self.master and not self.master.startswith("local"))
