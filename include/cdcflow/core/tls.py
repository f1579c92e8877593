"""One TLS context for every pymysql connection that asks for none.

A connection given no TLS options runs pymysql's PREFERRED mode: TLS when the server offers
it, without checking the server's certificate.  pymysql builds a new SSLContext for each such
connection, and building one loads the system's CA bundle, which a context that checks no
certificate never reads: 21 ms of CPU per connection on this machine, whether or not the
server offers TLS.  apply opens a connection per partition and segment, verify and snapshot
two per partition, pull two per range.  `install()` makes those connections share the context
pymysql builds for the first: the same settings, so the same TLS, built once per process.
Connections with TLS options of their own still get a context of their own.
"""

from __future__ import annotations

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
                        shared.append(original(self, sslp))
                return shared[0]
            return original(self, sslp)

        Connection._create_ssl_ctx = create_ssl_ctx
        _installed = True
