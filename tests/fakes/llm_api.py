"""Local fake OpenAI Chat Completions + Anthropic Messages HTTP API for tests."""

from __future__ import annotations

import asyncio
import base64
import inspect
import itertools
import json
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Self

from aiohttp import web

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    529: "overloaded_error",
}


@dataclass
class Reply:
    """One scripted reply: text and/or tool calls or an HTTP error, maybe delayed."""

    text: str = ""
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    status: int = 200
    body: dict[str, Any] | str | None = None
    retry_after: float | None = None
    delay: float = 0.0
    piece: int = 8  # characters per streamed delta
    pause: float = 0.0  # seconds a stream waits after every hundredth delta


Responder = Callable[[dict[str, Any]], "str | Reply | Awaitable[str | Reply]"]


class RecordedRequest(NamedTuple):
    """A request received by the fake: (api, path, lower-case headers, json body)."""

    api: str
    path: str
    headers: dict[str, str]
    json: dict[str, Any]

    @property
    def prompt_text(self) -> str:
        """All system/message text of the request joined by newlines."""
        return prompt_text(self.json)


def _block_text(content: Any) -> list[str]:
    """Text pieces of a message content (string or list of OpenAI/Anthropic blocks)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [content]
    out: list[str] = []
    for block in content:
        if isinstance(block, str):
            out.append(block)
        elif block.get("type") == "text":
            out.append(block.get("text", ""))
        elif block.get("type") == "tool_result":
            out.extend(_block_text(block.get("content")))
        elif block.get("type") == "tool_use":
            out.append(json.dumps(block.get("input", {})))
    return out


def prompt_text(body: dict[str, Any]) -> str:
    """Concatenated system and message text of an OpenAI or Anthropic request body."""
    parts = _block_text(body.get("system"))
    for msg in body.get("messages", []):
        parts.extend(_block_text(msg.get("content")))
        for call in msg.get("tool_calls") or []:
            parts.append(call.get("function", {}).get("arguments", ""))
    return "\n".join(parts)


def images_in(body: dict[str, Any]) -> list[tuple[str, bytes]]:
    """The pictures of a request as (mime, bytes): OpenAI image parts (data: URLs) and Anthropic base64 image blocks.

    A block of the other provider's shape, or a picture that is no base64, fails the test here.
    """
    found: list[tuple[str, bytes]] = []
    for message in body.get("messages", []):
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "image_url":
                head, _, data = block["image_url"]["url"].partition(",")
                assert head.startswith("data:") and head.endswith(";base64"), head
                found.append((head[5:].removesuffix(";base64"), base64.b64decode(data, validate=True)))
            elif block.get("type") == "image":
                source = block["source"]
                assert source["type"] == "base64", source
                found.append((source["media_type"], base64.b64decode(source["data"], validate=True)))
    return found


def count_tokens(text: str) -> int:
    """Rough token count used for usage numbers: len(text) // 4."""
    return len(text) // 4


