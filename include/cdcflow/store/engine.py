"""The metadata store's database: the shared MySQL/TiDB named by CDCFLOW_METASTORE_URL when
cycles run on several machines, else a SQLite file under CDCFLOW_HOME.  Airflow's own
database is never used: Airflow 3 tasks cannot reach it.

Opening it migrates it: every table of store/tables.py is created, and the columns a store
written by an older cdcflow lacks are added (on MySQL, the column types an older one declared
narrower are widened).
"""

from __future__ import annotations

import os
import threading
import zlib
from contextlib import contextmanager, suppress
from urllib.parse import parse_qsl, unquote, urlsplit

from cdcflow.config.spec_store import home
from cdcflow.core import tls
from cdcflow.core.errors import CdcflowError
from cdcflow.store.sql import MYSQL, SQLITE, Connection, quoted
from cdcflow.store.tables import TABLES, store_stamp

# the URL schemes of a MySQL-compatible store (the SQLAlchemy spellings earlier releases took)
_MYSQL_SCHEMES = ("mysql", "mysql+pymysql", "tidb", "mariadb", "mariadb+pymysql")
_MYSQL_PARAMS = ("charset",)  # what a MySQL URL's query may set
# what the user of a MySQL store needs on its database: the rows, and the tables' creation and
# migration when the store is opened (docs/reference/metadata-store.md says it)
MYSQL_GRANTS = ("SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "ALTER")


def _url() -> str:
    if os.environ.get("CDCFLOW_METASTORE_URL"):
        return os.environ["CDCFLOW_METASTORE_URL"]
    return f"sqlite:///{home() / 'metadata.db'}"


def _bad_url(address: str, why: str) -> CdcflowError:
    parts = urlsplit(address)
    shown = f"{parts.scheme}://{parts.hostname or ''}{parts.path}"  # never its password
    return CdcflowError(f"CDCFLOW_METASTORE_URL {shown!r}: {why}",
                        hint="give mysql://USER:PASSWORD@HOST:PORT/DATABASE (MySQL or TiDB), or unset it "
                             "for the SQLite file under CDCFLOW_HOME")


def _opener(address: str):
    """(dialect, a function opening one driver connection) for a store URL."""
    if address.startswith("sqlite:///"):
        path = address.removeprefix("sqlite:///")
        return SQLITE, lambda: _open_sqlite(path)
    parts = urlsplit(address)
    if parts.scheme not in _MYSQL_SCHEMES:
        raise _bad_url(address, f"unknown scheme {parts.scheme!r}")
    database = unquote(parts.path.lstrip("/"))
    if not database or not parts.hostname:
        raise _bad_url(address, "it names no host or no database")
    try:
        port = parts.port or 3306
    except ValueError:
        raise _bad_url(address, "its port is not a number") from None
    params = dict(parse_qsl(parts.query))
    unknown = sorted(params.keys() - set(_MYSQL_PARAMS))
    if unknown:
        raise _bad_url(address, f"unknown parameter {', '.join(unknown)} (known: {', '.join(_MYSQL_PARAMS)})")
    kw = {"host": parts.hostname, "port": port, "user": unquote(parts.username or "root"),
          "password": unquote(parts.password or ""), "database": database,
          "charset": params.get("charset", "utf8mb4")}
    return MYSQL, lambda: _open_mysql(kw)


def _open_sqlite(path: str):
    import sqlite3  # lazy: only a SQLite store loads its driver

    _create_private(path)
    # check_same_thread off: a connection goes back to the pool and serves another thread later
    # (never two at once).  The default implicit transactions: a write begins one, a read
    # outside `begin()` sees the last commit.
    return sqlite3.connect(path, timeout=30, check_same_thread=False)


def _open_mysql(kw: dict):
    import pymysql  # lazy: only a MySQL store opens its connections here
    from pymysql.constants import CLIENT  # lazy: as pymysql above

    tls.install()  # PREFERRED mode's one context, not one loading the CA bundle per connection
    # FOUND_ROWS: an UPDATE's row count is the rows it matched, as SQLite counts them (a lease
    # taken again in the same second changes nothing, and is still taken)
    return pymysql.connect(**kw, autocommit=False, client_flag=CLIENT.FOUND_ROWS, connect_timeout=30)


def _create_private(path: str) -> None:
    """Create the SQLite file private before SQLite opens it (SQLite gives its -wal and -shm the
    database's mode).  Only when it is missing: closing any descriptor of the file drops every
    POSIX lock this process holds on it, SQLite's own included, and a process whose shared lock
    is gone lets another one that closes last checkpoint and delete the write-ahead log this
    process still writes into (its commits would then be lost)."""
    with suppress(FileExistsError):
        os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600))


