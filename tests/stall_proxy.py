"""A TCP proxy in front of a MariaDB server that stalls a connection at a chosen request.

A fault test that must land "while pull reads the binlog" or "between apply's DDLs" cannot find
that moment from the clock: pull reads a window of tens of thousands of events in a fraction of
a second, less than a loaded machine takes to notice it started.  Through this proxy, a
connection whose client sends a request `hold` picks (by default a request for the binlog,
COM_BINLOG_DUMP or COM_BINLOG_DUMP_GTID) gets the first `pass_bytes` of what the server sends
after it and then nothing, as if the network had stalled, until `release()`.  Every other
request passes untouched."""

from __future__ import annotations

import socket
import threading

# the command bytes of a client's request for the binlog stream (MySQL protocol)
COM_BINLOG_DUMP = 0x12
COM_BINLOG_DUMP_GTID = 0x1E
COM_QUERY = 0x03


def binlog_request(payload: bytes) -> bool:
    return payload[:1] in (bytes([COM_BINLOG_DUMP]), bytes([COM_BINLOG_DUMP_GTID]))


def query_containing(*texts: str):
    """A `hold` for a statement whose text contains each of `texts`."""
    needles = [t.encode() for t in texts]
    return lambda payload: payload[:1] == bytes([COM_QUERY]) and all(n in payload for n in needles)


class StallProxy:
    def __init__(self, target_port: int, hold=binlog_request, pass_bytes: int = 64 * 1024, host: str = "127.0.0.1"):
        self.target = (host, target_port)
        self.hold, self.pass_bytes = hold, pass_bytes
        self.stalled = threading.Event()  # a connection is being held
        self._released = threading.Event()
        self._listener = socket.create_server((host, 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def uri(self, server_uri: str) -> str:
        """`server_uri` (the server's own) with this proxy's port in place of the server's."""
        return server_uri.replace(f":{self.target[1]}/", f":{self.port}/")

    def release(self) -> None:
        """From now on every stream passes, the held ones included."""
        self._released.set()

    def close(self) -> None:
        self.release()
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            held = threading.Event()
            threading.Thread(target=self._client_to_server, args=(client, server, held), daemon=True).start()
            threading.Thread(target=self._server_to_client, args=(server, client, held), daemon=True).start()

    def _client_to_server(self, src: socket.socket, dst: socket.socket, held: threading.Event) -> None:
        """Forwards the client's packets, noting a request to hold: a command packet is one
        with sequence id 0, its first payload byte the command."""
        buf = b""
        try:
            while data := src.recv(65536):
                buf += data
                while len(buf) >= 5:
                    size = int.from_bytes(buf[:3], "little")
                    if len(buf) < 4 + size:
                        break
                    if buf[3] == 0 and self.hold(buf[4:4 + size]):
                        held.set()
                    buf = buf[4 + size:]
                dst.sendall(data)
        except OSError:
            pass
        _close(src, dst)

    def _server_to_client(self, src: socket.socket, dst: socket.socket, held: threading.Event) -> None:
        sent_since = 0
        try:
            while data := src.recv(65536):
                if held.is_set() and not self._released.is_set():
                    room = max(0, self.pass_bytes - sent_since)
                    dst.sendall(data[:room])
                    sent_since += min(room, len(data))
                    if len(data) > room:
                        self.stalled.set()
                        self._released.wait()
                        dst.sendall(data[room:])
                    continue
                dst.sendall(data)
        except OSError:
            pass
        _close(src, dst)


def _close(*socks: socket.socket) -> None:
    for s in socks:
        try:
            s.close()
        except OSError:
            pass
