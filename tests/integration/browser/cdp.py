"""A small DevTools-protocol driver for headless Chromium (tests only).

Chromium prints its DevTools websocket address on stderr once it listens; the driver reads
that line (no polling, no sleeps), opens a page target and speaks JSON over the websocket.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests
import websocket

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
         "--hide-scrollbars"]
LISTENING = re.compile(r"DevTools listening on (ws://\S+)")
TIMEOUT_S = 60


def chromium_binary() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class Loaded:
    """What happened while one page loaded."""

    requests: list[str] = field(default_factory=list)
    console: list[dict[str, Any]] = field(default_factory=list)
    exceptions: list[dict[str, Any]] = field(default_factory=list)
    log: list[dict[str, Any]] = field(default_factory=list)

    @property
    def errors(self) -> list[str]:
        out = [f"console.{c['type']}: {c.get('args')}" for c in self.console
               if c["type"] in ("error", "assert", "warning")]
        out += [f"exception: {e.get('exceptionDetails', {}).get('text')}"
                for e in self.exceptions]
        out += [f"log {e['entry']['level']}: {e['entry']['text']}" for e in self.log
                if e["entry"]["level"] in ("error", "warning")]
        return out


class Browser:
    """One headless Chromium with a fresh profile, and one page."""

    def __init__(self, binary: str) -> None:
        self.profile = tempfile.mkdtemp(prefix="copeca-chromium-")
        self.proc = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={self.profile}",
                                      "about:blank"], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True, start_new_session=True)
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            found = LISTENING.search(line)
            if found:
                break
        else:
            raise RuntimeError("chromium exited before DevTools listened")
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()  # keep draining
        port = int(found.group(1).split(":")[2].split("/")[0])
        pages = requests.get(f"http://127.0.0.1:{port}/json/list", timeout=TIMEOUT_S).json()
        url = next(p["webSocketDebuggerUrl"] for p in pages if p["type"] == "page")
        self.ws = websocket.create_connection(url, timeout=TIMEOUT_S, suppress_origin=True)
        self._id = 0
        self.events: list[dict[str, Any]] = []
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.call(f"{domain}.enable")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self._id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                result: dict[str, Any] = msg.get("result", {})
                return result
            self.events.append(msg)

    def wait_for(self, event: str) -> dict[str, Any]:
        for i, msg in enumerate(self.events):
            if msg.get("method") == event:
                del self.events[: i + 1]
                return msg
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("method") == event:
                return msg
            self.events.append(msg)

    def load(self, path: Path) -> Loaded:
        """Open a file and collect requests, console messages and errors until `load`."""
        self.events.clear()
        self.call("Page.navigate", url=path.resolve().as_uri())
        self.wait_for("Page.loadEventFired")
        self.evaluate("1")  # flush messages queued before the load event
        out = Loaded()
        for msg in self.events:
            m, p = msg.get("method"), msg.get("params", {})
            if m == "Network.requestWillBeSent":
                out.requests.append(p["request"]["url"])
            elif m == "Runtime.consoleAPICalled":
                out.console.append(p)
            elif m == "Runtime.exceptionThrown":
                out.exceptions.append(p)
            elif m == "Log.entryAdded":
                out.log.append(p)
        return out

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression!r}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, out: Path, width: int = 1200, dark: bool = False,
                   media: str = "") -> Path:
        """A full-page PNG (height capped) in the light or dark scheme, or as printed."""
        self.call("Emulation.setEmulatedMedia", media=media, features=[
            {"name": "prefers-color-scheme", "value": "dark" if dark else "light"}])
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=900,
                  deviceScaleFactor=1, mobile=False)
        height = min(int(self.evaluate("document.documentElement.scrollHeight")), 12000)
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=False)
        data = self.call("Page.captureScreenshot", format="png")["data"]
        out.write_bytes(base64.b64decode(data))
        return out

    def close(self) -> None:
        try:
            self.ws.close()
        finally:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            shutil.rmtree(self.profile, ignore_errors=True)
