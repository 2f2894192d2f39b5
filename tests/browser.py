"""A real headless Chromium driven over the DevTools protocol, for tests of report.html.

The protocol runs over a pipe (`--remote-debugging-pipe`: JSON messages ending in NUL on file
descriptors 3 and 4), so nothing but the browser is needed: no WebSocket library, no driver, no
download. `make system` installs Debian's `chromium` where it is missing; `find_chromium()` is None
where there is none, and the tests skip with that reason.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def find_chromium() -> str | None:
    for name in (os.environ.get("CURATE_CHROMIUM") or "", *CANDIDATES):
        found = name and shutil.which(name)
        if found:
            return found
    return None


class BrowserError(RuntimeError):
    pass


class Browser:
    """One headless browser with one page; `evaluate` runs JavaScript in it, `click` clicks with the
    mouse where an element is, `screenshot` returns PNG bytes. Every wait is bounded."""

    def __init__(self, executable: str, width: int = 1200, height: int = 1400, deadline: float = 30.0) -> None:
        self.deadline = deadline
        self.profile = tempfile.TemporaryDirectory(prefix="curate-chromium-")
        to_browser, self._write = os.pipe()
        self._read, from_browser = os.pipe()
        self.process = subprocess.Popen(
            [executable, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
             "--disable-dev-shm-usage", f"--user-data-dir={self.profile.name}", "--remote-debugging-pipe",
             f"--window-size={width},{height}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(3, 4), preexec_fn=_fds_3_and_4(to_browser, from_browser))
        os.close(to_browser)
        os.close(from_browser)
        self._buffer = b""
        self._next = 0
        try:
            target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            self.send("Page.enable", session=True)
            self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1,
                                                             "mobile": False}, session=True)
        except BrowserError:
            self.close()  # a browser that did not start as expected is not left behind
            raise

    def send(self, method: str, params: dict[str, Any] | None = None, session: bool = False) -> dict[str, Any]:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = self.session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        until = time.monotonic() + self.deadline
        while True:
            for reply in self._messages(until):
                if reply.get("id") == self._next:
                    if "error" in reply:
                        raise BrowserError(f"{method}: {reply['error']}")
                    return reply.get("result", {})

    def _messages(self, until: float) -> list[dict[str, Any]]:
        while b"\0" not in self._buffer:
            left = until - time.monotonic()
            if left <= 0 or self.process.poll() is not None:
                raise BrowserError("the browser did not answer in time" if left <= 0 else "the browser exited")
            ready, _, _ = select.select([self._read], [], [], left)
            if ready:
                chunk = os.read(self._read, 1 << 20)
                if not chunk:
                    raise BrowserError("the browser closed its pipe")
                self._buffer += chunk
        *complete, self._buffer = self._buffer.split(b"\0")
        return [json.loads(m) for m in complete if m]

    def open(self, path: Path) -> None:
        self.send("Page.navigate", {"url": Path(path).resolve().as_uri()}, session=True)
        self.wait_for("document.readyState === 'complete' && !!document.getElementById('sample-list')")

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression[:80]}: {result['exceptionDetails'].get('exception', {}).get('description')}")
        return result["result"].get("value")

    def wait_for(self, expression: str) -> None:
        until = time.monotonic() + self.deadline
        while not self.evaluate(expression):
            if time.monotonic() > until:
                raise BrowserError(f"never true: {expression}")
            time.sleep(0.05)

    def click(self, selector: str) -> None:
        """A mouse click (pressed and released) at the middle of the element, as a user's."""
        box = self.evaluate(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); "
                            "if (!e) return null; e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect(); "
                            "return [r.x + r.width / 2, r.y + r.height / 2]; })()")
        if box is None:
            raise BrowserError(f"no element {selector}")
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", {"type": kind, "x": box[0], "y": box[1], "button": "left",
                                                   "clickCount": 1}, session=True)

    def screenshot(self) -> bytes:
        import base64

        return base64.b64decode(self.send("Page.captureScreenshot", {"format": "png"}, session=True)["data"])

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except BrowserError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._write)
        os.close(self._read)
        self.profile.cleanup()


def _fds_3_and_4(to_browser: int, from_browser: int):
    """In the child: the command pipe's read end as fd 3, the reply pipe's write end as fd 4."""
    import fcntl

    def place() -> None:
        # copies above 4 first, so that neither end is overwritten by placing the other
        commands, replies = fcntl.fcntl(to_browser, fcntl.F_DUPFD, 10), fcntl.fcntl(from_browser, fcntl.F_DUPFD, 10)
        os.dup2(commands, 3)
        os.dup2(replies, 4)
    return place
