"""Keep a compressed summary of what fell out of the recent window, folded forward in batches from its cursor."""
from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from bot.llm.port import LLM, ChatMessage, CompletionRequest, SystemBlock
from bot.quoting import clip
from memory import MemoryStore, Scope

log = logging.getLogger(__name__)

BATCH = 10  # fold when at least this many messages left the window unsummarized
FOLD = 40  # at most this many messages folded into the summary in one call
SUMMARY_CHARS = 1500  # the running summary's length, in the prompt and when it is folded

INSTRUCTIONS = """Update the running summary of a conversation between a person and their companion.
You get the current summary and the messages that follow it. Write the new summary: what happened,
what matters, open threads; at most {limit} characters, in the conversation's language, plain text."""


async def refresh_summary(
    store: MemoryStore, llm: LLM, scope: Scope, window: int, *,
    may_continue: Callable[[], Awaitable[bool]] | None = None,
) -> bool:
    """Fold what left the recent window into the summary, FOLD messages at a time from its cursor; True if it changed.

    Each fold moves the cursor past the messages it covered; a failing one raises and leaves it where it was.
    may_continue is asked before each model call (the day's token budget).
    """
    changed = False
    while True:
        state = await store.conversations.get(scope)
        window_start = await store.messages.recent(scope, window)
        if len(window_start) < window:
            return changed
        pending = await store.messages.after(scope, state.summary_upto, FOLD, before_id=window_start[0].id)
        if len(pending) < BATCH or (may_continue is not None and not await may_continue()):
            return changed
        lines = "\n".join(f"{m.role}: {clip(m.text, 600)}" for m in pending)
        material = f"Current summary:\n{state.summary or '(none)'}\n\nNew messages:\n{lines}"
        completion = await llm.complete(CompletionRequest(
            [ChatMessage("user", material)], system=[SystemBlock(INSTRUCTIONS.format(limit=SUMMARY_CHARS))],
            max_tokens=600))
        text = completion.text.strip()
        if not text:
            log.warning("summary model returned nothing; summary kept")
            return changed
        if not await store.conversations.set_summary(scope, clip(text, SUMMARY_CHARS), pending[-1].id, if_present=True):
            log.info("summary for scope %s: its messages were erased meanwhile; nothing written", scope.id)
            return changed
        changed = True
