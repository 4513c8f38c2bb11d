"""The LLM port over any OpenAI-compatible Chat Completions API (OpenAI, Ollama, DeepSeek, OpenRouter, vLLM)."""
from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.errors import LLMBadOutput, LLMRejected
from bot.llm import openai_wire
from bot.llm.port import (
    ChatMessage,
    Completion,
    CompletionRequest,
    OnText,
    SystemBlock,
    ToolCall,
    ToolSpec,
    Usage,
    parse_json,
)
from bot.llm.retries import SDKChat, Sleep, schema_instruction

log = logging.getLogger(__name__)

# Local servers (Ollama, vLLM) need no key; some proxies refuse a request without any Authorization header.
NO_KEY = "no-key"


class OpenAIChat(SDKChat[openai_wire.Client]):
    """A chat model behind an OpenAI-compatible endpoint."""

    def __init__(
        self,
        model: str,
        base_url: str | None,
        api_key: str | None,
        *,
        timeout: float = 60.0,
        attempts: int = 4,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        """Create the client; `attempts` counts the first try, `sleep` lets tests skip real waiting."""
        super().__init__(openai_wire, lambda: openai_wire.Client(base_url, api_key or NO_KEY, timeout),
                         model, api_key, timeout, attempts, sleep)

    async def complete(self, ask: CompletionRequest) -> Completion:
        """Answer the conversation; with json_schema, ask for a JSON document of that schema; with on_text, stream."""
        messages, system, tools, json_schema, max_tokens, on_text = (
            ask.messages, ask.system, ask.tools, ask.json_schema, ask.max_tokens, ask.on_text)
        request = self._request(messages, system_text(system), tools, max_tokens)
        if json_schema is None and on_text is not None:
            return await self._stream(request, on_text)
        if json_schema is None:
            return self._completion(await self._create(request))
        schema_format = {"type": "json_schema", "json_schema": {"name": "reply", "schema": json_schema}}
        try:
            return self._completion(await self._create({**request, "response_format": schema_format}))
        except LLMRejected as exc:
            if not _rejects_response_format(exc):
                raise
            log.warning("%s does not support json_schema output; falling back to json_object", self._where)
        prompt = "\n\n".join(p for p in (system_text(system), schema_instruction(json_schema)) if p)
        fallback = self._request(messages, prompt, tools, max_tokens)
        return self._completion(await self._create({**fallback, "response_format": {"type": "json_object"}}))

    def _request(
        self, messages: Sequence[ChatMessage], system: str, tools: Sequence[ToolSpec] | None, max_tokens: int
    ) -> dict[str, Any]:
        """The keyword arguments of one chat.completions.create call."""
        wire = [{"role": "system", "content": system}] if system else []
        wire += [message_to_wire(m) for m in messages]
        request: dict[str, Any] = {"model": self.model, "messages": wire, "max_tokens": max_tokens}
        if tools:
            request["tools"] = [tool_to_wire(t) for t in tools]
        return request

    async def _create(self, request: dict[str, Any]) -> Any:
        """Send one chat completion request with retries; the answer's JSON."""
        return await self._call(lambda: self._client.post("chat/completions", request))

    async def _stream(self, request: dict[str, Any], on_text: OnText) -> Completion:
        """Stream one chat completion, forwarding the text so far; a broken stream is retried from the start."""
        streamed = {**request, "stream": True, "stream_options": {"include_usage": True}}
        try:
            return await self._call(lambda: self._stream_once(streamed, on_text))
        except LLMRejected as exc:
            if "stream_options" not in str(exc.__cause__):
                raise
            log.warning("%s does not accept stream_options; streaming without token usage", self._where)
        return await self._call(lambda: self._stream_once({**request, "stream": True}, on_text))

    async def _stream_once(self, request: dict[str, Any], on_text: OnText) -> Completion:
        """Read one streamed response to its end."""
        reply = StreamedReply()
        async with self._client.events("chat/completions", request) as chunks:
            async for chunk in chunks:
                if reply.add(chunk) and not reply.calls:
                    await on_text(reply.text)
        if not reply.started:
            raise LLMBadOutput(f"{self._where} streamed no choice")
        return reply.completion(self.model)

    def _completion(self, response: Any) -> Completion:
        """Translate the answer's JSON into a Completion; LLMBadOutput when it is not a chat completion."""
        choices = _field(response, "choices", list) or []
        message = _field(choices[0], "message", dict) if choices else None
        if message is None:
            log.debug("%s answered without any choice: %s", self._where, str(response)[:500])
            raise LLMBadOutput(f"{self._where} answered without any choice ({type(response).__name__})")
        calls = tuple(
            ToolCall(id=str(c.get("id") or f"call_{i}"), name=str(function.get("name") or ""),
                     arguments=tool_arguments(str(function.get("arguments") or "")))
            for i, c in enumerate(_field(message, "tool_calls", list) or ())
            if isinstance(c, dict) and c.get("type", "function") == "function"
            and isinstance(function := c.get("function"), dict)
        )
        return Completion(text=_field(message, "content", str) or "", tool_calls=calls, usage=usage_from(response),
                          model=_field(response, "model", str) or self.model)


@dataclass
class StreamedReply:
    """A streamed chat completion put back together: text, tool calls merged from their deltas, usage."""

    text: str = ""
    calls: dict[int, dict[str, str]] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    started: bool = False

    def add(self, chunk: dict[str, Any]) -> bool:
        """Merge one chunk (a `data:` event's JSON); True when it added text."""
        self.model = _field(chunk, "model", str) or self.model
        if _field(chunk, "usage", dict) is not None:
            self.usage = usage_from(chunk)
        choices = _field(chunk, "choices", list)
        if not choices:
            return False
        self.started = True
        delta = _field(choices[0], "delta", dict) or {}
        for part in _field(delta, "tool_calls", list) or ():
            if not isinstance(part, dict):
                continue
            call = self.calls.setdefault(_count(part.get("index")), {"id": "", "name": "", "arguments": ""})
            call["id"] = str(part.get("id") or call["id"])
            function = _field(part, "function", dict)
            if function is not None:
                call["name"] += str(function.get("name") or "")  # sent whole in the first delta by every server seen
                call["arguments"] += str(function.get("arguments") or "")
        content = _field(delta, "content", str)
        if content:
            self.text += content
            return True
        return False

    def completion(self, model: str) -> Completion:
        """The finished Completion; LLMBadOutput when a tool call's arguments are not a JSON object."""
        calls = tuple(
            ToolCall(id=c["id"] or f"call_{i}", name=c["name"], arguments=tool_arguments(c["arguments"]))
            for i, c in sorted(self.calls.items())
        )
        return Completion(text=self.text, tool_calls=calls, usage=self.usage, model=self.model or model)


def system_text(blocks: Sequence[SystemBlock]) -> str:
    """All system blocks as one text, stable blocks first so a provider-side prefix cache can hit."""
    ordered = [b for b in blocks if b.stable] + [b for b in blocks if not b.stable]
    return "\n\n".join(b.text for b in ordered if b.text)


def message_to_wire(message: ChatMessage) -> dict[str, Any]:
    """One ChatMessage as an OpenAI chat message."""
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        calls = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
            for c in message.tool_calls
        ]
        return {"role": "assistant", "content": message.content or None, "tool_calls": calls}
    if message.images:  # chat image parts, which Ollama's OpenAI-compatible API takes too
        text = [{"type": "text", "text": message.content}] if message.content else []
        parts = [{"type": "image_url", "image_url": {"url": image.data_url()}} for image in message.images]
        return {"role": message.role, "content": text + parts}
    return {"role": message.role, "content": message.content}


