"""The LLM port over the Anthropic Messages API, with prompt caching of the stable system blocks."""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

import anthropic
from anthropic.types import Message

from bot.errors import ConfigError, LLMBadOutput
from bot.llm.port import (
    ChatMessage,
    Completion,
    CompletionRequest,
    Image,
    OnText,
    SystemBlock,
    ToolCall,
    ToolSpec,
    Usage,
)
from bot.llm.retries import SDKChat, Sleep, schema_instruction

log = logging.getLogger(__name__)


CACHE_POINT = {"type": "ephemeral"}


class AnthropicChat(SDKChat[anthropic.AsyncAnthropic]):
    """A Claude model behind the Anthropic Messages API."""

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
        if not api_key:
            raise ConfigError("The anthropic provider needs an API key; set one for the LLM.")
        super().__init__(anthropic, lambda: anthropic.AsyncAnthropic(base_url=base_url, api_key=api_key,
                                                                     timeout=timeout, max_retries=0),
                         model, api_key, timeout, attempts, sleep)

    async def complete(self, ask: CompletionRequest) -> Completion:
        """Answer the conversation; with json_schema the system prompt asks for that JSON; with on_text, stream."""
        messages, system, tools, json_schema, max_tokens, on_text = (
            ask.messages, ask.system, ask.tools, ask.json_schema, ask.max_tokens, ask.on_text)
        request: dict[str, Any] = {
            "model": self.model,
            "messages": messages_to_wire(messages),
            "max_tokens": max_tokens,
        }
        system_blocks = system_to_wire(system, json_schema)
        if system_blocks:
            request["system"] = system_blocks
        if tools:
            request["tools"] = [tool_to_wire(t) for t in tools]
        if on_text is not None and json_schema is None:
            return completion_from(await self._call(lambda: self._stream(request, on_text)))
        response: Message = await self._call(lambda: self._client.messages.create(**request))
        return completion_from(response)

    async def _stream(self, request: dict[str, Any], on_text: OnText) -> Message:
        """Stream one message, forwarding the text so far until a tool call begins."""
        text, tool_started = "", False
        async with self._client.messages.stream(**request) as stream:
            async for event in stream:
                if event.type == "content_block_start" and event.content_block.type == "tool_use":
                    tool_started = True
                elif event.type == "text" and not tool_started:
                    text += event.text
                    await on_text(text)
            message: Message = await stream.get_final_message()
        return message


def system_to_wire(blocks: Sequence[SystemBlock], json_schema: dict[str, Any] | None) -> list[dict[str, Any]]:
    """System text blocks: stable ones first with a cache point on the last of them, then volatile ones."""
    stable: list[dict[str, Any]] = [{"type": "text", "text": b.text} for b in blocks if b.stable and b.text]
    if stable:
        stable[-1]["cache_control"] = dict(CACHE_POINT)
    volatile = [{"type": "text", "text": b.text} for b in blocks if not b.stable and b.text]
    if json_schema is not None:
        # Anthropic has no response_format; the caller validates the reply with Completion.json().
        volatile.append({"type": "text", "text": schema_instruction(json_schema)})
    return stable + volatile


def messages_to_wire(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """ChatMessages as Anthropic messages; consecutive tool results share one user message."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            result = {"type": "tool_result", "tool_use_id": message.tool_call_id, "content": message.content}
            if wire and _holds_tool_results(wire[-1]):
                wire[-1]["content"].append(result)
            else:
                wire.append({"role": "user", "content": [result]})
        elif message.role == "assistant" and message.tool_calls:
            text = [{"type": "text", "text": message.content}] if message.content else []
            uses = [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in message.tool_calls]
            wire.append({"role": "assistant", "content": text + uses})
        elif message.images:  # image blocks first, then the words (as Anthropic advises)
            blocks = [image_block(image) for image in message.images]
            text = [{"type": "text", "text": message.content}] if message.content else []
            wire.append({"role": message.role, "content": blocks + text})
        else:
            wire.append({"role": message.role, "content": message.content})
    return wire


def image_block(image: Image) -> dict[str, Any]:
    """A picture as an Anthropic base64 image block."""
    return {"type": "image", "source": {"type": "base64", "media_type": image.mime, "data": image.base64()}}


def _holds_tool_results(message: dict[str, Any]) -> bool:
    """Whether a wire message is a user message made of tool_result blocks."""
    content = message["content"]
    return message["role"] == "user" and isinstance(content, list) and content[-1]["type"] == "tool_result"


def tool_to_wire(tool: ToolSpec) -> dict[str, Any]:
    """One ToolSpec as an Anthropic tool."""
    return {"name": tool.name, "description": tool.description, "input_schema": tool.parameters}


def completion_from(response: Message) -> Completion:
    """Translate an Anthropic message into a Completion."""
    text = "".join(block.text for block in response.content if block.type == "text")
    calls = tuple(
        ToolCall(id=block.id, name=block.name, arguments=_tool_input(block.input))
        for block in response.content
        if block.type == "tool_use"
    )
    usage = response.usage
    tokens = Usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_input_tokens or 0,
        cache_write_tokens=usage.cache_creation_input_tokens or 0,
    )
    return Completion(text=text, tool_calls=calls, usage=tokens, model=response.model)


def _tool_input(value: object) -> dict[str, Any]:
    """A tool_use input as a dict, or LLMBadOutput."""
    if not isinstance(value, dict):
        log.debug("tool input that is not an object: %r", value)
        raise LLMBadOutput(f"tool input must be a JSON object, got {type(value).__name__}")
    return value
