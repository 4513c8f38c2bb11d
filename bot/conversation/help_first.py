"""The help text of a crisis, first: sent through the channel as a message of its own before the model is asked (or,
where that cannot be, as the reply's first bubble), once a turn, and the scope's crisis mark (a time, no words); then
the model's careful answer, or a few words of mnemo's own when the model fails."""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from bot.conversation.bubbles import split_bubbles
from bot.conversation.crisis_judge import CONTEXT_MESSAGES, CrisisJudge
from bot.conversation.failures import log_words
from bot.conversation.help_lines import help_text_for, without_help
from bot.conversation.model_answer import CRISIS_MARK
from bot.conversation.turn import Turn
from bot.errors import LLMError
from bot.exchange import Reply
from bot.texts import t
from memory import MemoryStore

log = logging.getLogger(__name__)


class HelpFirst:
    """Sends a crisis turn's help text before anything else happens in it."""

    def __init__(self, store: MemoryStore, clock: Callable[[], float], judge: CrisisJudge | None = None) -> None:
        self.store, self.clock = store, clock
        self.judge = judge  # MNEMO_CRISIS_JUDGE: asked about the fast layers' close calls

    async def send(self, turn: Turn) -> None:
        """Send the help text now, once a turn, in the person's language with their country's numbers: through the
        channel as a message of its own, or (a channel that cannot, or a send that failed) as the reply's first
        bubble. The scope keeps when (never what): check-ins and notices hold back for days, in incognito too."""
        if turn.help_sent:
            return
        turn.help_sent = True
        text = help_text_for(turn.incoming.forwarded, turn.country, turn.lang)
        try:
            if turn.say_now is not None:
                try:
                    await turn.say_now(text)
                    turn.help_said = text
                    await self.record(turn)
                    return
                except Exception:  # noqa: BLE001 - a wire that failed: the help text then leads the reply
                    log.exception("the help text for message %s could not be sent at once; it leads the reply",
                                  turn.incoming.channel_message_id)
            turn.preface.insert(0, text)
        finally:  # after the send, which waits for nothing
            await self.store.state.put(turn.scope, CRISIS_MARK, self.clock())

    async def record(self, turn: Turn) -> None:
        """Log the help text sent at once as the companion's message of kind 'help', right after the person's message
        (so, sent before it was logged, once the log step has logged it); nothing in incognito, where nothing is."""
        if not turn.help_said or turn.logged_id is None:
            return
        text, turn.help_said = turn.help_said, ""
        after = await self.store.messages.after(turn.scope, turn.logged_id, 3)
        if any(m.kind == "help" for m in after):
            return  # logged before a crash; the replay did not send it again either
        await self.store.messages.add(turn.scope, "assistant", text, created_at=self.clock(), kind="help", index=False)

    async def step(self, turn: Turn) -> None:
        """A step of the turn that passes on: signs of crisis seen so far, the help text goes out now (`send`); a
        close call of the fast layers: the judge, when one is set up, is asked now, and the turn goes on meanwhile
        (`judged` waits for it)."""
        if turn.crisis:
            await self.send(turn)
        elif turn.uncertain and self.judge is not None and turn.judging is None:
            before = await self.store.messages.recent(turn.scope, CONTEXT_MESSAGES, before_id=turn.logged_id)
            context = [(m.role, m.text) for m in before]
            turn.judging = asyncio.create_task(self.judge.needs_help(turn.incoming.text, context),
                                               name=f"crisis-judge-{turn.incoming.channel_message_id}")

    async def judged(self, turn: Turn) -> None:
        """The judge's verdict on a close call, awaited (it ends by its timeout at the latest); its yes makes the
        turn a crisis: the help text now, then the crisis step."""
        if turn.judging is None or turn.crisis:
            return
        if await turn.judging:
            log.info("message %s: the crisis judge said it needs the help line", turn.incoming.channel_message_id)
            turn.crisis = True
            await self.send(turn)

    async def flagged(self, turn: Turn) -> None:
        """The chat model wrote that the message needs the help line ([CRISIS: …]): a crisis turn from here on, and
        the help text goes out now (before the answer, which is then the careful one)."""
        turn.crisis = True
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
        return self.careful(turn, text)

    def careful(self, turn: Turn, text: str) -> Reply:
        """The reply of a crisis turn after its help text: the model's words without the help text it may repeat (it
        went out already), mnemo's own when nothing is left; a help text that could not go out on its own leads it
        and is logged with it (a replay shows it)."""
        text = without_help(text, turn.country, turn.lang)
        reply = Reply(split_bubbles(text) or (t(turn.lang, "crisis_model_down"),))
        shown = help_text_for(turn.incoming.forwarded, turn.country, turn.lang)
        if shown in turn.preface:  # the help text first, then what else the program says before the reply (it ended
            reply = Reply((*turn.preface, *reply.bubbles))  # an incognito stretch): all of it logged with the reply
            turn.preface.clear()
        return reply
