"""The LLM port: `complete(request)` with one CompletionRequest (messages, system, tools, a JSON schema, streaming)."""
from __future__ import annotations

import base64
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from bot.errors import LLMBadOutput

log = logging.getLogger(__name__)

Role = Literal["user", "assistant", "tool"]
# Receives the reply's text so far while the model writes (the whole text each time, not a delta).
OnText = Callable[[str], Awaitable[None]]


@dataclass(frozen=True)
class SystemBlock:
    """A part of the system prompt; `stable` blocks come first and may be cached by the provider."""

    text: str
    stable: bool = True


@dataclass(frozen=True)
class ToolCall:
    """The model asks to run a tool."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Image:
    """A picture that goes to the model with a user message: its bytes and their type."""

    data: bytes = field(repr=False)
    mime: str = "image/jpeg"  # image/jpeg, image/png, image/webp or image/gif (what every provider takes)

    def base64(self) -> str:
        """The bytes in base64, as both providers want them."""
        return base64.b64encode(self.data).decode("ascii")

    def data_url(self) -> str:
        """The picture as a data: URL (OpenAI's image parts)."""
        return f"data:{self.mime};base64,{self.base64()}"


@dataclass(frozen=True)
class ChatMessage:
    """One message of the conversation sent to the model."""

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None  # for role "tool": which call this answers
    images: tuple[Image, ...] = ()  # pictures sent with a user message (only in the turn they came in)


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call, with a JSON schema for its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class Usage:
    """Token counts as the provider reports them."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass(frozen=True)
class Completion:
    """What the model answered: text, tool calls, token usage."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    model: str = ""

    def json(self) -> Any:
        """The reply parsed as JSON (code fences tolerated), or LLMBadOutput."""
        return parse_json(self.text)


@dataclass(frozen=True)
class CompletionRequest:
    """One question to a model: the conversation, the system blocks, the tools it may call, a JSON schema its answer
    must follow, the most tokens it may write, and where a streamed answer goes while it grows."""

    messages: Sequence[ChatMessage]
    system: Sequence[SystemBlock] = ()
    tools: Sequence[ToolSpec] | None = None
    json_schema: dict[str, Any] | None = None
    max_tokens: int = 1024
    on_text: OnText | None = None


class LLM(Protocol):
    """A chat model behind some provider."""

    model: str

    async def complete(self, request: CompletionRequest) -> Completion:
        """Answer the request's conversation; with its json_schema, the text is a JSON document of that schema.

        With on_text, the reply is streamed: on_text gets the text written so far, again and again,
        until the model starts a tool call (its text is not forwarded after that). A retry after a
        broken stream starts the text from the beginning.
        """
        ...


def parse_json(text: str) -> Any:
    """Parse a model's JSON reply, tolerating a surrounding ```json fence; raise LLMBadOutput otherwise."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    try:
        return json.loads(body)
    except (json.JSONDecodeError, ValueError) as exc:
        # The answer may quote what the person wrote: its words go to DEBUG only, the error says how long it was.
        log.debug("the answer that is not JSON: %r", text[:500])
        raise LLMBadOutput(f"expected JSON, got {len(text)} characters of something else ({exc})") from exc


def backoff_delays(attempts: int, base: float = 0.5, cap: float = 8.0) -> list[float]:
    """Delays before each retry: exponential from base, capped."""
    return [min(cap, base * (2**i)) for i in range(max(attempts - 1, 0))]
