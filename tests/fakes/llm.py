"""A scripted LLM that implements the port: replies are queued, requests are recorded."""
from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bot.errors import LLMError
from bot.llm.port import ChatMessage, Completion, CompletionRequest, OnText, SystemBlock, ToolCall, ToolSpec, Usage


@dataclass
class Call:
    """One request the engine made."""

    messages: list[ChatMessage]
    system: list[SystemBlock]
    tools: list[ToolSpec] | None
    json_schema: dict[str, Any] | None
    streamed: bool = False

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
        self.chunks = 3  # a streamed reply arrives in this many pieces
        self.chunk_delay = 0.0  # seconds between the pieces

    def enqueue(self, text: str = "", tool_calls: Sequence[ToolCall] = ()) -> None:
        """Queue a reply."""
        self.queue.append(Completion(text, tuple(tool_calls), Usage(10, 10), self.model))

    def enqueue_error(self, error: LLMError) -> None:
        """Queue a failure."""
        self.queue.append(error)

    async def complete(self, request: CompletionRequest) -> Completion:
        """Record the call and answer from the queue; with on_text, a reply without tool calls is streamed."""
        messages, system, tools, on_text = request.messages, request.system, request.tools, request.on_text
        call = Call(list(messages), list(system), list(tools) if tools else None, request.json_schema,
                    on_text is not None)
        self.calls.append(call)
        item = self.queue.popleft() if self.queue else self.responder(call)
        if isinstance(item, LLMError):
            raise item
        completion = item if isinstance(item, Completion) else Completion(item, (), Usage(10, 10), self.model)
        if on_text is not None and not completion.tool_calls:
            await self._stream(completion.text, on_text)
        return completion

    async def _stream(self, text: str, on_text: OnText) -> None:
        """Hand the text to on_text in `chunks` growing prefixes, `chunk_delay` apart."""
        step = max(1, -(-len(text) // max(self.chunks, 1)))
        for end in range(step, len(text) + step, step):
            if self.chunk_delay:
                await asyncio.sleep(self.chunk_delay)
            await on_text(text[: min(end, len(text))])


class GatedLLM(ScriptedLLM):
    """A slow model: a call `held` picks waits at the gate (`waiting` is set meanwhile) until the test opens it."""

    def __init__(self, model: str = "gated", held: Callable[[Call], bool] = lambda call: True) -> None:
        super().__init__(model)
        self.held = held
        self.waiting, self.gate = asyncio.Event(), asyncio.Event()

    async def complete(self, request: CompletionRequest) -> Completion:
        """Wait at the gate when the call is one to hold, then answer as the scripted model does."""
        tools = list(request.tools) if request.tools else None
        if self.held(Call(list(request.messages), list(request.system), tools, request.json_schema)):
            self.waiting.set()
            await self.gate.wait()
        return await super().complete(request)


class StuckLLM:
    """A model that never answers: it says so on stdout (for a parent process killing this one mid-turn) and waits."""

    model = "stuck"

    async def complete(self, request: CompletionRequest) -> Completion:
        print("model called", flush=True)
        await asyncio.Event().wait()
        raise AssertionError("never reached")
