"""The metadata store's database: the shared MySQL/TiDB named by CDCFLOW_METASTORE_URL when
cycles run on several machines, else a SQLite file under CDCFLOW_HOME.  Airflow's own
database is never used: Airflow 3 tasks cannot reach it.

Opening it migrates it: every table of store/tables.py is created, and the columns a store
written by an older cdcflow lacks are added.
"""

from __future__ import annotations

import os
import zlib
from contextlib import contextmanager, suppress

import sqlalchemy as sa

from cdcflow.config.spec_store import home
from cdcflow.store.tables import metadata


def _url() -> str:
    if os.environ.get("CDCFLOW_METASTORE_URL"):
        return os.environ["CDCFLOW_METASTORE_URL"]
    return f"sqlite:///{home() / 'metadata.db'}"


def _create_private(address: str) -> None:
    """Create the SQLite file private before SQLite opens it (SQLite gives its -wal and -shm the
    database's mode).  Only when it is missing: closing any descriptor of the file drops every
    POSIX lock this process holds on it, SQLite's own included, and a process whose shared lock
    is gone lets another one that closes last checkpoint and delete the write-ahead log this
    process still writes into (its commits would then be lost)."""
    with suppress(FileExistsError):
        os.close(os.open(address.removeprefix("sqlite:///"), os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))


_engines: dict[str, sa.Engine] = {}


def engine() -> sa.Engine:
    """The engine of the current URL (CDCFLOW_HOME or the URL may change between calls)."""
    address = _url()
    eng = _engines.get(address)
    if eng is None:
        kw = {"connect_args": {"timeout": 30}} if address.startswith("sqlite") else {"pool_pre_ping": True}
        eng = sa.create_engine(address, **kw)
        if address.startswith("sqlite"):
            _create_private(address)
            _write_ahead_log(eng)
        migrate(eng)
        _engines[address] = eng
    return eng


def close_all() -> None:
    """Close every engine's pooled connections (a process about to end: cli.entry).  The next
    engine() opens its URL again."""
    for eng in _engines.values():
        eng.dispose()
    _engines.clear()


@contextmanager
def transaction(conn: sa.Connection | None = None):
    """A connection in a transaction: the caller's `conn` (its transaction goes on, so several
    writers commit as one), else a new one committed when the block ends."""
    if conn is not None:
        yield conn
        return
    with engine().begin() as c:
        yield c


def _write_ahead_log(eng: sa.Engine) -> None:
    """SQLite's write-ahead log (the mode is kept in the file, so once per open is enough).  A
    cycle commits the store at every DDL it applies (the in-flight mark, the checkpoint) and at
    every segment: the rollback journal syncs the journal, the database and the journal's
    removal per commit, the log syncs itself once (about 5x less per commit on this disk),
    and as durably, the synchronous level staying FULL.  Readers (the Changefeeds page) no
    longer wait on a writer either.  All processes share one machine, as the log needs."""
    with eng.connect() as c:
        c.exec_driver_sql("PRAGMA journal_mode=WAL")


def migrate(eng: sa.Engine) -> None:
    """Bring the store to store/tables.py's tables.  A SQLite store keeps the stamp of the tables
    it was last brought to (PRAGMA user_version); one opened at the same stamp skips the checks,
    which read every table's columns back (15-20 ms of every process that opens the store)."""
    stamp = schema_stamp() if eng.dialect.name == "sqlite" else None
    if stamp is not None:
        with eng.connect() as c:
            if c.exec_driver_sql("PRAGMA user_version").scalar() == stamp:
                return
    metadata.create_all(eng)
    _add_missing_columns(eng)
    if stamp is not None:
        with eng.begin() as c:
            c.exec_driver_sql(f"PRAGMA user_version = {stamp}")


def schema_stamp() -> int:
    """A checksum of every table, column, index and constraint store/tables.py declares (a
    positive 31-bit number, as SQLite's user_version holds): any change to them changes it."""
    parts = []
    for table in metadata.sorted_tables:
        parts.append(repr((table.name, [(c.name, repr(c.type), c.nullable, c.primary_key,
                                          None if c.default is None else repr(c.default.arg)) for c in table.columns],
                           sorted((i.name, i.unique, [c.name for c in i.columns]) for i in table.indexes),
                           sorted(repr(type(k).__name__) + repr([c.name for c in getattr(k, "columns", [])])
                                  for k in table.constraints))))
    return zlib.crc32("\n".join(parts).encode()) & 0x7FFFFFFF


def _add_missing_columns(eng: sa.Engine) -> None:
    """A store created by an older cdcflow lacks the newer nullable/defaulted columns: add them."""
    for table in metadata.sorted_tables:
        have = {c["name"] for c in sa.inspect(eng).get_columns(table.name)}
        for col in table.columns:
            if col.name in have:
                continue
            ddl = f"ALTER TABLE {table.name} ADD COLUMN {col.name} {col.type.compile(eng.dialect)}"
            if col.default is not None:
                ddl += f" NOT NULL DEFAULT {col.default.arg!r}"
            with eng.begin() as c:
                c.exec_driver_sql(ddl)
