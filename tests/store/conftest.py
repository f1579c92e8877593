"""The metadata store's two backends.

A test that takes the `store_backend` fixture runs once per backend: `sqlite`, the file under
CDCFLOW_HOME, and `mariadb`, a database of its own on a real MariaDB server named by
CDCFLOW_METASTORE_URL (the shared store of cycles running on several machines).  A test marked
`sqlite_only` checks a property of the SQLite file itself and runs on `sqlite` alone; one marked
`mariadb_only`, what only the MySQL-compatible store has.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import pytest

from cdcflow.store import engine
from cdcflow_devtools.mariadb import HOST, ROOT_PASSWORD, ROOT_USER, MariaDB

BACKENDS = ("sqlite", "mariadb")


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "sqlite_only: checks the SQLite store's file itself; not run on the "
                                       "MySQL-compatible backend (CDCFLOW_METASTORE_URL)")
    config.addinivalue_line("markers", "mariadb_only: checks what only a MySQL-compatible store has")


def pytest_generate_tests(metafunc) -> None:
    if "store_backend" in metafunc.fixturenames:
        marked = {m for m in ("sqlite_only", "mariadb_only") if metafunc.definition.get_closest_marker(m)}
        backends = BACKENDS[:1] if "sqlite_only" in marked else BACKENDS[1:] if "mariadb_only" in marked else BACKENDS
        metafunc.parametrize("store_backend", backends, indirect=True)


@dataclass(frozen=True)
class StoreBackend:
    name: str  # one of BACKENDS
    server: MariaDB | None = None  # mariadb: the server holding the store ...
    database: str | None = None  # ... in this database of its own


@pytest.fixture
def store_backend(request, monkeypatch) -> StoreBackend:
    """The backend, once CDCFLOW_METASTORE_URL names it (unset: the SQLite file)."""
    backend = StoreBackend(request.param)
    if backend.name == "mariadb":
        # the downstream server of the session's pair (started by the first test that needs it),
        # a fresh database on it per test so that no test sees another's state
        _up, server = request.getfixturevalue("mariadb_pair")
        backend = StoreBackend(backend.name, server, f"cdcflow_meta_{uuid.uuid4().hex[:12]}")
        server.execute(f"CREATE DATABASE `{backend.database}`")
        monkeypatch.setenv("CDCFLOW_METASTORE_URL",
                           f"mysql+pymysql://{ROOT_USER}:{ROOT_PASSWORD}@{HOST}:{server.port}/{backend.database}")
    else:
        monkeypatch.delenv("CDCFLOW_METASTORE_URL", raising=False)
    try:
        yield backend
    finally:
        # engines are kept per URL for the process's life: none keeps pooled connections into a
        # database about to be dropped, and the next test opens its own store afresh
        engine.close_all()
        if backend.database is not None:
            backend.server.execute(f"DROP DATABASE IF EXISTS `{backend.database}`")
