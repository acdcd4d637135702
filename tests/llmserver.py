"""A scripted OpenAI-compatible chat server on 127.0.0.1 for the llm engine's
tests and benchmark.

By default it answers like a well-behaved model: it reads the request the
engine sent (the PR number, the week's PRs, the hints, the statistics) and
returns a valid, grounded JSON answer in the requested mode (json_schema,
json_object or a tool call). Tests add `rules`: functions of the parsed
request that return a `Reply` (a status, a body, headers, a delay) to script
failures — malformed JSON, an ungrounded answer, 429 with Retry-After, 500, a
slow answer — or None to let the default answer.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    content: str | None = None  # the message content (None: the default answer)
    body: Any = None  # a whole response body instead (dict or raw text)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop: bool = False  # close the connection without an answer (an endpoint going down)
    content_type: str = "application/json"  # of a whole `body` (a web page: "text/html")
    finish_reason: str = "stop"  # "length": the answer was cut at the token limit


@dataclass
class Call:
    """One request as the server saw it."""

    body: dict
    kind: str  # "pr" | "week"
    pr: int | None
    attempt: int  # 0 for a first ask, 1 for a retry that names problems
    headers: dict

    @property
    def system(self) -> str:
        return self.body["messages"][0]["content"]

    @property
    def user(self) -> str:
        return self.body["messages"][1]["content"]


_WEEK_PRS = re.compile(r"the only ones you may cite\): (.*)")


def week_prs(text: str) -> list[int]:
    m = _WEEK_PRS.search(text)
    return [int(x) for x in re.findall(r"#(\d+)", m.group(1))] if m else []


def untrusted_block(text: str, kind: str) -> str | None:
    """The text of the first block of `kind` in a prompt (`repobrief.llm.prompts.untrusted`), or None."""
    m = re.search(f'<untrusted kind="{re.escape(kind)}">\n(.*?)\n</untrusted>', text, re.S)
    return m.group(1) if m else None


def outside_untrusted(text: str) -> str:
    """A prompt without its untrusted blocks: what it says as trusted text."""
    return re.sub(r'<untrusted kind="[^"]*">.*?</untrusted>', "", text, flags=re.S)


def default_pr_answer(call: Call) -> dict:
    user = call.user
    m = re.search(r"Hints from the rule-based analyser: (\{.*\})\n", user)
    hints = json.loads(m.group(1)) if m else {}
    hints.update(json.loads(untrusted_block(user, "hinted names") or "{}"))
    lines = json.loads(re.search(r"Computed facts: (\{.*\})\n", user).group(1))
    zh = "Simplified Chinese" in call.system
    kc = (
        f"该PR（#{call.pr}）改动了{lines['files_changed']}个文件，完善了相关模块。"
        if zh
        else f"Changes {lines['files_changed']} files to improve its module (#{call.pr})."
    )
    importance = float(hints.get("importance", 5.0))
    return {
        "modules": hints.get("modules") or ["core"],
        "type": hints.get("type", "other"),
        "themes": hints.get("themes", []),
        "breaking": bool(hints.get("breaking", False)),
        "importance": importance,
        "importance_reasons": [{"text": "scripted judgement", "points": importance}],
        "key_contribution": kc,
        "risks": [
            {"kind": r["kind"], "severity": r["severity"], "title": r["kind"], "text": f"See #{call.pr}.", "evidence": r.get("evidence", [])}
            for r in hints.get("risks", [])
        ],
        "dismissed_hints": [],
        "discussion_summary": None,
    }


def default_week_answer(call: Call) -> dict:
    prs = week_prs(call.user)
    rows = [json.loads(line) for line in (untrusted_block(call.user, "pull requests") or "").splitlines()]
    zh = "Simplified Chinese" in call.system
    top = rows[:5]
    n = len(prs)
    if zh:
        summary = f"本周共合并{n}个PR，重点见 #{top[0]['pr']}。" if top else f"本周共合并{n}个PR。"
    else:
        summary = f"{n} PRs were merged this week; the most notable is #{top[0]['pr']}." if top else f"{n} PRs were merged."

    # the card's risks: the most severe detected risks, and every breaking change
    facts = json.loads(re.search(r"Computed facts and statistics \(the only counts you may state\): (\{.*\})\n", call.user).group(1))
    ranked = sorted(facts["risks"], key=lambda r: {"high": 0, "medium": 1}.get(r["severity"], 2))
    card_risks = [
        ("风险：" if zh else "Risk: ") + ", ".join(f"#{n}" for n in r["prs"][:3])
        for r in ranked[:3] + [r for r in ranked[3:] if r["kind"] == "breaking_change"]
    ] or [f"Check #{r['pr']}" for r in top[:2]]
    cited = {int(n) for n in re.findall(r"#(\d+)", " ".join(card_risks))}
    card_risks += [f"#{n}" for n in facts["statistics"].get("breaking_prs", []) if n not in cited]

    def item(r: dict, label: str) -> dict:
        return {"name": f"{label}: {r['title'][:40]}", "text": r["key_contribution"], "prs": [r["pr"]]}

    # section 4 names every breaking change and the most severe risks, as the offline one does
    risk_items = [
        {"name": ("风险：" if zh else "Risk: ") + r["kind"], "text": ("涉及" if zh else "Involves ") + ", ".join(f"#{n}" for n in r["prs"][:3]) + ("。" if zh else "."), "prs": r["prs"][:3]}
        for r in ranked[:3] + [r for r in ranked[3:] if r["kind"] == "breaking_change"]
    ]
    listed = {n for i in risk_items for n in i["prs"]}
    risk_items += [{"name": "Breaking", "text": f"#{n}", "prs": [n]} for n in facts["statistics"].get("breaking_prs", []) if n not in listed]

    return {
        "summary": summary,
        "key_changes": [item(r, "Change") for r in top],
        "trends": [item(r, "Trend") for r in top[:3]],
        "risks": risk_items or [item(r, "Risk") for r in top[:3]],
        "recommendations": [item(r, "Review") for r in top[:4]],
        "closing": "以上为本周周报。" if zh else "That is all for this week.",
        "card_highlights": [f"#{r['pr']} {r['title'][:40]}" for r in top[:3]],
        "card_risks": card_risks,
    }


class ScriptedLLM:
    """`with ScriptedLLM() as llm:` serves at `llm.base_url` until the block ends."""

    def __init__(self, *, latency: float = 0.0, require_key: str | None = None, models: tuple[str, ...] | None = None) -> None:
        self.latency = latency
        self.require_key = require_key
        self.models = models
        self.rules: list[Callable[[Call], Reply | None]] = []
        self.calls: list[Call] = []
        self.refused = 0  # requests refused for their key or model (not in `calls`)
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # --------------------------------------------------------------- serving

    def __enter__(self) -> ScriptedLLM:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                owner._handle(self, raw)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    # ---------------------------------------------------------------- script

    def count(self, kind: str | None = None) -> int:
        with self._lock:
            return sum(1 for c in self.calls if kind is None or c.kind == kind)

    def _classify(self, body: dict, headers: dict) -> Call:
        msgs = body.get("messages", [])
        user = msgs[1]["content"] if len(msgs) > 1 else ""
        m = re.match(r"Analyse pull request #(\d+)\.", user)
        kind = "pr" if m else "week"
        attempt = 1 if any(x.get("role") == "assistant" for x in msgs) else 0
        return Call(body=body, kind=kind, pr=int(m.group(1)) if m else None, attempt=attempt, headers=headers)

    def _handle(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        headers = {k.lower(): v for k, v in handler.headers.items()}
        if not handler.path.endswith("/chat/completions"):
            return self._send(handler, 404, {"error": {"message": "not found", "type": "invalid_request_error"}})
        if self.require_key is not None and headers.get("authorization") != f"Bearer {self.require_key}":
            with self._lock:
                self.refused += 1
            return self._send(handler, 401, {"error": {"message": f"Incorrect API key provided: {headers.get('authorization', '')}", "type": "invalid_request_error", "code": "invalid_api_key"}})
        body = json.loads(raw)
        if self.models is not None and body.get("model") not in self.models:
            return self._send(handler, 404, {"error": {"message": f"The model `{body.get('model')}` does not exist", "type": "invalid_request_error", "code": "model_not_found"}})
        call = self._classify(body, headers)
        with self._lock:
            self.calls.append(call)
        reply = None
        for rule in list(self.rules):
            reply = rule(call)
            if reply is not None:
                break
        reply = reply or Reply()
        delay = self.latency + reply.delay
        if delay:
            time.sleep(delay)
        if reply.drop:
            handler.close_connection = True
            try:
                import socket

                handler.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return None
        if reply.body is not None or reply.status != 200:
            return self._send(handler, reply.status, reply.body if reply.body is not None else {"error": {"message": "scripted error"}},
                              reply.headers, reply.content_type)
        content = reply.content
        if content is None:
            answer = default_pr_answer(call) if call.kind == "pr" else default_week_answer(call)
            content = json.dumps(answer, ensure_ascii=False)
        prompt_tokens = len(json.dumps(body["messages"], ensure_ascii=False)) // 4
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if "tools" in body:
            name = body["tools"][0]["function"]["name"]
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": name, "arguments": content}}],
            }
        self._send(
            handler,
            200,
            {
                "id": "chatcmpl-scripted",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", ""),
                "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(content) // 4, "total_tokens": prompt_tokens + len(content) // 4},
            },
            reply.headers,
        )

    @staticmethod
    def _send(handler, status: int, body: Any, headers: dict[str, str] | None = None, content_type: str = "application/json") -> None:
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        try:
            handler.send_response(status)
            handler.send_header("content-type", content_type)
            handler.send_header("content-length", str(len(data)))
            for k, v in (headers or {}).items():
                handler.send_header(k, v)
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
            pass


def verl_llm_settings(repo, db, server: ScriptedLLM, lang: str = "en", tz: str = "Asia/Shanghai", **llm):
    """Settings of an llm report of the replayed verl clone against `server`."""
    from repobrief.config import load_settings

    return load_settings(
        repo,
        env={},
        overrides={"name": "verl-project/verl", "timezone": tz, "language": lang, "engine": "llm", "db": str(db),
                   "llm": {"model": "scripted-model", "timeout": 30.0, "base_url": server.base_url, "api_key": "sk-x", **llm}},
    )
