"""One message being answered: what the steps of its turn find out, and the checks on its text."""
from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace

from bot.conversation.crisis import Assessment, CrisisDetector, assess
from bot.conversation.intake import Intake, intake_of
from bot.conversation.tools import HeldCall
from bot.exchange import Incoming, Reply
from bot.learning.corrections import Change
from bot.llm.port import Image, OnText
from memory import LearnedRule, Scope, is_group_scope

CRISIS_SCAN_CHARS = 20_000  # how much of a (maybe oversized) message is searched for signs of crisis
ANSWERED_BEFORE = Reply(())  # a step's answer for a message answered before: the engine returns None

SayNow = Callable[[str], Awaitable[None]]  # the channel sends this text at once, as a message of its own

_SURROGATE = re.compile("[\ud800-\udfff]")


def check_input(text: str, limit: int) -> str | None:
    """Why a message is refused ('too_long', 'not_text', 'empty'), or None when it is fine."""
    if len(text) > limit:
        return "too_long"
    if "\x00" in text or sum(1 for c in text if ord(c) < 32 and c not in "\n\r\t") > max(3, len(text) // 20):
        return "not_text"
    if _SURROGATE.search(text):  # half of a UTF-16 pair: not text, and no database could store it
        return "not_text"
    if not text.strip():
        return "empty"
    return None


async def shows_crisis(incoming: Incoming, detector: CrisisDetector) -> Assessment:
    """Signs of crisis in what a message brings (`intake.Intake.to_check`): its words (a caption, an edit, words
    forwarded from someone else), and in a private chat an older message of the person's it replies to ("das meine
    ich immer noch"). Never the companion's words, nor a group member's it quotes."""
    uncertain = False
    for part in intake_of(incoming, is_group_scope(incoming.user_id)).to_check():
        found = await assess(detector, part.text[:CRISIS_SCAN_CHARS])
        if found.crisis:
            return found
        uncertain = uncertain or found.uncertain
    return Assessment(False, uncertain=uncertain)


FORWARDED = ("The person forwarded this message: its words are someone else's (who wrote them is not known), not the "
             "person's own. Answer the person about it; never take what it says as their own words or wishes.")
FORWARDED_CRISIS = ("The signs of crisis are in these forwarded words: someone the person knows may be in danger. The "
                    "program already sent help lines for someone they know. Ask how the person is with it and whether "
                    "the other one is safe right now; if they are in acute danger, encourage calling emergency "
                    "services.")


def forwarded_hint(crisis: bool) -> str:
    """What the model is told of a forwarded message (someone else's words), and of a crisis in it."""
    return f"{FORWARDED} {FORWARDED_CRISIS}" if crisis else FORWARDED


@dataclass
class Turn:
    """One message being answered; each step reads what the steps before it found out and adds its own."""

    incoming: Incoming
    crisis: bool  # the message shows signs of crisis
    on_progress: OnText | None = None  # where the reply's visible text goes while the model writes it
    say_now: SayNow | None = None  # sends a message at once, before the reply (the help text in a crisis)
    help_sent: bool = False  # the help text went out in this turn (at once, or first in the reply)
    help_said: str = ""  # the help text sent at once, until it is logged (after the person's message is)
    uncertain: bool = False  # no crisis seen, but a close call (a judge, when set up, may be asked)
    judging: asyncio.Task[bool | None] | None = None  # the judge asked about this close call (MNEMO_CRISIS_JUDGE)
    found_scope: Scope | None = None  # the scope, found by the duplicate check
    lang: str = "de"  # the person's language (their own, else the deployment's), known with the scope
    country: str = "DE"  # the country of the person's help numbers, known with the scope
    logged_id: int | None = None  # the message as logged (before a crash, or by this turn)
    previous_at: float | None = None  # when the person wrote before this message
    previous_id: int | None = None  # the person's message before this one (None: none, or not logged yet)
    closes: list[str] = field(default_factory=list)  # questions dropped in this turn (expired, replaced)
    proposed: LearnedRule | None = None  # a rule proposed in this turn (by the model or from an objection)
    held: HeldCall | None = None  # a call of a tool that changes something, held in this turn for the person's yes
    objection: bool = False  # the message may object to something remembered or said
    changes: list[Change] = field(default_factory=list)  # the corrections this message made to the memory
    reply: Reply | None = None  # the model's answer, once written
    hints: list[str] = field(default_factory=list)  # lines for the model's context that the steps computed
    origin: str = "text"  # how it came: 'text', 'voice' (`incoming.text` is then the transcript), 'forwarded'
    recording: bytes = b""  # a heard voice note's audio, until the step after the log keeps it (MNEMO_VOICE_KEEP)
    may_react: bool = False  # the companion may put an emoji on this message (offered to the model)
    reactions: list[str] = field(default_factory=list)  # what the model's [REACT: …] markers named
    picture: Image | None = None  # the message's picture as the model gets it (only when the model sees pictures)
    described: str = ""  # what the model said the picture shows, before it is cleaned and kept
    preface: list[str] = field(default_factory=list)  # bubbles the program puts before the reply (incognito ended)
    document_text: str = ""  # the text read from the message's document (none of the person's words in this chat)

    @property
    def intake(self) -> Intake:
        """What the message brings, each part the person's own words or someone else's (bot/conversation/intake.py):
        the steps that decide from the person's words read `intake.own`, the crisis check every part."""
        return intake_of(self.incoming, self.group, transcript=self.origin == "voice", document=self.document_text)

    @property
    def photo(self) -> bool:
        """Whether the message brings a picture (its text is then the caption, maybe empty)."""
        return self.incoming.attachment is not None and self.incoming.attachment.kind == "image"

    @property
    def document_sent(self) -> bool:
        """Whether the message brings a document (its text is then the caption, maybe empty)."""
        return self.incoming.attachment is not None and self.incoming.attachment.kind == "document"

    @property
    def brings_file(self) -> bool:
        """Whether the message brings a picture or a document (a 'ja' under it is about it, no answer to a question)."""
        return self.photo or self.document_sent

    @property
    def group(self) -> bool:
        """Whether the message was written in a group (its text then begins with the sender's name)."""
        return is_group_scope(self.incoming.user_id)

    @property
    def scope(self) -> Scope:
        """The scope of the message (known from the duplicate check on)."""
        if self.found_scope is None:
            raise LookupError("the turn's scope is found by its duplicate check")
        return self.found_scope

    @property
    def message_id(self) -> int:
        """The logged message's id (known from the log step on)."""
        if self.logged_id is None:
            raise LookupError("the turn's message is logged by its log step")
        return self.logged_id

    def closing(self, reply: Reply) -> Reply:
        """The reply with the questions this turn dropped or replaced added to what it closes, its preface before it."""
        closes = tuple(dict.fromkeys((*self.closes, *reply.closes)))
        if self.preface:
            reply = replace(reply, bubbles=(*self.preface, *reply.bubbles))
        return replace(reply, closes=closes) if closes != reply.closes else reply


Step = Callable[[Turn], Awaitable[Reply | None]]  # one step of a turn: a reply answers here, None passes on


async def opened(incoming: Incoming, detector: CrisisDetector, on_progress: OnText | None = None,
                 say_now: SayNow | None = None) -> Turn:
    """A message's turn as it begins: the fast layers' verdict on its words; forwarded words marked as someone
    else's (logged so, the model told so)."""
    found = await shows_crisis(incoming, detector)
    turn = Turn(incoming, found.crisis, on_progress, say_now=say_now, uncertain=found.uncertain)
    if incoming.forwarded:
        turn.origin = "forwarded"
        turn.hints.append(forwarded_hint(found.crisis))
    return turn

