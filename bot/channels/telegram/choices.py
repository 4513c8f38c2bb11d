"""The buttons under mnemo's Telegram messages: whose they are, which question they answer, taking them away.

Every message that shows buttons is recorded in `store.choices` (its chat and message id, its rows of buttons,
the person who asked, the yes/no question it answers), so a press is checked against what the message offers
and who may choose, also after a restart. When a question is decided or dropped, the buttons that answer it
are taken away from every message that shows them; a press on buttons that are no longer valid takes those
away too. A message whose buttons are all gone keeps its row with no options, so a late press on it hears
"already done".
"""
from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence

from telegram import Bot
from telegram.error import BadRequest, TelegramError

from bot.channels.telegram.messages import keyboard
from bot.channels.telegram.outgoing import patiently
from bot.commands.catalog import changes_memory
from bot.conversation.engine import Engine
from bot.exchange import Button, question_of
from memory import Choice

log = logging.getLogger(__name__)

Rows = tuple[tuple[Button, ...], ...]


def refusal(choice: Choice | None, presser: str, data: str) -> str | None:
    """Why a press is refused (a text key), or None when the presser may choose this option.

    No row: the message never offered anything (a forged press), or its buttons are older than the
    record (they are no longer valid). A row without options: its buttons were taken away (decided).
    Data that would change memory and that the message does not offer: forged (paging and showing are
    let through, a second tap on a page that has moved on is harmless). An owner other than the
    presser: somebody else's choice.
    """
    if choice is None:
        return "button_unknown"
    if not choice.options:
        return "button_stale"
    if data not in choice.options and changes_memory(data):
        return "button_unknown"
    if choice.owner is not None and choice.owner != presser:
        return "choice_not_yours"
    return None


VOTES = {"👍": "yes", "👎": "no"}  # a reaction on a yes/no question's buttons, as the button it stands for


def answer_of(choice: Choice | None, emoji: str) -> str | None:
    """The button a 👍 or 👎 on a message stands for: Ja or Nein of the yes/no question it asks; else None.

    A held tool call acts outside mnemo's memory: a 👍 (on Telegram a plain acknowledgement) never runs it, only a
    press of its own Ja does; a 👎 declines it as its Nein would."""
    verdict = VOTES.get(emoji)
    if choice is None or verdict is None or not choice.question:
        return None
    kind, _, number = choice.question.partition(":")
    if kind == "tool" and verdict == "yes":
        return None
    data = f"{kind}:{verdict}:{number}"
    return data if data in choice.options else None


def rows_of(choice: Choice) -> Rows:
    """The rows of buttons a recorded message shows."""
    return tuple(tuple(Button(label, data) for label, data in row) for row in choice.extra.get("rows", []))


def _answers(question: str, row: tuple[Button, ...]) -> bool:
    return question_of((row,)) == question


def message_ref(chat_id: int, message_id: int) -> str:
    """How a Telegram message is named in `store.choices`."""
    return f"{chat_id}:{message_id}"


class TelegramChoices:
    """Record the buttons shown under messages, check presses against them, and take them away."""

    name = "telegram"

    def __init__(self, bot: Bot, engine: Engine) -> None:
        self.bot = bot
        self.engine = engine
        self.choices = engine.store.choices

    async def offer(self, scope_user: str, chat_id: int, message_id: int, rows: Sequence[Sequence[Button]],
                    owner: str | None) -> None:
        """Record that a message shows these buttons (replacing what it showed before)."""
        shown = tuple(tuple(row) for row in rows if row)
        scope = await self.engine.scope_for(scope_user)
        await self.choices.record(
            scope, self.name, message_ref(chat_id, message_id), {b.data: b.data for row in shown for b in row},
            owner=owner, question=question_of(shown),
            extra={"chat": chat_id, "message": message_id, "rows": [[[b.label, b.data] for b in row] for row in shown]},
            now=self.engine.clock())

    async def find(self, chat_id: int, message_id: int) -> Choice | None:
        """The buttons recorded for a message, or None."""
        return await self.choices.find(self.name, message_ref(chat_id, message_id))

    async def close(self, scope_user: str, questions: Sequence[str], keep: str | None = None) -> None:
        """Take the buttons that answer these questions away from every message but `keep`."""
        if not questions:
            return
        scope = await self.engine.scope_for(scope_user)
        for question in questions:
            for choice in await self.choices.of_question(scope, question):
                if choice.channel == self.name and choice.message_ref != keep:
                    await self.drop(scope_user, choice, functools.partial(_answers, question))

    async def drop(self, scope_user: str, choice: Choice, which: Callable[[tuple[Button, ...]], bool]) -> None:
        """Take away the rows of a message's buttons that `which` picks; the rest stay pressable."""
        rows = rows_of(choice)
        kept = tuple(row for row in rows if not which(row))
        if kept != rows:
            await self.show_only(choice.extra["chat"], choice.extra["message"], kept)
        await self.replace(scope_user, choice, kept, choice.owner)

    async def replace(self, scope_user: str, choice: Choice, rows: Sequence[Sequence[Button]],
                      owner: str | None) -> None:
        """Record what a message shows now, unless its row is gone (a press that erased the scope, /deleteme)."""
        if await self.choices.find(self.name, choice.message_ref) is not None:
            await self.offer(scope_user, choice.extra["chat"], choice.extra["message"], rows, owner)

    async def show_only(self, chat_id: int, message_id: int, rows: Rows) -> None:
        """Set the buttons under a message (none: take them all away); a message already so or gone is fine."""
        try:
            await patiently(functools.partial(self.bot.edit_message_reply_markup, chat_id=chat_id,
                                              message_id=message_id, reply_markup=keyboard(rows)))
        except BadRequest as exc:
            log.info("buttons of message %s in chat %s left as they are: %s", message_id, chat_id, exc)
        except TelegramError as exc:
            log.warning("could not take buttons away from message %s in chat %s: %s", message_id, chat_id, exc)