class Store:
    """One store URL's connections: each lent to one block at a time and kept for the next."""

    def __init__(self, address: str):
        self.address = address
        self.dialect, self._open = _opener(address)
        self._idle: list = []
        self._lock = threading.Lock()

    def _checkout(self):
        with self._lock:
            raw = self._idle.pop() if self._idle else None
        if raw is not None and self.dialect == MYSQL:
            try:
                raw.ping()
            except Exception:  # the server closed it while it was idle (wait_timeout, a restart)
                _discard(raw)
                raw = None
        return self._open() if raw is None else raw

    def _checkin(self, raw) -> None:
        with self._lock:
            self._idle.append(raw)

    @contextmanager
    def connect(self):
        """A connection for reads (its transaction, if a statement began one, is rolled back)."""
        raw = self._checkout()
        try:
            yield Connection(raw, self.dialect)
        except BaseException:
            _discard(raw)
            raise
        with suppress(Exception):
            raw.rollback()
        self._checkin(raw)

    @contextmanager
    def begin(self):
        """A connection in a transaction, committed when the block ends, rolled back if it raises."""
        raw = self._checkout()
        try:
            yield Connection(raw, self.dialect)
            raw.commit()
        except BaseException:
            _discard(raw)
            raise
        for listener in list(_commit_listeners):
            listener()
        self._checkin(raw)

    def dispose(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for raw in idle:
            with suppress(Exception):
                raw.close()


def _discard(raw) -> None:
    """A connection a block failed in: rolled back and closed, not lent again (it may be broken)."""
    with suppress(Exception):
        raw.rollback()
    with suppress(Exception):
        raw.close()


_engines: dict[str, Store] = {}
_commit_listeners: list = []


def engine() -> Store:
    """The store of the current URL (CDCFLOW_HOME or the URL may change between calls)."""
    address = _url()
    store = _engines.get(address)
    if store is None:
        store = Store(address)
        if store.dialect == SQLITE:
            _write_ahead_log(store)
        migrate(store)
        _engines[address] = store
    return store


def close_all() -> None:
    """Close every store's pooled connections (a process about to end: cli.entry).  The next
    engine() opens its URL again."""
    for store in _engines.values():
        store.dispose()
    _engines.clear()


_inherited: list[Store] = []  # a forked child's copies of its parent's stores, never used nor closed


def _forget_in_child() -> None:
    """A forked child opens its own connections: a socket or SQLite handle shared with the
    parent would interleave both processes' statements.  The parent's are kept, not closed:
    closing a SQLite handle in the child is a use of it, and a MySQL one would end the
    parent's session."""
    _inherited.extend(_engines.values())
    _engines.clear()


os.register_at_fork(after_in_child=_forget_in_child)


@contextmanager
def listening_to_commits(listener):
    """Call `listener()` after each commit of the store in this process (a test counts them)."""
    _commit_listeners.append(listener)
    try:
        yield
    finally:
        _commit_listeners.remove(listener)


def transaction(conn: Connection | None = None):
    """A connection in a transaction: the caller's `conn` (its transaction goes on, so several
    writers commit as one), else a new one committed when the block ends."""
    return _callers_or(conn, lambda: engine().begin())


def reading(conn: Connection | None = None):
    """A connection to read with: the caller's `conn` (its reads see its transaction's writes),
    else a new one for reads."""
    return _callers_or(conn, lambda: engine().connect())


@contextmanager
def _callers_or(conn: Connection | None, opened):
    if conn is not None:
        yield conn
        return
    with opened() as c:
        yield c


def _write_ahead_log(store: Store) -> None:
    """SQLite's write-ahead log (the mode is kept in the file, so once per open is enough).  A
    cycle commits the store at every DDL it applies (the in-flight mark, the checkpoint) and at
    every segment: the rollback journal syncs the journal, the database and the journal's
    removal per commit, the log syncs itself once (about 5x less per commit on this disk),
    and as durably, the synchronous level staying FULL.  Readers (the Changefeeds page) no
    longer wait on a writer either.  All processes share one machine, as the log needs."""
    with store.connect() as c:
        c.execute("PRAGMA journal_mode=WAL")


def migrate(store: Store) -> None:
    """Bring the store to store/tables.py's tables.  The store keeps the stamp of the tables it
    was last brought to (cdcflow_store_stamp); one opened at the same stamp skips the checks,
    which create every table if missing and read its columns back: 15-20 ms of every process
    that opens a SQLite store, 40-80 ms on a MySQL one here (a round trip each, a remote
    store's per process)."""
    stamp = schema_stamp()
    with store.connect() as c:
        if _stamp_of(c) == stamp:
            return
    with store.begin() as c:
        for table in TABLES:
            c.execute(table.create(store.dialect))
    _bring_columns(store)
    with store.begin() as c:
        # REPLACE (both databases have it): two processes migrating a new store at once both write it
        c.execute(f"REPLACE INTO {store_stamp.name} (`name`, `stamp`) VALUES (?, ?)", _STAMP_ROW, stamp)


_STAMP_ROW = "tables"  # the stamp table's one row


def _stamp_of(c: Connection) -> int | None:
    """The stamp the store was last brought to (None: a store no cdcflow stamped yet)."""
    if c.dialect == SQLITE:
        exists = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
    else:
        exists = "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?"
    if c.execute(exists, store_stamp.name).first() is None:
        return None
    return c.select(store_stamp, "`name` = ?", _STAMP_ROW, columns="stamp").scalar()


def schema_stamp() -> int:
    """A checksum of every table and column store/tables.py declares (a positive 31-bit number):
    any change to them changes it."""
    text = "\n".join(repr((t.name, [(c.name, c.kind, c.length, c.nullable, c.primary_key, c.default)
                                    for c in t.columns])) for t in TABLES)
    return zlib.crc32(text.encode()) & 0x7FFFFFFF


def _columns(c: Connection, table: str) -> dict[str, str]:
    """name -> declared type (lower case) of a table's columns as the database has them."""
    if c.dialect == SQLITE:
        return {name: kind.lower() for _cid, name, kind, *_ in c.execute(f"PRAGMA table_info({table})")}
    return {name: kind.lower() for name, kind in c.execute(
        "SELECT COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS "
        "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", table)}


# a column type an earlier cdcflow gave a MySQL store -> what tables.py declares now in its place
_WIDENED = {"float": "double", "text": "longtext"}


def _bring_columns(store: Store) -> None:
    """Each table's columns as tables.py declares them, read once per table: a store created by
    an older cdcflow lacks the newer nullable/defaulted columns (added), and on MySQL has FLOAT
    (single precision) where epoch seconds are kept and TEXT (64 KiB) where JSON is (each
    widened to the type declared now)."""
    for table in TABLES:
        with store.connect() as c:
            have = _columns(c, table.name)
        for col in table.columns:
            if col.name not in have:
                ddl = f"ALTER TABLE {table.name} ADD COLUMN {quoted(col.name)} {col.type_in(store.dialect)}"
                if col.default is not None:
                    ddl += f" NOT NULL DEFAULT {col.default!r}"
            elif store.dialect == MYSQL and _WIDENED.get(have[col.name]) == col.type_in(MYSQL).lower():
                ddl = f"ALTER TABLE {table.name} MODIFY {col.ddl(MYSQL)}"
            else:
                continue
            with store.begin() as c:
                c.execute(ddl)
