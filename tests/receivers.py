"""Webhook receivers for publish tests: real HTTP servers on 127.0.0.1 that act like each platform.

Each receiver checks the request the way the platform does — the signature
(computed here independently from the platforms' documentation, not with
repobrief's code), its freshness, and the payload's shape — and answers the way
the platform answers: Feishu/Lark `{"code": 0}` or HTTP 200 with a non-zero
code, DingTalk/WeCom `{"errcode": 0}`, Slack `ok`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from urllib.parse import parse_qs

import pytest
from pytest_httpserver import HTTPServer
from werkzeug.wrappers import Request, Response


def loopback_server_fixture():
    """A module-scoped fixture: a real HTTP server on 127.0.0.1 (not "localhost", which may be ::1).

    Use as `server = loopback_server_fixture()` in a test module.
    """

    @pytest.fixture(scope="module")
    def server():
        s = HTTPServer(host="127.0.0.1", port=0)
        s.start()
        yield s
        s.clear()
        if s.is_running():
            s.stop()

    return server


@dataclass
class Received:
    body: dict
    query: dict[str, str]
    headers: dict[str, str]
    raw: bytes


@dataclass
class Receiver:
    """Verifies and records what arrives; `script` makes the first answers errors."""

    platform: str
    secret: str = ""
    received: list[Received] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    script: list[Response] = field(default_factory=list)

    def __call__(self, request: Request) -> Response:
        raw = request.get_data()
        query = {k: v[0] for k, v in parse_qs(request.query_string.decode()).items()}
        try:
            body = json.loads(raw)
        except ValueError:
            return self._refuse("body is not JSON")
        self.received.append(Received(body, query, dict(request.headers), raw))
        if self.script:
            return self.script.pop(0)
        problem = getattr(self, f"_check_{self.platform}")(body, query, request.headers, raw)
        if problem:
            return self._refuse(problem)
        return self._ok()

    # ------------------------------------------------------------------ answers

    def _ok(self) -> Response:
        if self.platform in ("feishu", "lark"):
            return json_response({"code": 0, "msg": "success", "data": {}})
        if self.platform in ("dingtalk", "wecom"):
            return json_response({"errcode": 0, "errmsg": "ok"})
        return Response("ok", 200)

    def _refuse(self, problem: str) -> Response:
        self.refusals.append(problem)
        if self.platform in ("feishu", "lark"):
            return json_response({"code": 19021, "msg": f"sign match fail or timestamp is not within one hour: {problem}", "data": {}})
        if self.platform == "dingtalk":
            return json_response({"errcode": 310000, "errmsg": f"sign not match: {problem}"})
        if self.platform == "wecom":
            return json_response({"errcode": 40058, "errmsg": f"invalid markdown: {problem}"})
        return Response(f"invalid_payload: {problem}", 400)

    # ------------------------------------------------------------------ checks

    def _check_feishu(self, body, query, headers, raw) -> str | None:
        if self.secret:
            ts, sign = body.get("timestamp"), body.get("sign")
            if not isinstance(ts, str) or not ts.isdigit() or not sign:
                return "timestamp (string of seconds) and sign are required"
            if abs(time.time() - int(ts)) > 3600:
                return "timestamp is not within one hour"
            key = f"{ts}\n{self.secret}".encode()
            expected = base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()
            if not hmac.compare_digest(expected, sign):
                return "sign match fail"
        if body.get("msg_type") != "interactive":
            return "msg_type must be interactive"
        card = body.get("card") or {}
        title = card.get("header", {}).get("title", {})
        if title.get("tag") != "plain_text" or not title.get("content"):
            return "card.header.title must be plain_text with content"
        for el in card.get("elements", []):
            if el.get("tag") not in ("div", "hr", "action", "note", "markdown"):
                return f"unknown element {el.get('tag')}"
        if len(raw) > 20 * 1024:
            return "request body larger than 20 KB"
        return None

    _check_lark = _check_feishu

    def _check_dingtalk(self, body, query, headers, raw) -> str | None:
        if "access_token" not in query:
            return "access_token missing"
        if self.secret:
            ts, sign = query.get("timestamp"), query.get("sign")
            if not ts or not ts.isdigit() or not sign:
                return "timestamp (milliseconds) and sign are required in the query"
            if abs(time.time() * 1000 - int(ts)) > 3600 * 1000:
                return "timestamp is not within one hour"
            digest = hmac.new(self.secret.encode(), f"{ts}\n{self.secret}".encode(), hashlib.sha256).digest()
            if not hmac.compare_digest(base64.b64encode(digest).decode(), sign):
                return "sign not match"
        kind = body.get("msgtype")
        if kind == "actionCard":
            card = body["actionCard"]
            if not (card.get("title") and card.get("text") and card.get("singleTitle") and card.get("singleURL")):
                return "actionCard needs title, text, singleTitle, singleURL"
        elif kind == "markdown":
            if not (body["markdown"].get("title") and body["markdown"].get("text")):
                return "markdown needs title and text"
        else:
            return f"unsupported msgtype {kind}"
        return None

    def _check_wecom(self, body, query, headers, raw) -> str | None:
        if "key" not in query:
            return "key missing"
        if body.get("msgtype") != "markdown":
            return "msgtype must be markdown"
        content = body.get("markdown", {}).get("content", "")
        if not content or len(content.encode()) > 4096:
            return "markdown.content must be 1..4096 bytes"
        return None

    def _check_slack(self, body, query, headers, raw) -> str | None:
        blocks = body.get("blocks")
        if not body.get("text") or not isinstance(blocks, list) or not blocks or len(blocks) > 50:
            return "text and 1..50 blocks are required"
        for b in blocks:
            if b["type"] == "header" and (b["text"]["type"] != "plain_text" or len(b["text"]["text"]) > 150):
                return "header must be plain_text of at most 150 characters"
            if b["type"] == "section" and len(b["text"]["text"]) > 3000:
                return "section text longer than 3000 characters"
        return None

    def _check_webhook(self, body, query, headers, raw) -> str | None:
        if self.secret:
            ts = headers.get("X-Repobrief-Timestamp", "")
            sig = headers.get("X-Repobrief-Signature", "")
            expected = "sha256=" + hmac.new(self.secret.encode(), ts.encode() + b"." + raw, hashlib.sha256).hexdigest()
            if not ts or not hmac.compare_digest(expected, sig):
                return "bad signature"
        if body.get("event") != "repobrief.report" or "report" not in body:
            return "not a repobrief report event"
        return None


def json_response(data: dict, status: int = 200, headers: dict | None = None) -> Response:
    return Response(json.dumps(data), status, headers=headers, content_type="application/json")


class HangUpServer:
    """A TCP server on 127.0.0.1 that reads each HTTP request whole, records it and closes the
    connection without answering: a platform (or a proxy before it) that dies after taking
    the request. `requests` holds the raw requests received."""

    def __init__(self) -> None:
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.1)
        self.port = self._sock.getsockname()[1]
        self.requests: list[bytes] = []
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def url_for(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def _serve(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                data = b""
                while b"\r\n\r\n" not in data and (chunk := conn.recv(65536)):
                    data += chunk
                head, _, body = data.partition(b"\r\n\r\n")
                length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
                while length and len(body) < int(length.group(1)) and (chunk := conn.recv(65536)):
                    body += chunk
                self.requests.append(head + b"\r\n\r\n" + body)

    def close(self) -> None:
        self._stopped.set()
        self._thread.join(5)
        self._sock.close()
