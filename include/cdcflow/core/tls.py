"""One TLS context for every pymysql connection that asks for none.

A connection given no TLS options runs pymysql's PREFERRED mode: TLS when the server offers
it, without checking the server's certificate.  pymysql builds a new SSLContext for each such
connection, and building one loads the system's CA bundle, which a context that checks no
certificate never reads: 21 ms of CPU per connection on this machine, whether or not the
server offers TLS.  apply opens a connection per partition and segment, verify and snapshot
two per partition, pull two per range.  `install()` makes those connections share one context with the settings
pymysql gives PREFERRED mode (`preferred_context`), built once per process and without the CA
bundle (21-27 ms of every process's start, for certificates it never checks).  Connections
with TLS options of their own still get a context of their own.
"""

from __future__ import annotations

import os
import ssl
import sys
import threading

_lock = threading.Lock()
_installed = False


def install() -> None:
    """Share PREFERRED mode's context in this process (idempotent)."""
    global _installed
    if _installed:  # every connect asks: no lock once done
        return
    with _lock:
        if _installed:
            return
        # lazy: the DAG parse imports core.uri; pymysql loads when a connection opens
        from pymysql.connections import Connection

        original = getattr(Connection, "_create_ssl_ctx", None)
        if original is None:  # another pymysql: its own contexts, only slower
            return
        shared: list = []

        def create_ssl_ctx(self, sslp):
            if isinstance(sslp, dict) and not sslp:  # PREFERRED: no options, no certificate check
                with _lock:
                    if not shared:
                        shared.append(preferred_context())
                return shared[0]
            return original(self, sslp)

        create_ssl_ctx.pymysqls = original  # what preferred_context is held to (tests/core/test_tls.py)
        Connection._create_ssl_ctx = create_ssl_ctx
        _installed = True


def preferred_context() -> ssl.SSLContext:
    """The context pymysql builds for PREFERRED mode (Connection._create_ssl_ctx({}): TLS 1.2 or
    later, no host name or certificate check, SSLv2 and SSLv3 off), less the system's CA bundle
    ssl.create_default_context loads before pymysql turns the check off: a context that checks
    no certificate never reads it (tests/core/test_tls.py holds the two alike)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.verify_flags &= ~ssl.VERIFY_X509_STRICT
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.options |= ssl.OP_NO_SSLv2 | ssl.OP_NO_SSLv3
    keylog = os.environ.get("SSLKEYLOGFILE")  # as ssl.create_default_context honours it
    if keylog and not sys.flags.ignore_environment:
        ctx.keylog_filename = keylog
    return ctx
