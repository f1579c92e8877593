"""The home a launcher runs cdcflow in, as one value it hands to the code it calls: where the
changefeeds live (CDCFLOW_HOME: specs, the embedded metadata store, the event store) and how an
`airflow-conn-id` credential is looked up (core.credentials).

A launcher builds a Home and runs its work inside `home.entered()`: the home is then the one of
that block, of this thread or asyncio task alone (a context variable), and the process's
environment is left as it was.  Two triggers of different homes on one triggerer no longer see
each other's.  Outside any block the process's own CDCFLOW_HOME applies, as the CLI has it.  A
child process is handed the home through its environment (`child_env`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

HOME_VARIABLE = "CDCFLOW_HOME"
DEFAULT_HOME = "~/.cdcflow"

# (login or None, password or None) of an Airflow connection, None when there is no such connection
AirflowLookup = Callable[[str], "tuple[str | None, str | None] | None"]


@dataclass(frozen=True)
class Home:
    """`path`: the home's folder (None: the process's CDCFLOW_HOME, else ~/.cdcflow).
    `airflow_lookup`: how `airflow-conn-id` is resolved (None: from the environment variable
    Airflow would read; the plugins give the Task SDK's)."""

    path: str | None = None
    airflow_lookup: AirflowLookup | None = None

    def folder(self) -> str:
        """The home's folder, not yet expanded."""
        return self.path or os.environ.get(HOME_VARIABLE) or DEFAULT_HOME

    @contextmanager
    def entered(self) -> Iterator[Home]:
        """This home for the code the block runs (its thread or asyncio task)."""
        token = _current.set(self)
        try:
            yield self
        finally:
            _current.reset(token)

    def child_env(self, env: Mapping[str, str] | None = None) -> dict[str, str]:
        """`env` (else this process's environment) with this home's CDCFLOW_HOME, for a child process."""
        return {**(os.environ if env is None else env), HOME_VARIABLE: self.folder()}


_current: ContextVar[Home] = ContextVar("cdcflow_home", default=Home())


def current() -> Home:
    """The home of the block running (Home.entered), else the process's."""
    return _current.get()
