"""Connections without TLS options share one TLS context (core.tls), and still use TLS when
the server offers it: a real MariaDB without TLS (the session pair) and one started here
with a self-signed certificate."""

from __future__ import annotations

import ssl
import subprocess

import pymysql
import pytest

from cdcflow.core.tls import preferred_context
from cdcflow.core.uri import parse_sink_uri, parse_source_uri
from cdcflow_devtools.mariadb import MariaDB
from cdcflow.sink import connection
from cdcflow.verify.comparison import reading_session


def _cipher(conn) -> str:
    with conn.cursor() as cur:
        cur.execute("SHOW SESSION STATUS LIKE 'Ssl_cipher'")
        return cur.fetchone()[1]


def _every_way(server: MariaDB) -> list:
    """A connection through each of cdcflow's ways to open one."""
    sink = parse_sink_uri(server.uri).connection_args()
    return [parse_source_uri(server.uri).connect(), parse_sink_uri(server.uri).connect(),
            connection.connect(sink), reading_session(sink)]


def test_connections_without_tls_options_share_one_context(mariadb_pair):
    up, _ = mariadb_pair
    conns = _every_way(up)
    try:
        assert all(c.ctx is conns[0].ctx for c in conns)  # built once, not per connection
        assert all(_cipher(c) == "" for c in conns)  # the server offers no TLS: plain, as before
        assert conns[0].ctx.verify_mode.name == "CERT_NONE"  # pymysql's PREFERRED mode, unchanged
    finally:
        for c in conns:
            c.close()


def test_the_shared_context_is_pymysqls_preferred_one_without_the_ca_bundle():
    """The settings a TLS handshake uses are pymysql's own for PREFERRED mode; only the CA bundle
    (read by no handshake that checks no certificate) is not loaded."""
    builder = pymysql.connections.Connection._create_ssl_ctx
    theirs = getattr(builder, "pymysqls", builder)(None, {})  # pymysql's own, where core.tls.install replaced it
    ours = preferred_context()
    for attribute in ("protocol", "verify_mode", "check_hostname", "options", "verify_flags", "minimum_version",
                      "maximum_version", "post_handshake_auth", "keylog_filename", "hostname_checks_common_name"):
        assert getattr(ours, attribute) == getattr(theirs, attribute), attribute
    assert ours.get_ciphers() == theirs.get_ciphers()
    assert ours.verify_mode == ssl.CERT_NONE and not ours.check_hostname
    assert ours.cert_store_stats()["x509_ca"] == 0


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    base = tmp_path_factory.mktemp("tls")
    cert, key = base / "cert.pem", base / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    server = MariaDB(base, name="tls", server_id=7,
                     extra_args=[f"--ssl-cert={cert}", f"--ssl-key={key}"]).start()
    yield server, cert
    server.stop()


def test_a_server_that_offers_tls_still_gets_it(tls_server):
    server, cert = tls_server
    conns = _every_way(server)
    try:
        assert all(_cipher(c) for c in conns)  # every connection encrypted
        assert all(c.ctx is conns[0].ctx for c in conns)
        # TLS options of its own: a context of its own, which checks the certificate
        own = parse_sink_uri(server.uri).connect(ssl_ca=str(cert), ssl_verify_cert=True)
        try:
            assert own.ctx is not conns[0].ctx and own.ctx.verify_mode.name == "CERT_REQUIRED"
            assert _cipher(own)
        finally:
            own.close()
    finally:
        for c in conns:
            c.close()
