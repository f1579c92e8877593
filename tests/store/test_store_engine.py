"""Opening the metadata store: its URL, and a MySQL store made by an earlier cdcflow."""

from __future__ import annotations

import os
import ssl
import time

import pytest

from cdcflow.core.errors import CdcflowError
from cdcflow.store import engine, metastore

POS = {"file": "mysql-bin.000001", "pos": 4}


@pytest.mark.parametrize("url, said", [
    ("postgresql://u:secret@db/meta", "unknown scheme 'postgresql'"),
    ("mysql://u:secret@db:port/meta", "its port is not a number"),
    ("mysql://u:secret@db:3306/", "names no host or no database"),
    ("mysql://u:secret@db:3306/meta?ssl=1&charset=utf8mb4", "unknown parameter ssl (known: charset)"),
])
def test_a_store_url_it_cannot_use_is_refused_without_its_password(url, said, monkeypatch, tmp_path):
    monkeypatch.setenv("CDCFLOW_HOME", str(tmp_path))
    monkeypatch.setenv("CDCFLOW_METASTORE_URL", url)
    with pytest.raises(CdcflowError) as e:
        metastore.list_feeds()
    text = str(e.value)
    assert said in text and "CDCFLOW_METASTORE_URL" in text and "secret" not in text
    assert "mysql://USER:PASSWORD@HOST:PORT/DATABASE" in e.value.hint


# cdcflow_changefeeds as an earlier cdcflow created it on MySQL: epoch seconds in single-precision
# FLOAT (MariaDB sends such a value with six significant digits), JSON in 64 KiB TEXT
OLD_CHANGEFEEDS = """CREATE TABLE cdcflow_changefeeds (
  id VARCHAR(128) NOT NULL, state VARCHAR(16) NOT NULL, checkpoint_ts BIGINT NOT NULL,
  checkpoint_pos TEXT NOT NULL, resolved_ts BIGINT NOT NULL, error TEXT, error_since FLOAT,
  state_since FLOAT NOT NULL, last_progress_at FLOAT NOT NULL, ddl_in_flight_ts BIGINT,
  skip_ddl TEXT NOT NULL, retry_count INTEGER NOT NULL, next_retry_at FLOAT, replay_until BIGINT NOT NULL,
  lease_owner VARCHAR(256), lease_until FLOAT, created_at FLOAT NOT NULL, updated_at FLOAT NOT NULL,
  PRIMARY KEY (id))"""


@pytest.mark.mariadb_only  # a SQLite store's FLOAT is a double already, its TEXT unbounded
def test_a_mysql_store_of_an_earlier_cdcflow_is_widened_and_keeps_its_rows(store_backend):
    store_backend.server.execute(OLD_CHANGEFEEDS,
                                 "INSERT INTO cdcflow_changefeeds VALUES ('old', 'stopped', 100, '{}', 100, NULL, "
                                 "NULL, 1.0, 1.0, NULL, '[7]', 0, NULL, 0, NULL, NULL, 1.0, 1.0)",
                                 database=store_backend.database)
    old = metastore.get_feed("old")  # opens (migrates) the store
    assert (old.state, old.checkpoint_ts, old.skip_ddl) == ("stopped", 100, [7])
    types = dict(store_backend.server.query(
        "SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS "
        f"WHERE TABLE_SCHEMA = '{store_backend.database}' AND TABLE_NAME = 'cdcflow_changefeeds'"))
    assert {types[c] for c in ("state_since", "lease_until", "created_at", "updated_at")} == {"double"}
    assert {types[c] for c in ("checkpoint_pos", "error", "skip_ddl")} == {"longtext"}
    before = time.time()
    assert metastore.acquire_lease("old", "h:1:r", "r", ttl=60)
    assert before + 60 <= metastore.get_feed("old").lease_until <= time.time() + 60
    engine.close_all()  # opened again: nothing left to widen, the rows as they were
    assert metastore.get_feed("old").lease_owner == "h:1:r"


def test_a_forked_child_opens_its_own_connections_and_leaves_the_parents_alone(store_backend, tmp_path,
                                                                              monkeypatch):
    """A process forked with the store open (Airflow's task runners fork) writes through
    connections of its own; the parent's pooled ones go on working after the child ends."""
    monkeypatch.setenv("CDCFLOW_HOME", str(tmp_path))
    metastore.create_feed("cf", 1, POS)
    parent_store = engine.engine()
    pid = os.fork()
    if pid == 0:  # the child: any failure is its exit status
        status = 1
        try:
            status = 0 if engine.engine() is not parent_store and metastore.get_feed("cf").checkpoint_ts == 1 else 2
            metastore.advance_checkpoint("cf", 2, POS)
        finally:
            os._exit(status)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert engine.engine() is parent_store  # the parent's pool, its connections still good
    assert metastore.get_feed("cf").checkpoint_ts == 2
    metastore.advance_checkpoint("cf", 3, POS)
    assert metastore.get_feed("cf").checkpoint_ts == 3


@pytest.mark.mariadb_only  # a SQLite file has no grants
def test_a_user_with_the_documented_grants_creates_widens_and_uses_the_store(store_backend, monkeypatch):
    """engine.MYSQL_GRANTS, which docs/reference/metadata-store.md lists, are enough."""
    server, database = store_backend.server, store_backend.database
    server.execute(OLD_CHANGEFEEDS, database=database)  # an earlier cdcflow's table, to be widened
    user = f"meta_{database[-8:]}"
    server.execute(f"CREATE USER '{user}'@'%' IDENTIFIED BY 'pw'", f"GRANT {', '.join(engine.MYSQL_GRANTS)} ON `{database}`.* TO '{user}'@'%'")
    try:
        monkeypatch.setenv("CDCFLOW_METASTORE_URL", f"mysql://{user}:pw@127.0.0.1:{server.port}/{database}")
        engine.close_all()
        metastore.create_feed("cf", 1, POS)
        assert metastore.acquire_lease("cf", "h:1:r", "r")
        assert metastore.get_feed("cf").lease_owner == "h:1:r"
        assert server.query("SELECT DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = %s "
                            "AND TABLE_NAME = 'cdcflow_changefeeds' AND COLUMN_NAME = 'lease_until'",
                            (database,)) == [("double",)]
    finally:
        engine.close_all()
        server.execute(f"DROP USER '{user}'@'%'")


@pytest.mark.mariadb_only  # a SQLite file opens no TLS
def test_a_mysql_store_opens_its_connections_without_loading_the_ca_bundle(store_backend, monkeypatch):
    """A store connection with no TLS options of its own runs pymysql's PREFERRED mode on the one
    context core.tls shares, not on one that reads the system's CA bundle each time (50 ms of
    every process that opened a MySQL store here, for certificates it never checks)."""
    from pymysql.connections import Connection

    from cdcflow.core import tls

    builder = Connection._create_ssl_ctx  # pymysql's own again, as in a process nothing installed in yet
    monkeypatch.setattr(Connection, "_create_ssl_ctx", getattr(builder, "pymysqls", builder))
    monkeypatch.setattr(tls, "_installed", False)
    loaded, load = [], ssl.SSLContext.load_default_certs
    monkeypatch.setattr(ssl.SSLContext, "load_default_certs",
                        lambda ctx, *a, **kw: (loaded.append(ctx), load(ctx, *a, **kw))[1])
    engine.close_all()
    metastore.create_feed("cf", 1, POS)
    assert metastore.get_feed("cf").checkpoint_ts == 1
    assert loaded == []
    engine.close_all()