class FakeLLM:
    """Async context manager serving a scripted fake LLM on 127.0.0.1 at a free port."""

    def __init__(self, models: Sequence[str] = ("fake-model",)) -> None:
        """Create the fake; `models` is what GET /v1/models lists."""
        self.models = list(models)
        self.queue: deque[Reply] = deque()
        self.requests: list[RecordedRequest] = []
        self.streams_ended: list[float] = []  # time.monotonic() when each streamed answer was written whole
        self.responder: Responder = lambda body: "ok"
        self.port = 0
        self._ids = itertools.count(1)
        self._runner: web.AppRunner | None = None

    @property
    def openai_base_url(self) -> str:
        """Base URL for openai.AsyncOpenAI(base_url=...)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """Base URL for anthropic.AsyncAnthropic(base_url=...)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def last_request(self) -> RecordedRequest:
        """The most recent recorded request (IndexError if none)."""
        return self.requests[-1]

    def enqueue(self, text: str) -> None:
        """Queue a plain text reply."""
        self.queue.append(Reply(text=text))

    def enqueue_tool_call(self, name: str, arguments: dict[str, Any]) -> None:
        """Queue a reply with a single tool call."""
        self.enqueue_tool_calls([(name, arguments)])

    def enqueue_tool_calls(
        self, calls: Sequence[tuple[str, dict[str, Any]]], text: str = ""
    ) -> None:
        """Queue a reply with several tool calls (and optional leading text)."""
        self.queue.append(Reply(text=text, tool_calls=list(calls)))

    def enqueue_error(
        self,
        status: int,
        body: dict[str, Any] | str | None = None,
        retry_after: float | None = None,
    ) -> None:
        """Queue an HTTP error; a `body` dict is sent verbatim, a str is the message."""
        self.queue.append(Reply(status=status, body=body, retry_after=retry_after))

    def enqueue_delay(self, seconds: float, then: str | Reply = "ok") -> None:
        """Queue a reply (text or Reply) that is sent only after sleeping `seconds`."""
        reply = Reply(text=then) if isinstance(then, str) else then
        reply.delay = seconds
        self.queue.append(reply)

    async def __aenter__(self) -> Self:
        """Start the server on a free port."""
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._openai)
        app.router.add_post("/v1/messages", self._anthropic)
        app.router.add_get("/v1/models", self._models)
        self._runner = web.AppRunner(
            app, handler_cancellation=True, shutdown_timeout=0.5
        )
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.port = self._runner.addresses[0][1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Stop the server."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _next_reply(
        self, api: str, request: web.Request
    ) -> tuple[dict[str, Any], Reply]:
        """Record the request and pop the scripted reply (or ask the responder)."""
        body = await request.json()
        headers = {k.lower(): v for k, v in request.headers.items()}
        self.requests.append(RecordedRequest(api, request.path, headers, body))
        answer = self.queue.popleft() if self.queue else self.responder(body)
        if inspect.isawaitable(answer):
            answer = await answer
        reply = Reply(text=answer) if isinstance(answer, str) else answer
        if reply.delay:
            await asyncio.sleep(reply.delay)
        return body, reply

    def _error(self, api: str, reply: Reply) -> web.Response:
        """API-shaped error response for a scripted error reply."""
        kind = _ERROR_TYPES.get(reply.status, "api_error")
        payload = reply.body
        if not isinstance(payload, dict):
            err = {"type": kind, "message": payload or f"fake {kind} {reply.status}"}
            payload = {"type": "error", "error": err}
            if api == "openai":
                payload = {"error": {**err, "param": None, "code": kind}}
        retry = reply.retry_after
        headers = {} if retry is None else {"retry-after": str(retry)}
        return web.json_response(payload, status=reply.status, headers=headers)

    async def _models(self, request: web.Request) -> web.Response:
        """Model list readable by both SDKs."""
        data = [
            {"id": m, "object": "model", "created": 0, "owned_by": "fake",
             "type": "model", "display_name": m, "created_at": "2024-01-01T00:00:00Z"}
            for m in self.models
        ]  # fmt: skip
        ids: list[str | None] = [*self.models] or [None]
        page = {"has_more": False, "first_id": ids[0], "last_id": ids[-1]}
        return web.json_response({"object": "list", "data": data, **page})

    async def _sse(
        self, request: web.Request, events: list[tuple[str | None, Any]], pause: float = 0.0
    ) -> web.StreamResponse:
        """Send (event name, data) pairs as server-sent events, waiting `pause` seconds after every hundredth."""
        resp = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await resp.prepare(request)
        for n, (name, data) in enumerate(events, 1):
            line = data if isinstance(data, str) else json.dumps(data)
            head = f"event: {name}\n" if name else ""
            await resp.write(f"{head}data: {line}\n\n".encode())
            if pause and n % 100 == 0:
                await asyncio.sleep(pause)
        await resp.write_eof()
        self.streams_ended.append(time.monotonic())
        return resp

    async def _openai(self, request: web.Request) -> web.StreamResponse:
        """POST /v1/chat/completions."""
        body, reply = await self._next_reply("openai", request)
        if reply.status >= 400:
            return self._error("openai", reply)
        prompt, completion = count_tokens(prompt_text(body)), count_tokens(reply.text)
        usage = {"prompt_tokens": prompt, "completion_tokens": completion,
                 "total_tokens": prompt + completion}  # fmt: skip
        calls = [
            {"id": f"call_{next(self._ids)}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(args)}}
            for name, args in reply.tool_calls
        ]  # fmt: skip
        finish = "tool_calls" if calls else "stop"
        base = {"id": f"chatcmpl-{next(self._ids)}", "created": int(time.time()),
                "model": body.get("model", "")}  # fmt: skip
        if not body.get("stream"):
            message = {"role": "assistant", "content": reply.text or None,
                       "tool_calls": calls or None}  # fmt: skip
            choice = {"index": 0, "message": message, "finish_reason": finish}
            result = {**base, "object": "chat.completion", "choices": [choice]}
            return web.json_response({**result, "usage": usage})
        chunk = {**base, "object": "chat.completion.chunk"}

        def delta(d: dict[str, Any], fin: str | None = None) -> tuple[None, Any]:
            choice = {"index": 0, "delta": d, "finish_reason": fin}
            return None, {**chunk, "choices": [choice]}

        events = [delta({"role": "assistant", "content": ""})]
        events += [delta({"content": piece}) for piece in _pieces(reply.text, reply.piece)]
        events += [
            delta({"tool_calls": [{**c, "index": i}]}) for i, c in enumerate(calls)
        ]
        events.append(delta({}, finish))
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append((None, {**chunk, "choices": [], "usage": usage}))
        return await self._sse(request, [*events, (None, "[DONE]")], reply.pause)

    async def _anthropic(self, request: web.Request) -> web.StreamResponse:
        """POST /v1/messages."""
        body, reply = await self._next_reply("anthropic", request)
        if reply.status >= 400:
            return self._error("anthropic", reply)
        content: list[dict[str, Any]] = []
        if reply.text or not reply.tool_calls:
            content.append({"type": "text", "text": reply.text})
        for name, args in reply.tool_calls:
            tool_id = f"toolu_{next(self._ids)}"
            content.append(
                {"type": "tool_use", "id": tool_id, "name": name, "input": args}
            )
        usage = {"input_tokens": count_tokens(prompt_text(body)),
                 "output_tokens": count_tokens(reply.text),
                 "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}  # fmt: skip
        stop = "tool_use" if reply.tool_calls else "end_turn"
        message = {"id": f"msg_{next(self._ids)}", "type": "message",
                   "role": "assistant", "model": body.get("model", ""),
                   "content": content, "stop_reason": stop, "stop_sequence": None,
                   "usage": usage}  # fmt: skip
        if not body.get("stream"):
            return web.json_response(message)

        def ev(kind: str, **data: Any) -> tuple[str, dict[str, Any]]:
            return kind, {"type": kind, **data}

        start = {**message, "content": [], "stop_reason": None}
        events = [
            ev(
                "message_start",
                message={**start, "usage": {**usage, "output_tokens": 0}},
            )
        ]
        for i, block in enumerate(content):
            if block["type"] == "text":
                first = {**block, "text": ""}
                deltas = [
                    {"type": "text_delta", "text": p} for p in _pieces(block["text"])
                ]
            else:
                first = {**block, "input": {}}
                deltas = [
                    {
                        "type": "input_json_delta",
                        "partial_json": json.dumps(block["input"]),
                    }
                ]
            events.append(ev("content_block_start", index=i, content_block=first))
            events += [ev("content_block_delta", index=i, delta=d) for d in deltas]
            events.append(ev("content_block_stop", index=i))
        end = {"stop_reason": stop, "stop_sequence": None}
        out = {"output_tokens": usage["output_tokens"]}
        events += [ev("message_delta", delta=end, usage=out), ev("message_stop")]
        return await self._sse(request, list(events))


def _pieces(text: str, size: int = 8) -> list[str]:
    """Split text into small chunks for streaming deltas."""
    return [text[i : i + size] for i in range(0, len(text), size)]
