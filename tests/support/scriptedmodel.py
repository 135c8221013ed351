"""A scripted model on 127.0.0.1: the coding agents' real CLIs talk to it instead of a vendor's API.

`ScriptedModel(script)` is a threaded HTTP server on a free loopback port that speaks, as each CLI
calls them:

* the Anthropic Messages API (Claude Code): `POST /v1/messages`, streamed as server-sent events
  (`message_start`, `content_block_start`/`_delta`/`_stop`, `message_delta`, `message_stop`) or as
  one JSON message; `POST /v1/messages/count_tokens`; any other request gets a small JSON answer;
* the Gemini API (Gemini CLI): `POST /v1beta/models/MODEL:streamGenerateContent?alt=sse` (`data:`
  lines) and `:generateContent`, `:countTokens`, `GET /v1beta/models`;
* the OpenAI Responses API (Codex): `POST /v1/responses`, streamed (`response.created`,
  `response.output_item.done`, `response.completed`), and `GET /v1/models`.

A script is a list of turns (`calls(...)`: tool calls, or `say(...)`: the final text). Which turn a
request gets is read from the conversation it carries, not counted by the server: the number of
the model's earlier turns that called tools. So a retried request gets the same turn again, and a
side request (a title, a summary, a check the CLI makes with another prompt and no tools) gets no
turn at all: it is answered with `side_text` and marked `side`. Past the script's end the model
says `ScriptedModel.DONE`.

Every request is recorded (`requests`: method, path, headers, parsed body, what it was answered
with), so a test can read what the agent sent the model after its hook denied a call.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Call:
    """One tool call the model asks for: the tool's name as the agent declares it, and its input
    (JSON arguments), or `raw` text for a freeform tool (OpenAI's custom tools: Codex's apply_patch)."""

    name: str
    input: dict[str, Any]
    raw: str | None = None


@dataclass(frozen=True)
class Turn:
    """One answer of the model in the main conversation: tool calls, or (no calls) the final text."""

    calls: tuple[Call, ...] = ()
    text: str = ""


def calls(*pairs: tuple[str, dict[str, Any]]) -> Turn:
    """A turn that calls tools: `calls(("Write", {"file_path": ..., "content": ...}))`."""
    return Turn(calls=tuple(Call(name, dict(args)) for name, args in pairs))


def call(name: str, **args: Any) -> Turn:
    """A turn that calls one tool: `call("Write", file_path=..., content=...)`."""
    return Turn(calls=(Call(name, args),))


def freeform(name: str, text: str) -> Turn:
    """A turn that calls one freeform tool with raw text: `freeform("apply_patch", PATCH)` (OpenAI only)."""
    return Turn(calls=(Call(name, {}, raw=text),))


def say(text: str) -> Turn:
    """The final turn: text, no tool calls (the agent's loop ends)."""
    return Turn(text=text)


@dataclass
class Request:
    """One request as the server received it, and how it was answered."""

    method: str
    path: str  # with the query
    headers: dict[str, str]
    body: Any  # the parsed JSON, or the text when it was not JSON, or None
    api: str = "?"  # anthropic, gemini, openai, or ? (answered minimally)
    kind: str = "other"  # main (a turn of the script), side (no turn: side_text), other
    turn: int | None = None  # the script's turn it was answered with (main only)

    @property
    def route(self) -> str:
        return urllib.parse.urlsplit(self.path).path


@dataclass(frozen=True)
class ToolResult:
    """A tool's result as the agent reported it to the model."""

    call_id: str
    text: str  # the result's text (Gemini: the response's error or output, else its JSON)
    is_error: bool | None  # None: the API has no such flag (OpenAI)


def tool_results(request: Request) -> list[ToolResult]:
    """The tool results in the newest turn of `request`'s conversation."""
    body = request.body if isinstance(request.body, dict) else {}
    found: list[ToolResult] = []
    if request.api == "anthropic":
        # after the model's last turn (Claude Code may put a `system` message after the results)
        blocks = [block for message in _after_last(body.get("messages") or [], "assistant")
                  if isinstance(message.get("content"), list) for block in message["content"]]
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                content = block.get("content")
                if isinstance(content, list):
                    content = "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
                found.append(ToolResult(str(block.get("tool_use_id")), str(content or ""), bool(block.get("is_error"))))
    elif request.api == "gemini":
        parts = [part for content in _after_last(body.get("contents") or [], "model")
                 for part in content.get("parts") or []]
        for part in parts:
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if isinstance(response, dict):
                inner = response.get("response") or {}
                text = inner.get("error", inner.get("output", json.dumps(inner)))
                found.append(ToolResult(str(response.get("id", response.get("name"))), str(text), "error" in inner))
    elif request.api == "openai":
        items = body.get("input") or []
        for item in reversed(items if isinstance(items, list) else []):
            if not (isinstance(item, dict) and str(item.get("type", "")).endswith("_call_output")):
                break
            output = item.get("output")
            if isinstance(output, list):
                output = "\n".join(str(o.get("text", "")) for o in output if isinstance(o, dict))
            found.insert(0, ToolResult(str(item.get("call_id")), str(output), None))
    return found


@dataclass
class ScriptedModel:
    """The server. Use it as a context manager; `base_url` is http://127.0.0.1:PORT."""

    script: Sequence[Turn]
    side_text: str = "ok"
    requests: list[Request] = field(default_factory=list)

    DONE = "Script finished."

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- life cycle ---------------------------------------------------------------------------
    def __enter__(self) -> ScriptedModel:
        model = self

        class Handler(_Handler):
            owner = model

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="scripted-model", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    @property
    def port(self) -> int:
        assert self._server is not None, "the server is not started (use it in a with block)"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # --- what the tests read ------------------------------------------------------------------
    def main_requests(self) -> list[Request]:
        """The requests answered with a turn of the script, in order."""
        with self._lock:
            return [r for r in self.requests if r.kind == "main"]

    def request_for_turn(self, turn: int) -> Request:
        """The last request answered with script turn `turn` (after a retry, the one that counted)."""
        found = [r for r in self.main_requests() if r.turn == turn]
        assert found, f"no request was answered with turn {turn}: {self.summary()}"
        return found[-1]

    def results_after(self, turn: int) -> list[ToolResult]:
        """What the agent sent back for turn `turn`'s tool calls: the results the request for the
        next turn carries (Anthropic `tool_result` blocks, Gemini `functionResponse` parts, OpenAI
        `*_call_output` items)."""
        return tool_results(self.request_for_turn(turn + 1))

    def summary(self) -> str:
        with self._lock:
            return "; ".join(f"{r.method} {r.route} {r.api}/{r.kind}/{r.turn}" for r in self.requests)

    def _record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def _turn(self, index: int) -> Turn:
        return self.script[index] if index < len(self.script) else say(self.DONE)

    def _id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):06d}"


