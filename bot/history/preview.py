"""What an import would do, before any model call: counts, the date range, estimated tokens and calls, the budget share.

The estimate packs the calls as the import does (bot.history.importer: only the person's own messages, whole
conversations grouped up to BATCH of them, a call holding at most BATCH messages and CALL_CHARS characters, each
message clipped to CLIP), every call carrying the instructions and the answer's schema; four characters make a
token; an answer is about ANSWER_TOKENS (its cap is 900).
"""
from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from bot.history.importer import BATCH, CALL_CHARS, CLIP, INSTRUCTIONS, calls_of, groups
from bot.history.model import HistoryConversation
from bot.history.readers import NAMES
from bot.learning.extraction import SCHEMA
from bot.texts import counted, t

LINE_CHARS = 12  # "[1234] user: " before each message
CHARS_PER_TOKEN = 4
ANSWER_TOKENS = 300


@dataclass(frozen=True)
class Assumptions:
    """How the estimate counts; the defaults follow the chat's extraction."""

    batch: int = BATCH
    clip: int = CLIP
    call_chars: int = CALL_CHARS
    chars_per_token: int = CHARS_PER_TOKEN
    prompt_chars: int = len(INSTRUCTIONS) + len(json.dumps(SCHEMA)) + 60  # + the "Now: …" header
    answer_tokens: int = ANSWER_TOKENS


@dataclass(frozen=True)
class Preview:
    """What was found in an export and what reading it with the background model would cost."""

    source: str  # "chatgpt", "claude", "telegram" ("" when nothing was found)
    conversations: int
    person_messages: int
    other_messages: int
    first: datetime | None
    last: datetime | None
    calls: int  # background model calls
    input_tokens: int
    output_tokens: int
    daily_budget: int  # MNEMO_BACKGROUND_TOKENS_PER_DAY; 0: no cap

    @property
    def tokens(self) -> int:
        """Input and output tokens together."""
        return self.input_tokens + self.output_tokens

    @property
    def budget_share(self) -> float | None:
        """The share of one day's background budget (1.0: a whole day); None without a cap."""
        return self.tokens / self.daily_budget if self.daily_budget > 0 else None

    @property
    def days(self) -> int | None:
        """Days of background budget the import takes at least; None without a cap."""
        return math.ceil(self.tokens / self.daily_budget) if self.daily_budget > 0 else None


def tally(conversations: Iterable[HistoryConversation], daily_budget: int = 0,
          assume: Assumptions = Assumptions()) -> Preview:
    """Count the conversations (consuming a stream of them once) and estimate what extracting them costs."""
    source, count, person, other, calls, chars = "", 0, 0, 0, 0, 0
    first: datetime | None = None
    last: datetime | None = None
    def counting(stream: Iterable[HistoryConversation]) -> Iterable[HistoryConversation]:
        nonlocal source, count, person, other, first, last
        for conversation in stream:
            source = source or conversation.source
            count += 1
            mine = sum(m.speaker == "person" for m in conversation.messages)
            person, other = person + mine, other + len(conversation.messages) - mine
            if conversation.messages:
                first = min(first or conversation.messages[0].at, min(m.at for m in conversation.messages))
                last = max(last or conversation.messages[-1].at, max(m.at for m in conversation.messages))
            yield conversation

    for group in groups(counting(conversations), assume.batch):
        for lines in calls_of(group, assume.batch, assume.call_chars, assume.clip):
            calls += 1
            chars += assume.prompt_chars + sum(len(line.message.text) + LINE_CHARS for line in lines)
    return Preview(source, count, person, other, first, last, calls, math.ceil(chars / assume.chars_per_token),
                   calls * assume.answer_tokens, daily_budget)


def render(preview: Preview, lang: str, assume: Assumptions = Assumptions()) -> str:
    """The preview as a few lines for the person, in German or English."""
    if not preview.conversations:
        return t(lang, "history_preview_nothing")
    n = _numbers(lang)
    lines = [t(lang, "history_preview_found",
               conversations=counted(lang, preview.conversations, "conversations", n(preview.conversations)),
               source=NAMES.get(preview.source, preview.source),
               person=counted(lang, preview.person_messages, "messages", n(preview.person_messages)),
               other=n(preview.other_messages), first=_day(preview.first, lang), last=_day(preview.last, lang)),
             t(lang, "history_preview_cost_one" if preview.calls == 1 else "history_preview_cost",
               tokens=n(preview.tokens), calls=n(preview.calls), batch=assume.batch, chars=assume.chars_per_token)]
    if preview.budget_share is None:
        lines.append(t(lang, "history_preview_no_cap"))
    else:
        key = "history_preview_budget_day" if (preview.days or 0) <= 1 else "history_preview_budget_days"
        lines.append(t(lang, key, share=n(round(100 * preview.budget_share)),
                       budget=n(preview.daily_budget), days=counted(lang, preview.days or 0, "days")))
    lines.append(t(lang, "history_preview_nothing_yet"))
    return "\n".join(lines)


def _numbers(lang: str):  # type: ignore[no-untyped-def]
    """A formatter for whole numbers with the language's thousands separator."""
    if lang == "en":
        return lambda value: f"{value:,}"
    return lambda value: f"{value:,}".replace(",", ".")


def _day(at: datetime | None, lang: str) -> str:
    """A date as people of the language write it."""
    if at is None:
        return "?"
    return f"{at:%Y-%m-%d}" if lang == "en" else f"{at:%d.%m.%Y}"
