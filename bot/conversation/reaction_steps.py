"""The companion's reactions in a turn (offered to the model, then given when it may) and the person's reactions on
the companion's messages (kept as feedback for the reflection); the decisions are pure, in reacting.py."""
from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from zoneinfo import ZoneInfo

from bot.conversation.config import EngineConfig
from bot.conversation.reacting import chosen_reaction, day_of, feedback_emoji, may_react, offer_line
from bot.conversation.turn import Turn
from bot.exchange import Reaction
from memory import MemoryStore, Scope, is_group_scope

log = logging.getLogger(__name__)


class ReactionSteps:
    """Emoji both ways: the turn's steps `offer` and `give`, and `feedback` and `delivered` for the channels."""

    def __init__(self, store: MemoryStore, config: EngineConfig, clock: Callable[[], float],
                 scope_for: Callable[[str], Awaitable[Scope]],
                 zone_for: Callable[[Scope], Awaitable[ZoneInfo]]) -> None:
        self.store, self.config, self.clock, self.scope_for, self.zone_for = store, config, clock, scope_for, zone_for

    async def offer(self, turn: Turn) -> None:
        """Offer the model one emoji on the message, in the companion's mood towards the person, unless reactions are
        off, the day's are given, it is a crisis, or it is a group's message that did not address the companion."""
        incoming, per_day = turn.incoming, self.config.reactions_per_day
        group = is_group_scope(incoming.user_id)
        if not may_react(per_day, 0, group=group, addressed=incoming.addressed, crisis=turn.crisis):
            return
        since, until = day_of(self.clock(), await self.zone_for(turn.scope))
        given = await self.store.reactions.given(turn.scope, since, until)
        if may_react(per_day, given, group=group, addressed=incoming.addressed, crisis=turn.crisis):
            turn.may_react = True
            relationship = await self.store.relationships.get(turn.scope)
            turn.hints.append(offer_line(relationship.mood))

    async def give(self, turn: Turn) -> None:
        """The first emoji the model chose that is one of the allowed goes on the message, counted in the day."""
        emoji = next((e for e in map(chosen_reaction, turn.reactions) if e), "") if turn.may_react else ""
        if not emoji or turn.reply is None:
            if turn.reactions:
                log.info("%d reactions of the model not given (offered: %s)", len(turn.reactions), turn.may_react)
                log.debug("the reactions not given: %r", turn.reactions[:3])
            return
        incoming = turn.incoming
        where = incoming.channel_message_id or f"#{turn.message_id}"  # the terminal's messages have no channel id
        await self.store.reactions.give(turn.scope, incoming.channel, where, turn.message_id, emoji, self.clock())
        turn.reply = replace(turn.reply, reaction=emoji)

    async def feedback(self, reaction: Reaction) -> bool:
        """Keep a person's reaction on one of the companion's messages for the reflection; one taken back is dropped.

        False when nothing was kept or dropped: the message is no message of the companion's that mnemo recorded
        (the person's own, a notice, one older than mnemo keeps track of), or the key is no emoji.
        """
        scope, reactions = await self.scope_for(reaction.user_id), self.store.reactions
        if reaction.removed:
            return await reactions.remove(scope, reaction.channel, message_ref=reaction.message_ref,
                                          emoji=reaction.emoji, sender=reaction.sender, ref=reaction.ref) > 0
        emoji = feedback_emoji(reaction.emoji)
        if not emoji:
            return False
        return await reactions.add_feedback(scope, reaction.channel, reaction.message_ref, emoji, reaction.sender,
                                            self.clock(), ref=reaction.ref)

    async def delivered(self, user_id: str, channel: str, refs: Sequence[str], *, answering: str | None = None,
                        text: str | None = None) -> None:
        """Record the messenger messages that show a reply to the message `answering`, or a pushed `text`, so a
        reaction on them is known as one on the companion's message (a command's answer is no such message)."""
        if not refs:
            return
        scope = await self.scope_for(user_id)
        if answering is not None:
            reply = await self.store.messages.reply_to(scope, channel, answering)
            if reply is not None:
                await self.store.reactions.sent(scope, channel, refs, self.clock(), message_id=reply.id)
        elif text is not None:
            await self.store.reactions.sent(scope, channel, refs, self.clock(), text=text)
