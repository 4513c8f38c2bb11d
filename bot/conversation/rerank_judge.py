"""The chat model as the reranker (MNEMO_RERANK=chat): it scores the search's best candidates for the message.

An answer that is not one score from 0 to 10 per numbered memory is RerankFailed, and the fused order stands
(`memory.search.rerank.reranked`); so does a model that fails or is slower than MNEMO_RERANK_TIMEOUT.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.errors import LLMError
from bot.llm.port import LLM, ChatMessage, CompletionRequest, SystemBlock
from memory import RerankFailed

INSTRUCTION = (
    "You rank remembered notes for a companion. Given a message and numbered memories, score each memory from 0 "
    "(no help) to 10 (exactly what answering the message needs). Answer with JSON only: "
    '{"scores": [one number per memory, in their order]}.'
)
SCHEMA = {"type": "object", "properties": {"scores": {"type": "array", "items": {"type": "number"}}},
          "required": ["scores"]}
MEMORY_CHARS = 400  # of each memory the judge reads


def judged_scores(answer: Any, count: int) -> list[float]:
    """The scores in a judge's parsed answer; anything but `count` numbers from 0 to 10 is RerankFailed (pure)."""
    scores = answer.get("scores") if isinstance(answer, dict) else None
    if not isinstance(scores, list) or len(scores) != count:
        raise RerankFailed(f"the judge gave {len(scores) if isinstance(scores, list) else 'no'} scores for {count}")
    if not all(isinstance(s, (int, float)) and not isinstance(s, bool) and 0 <= s <= 10 for s in scores):
        raise RerankFailed("the judge gave a score that is not a number from 0 to 10")
    return [float(s) for s in scores]


class ChatJudge:
    """The Reranker port over the chat model."""

    def __init__(self, chat: LLM) -> None:
        self.chat = chat

    async def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        """Ask the model once for every document's score."""
        listed = "\n".join(f"{at + 1}. {text[:MEMORY_CHARS]}" for at, text in enumerate(documents))
        prompt = f"Message:\n{query}\n\nMemories:\n{listed}"
        try:
            completion = await self.chat.complete(CompletionRequest(
                [ChatMessage("user", prompt)], system=[SystemBlock(INSTRUCTION)], json_schema=SCHEMA,
                max_tokens=16 + 6 * len(documents)))
            return judged_scores(completion.json(), len(documents))
        except LLMError as exc:
            raise RerankFailed(f"the chat model could not judge: {type(exc).__name__}") from exc
