"""A headless Chromium driven over the DevTools protocol, for tests of rendered pages.

Chromium is started with `--remote-debugging-pipe`: DevTools messages are
NUL-terminated JSON on file descriptors 3 (to the browser) and 4 (from it), so
no websocket client is needed. `Browser.open(path)` loads a page with the
network emulated offline and records what a test needs to check: console
messages, uncaught exceptions, log entries (CSP violations land there) and
every request the page made.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM_CANDIDATES = ("chromium", "chromium-browser", "google-chrome")


def find_chromium() -> str | None:
    for name in CHROMIUM_CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class Page:
    url: str
    console: list[dict] = field(default_factory=list)  # {"type": "error", "text": ...}
    exceptions: list[str] = field(default_factory=list)
    log: list[dict] = field(default_factory=list)  # Log.entryAdded entries
    requests: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[str]:
        out = [c["text"] for c in self.console if c["type"] in ("error", "assert")]
        out += self.exceptions
        out += [e["text"] for e in self.log if e.get("level") == "error"]
        return out


class Browser:
    def __init__(self, executable: str) -> None:
        self.profile = tempfile.mkdtemp(prefix="repobrief-chromium-")
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        # Copies above 100 so that placing them on 3 and 4 in the child never clobbers one another.
        child_in = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 100)
        child_out = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 100)

        def place_fds() -> None:
            os.dup2(child_in, 3)
            os.dup2(child_out, 4)

        args = [
            executable,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--disable-dev-shm-usage",
            # Belt and braces with the offline emulation: any request that got
            # past it would go to a closed local port instead of the internet.
            "--proxy-server=http://127.0.0.1:9",
            "--proxy-bypass-list=<-loopback>",
            f"--user-data-dir={self.profile}",
            "--remote-debugging-pipe",
            "about:blank",
        ]
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),
            preexec_fn=place_fds,
        )
        for fd in (to_browser_r, from_browser_w, child_in, child_out):
            os.close(fd)
        self._w = to_browser_w
        self._r = from_browser_r
        self._buf = b""
        self._next_id = 0
        self._events: list[dict] = []

    # ------------------------------------------------------------------ protocol

    def _read_message(self, deadline: float) -> dict:
        import select

        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("Chromium did not answer in time")
            ready, _, _ = select.select([self._r], [], [], left)
            if ready:
                chunk = os.read(self._r, 1 << 16)
                if not chunk:
                    raise RuntimeError("Chromium closed the DevTools pipe")
                self._buf += chunk
        raw, _, self._buf = self._buf.partition(b"\0")
        return json.loads(raw)

    def send(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 20.0) -> dict:
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self._next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self._events.append(m)

    def wait_for(self, method: str, session: str, timeout: float = 20.0) -> dict:
        deadline = time.monotonic() + timeout
        for i, e in enumerate(self._events):
            if e.get("method") == method and e.get("sessionId") == session:
                return self._events.pop(i)
        while True:
            m = self._read_message(deadline)
            if m.get("method") == method and m.get("sessionId") == session:
                return m
            self._events.append(m)

    # ------------------------------------------------------------------ pages

    def open(self, path: Path) -> BrowserPage:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable", session=session)
        self.send(
            "Network.emulateNetworkConditions",
            {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
            session=session,
        )
        url = Path(path).resolve().as_uri()
        page = BrowserPage(self, session, target, Page(url))
        self.send("Page.navigate", {"url": url}, session=session)
        self.wait_for("Page.loadEventFired", session)
        page.evaluate("new Promise(r => setTimeout(r, 50))", await_promise=True)  # let late errors arrive
        page.collect()
        return page

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=5)
        except Exception:  # already gone: nothing to close
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._w)
        os.close(self._r)
        shutil.rmtree(self.profile, ignore_errors=True)


class BrowserPage:
    def __init__(self, browser: Browser, session: str, target: str, page: Page) -> None:
        self.browser = browser
        self.session = session
        self.target = target
        self.page = page

    def evaluate(self, expression: str, await_promise: bool = False):
        result = self.browser.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": await_promise},
            session=self.session,
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def collect(self) -> Page:
        """Move the events received so far for this page into `self.page`."""
        keep = []
        for e in self.browser._events:
            if e.get("sessionId") != self.session:
                keep.append(e)
                continue
            method, params = e.get("method"), e.get("params", {})
            if method == "Runtime.consoleAPICalled":
                text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
                self.page.console.append({"type": params.get("type"), "text": text})
            elif method == "Runtime.exceptionThrown":
                d = params.get("exceptionDetails", {})
                self.page.exceptions.append(d.get("exception", {}).get("description") or d.get("text", ""))
            elif method == "Log.entryAdded":
                self.page.log.append(params.get("entry", {}))
            elif method == "Network.requestWillBeSent":
                self.page.requests.append(params["request"]["url"])
        self.browser._events = keep
        return self.page

    def close(self) -> None:
        self.browser.send("Target.closeTarget", {"targetId": self.target})


def launch_or_skip():
    """A Browser, or a skip when Chromium is missing outside CI (in CI it must be there)."""
    import pytest

    exe = find_chromium()
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is required in CI (.ci/run installs the Debian package 'chromium')")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return Browser(exe)


def browser_fixture():
    """A session-scoped pytest fixture; use as `browser = browser_fixture()` in a test module."""
    import pytest

    @pytest.fixture(scope="module")
    def browser():
        b = launch_or_skip()
        yield b
        b.close()

    return browser