def tool_to_wire(tool: ToolSpec) -> dict[str, Any]:
    """One ToolSpec as an OpenAI function tool."""
    function = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    return {"type": "function", "function": function}


def tool_arguments(raw: str) -> dict[str, Any]:
    """The arguments of a tool call as a dict, or LLMBadOutput."""
    if not raw.strip():
        return {}  # some servers send "" for a tool without parameters
    arguments = parse_json(raw)
    if not isinstance(arguments, dict):
        log.debug("tool arguments that are not an object: %r", raw[:500])
        raise LLMBadOutput(f"tool arguments must be a JSON object, got {type(arguments).__name__}")
    return arguments


def usage_from(response: Any) -> Usage:
    """Token usage of a response (or of a stream's last chunk); servers that report none give zeros."""
    usage = _field(response, "usage", dict)
    if usage is None:
        return Usage()
    details = _field(usage, "prompt_tokens_details", dict) or {}
    return Usage(input_tokens=_count(usage.get("prompt_tokens")), output_tokens=_count(usage.get("completion_tokens")),
                 cache_read_tokens=_count(details.get("cached_tokens")))


def _field(obj: Any, name: str, kind: type[Any]) -> Any:
    """obj[name] when obj is a dict and the value is of `kind`, else None (a server's JSON is not trusted)."""
    value = obj.get(name) if isinstance(obj, dict) else None
    return value if isinstance(value, kind) else None


def _count(value: Any) -> int:
    """A token count; anything that is not a number counts 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _rejects_response_format(exc: LLMRejected) -> bool:
    """Whether a rejection was a 400 complaining about response_format (older Ollama and friends)."""
    cause = exc.__cause__
    rejected = isinstance(cause, openai_wire.APIStatusError) and cause.status_code == 400
    return rejected and "response_format" in str(cause)


