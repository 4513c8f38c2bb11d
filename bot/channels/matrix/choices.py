"""Buttons on Matrix: the bot reacts to its own message with one emoji per option, and a person answers
by reacting with the same emoji. (Any other reaction on the companion's messages is feedback: `concerns`.)

The options under each message are kept in the database (`store.choices`), so a reaction still counts
after a restart; each choice belongs to the person who asked. Once its question is decided or dropped,
the choice is closed and the bot's reactions under it are redacted, so old options decide nothing.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from bot.channels.matrix.messages import normalize_key, reaction_content, transaction_id
from bot.channels.matrix.outgoing import Outgoing
from bot.channels.matrix.rooms import CHANNEL
from bot.errors import MatrixError
from memory import Choice, Choices, Scope
from memory import Reactions as Kept

log = logging.getLogger(__name__)


class Reactions:
    """Offer options as reactions, find the choice under a message, take decided ones away."""

    def __init__(self, out: Outgoing, choices: Choices, clock: Callable[[], float], kept: Kept) -> None:
        self.out = out
        self.choices = choices
        self.clock = clock
        self.kept = kept  # what the companion sent, and the reactions kept as feedback

    async def offer(self, room_id: str, scope: Scope, event_id: str, options: list[tuple[str, str]],
                    owner: str | None, question: str) -> None:
        """React to the bot's message with each option's emoji and record what each means, and whose it is."""
        reactions = []
        for emoji, _data in options:
            try:
                reactions.append(await self.out.event(room_id, "m.reaction", reaction_content(event_id, emoji),
                                                      transaction_id(event_id, "offer", emoji)))
            except MatrixError as exc:
                log.warning("could not offer %s under %s: %s", emoji, event_id, exc)
        await self.choices.record(scope, CHANNEL, event_id, {normalize_key(emoji): data for emoji, data in options},
                                  owner=owner, question=question, extra={"room": room_id, "reactions": reactions},
                                  now=self.clock())

    async def find(self, event_id: str) -> Choice | None:
        """The open choice under one of the bot's messages, or None."""
        return await self.choices.find(CHANNEL, event_id)

    async def open_under(self, event_id: str, room_id: str) -> bool:
        """Whether options are open under this event of this room."""
        choice = await self.find(event_id)
        return choice is not None and choice.extra.get("room") == room_id

    async def concerns(self, event_id: str, room_id: str) -> bool:
        """Whether a reaction on this event of this room, or its redaction, is mnemo's business: options are open
        under it, the companion sent it, or it is a reaction kept as feedback."""
        return (self.out.is_mine(event_id) or await self.open_under(event_id, room_id)
                or await self.kept.knows(CHANNEL, event_id))

    async def take_away(self, scope: Scope, questions: Iterable[str], also: Choice | None = None) -> None:
        """Close the choices of decided or dropped questions (and `also`) and redact the bot's reactions under them."""
        found: dict[str, Choice] = {also.message_ref: also} if also is not None else {}
        for question in dict.fromkeys(q for q in questions if q):
            for choice in await self.choices.of_question(scope, question):
                if choice.channel == CHANNEL:
                    found.setdefault(choice.message_ref, choice)
        for choice in found.values():
            await self.choices.close(CHANNEL, choice.message_ref)  # first: then nothing can decide it any more
            room_id = str(choice.extra.get("room", ""))
            for reaction in choice.extra.get("reactions", []):
                await self.out.redact(room_id, str(reaction))
