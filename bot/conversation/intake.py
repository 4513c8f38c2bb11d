"""One way in: everything a person brings in one message as one list of parts, each marked as the person's own words
or someone else's (pure).

A message may bring typed words or a caption, a voice note's transcript, the text inside a document, an older
message it replies to, or words forwarded from someone else. The crisis check reads every part (someone else's
words in danger get the help text for someone the person knows); consent, the ask-back, commands-like requests
(reminders, "why"), corrections, absences and learning read only the person's own words of this message
(`Intake.own`): a forward, a quoted message and a document's text never answer a question, become a request, or a
fact about the person.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bot.exchange import Incoming

Source = Literal["typed", "caption", "transcript", "document", "quoted", "forward"]


@dataclass(frozen=True)
class Part:
    """One piece of what a message brings: its words, where they came from, and whether they are the person's."""

    text: str
    source: Source
    own: bool


def own_words(text: str, group: bool) -> str:
    """What the sender typed: in a group the channel puts their name in front ('Anna: ja')."""
    return text.split(": ", 1)[1] if group and ": " in text else text


@dataclass(frozen=True)
class Intake:
    """The parts of one message, in the order they came."""

    parts: tuple[Part, ...]

    @property
    def own(self) -> str:
        """The person's own words in this message (typed, a caption, their voice note's transcript); '' when it
        brings none of theirs (a forward). Quoted messages and a document's text are not words of this message."""
        return "\n".join(p.text for p in self.parts if p.own and p.source in ("typed", "caption", "transcript"))

    @property
    def forwarded(self) -> bool:
        """Whether the message's words are someone else's, forwarded by the person."""
        return any(p.source == "forward" for p in self.parts)

    def to_check(self) -> tuple[Part, ...]:
        """The parts the crisis check reads: all of them but a quoted message that is not the person's own (the
        companion's words, a group member's)."""
        return tuple(p for p in self.parts if p.source != "quoted" or p.own)


def intake_of(incoming: Incoming, group: bool, *, transcript: bool = False, document: str = "") -> Intake:
    """The parts of a message: its words (typed, a caption, or the transcript a voice note became: `transcript`),
    someone else's when forwarded; in a private chat an older message of the person's it replies to (their own); the
    companion's or a member's quoted message (not theirs); the text read from a document it brings (`document`: not
    words the person wrote in this chat)."""
    parts: list[Part] = []
    words = own_words(incoming.text, group)
    if words.strip():
        source: Source = ("forward" if incoming.forwarded else "transcript" if transcript
                          else "caption" if incoming.attachment is not None else "typed")
        parts.append(Part(words, source, not incoming.forwarded))
    quoted = incoming.quoted
    if quoted is not None and quoted.text.strip():
        parts.append(Part(quoted.text, "quoted", not quoted.by_companion and not group))
    if document.strip():
        parts.append(Part(document, "document", False))
    return Intake(tuple(parts))
