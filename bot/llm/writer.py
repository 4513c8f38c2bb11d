"""The scheduler's Writer port filled with the background model: instructions and material in, text out."""
from __future__ import annotations

from bot.llm.port import LLM, ChatMessage, CompletionRequest, SystemBlock


class LLMWriter:
    """The scheduler's Writer port on top of the background model."""

    def __init__(self, llm: LLM) -> None:
        self.llm = llm

    async def __call__(self, instructions: str, material: str, *, max_tokens: int = 800) -> str:
        """Ask the model; errors propagate to the job, which then stores and sends nothing."""
        completion = await self.llm.complete(CompletionRequest(
            [ChatMessage("user", material)], system=[SystemBlock(instructions)], max_tokens=max_tokens))
        return completion.text
