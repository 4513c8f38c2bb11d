"""The LLM port over any OpenAI-compatible Chat Completions API (OpenAI, Ollama, DeepSeek, OpenRouter, vLLM)."""
from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from bot.errors import LLMBadOutput, LLMRejected
from bot.llm.port import (
    ChatMessage,
    Completion,
    OnText,
    SystemBlock,
    ToolCall,
    ToolSpec,
    Usage,
    parse_json,
)
from bot.llm.retries import SDKChat, Sleep, schema_instruction

log = logging.getLogger(__name__)

# Local servers (Ollama, vLLM) need no key, but the SDK refuses to start without one.
NO_KEY = "no-key"


class OpenAIChat(SDKChat[openai.AsyncOpenAI]):
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
        super().__init__(openai, lambda: openai.AsyncOpenAI(base_url=base_url, api_key=api_key or NO_KEY,
                                                            timeout=timeout, max_retries=0),
                         model, api_key, timeout, attempts, sleep)

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        system: Sequence[SystemBlock] = (),
        tools: Sequence[ToolSpec] | None = None,
        json_schema: dict[str, Any] | None = None,
        max_tokens: int = 1024,
        on_text: OnText | None = None,
    ) -> Completion:
        """Answer the conversation; with json_schema, ask for a JSON document of that schema; with on_text, stream."""
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

    async def _create(self, request: dict[str, Any]) -> ChatCompletion:
        """Send one chat completion request with retries."""
        response: ChatCompletion = await self._call(lambda: self._client.chat.completions.create(**request))
        return response

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
        stream = await self._client.chat.completions.create(**request)
        try:
            async for chunk in stream:
                if reply.add(chunk) and not reply.calls:
                    await on_text(reply.text)
        finally:
            await stream.close()
        if not reply.started:
            raise LLMBadOutput(f"{self._where} streamed no choice")
        return reply.completion(self.model)

    def _completion(self, response: ChatCompletion) -> Completion:
        """Translate the SDK response into a Completion."""
        if not response.choices:
            raise LLMBadOutput(f"{self._where} answered without any choice")
        message = response.choices[0].message
        calls = tuple(
            ToolCall(id=c.id, name=c.function.name, arguments=tool_arguments(c.function.arguments))
            for c in message.tool_calls or ()
            if c.type == "function"
        )
        return Completion(
            text=message.content or "", tool_calls=calls, usage=usage_from(response), model=response.model or self.model
        )


@dataclass
class StreamedReply:
    """A streamed chat completion put back together: text, tool calls merged from their deltas, usage."""

    text: str = ""
    calls: dict[int, dict[str, str]] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    started: bool = False

    def add(self, chunk: ChatCompletionChunk) -> bool:
        """Merge one chunk; True when it added text."""
        self.model = chunk.model or self.model
        if chunk.usage is not None:
            details = chunk.usage.prompt_tokens_details
            cached = (details.cached_tokens or 0) if details is not None else 0
            self.usage = Usage(chunk.usage.prompt_tokens, chunk.usage.completion_tokens, cached)
        if not chunk.choices:
            return False
        self.started = True
        delta = chunk.choices[0].delta
        for part in delta.tool_calls or ():
            call = self.calls.setdefault(part.index, {"id": "", "name": "", "arguments": ""})
            call["id"] = part.id or call["id"]
            if part.function is not None:
                call["name"] += part.function.name or ""  # sent whole in the first delta by every server seen
                call["arguments"] += part.function.arguments or ""
        if delta.content:
            self.text += delta.content
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
        raise LLMBadOutput(f"tool arguments must be a JSON object, got {raw[:120]!r}")
    return arguments


def usage_from(response: ChatCompletion) -> Usage:
    """Token usage of a response; servers that report none give zeros."""
    usage = response.usage
    if usage is None:
        return Usage()
    details = usage.prompt_tokens_details
    cached = (details.cached_tokens or 0) if details is not None else 0
    return Usage(input_tokens=usage.prompt_tokens, output_tokens=usage.completion_tokens, cache_read_tokens=cached)


def _rejects_response_format(exc: LLMRejected) -> bool:
    """Whether a rejection was a 400 complaining about response_format (older Ollama and friends)."""
    cause = exc.__cause__
    return isinstance(cause, openai.BadRequestError) and "response_format" in str(cause)


