"""Transcripts for the outside view: conversations split at long pauses, chosen by keyword or an even sample,
rendered as dated lines in chunks the analyst can read, and a preview of what a run would send."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from typing import TypeVar

from memory import Message

T = TypeVar("T")

CHUNK_CHARS = 150_000
MESSAGE_CHARS = 4_000
GAP_HOURS = 6.0
TITLE_WORDS = 6
CHARS_PER_TOKEN = 4
LABELS = {
    "de": {"user": "Nutzer", "bot": "Begleiter", "first": "Begleiter (schreibt zuerst)", "start": "Beginn",
           "model": "Modell", "cont": " (Fortsetzung)", "cut": "[… gekürzt: {n} Zeichen]"},
    "en": {"user": "User", "bot": "Companion", "first": "Companion (speaks first)", "start": "started",
           "model": "model", "cont": " (continued)", "cut": "[… shortened: {n} characters]"},
}


@dataclass(frozen=True)
class Conversation:
    """A run of messages with no gap longer than the conversation gap."""

    messages: tuple[Message, ...]

    @property
    def started_at(self) -> datetime:
        """When the first message was written."""
        return self.messages[0].created_at


@dataclass(frozen=True)
class Style:
    """How a transcript is rendered: time zone, label language, model name, per-message cap."""

    zone: tzinfo
    language: str = "de"
    model: str = ""
    message_chars: int = MESSAGE_CHARS


def period_bounds(start: date | None, end: date | None, zone: tzinfo) -> tuple[float, float]:
    """Unix times of [start 00:00, the day after end 00:00) in the zone; an open side is unbounded."""
    low = datetime.combine(start, time(), zone).timestamp() if start else 0.0
    high = datetime.combine(end + timedelta(days=1), time(), zone).timestamp() if end else 1e18
    return low, high


def group_conversations(messages: Sequence[Message], gap: timedelta = timedelta(hours=GAP_HOURS)) -> list[Conversation]:
    """Split time-ordered messages of one scope into conversations wherever the pause exceeds gap."""
    runs: list[list[Message]] = []
    for m in messages:
        if runs and m.created_at - runs[-1][-1].created_at <= gap:
            runs[-1].append(m)
        else:
            runs.append([m])
    return [Conversation(tuple(run)) for run in runs]


def filter_by_keywords(conversations: Sequence[Conversation], keywords: Sequence[str]) -> list[Conversation]:
    """The conversations in which any keyword occurs (case-insensitive); all of them without keywords."""
    wanted = [k.casefold() for k in keywords if k.strip()]
    if not wanted:
        return list(conversations)
    return [c for c in conversations if any(k in m.text.casefold() for m in c.messages for k in wanted)]


def even_sample(items: Sequence[T], n: int) -> list[T]:
    """n items spread evenly over the sequence: the first, the last and evenly spaced ones between."""
    if n >= len(items):
        return list(items)
    if n <= 0:
        return []
    if n == 1:
        return [items[0]]
    step = (len(items) - 1) / (n - 1)
    return [items[round(i * step)] for i in range(n)]


def shorten(text: str, limit: int, language: str) -> str:
    """Cut a message longer than limit, with a visible note saying how much was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + " " + LABELS[language]["cut"].format(n=len(text) - limit)


def message_line(message: Message, style: Style) -> str:
    """One message as a transcript line: local time, speaker (marked when the bot speaks first), text."""
    labels = LABELS[style.language]
    who = labels["user"] if message.role == "user" else labels["first"] if message.proactive else labels["bot"]
    body = shorten(message.text.strip(), style.message_chars, style.language).replace("\n", "\n    ")
    return f"[{message.created_at.astimezone(style.zone):%Y-%m-%d %H:%M}] {who}: {body}\n"


def conversation_title(conversation: Conversation, style: Style) -> str:
    """The date and the first words of the person."""
    first = next((m for m in conversation.messages if m.role == "user"), conversation.messages[0])
    words = first.text.split()
    head = " ".join(words[:TITLE_WORDS])[:80] + ("…" if len(words) > TITLE_WORDS else "")
    return f"{conversation.started_at.astimezone(style.zone):%Y-%m-%d} „{head}“"


def conversation_header(conversation: Conversation, style: Style, continued: bool = False) -> str:
    """The header line of a conversation: title, start, model."""
    labels = LABELS[style.language]
    start = conversation.started_at.astimezone(style.zone)
    return (f"=== {conversation_title(conversation, style)}{labels['cont'] if continued else ''} | "
            f"{labels['start']} {start:%Y-%m-%d %H:%M} | {labels['model']} {style.model or '?'} ===\n")


def chunk_transcript(conversations: Sequence[Conversation], style: Style, limit: int = CHUNK_CHARS) -> list[str]:
    """Render conversations into chunks of at most limit characters, never splitting a message."""
    chunks: list[str] = []
    pieces: list[str] = []
    size = 0
    for conversation in conversations:
        started = False
        for message in conversation.messages:
            line = message_line(message, style)
            head = "" if started else ("\n" if pieces else "") + conversation_header(conversation, style)
            if pieces and size + len(head) + len(line) > limit:
                chunks.append("".join(pieces))
                pieces, size = [], 0
                head = conversation_header(conversation, style, continued=started)
            if len(head) + len(line) > limit:
                raise ValueError(f"a chunk limit of {limit} characters cannot hold one message of {len(line)}")
            pieces += [head, line]
            size += len(head) + len(line)
            started = True
    if pieces:
        chunks.append("".join(pieces))
    return chunks


@dataclass(frozen=True)
class Preview:
    """What a run would send: conversations, characters, estimated tokens, calls."""

    conversations: int
    available: int
    messages: int
    characters: int
    tokens: int
    parts: int
    calls: int


def estimate_tokens(characters: int) -> int:
    """A rough token count: four characters a token."""
    return math.ceil(characters / CHARS_PER_TOKEN)


def make_preview(chosen: Sequence[Conversation], available: int, chunks: Sequence[str]) -> Preview:
    """Count what the analysis would send; one call per part, plus a merge when there are several parts."""
    characters = sum(len(c) for c in chunks)
    parts = len(chunks)
    return Preview(len(chosen), available, sum(len(c.messages) for c in chosen), characters,
                   estimate_tokens(characters), parts, parts + (1 if parts > 1 else 0))


def format_preview(p: Preview) -> str:
    """The preview in one line."""
    return (f"{p.conversations} of {p.available} conversations, {p.messages} messages, {p.characters:,} characters "
            f"(~{p.tokens:,} tokens), {p.parts} part{'s' if p.parts != 1 else ''}, {p.calls} "
            f"call{'s' if p.calls != 1 else ''}")
