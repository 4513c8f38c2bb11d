"""A scripted LLM that implements the port: replies are queued, requests are recorded."""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from bot.errors import LLMError
from bot.llm import ChatMessage, Completion, SystemBlock, ToolCall, ToolSpec, Usage


@dataclass
class Call:
    """One request the engine made."""

    messages: list[ChatMessage]
    system: list[SystemBlock]
    tools: list[ToolSpec] | None
    json_schema: dict[str, Any] | None

    @property
    def prompt(self) -> str:
        """All text of the request, for assertions."""
        return "\n".join([b.text for b in self.system] + [m.content for m in self.messages])


class ScriptedLLM:
    """Answers from a queue; when empty, from `responder` (default: a fixed text)."""

    def __init__(self, model: str = "scripted") -> None:
        self.model = model
        self.queue: deque[Completion | LLMError] = deque()
        self.calls: list[Call] = []
        self.responder: Callable[[Call], Completion | str] = lambda call: "ok"

    def enqueue(self, text: str = "", tool_calls: Sequence[ToolCall] = ()) -> None:
        """Queue a reply."""
        self.queue.append(Completion(text, tuple(tool_calls), Usage(10, 10), self.model))

    def enqueue_error(self, error: LLMError) -> None:
        """Queue a failure."""
        self.queue.append(error)

    async def complete(
        self, messages: Sequence[ChatMessage], *, system: Sequence[SystemBlock] = (),
        tools: Sequence[ToolSpec] | None = None, json_schema: dict[str, Any] | None = None, max_tokens: int = 1024,
    ) -> Completion:
        """Record the call and answer from the queue."""
        call = Call(list(messages), list(system), list(tools) if tools else None, json_schema)
        self.calls.append(call)
        item = self.queue.popleft() if self.queue else self.responder(call)
        if isinstance(item, LLMError):
            raise item
        return item if isinstance(item, Completion) else Completion(item, (), Usage(10, 10), self.model)
