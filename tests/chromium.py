"""A headless Chromium (Debian's `chromium`) driven over the DevTools protocol: give it a
cookie, open a page, run JavaScript in it, take a screenshot.  The page tests log in as a
person does (Airflow's `_token` cookie) and press the page's buttons through it."""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import websockets

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1400,1800"]


class Browser:
    """One Chromium with one tab; use as a context manager (it is stopped and its profile removed)."""

    def __init__(self, timeout: float = 60):
        self.profile = tempfile.mkdtemp(prefix="cdcflow-chromium-")
        self.proc = subprocess.Popen([shutil.which("chromium") or "chromium", *FLAGS, "--remote-debugging-port=0",
                                      f"--user-data-dir={self.profile}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.time() + timeout
        while not port_file.exists() or not port_file.read_text().strip():
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.2)
        port = port_file.read_text().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
            self.ws_url = next(t["webSocketDebuggerUrl"] for t in json.load(r) if t["type"] == "page")
        self.loop = asyncio.new_event_loop()
        self.ws = self.loop.run_until_complete(websockets.connect(self.ws_url, max_size=64 << 20))
        self.ids = itertools.count(1)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            self.loop.run_until_complete(self.ws.close())
        finally:
            self.loop.close()
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            shutil.rmtree(self.profile, ignore_errors=True)

    def call(self, method: str, **params) -> dict:
        async def go():
            ident = next(self.ids)
            await self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
            while True:
                msg = json.loads(await asyncio.wait_for(self.ws.recv(), timeout=120))
                if msg.get("id") == ident:
                    if "error" in msg:
                        raise RuntimeError(f"{method}: {msg['error']}")
                    return msg.get("result", {})
        return self.loop.run_until_complete(go())

    def set_cookie(self, url: str, name: str, value: str) -> None:
        assert self.call("Network.setCookie", url=url, name=name, value=value, path="/")["success"]

    def open(self, url: str) -> None:
        self.call("Page.enable")
        self.call("Page.navigate", url=url)

    def js(self, expression: str):
        """The value of a JavaScript expression in the page (awaited if it is a promise)."""
        out = self.call("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in out:
            raise RuntimeError(f"{expression}: {out['exceptionDetails']}")
        return out["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 60):
        """Poll a JavaScript expression until it is truthy; returns its value."""
        deadline = time.time() + timeout
        while True:
            try:
                value = self.js(expression)
            except RuntimeError:
                value = None
            if value:
                return value
            if time.time() > deadline:
                raise AssertionError(f"the page never satisfied: {expression}\n"
                                     + str(self.js("document.body ? document.body.innerText : ''"))[:3000])
            time.sleep(0.3)

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        Path(path).write_bytes(base64.b64decode(data))