class _Handler(BaseHTTPRequestHandler):
    owner: ScriptedModel
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the requests are recorded
        pass

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_HEAD(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def do_CONNECT(self) -> None:
        # the server is also the agents' HTTP(S) proxy: a CLI that tries to reach the network is
        # recorded here (api `proxy`, the host in `path`) and refused
        self.owner._record(Request(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, None,
                                   api="proxy"))
        self._send(403, "text/plain", b"offline")
        self.close_connection = True

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
        req = Request(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        self.owner._record(req)
        route = req.route
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        if self.command == "POST" and route.endswith("/v1/messages/count_tokens"):
            req.api = "anthropic"
            self._json({"input_tokens": 10})
        elif self.command == "POST" and route.endswith("/v1/messages"):
            req.api = "anthropic"
            self._anthropic(req)
        elif self.command == "POST" and ":streamGenerateContent" in route:
            req.api = "gemini"
            self._gemini(req, stream=query.get("alt") == ["sse"])
        elif self.command == "POST" and ":generateContent" in route:
            req.api = "gemini"
            self._gemini(req, stream=False)
        elif self.command == "POST" and ":countTokens" in route:
            req.api = "gemini"
            self._json({"totalTokens": 10})
        elif self.command == "GET" and route.rstrip("/").endswith("/v1beta/models"):
            req.api = "gemini"
            self._json({"models": []})
        elif self.command == "POST" and route.endswith("/responses"):
            req.api = "openai"
            self._openai(req)
        elif self.command == "GET" and route.rstrip("/").endswith("/models"):
            req.api = "openai"
            self._json({"object": "list", "data": []})
        elif self.command == "HEAD":
            self._send(200, "application/json", b"")
        else:
            self._json({}, status=404 if self.command != "GET" else 200)

    # --- transport ------------------------------------------------------------------------------
    def _send(self, status: int, content_type: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a client that gave up
                self.wfile.write(data)

    def _json(self, obj: Any, status: int = 200) -> None:
        self._send(status, "application/json", json.dumps(obj).encode())

    def _sse(self, events: list[tuple[str | None, Any]]) -> None:
        chunks = []
        for event, data in events:
            head = f"event: {event}\n" if event else ""
            chunks.append(f"{head}data: {json.dumps(data)}\n\n")
        self._send(200, "text/event-stream", "".join(chunks).encode())

    def _script_turn(self, req: Request, body: dict[str, Any], earlier: Callable[[], int],
                     side: str | None = None) -> Turn:
        """The script's turn for a request that offers tools (`earlier()`: how many turns of the
        model's that called tools the conversation holds); a request without tools is a side request,
        answered with `side` or the model's `side_text`."""
        if not body.get("tools"):
            req.kind = "side"
            return say(self.owner.side_text if side is None else side)
        req.kind = "main"
        req.turn = earlier()
        return self.owner._turn(req.turn)

    # --- Anthropic Messages ---------------------------------------------------------------------
    def _anthropic(self, req: Request) -> None:
        body = req.body if isinstance(req.body, dict) else {}
        model = str(body.get("model", "claude"))
        turn = self._script_turn(req, body, lambda: sum(
            1 for m in body.get("messages") or [] if m.get("role") == "assistant" and _has_block(m, "tool_use")))
        content: list[dict[str, Any]] = []
        if turn.text:
            content.append({"type": "text", "text": turn.text})
        for c in turn.calls:
            assert c.raw is None, f"the Messages API has no freeform tools ({c.name})"
            content.append({"type": "tool_use", "id": self.owner._id("toolu_"), "name": c.name, "input": c.input})
        stop = "tool_use" if turn.calls else "end_turn"
        usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        message = {"id": self.owner._id("msg_"), "type": "message", "role": "assistant", "model": model,
                   "content": content, "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if not body.get("stream"):
            self._json(message)
            return
        events: list[tuple[str | None, Any]] = [
            ("message_start", {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}})]
        for index, block in enumerate(content):
            if block["type"] == "text":
                start = {"type": "text", "text": ""}
                delta = {"type": "text_delta", "text": block["text"]}
            else:
                start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events += [
                ("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}),
                ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
                ("content_block_stop", {"type": "content_block_stop", "index": index}),
            ]
        events += [
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        self._sse(events)

    # --- Gemini generateContent -----------------------------------------------------------------
    def _gemini(self, req: Request, *, stream: bool) -> None:
        body = req.body if isinstance(req.body, dict) else {}
        config = body.get("generationConfig") or {}
        side = None
        if config.get("responseMimeType") == "application/json":
            # Gemini CLI's own checks (the model router's complexity score, the next-speaker and
            # loop checks) ask for JSON of a schema: an answer that does not parse is retried
            # with back-off for a minute and more
            schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
            side = json.dumps(_from_schema(schema, self.owner.side_text))
        turn = self._script_turn(req, body, lambda: sum(
            1 for c in body.get("contents") or []
            if c.get("role") == "model" and any("functionCall" in p for p in c.get("parts") or [])), side)
        parts: list[dict[str, Any]] = []
        if turn.text:
            parts.append({"text": turn.text})
        for c in turn.calls:
            parts.append({"functionCall": {"name": c.name, "args": c.input}})
        answer = {
            "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
            "modelVersion": urllib.parse.unquote(req.route.rsplit("/", 1)[-1].split(":", 1)[0]),
        }
        if stream:
            self._sse([(None, answer)])
        else:
            self._json(answer)

    # --- OpenAI Responses -----------------------------------------------------------------------
    def _openai(self, req: Request) -> None:
        body = req.body if isinstance(req.body, dict) else {}
        items = body.get("input") if isinstance(body.get("input"), list) else []
        # the model's earlier turns that called tools: each is one or more call items in a row
        turn = self._script_turn(req, body, lambda: sum(
            1 for prev, item in itertools.pairwise([{}, *items]) if _is_openai_call(item) and not _is_openai_call(prev)))
        output: list[dict[str, Any]] = []
        if turn.text:
            output.append({"type": "message", "id": self.owner._id("msg_"), "role": "assistant", "status": "completed",
                           "content": [{"type": "output_text", "text": turn.text, "annotations": []}]})
        for c in turn.calls:
            call_id = self.owner._id("call_")
            if c.raw is not None:
                # a freeform (custom) tool such as Codex's apply_patch: its input is the raw text
                output.append({"type": "custom_tool_call", "id": self.owner._id("ctc_"), "call_id": call_id,
                               "name": c.name, "input": c.raw, "status": "completed"})
            else:
                output.append({"type": "function_call", "id": self.owner._id("fc_"), "call_id": call_id,
                               "name": c.name, "arguments": json.dumps(c.input), "status": "completed"})
        response_id = self.owner._id("resp_")
        model = str(body.get("model", "gpt"))
        base = {"id": response_id, "object": "response", "model": model, "created_at": 0}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        done = {**base, "status": "completed", "output": output, "usage": usage}
        if not body.get("stream"):
            self._json(done)
            return
        events: list[tuple[str | None, Any]] = [
            ("response.created", {"type": "response.created", "response": {**base, "status": "in_progress",
                                                                           "output": []}})]
        for index, item in enumerate(output):
            events += [
                ("response.output_item.added", {"type": "response.output_item.added", "output_index": index,
                                                "item": item}),
                ("response.output_item.done", {"type": "response.output_item.done", "output_index": index,
                                               "item": item}),
            ]
        events.append(("response.completed", {"type": "response.completed", "response": done}))
        self._sse(events)


def _from_schema(schema: dict[str, Any], text: str) -> Any:
    """The smallest value of a JSON schema (Gemini's upper-case types or JSON Schema's): every
    required property, the first of an enum, the minimum of a number, `text` for a string."""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        props = schema.get("properties") or {}
        keys = schema.get("required") or list(props)
        return {key: _from_schema(props.get(key) or {}, text) for key in keys}
    if kind == "array":
        return []
    if kind in {"integer", "number"}:
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    return text


def _after_last(messages: list[Any], role: str) -> list[dict[str, Any]]:
    """The messages after the last one of `role`."""
    tail: list[dict[str, Any]] = []
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") == role:
            break
        tail.insert(0, message)
    return tail


def _has_block(message: dict[str, Any], kind: str) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == kind for b in content)


def _is_openai_call(item: Any) -> bool:
    return isinstance(item, dict) and item.get("type") in {"function_call", "custom_tool_call", "local_shell_call"}


@contextlib.contextmanager
def scripted_model(script: Sequence[Turn], side_text: str = "ok") -> Iterator[ScriptedModel]:
    """`with scripted_model([...]) as model:` the server, started and stopped."""
    with ScriptedModel(script, side_text) as model:
        yield model
