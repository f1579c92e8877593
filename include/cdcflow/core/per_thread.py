"""One of a thing per thread that asks for it: a server session is not shared between threads."""

from __future__ import annotations

import threading
from collections.abc import Callable


class PerThread:
    """What `open()` gives, once per thread that asks; `close()` closes every one with
    `closing(it)` (it.close() unless given)."""

    def __init__(self, open: Callable, closing: Callable = lambda it: it.close()):
        self._open, self._closing = open, closing
        self._local, self._opened, self._lock = threading.local(), [], threading.Lock()

    def get(self):
        if not hasattr(self._local, "it"):
            self._local.it = self._open()
            with self._lock:
                self._opened.append(self._local.it)
        return self._local.it

    def close(self) -> None:
        for it in self._opened:
            self._closing(it)
