"""The background model, metered: every call's tokens count against the daily budget for background work;
any model counted for the metrics (calls, tokens, prompt-cache hits per purpose)."""
from __future__ import annotations

import time
from collections.abc import Callable

from bot.errors import LLMError
from bot.llm.port import LLM, Completion, CompletionRequest
from bot.metrics import Metrics
from scheduler.budget import TokenBudget


class PassingOn:
    """An LLM in front of another: it passes the check and the closing on (the subclass adds to `complete`)."""

    def __init__(self, llm: LLM) -> None:
        self.llm = llm
        self.model = llm.model

    async def ping(self) -> None:
        """Check the model answers (when the provider can)."""
        ping = getattr(self.llm, "ping", None)
        if ping is not None:
            await ping()

    async def aclose(self) -> None:
        """Close the model's client."""
        close = getattr(self.llm, "aclose", None)
        if close is not None:
            await close()


class MeteredLLM(PassingOn):
    """An LLM that passes every call on and counts the tokens the provider reports."""

    def __init__(self, llm: LLM, budget: TokenBudget, clock: Callable[[], float] = time.time) -> None:
        super().__init__(llm)
        self.budget = budget
        self.clock = clock

    async def complete(self, request: CompletionRequest) -> Completion:
        """Ask the model, then count the input and output tokens it reports (a failed call counts nothing)."""
        completion = await self.llm.complete(request)
        await self.budget.record(self.clock(), completion.usage.input_tokens, completion.usage.output_tokens)
        return completion



class CountedLLM(PassingOn):
    """An LLM that passes every call on and counts it, its tokens and its prompt-cache hits for the metrics."""

    def __init__(self, llm: LLM, metrics: Metrics, purpose: str) -> None:
        super().__init__(llm)
        self.metrics = metrics
        self.purpose = purpose  # 'chat' or 'background'

    async def complete(self, request: CompletionRequest) -> Completion:
        """Ask the model and count the call (a failed one as failed, and as an error of kind 'model.<purpose>')."""
        try:
            completion = await self.llm.complete(request)
        except LLMError:
            self.metrics.model_call(self.purpose, failed=True)
            self.metrics.error(f"model.{self.purpose}")
            raise
        usage = completion.usage
        self.metrics.model_call(self.purpose, input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
                                cache_read_tokens=usage.cache_read_tokens)
        return completion
