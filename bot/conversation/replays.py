"""A message the channel hands over again (after a crash, or twice): whether it was logged and answered before, and
the reply recorded for it, to deliver again."""
from __future__ import annotations

from dataclasses import replace

from bot.conversation.bubbles import split_bubbles
from bot.conversation.questions import OpenQuestions
from bot.exchange import Incoming, Reply
from memory import MemoryStore, Message, Scope


async def logged_before(store: MemoryStore, scope: Scope, incoming: Incoming) -> Message | None:
    """The user message logged earlier under this channel id, if any."""
    if incoming.channel_message_id is None:
        return None
    return await store.messages.by_channel_id(scope, incoming.channel, incoming.channel_message_id)


async def answered(store: MemoryStore, scope: Scope, incoming: Incoming) -> bool:
    """Whether a reply to this message was recorded."""
    if incoming.channel_message_id is None:
        return False
    return await store.messages.reply_to(scope, incoming.channel, incoming.channel_message_id) is not None


async def earlier_reply(store: MemoryStore, questions: OpenQuestions, scope: Scope, incoming: Incoming) -> Reply | None:
    """The reply recorded for a message answered before, to deliver it again after a crash; None if none.

    When that reply asked the question that is still open, its buttons come with it again.
    """
    if incoming.channel_message_id is None:
        return None
    recorded = await store.messages.reply_to(scope, incoming.channel, incoming.channel_message_id)
    if recorded is None:
        return None
    reply = Reply(split_bubbles(recorded.text) or (recorded.text,))
    question = await questions.current(scope)
    if question is not None:
        text, buttons = await questions.asking(scope, question)
        if recorded.text.endswith(text):
            reply = replace(reply, buttons=(buttons,))
    return reply
