"""The Matrix channel's reactions: one on an open choice answers it like a button press (if the person may), any other
on one of the companion's messages is kept as feedback, and its redaction takes it back. The channel (channel.py)
builds on this part."""
from __future__ import annotations

import logging
from abc import abstractmethod

from nio import (
    MatrixRoom,
    ReactionEvent,
    RedactionEvent,
)

from bot.channels.base import Channel
from bot.channels.matrix.choices import Reactions
from bot.channels.matrix.messages import (
    normalize_key,
)
from bot.channels.matrix.rooms import Route
from bot.commands.catalog import changes_memory, owner_of
from bot.commands.invocation import Pressed
from bot.exchange import Reaction
from bot.texts import t

log = logging.getLogger(__name__)


class MatrixPresses(Channel[str, str]):
    """Reactions on the messages a Matrix channel showed."""

    @property
    @abstractmethod
    def reactions(self) -> Reactions:
        """The options shown as reactions under the bot's messages."""

    @abstractmethod
    async def _show_pressed(self, room_id: str, scope: str, pressed: Pressed, answering: str,
                            owner: str | None) -> None:
        """Answer a chosen reaction: a new page with its own choices, or the notice as a message."""

    async def _on_reaction(self, room: MatrixRoom, event: ReactionEvent, route: Route) -> None:
        """A reaction on one of the bot's open choices answers it, like pressing a button, if the reacting person may.

        The choice belongs to the person who asked (`owner_of`); in a room, someone else's reaction and a
        reaction of a member who is no admin that would change memory decide nothing and get one short answer.
        """
        choice = await self.reactions.find(event.reacts_to)
        scope = await self.engine.scope_for(route.scope)
        data = choice.options.get(normalize_key(event.key)) if choice is not None else None
        if choice is None or data is None or choice.scope_id != scope.id:
            feedback = Reaction(route.scope, self.name, event.reacts_to, event.key, sender=event.sender,
                                ref=event.event_id)
            if not await self.engine.feedback(feedback):
                log.info("reaction %r on %s answers no open question and is on no message of the companion's",
                         event.key, event.reacts_to)
            return
        if choice.owner not in (None, event.sender):
            log.info("reaction of %s on %s, which %s was asked: refused", event.sender, event.reacts_to, choice.owner)
            await self._tell(room.room_id, t(self.lang, "choice_not_yours"), event.event_id, "refused")
            return
        admin = route.kind != "group" or self.access.is_admin(event.sender)
        async with self._pressing(route.scope, data, admin, event.event_id) as pressed:
            if admin or not changes_memory(data):  # else refused: the choice stays open for the one who may
                await self.reactions.take_away(scope, (*pressed.closes, choice.question), also=choice)
            await self._show_pressed(room.room_id, route.scope, pressed, event.event_id,
                                     owner_of(pressed.buttons, event.sender, admin))

    async def _on_redaction(self, event: RedactionEvent, route: Route) -> None:
        """A reaction taken back (its event redacted) is no feedback any more."""
        if event.redacts:
            await self.engine.feedback(Reaction(route.scope, self.name, "", "", sender=event.sender, removed=True,
                                                ref=event.redacts))
