"""Keep a compressed summary of what fell out of the recent window, folded forward in batches."""
from __future__ import annotations

import logging

from bot.llm import LLM, ChatMessage, SystemBlock
from bot.prompt import SUMMARY_CHARS, clip
from memory.models import Scope
from memory.store import MemoryStore

log = logging.getLogger(__name__)

BATCH = 10  # fold when at least this many messages left the window unsummarized

INSTRUCTIONS = """Update the running summary of a conversation between a person and their companion.
You get the current summary and the messages that follow it. Write the new summary: what happened,
what matters, open threads; at most {limit} characters, in the conversation's language, plain text."""


async def refresh_summary(store: MemoryStore, llm: LLM, scope: Scope, window: int) -> bool:
    """Fold messages that left the recent window into the summary; True when it changed."""
    state = await store.conversations.get(scope)
    recent = await store.messages.recent(scope, window + 200)
    outside = recent[:-window] if len(recent) > window else []
    pending = [m for m in outside if m.id > state.summary_upto]
    if len(pending) < BATCH:
        return False
    lines = "\n".join(f"{m.role}: {clip(m.text, 600)}" for m in pending)
    completion = await llm.complete(
        [ChatMessage("user", f"Current summary:\n{state.summary or '(none)'}\n\nNew messages:\n{lines}")],
        system=[SystemBlock(INSTRUCTIONS.format(limit=SUMMARY_CHARS))], max_tokens=600,
    )
    text = completion.text.strip()
    if not text:
        log.warning("summary model returned nothing; summary kept")
        return False
    await store.conversations.set_summary(scope, clip(text, SUMMARY_CHARS), pending[-1].id)
    return True
