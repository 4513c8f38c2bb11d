"""suggest_improvement: the companion notes for its operator what mnemo itself lacks or keeps getting wrong.

The person never sees a suggestion: the tool's answer goes to the model only, and the marker form of a model
without tool calling ([SUGGESTION: …], or the seed's [[VORSCHLAG: …]]) is stripped from the reply like every marker.
Noting one changes something, so the tool is not offered in a crisis or after text from outside, and its marker is
then not kept. Kept by memory/records/suggestions.py with the start of the message it reacted to, a few a day;
`mnemo suggestions` lists and dismisses them (bot/admin/suggestions.py).
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from bot.conversation.tools import Tool, ToolContext, ToolFailed
from bot.llm.port import ToolSpec
from memory import SUGGESTION_KINDS, SuggestionLimits

log = logging.getLogger(__name__)

SUGGEST = "suggest_improvement"
ANSWERS = {  # what the model hears back, by outcome
    "new": "Noted for the operator; the person does not see it.",
    "repeat": "Noted before; counted once more.",
    "seen": "Already noted for this message.",
    "limit": "Not stored: enough suggestions for today.",
}
SPEC = ToolSpec(
    SUGGEST,
    "Leave the operator who runs this program (never the person) a note on how the program itself could be better:"
    " a feature it lacks, or a misunderstanding that keeps happening. The person never sees it. Use it rarely, and"
    " not for how the person wants you to behave (propose_rule is for that).",
    {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "the suggestion, one or two sentences"},
            "kind": {"type": "string", "enum": list(SUGGESTION_KINDS)},
        },
        "required": ["text"],
    },
)
MARKER = ("If the program itself lacks something or keeps misunderstanding, you may add [SUGGESTION: one sentence"
          " for the operator who runs it]; the person never sees it. Use it rarely.")


class SuggestionBox:
    """The toolbox with suggest_improvement; past the daily limits it stores nothing and says so to the model."""

    def __init__(self, limits: SuggestionLimits) -> None:
        self.limits = limits
        self.tool = Tool(SPEC, self.note, in_crisis=False, marker=MARKER)

    async def tools(self, at: ToolContext) -> Sequence[Tool]:
        """The one tool, in every turn (the engine leaves it out in a crisis or after text from outside)."""
        return (self.tool,)

    async def note(self, args: dict[str, Any], at: ToolContext) -> str:
        """Keep the suggestion with the message it reacted to; say to the model what became of it."""
        text = str(args.get("text") or "").strip()
        if not text:
            raise ToolFailed("the suggestion is empty; nothing was stored")
        message = await at.store.messages.get(at.scope, at.current_id) if at.current_id else None
        noted = await at.store.suggestions.note(
            at.scope, text, now=at.clock(), limits=self.limits, kind=str(args.get("kind") or ""),
            context=message.text if message is not None else "", message_id=message.id if message else None)
        found = noted.suggestion
        log.info("suggestion for the operator in scope %d: %s%s", at.scope.id, noted.outcome,
                 f" (#{found.id}, {found.count}x)" if found is not None else "")
        return ANSWERS[noted.outcome]
