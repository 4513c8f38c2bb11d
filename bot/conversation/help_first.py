"""The help text of a crisis, first: sent through the channel as a message of its own before the model is asked (or,
where that cannot be, as the reply's first bubble), once a turn, and the scope's crisis mark (a time, no words); then
the model's careful answer, or a few words of mnemo's own when the model fails."""
from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from bot.conversation.bubbles import split_bubbles
from bot.conversation.failures import log_words
from bot.conversation.help_lines import crisis_help
from bot.conversation.model_answer import CRISIS_MARK
from bot.conversation.turn import Turn
from bot.errors import LLMError
from bot.exchange import Reply
from bot.texts import t
from memory import MemoryStore

log = logging.getLogger(__name__)


class HelpFirst:
    """Sends a crisis turn's help text before anything else happens in it."""

    def __init__(self, store: MemoryStore, clock: Callable[[], float]) -> None:
        self.store, self.clock = store, clock

    async def send(self, turn: Turn) -> None:
        """Send the help text now, once a turn, in the person's language with their country's numbers: through the
        channel as a message of its own, or (a channel that cannot, or a send that failed) as the reply's first
        bubble. The scope keeps when (never what): check-ins and notices hold back for days, in incognito too."""
        if turn.help_sent:
            return
        turn.help_sent = True
        text = crisis_help(turn.country, turn.lang)
        try:
            if turn.say_now is not None:
                try:
                    await turn.say_now(text)
                    return
                except Exception:  # noqa: BLE001 - a wire that failed: the help text then leads the reply
                    log.exception("the help text for message %s could not be sent at once; it leads the reply",
                                  turn.incoming.channel_message_id)
            turn.preface.insert(0, text)
        finally:  # after the send, which waits for nothing
            await self.store.state.put(turn.scope, CRISIS_MARK, self.clock())

    async def step(self, turn: Turn) -> None:
        """A step of the turn that passes on: signs of crisis seen so far, the help text goes out now (`send`)."""
        if turn.crisis:
            await self.send(turn)

    async def answer(self, turn: Turn, write: Callable[[Turn], Awaitable[str]]) -> Reply:
        """The crisis answer after the help text (sent before by `step`; here for a crisis found later, in a document's
        text): the model's words (`write`), without the help text it may repeat; when it fails, mnemo's own."""
        await self.send(turn)
        try:
            text = await write(turn)
        except LLMError as exc:
            log.warning("chat model failed for a crisis message %s: %s", turn.incoming.channel_message_id,
                        log_words(exc))
            text = t(turn.lang, "crisis_model_down")
        text = text.replace(crisis_help(turn.country, turn.lang), "").strip()  # it went out already
        return Reply(split_bubbles(text) or (t(turn.lang, "crisis_model_down"),))
