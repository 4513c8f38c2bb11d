"""The Telegram channel's answers to its buttons: a press, and a 👍 or 👎 standing for one (never a 👍 for a held
tool call's Ja: only its button runs it; any other reaction on one of the companion's messages is kept as
feedback). The channel itself (channel.py) builds on this part."""
from __future__ import annotations

import functools
import logging
from typing import Any

from telegram import CallbackQuery, Chat, Message, Update
from telegram.constants import ChatType
from telegram.error import BadRequest
from telegram.ext import Application, ContextTypes

from bot.channels.base import Channel
from bot.channels.telegram.choices import VOTES, TelegramChoices, answer_of, message_ref, refusal
from bot.channels.telegram.messages import GROUPS, chat_scope, keyboard, reaction_change, scope_user
from bot.channels.telegram.outgoing import not_modified, patiently
from bot.commands.catalog import owner_of
from bot.commands.invocation import Pressed
from bot.exchange import Button, Reaction
from bot.texts import t
from memory import Choice

log = logging.getLogger(__name__)

Context = ContextTypes.DEFAULT_TYPE


class TelegramPresses(Channel[int, int]):
    """Presses and reactions on the messages a Telegram channel showed."""

    app: Application[Any, Any, Any, Any, Any, Any]
    choices: TelegramChoices

    # --- presses ----------------------------------------------------------------------------------

    async def _on_press(self, update: Update, context: Context) -> None:
        """A button press: check it against the message's buttons, let the commands decide, update the messages.

        A press counts only on buttons the message offers, by the person who asked (in a group: the admin who
        asked; anyone's buttons that only show something); in a group only admins change memory.
        """
        query, chat, message = update.callback_query, update.effective_chat, update.effective_message
        assert query is not None  # ensured by CallbackQueryHandler
        if chat is None or message is None:
            await self._answer(query, t(self.lang, "button_unknown"))
            return
        if chat.type == ChatType.PRIVATE and chat.id != query.from_user.id:
            log.warning("press by %s on a message in private chat %s ignored", query.from_user.id, chat.id)
            return  # Telegram never sends this; a forged update must not show one user's data in another's chat
        scope, presser, data = chat_scope(chat, query.from_user), scope_user(query.from_user.id), query.data or ""
        admin = chat.type not in GROUPS or self.access.is_admin(presser)
        choice = await self.choices.find(chat.id, message.message_id)
        refused = refusal(choice, presser, data)
        if refused is not None:
            log.info("press %r by %s on message %s refused: %s", data[:80], presser, message.message_id, refused)
            await self._answer(query, t(self.lang, refused))
            if refused in ("button_unknown", "button_stale") and (choice is None or not choice.options):
                await self._take_all(scope, chat.id, message)
            return
        assert choice is not None  # a press is refused without one
        async with self._pressing(scope, data, admin, query.id) as pressed:
            await self._answer(query, pressed.notice)
            await self.choices.close(scope, pressed.closes, keep=choice.message_ref)
            if pressed.stale:
                await self.choices.drop(scope, choice, lambda row: data in {b.data for b in row})
            elif pressed.text is not None:
                await self._edit(query, pressed)
                await self.choices.replace(scope, choice, pressed.buttons, owner_of(pressed.buttons, presser, admin))

    # --- reactions --------------------------------------------------------------------------------------

    async def _on_reaction(self, update: Update, context: Context) -> None:
        """A person's reactions on a message changed: 👍 or 👎 on a yes/no question's buttons answers it (as a press
        of Ja or Nein would, by whoever may press them); any other emoji on one of the companion's messages is kept
        as feedback, and dropped when taken back. Reactions on other messages are not the companion's business."""
        change = update.message_reaction
        assert change is not None  # ensured by MessageReactionHandler
        chat, user = change.chat, change.user
        if user is None:  # an anonymous admin or a channel: nobody whose reaction counts
            return
        if chat.type == ChatType.PRIVATE and chat.id != user.id:
            log.warning("reaction by %s on a message in private chat %s ignored", user.id, chat.id)
            return  # Telegram never sends this; a forged update must not act in another person's chat
        added, removed = reaction_change(change.old_reaction, change.new_reaction)
        scope, sender, ref = chat_scope(chat, user), scope_user(user.id), message_ref(chat.id, change.message_id)
        choice = await self.choices.find(chat.id, change.message_id)
        answers = [data for emoji in added if (data := answer_of(choice, emoji)) is not None]
        if choice is not None and answers:
            await self._decide_by_reaction(chat, sender, scope, choice, answers[0], f"reaction:{update.update_id}")
        for emoji in added:  # on a question 👍 and 👎 answer (late: nothing); a 👍 on a held call is feedback
            if choice is None or emoji not in VOTES or (emoji == "👍" and choice.question.startswith("tool:")):
                await self.engine.feedback(Reaction(scope, self.name, ref, emoji, sender=sender))
        for emoji in removed:
            await self.engine.feedback(Reaction(scope, self.name, ref, emoji, sender=sender, removed=True))

    async def _decide_by_reaction(self, chat: Chat, presser: str, scope: str, choice: Choice, data: str,
                                  press_id: str) -> None:
        """Answer a yes/no question by a reaction, once, as the press of its button would; a reaction by someone who
        may not press it (somebody else's question, a member who is no admin) does nothing, and says nothing."""
        admin = chat.type not in GROUPS or self.access.is_admin(presser)
        refused = refusal(choice, presser, data)
        if refused is None and not admin:  # a yes or no changes memory: in a group, only an admin's
            refused = "group_admins_only"
        if refused is not None:
            log.info("reaction %r by %s on message %s decides nothing: %s", data, presser, choice.message_ref, refused)
            return
        message_id = int(choice.extra["message"])
        async with self._pressing(scope, data, admin, press_id) as pressed:
            await self.choices.close(scope, pressed.closes, keep=choice.message_ref)
            if pressed.stale:
                await self.choices.drop(scope, choice, lambda row: data in {b.data for b in row})
            elif pressed.text is not None:
                await self._edit_message(chat.id, message_id, pressed.text, pressed.buttons)
                await self.choices.replace(scope, choice, pressed.buttons, owner_of(pressed.buttons, presser, admin))
            elif pressed.notice:
                await self._tell(chat.id, pressed.notice)

    async def _edit_message(self, chat_id: int, message_id: int, text: str,
                            rows: tuple[tuple[Button, ...], ...]) -> None:
        """Show a decision in the message that asked, unless it shows exactly that already."""
        try:
            await patiently(functools.partial(self.app.bot.edit_message_text, text, chat_id=chat_id,
                                              message_id=message_id, reply_markup=keyboard(rows)))
        except BadRequest as exc:
            if not not_modified(exc):
                raise
            log.debug("message %s already shows %r", message_id, text)

    async def _take_all(self, scope: str, chat_id: int, message: Any) -> None:
        """Take every button away from a message whose buttons are no longer valid."""
        if getattr(message, "reply_markup", None) is None:
            return
        await self.choices.show_only(chat_id, message.message_id, ())
        await self.choices.offer(scope, chat_id, message.message_id, (), None)

    async def _answer(self, query: CallbackQuery, notice: str) -> None:
        """Answer a press with its short notice; a press too old to answer (a replay after a crash) is only logged."""
        try:
            await query.answer(notice or None)
        except BadRequest as exc:
            log.info("could not answer press %s: %s", query.id, exc)

    async def _edit(self, query: CallbackQuery, pressed: Pressed) -> None:
        """Show the decision in the pressed message, unless it shows exactly that already."""
        markup = keyboard(pressed.buttons)
        message = query.message
        if isinstance(message, Message) and message.text == pressed.text and message.reply_markup == markup:
            log.debug("message already shows %r", pressed.text)
            return
        try:
            await query.edit_message_text(pressed.text or "", reply_markup=markup)
        except BadRequest as exc:
            if not not_modified(exc):
                raise
            log.debug("message already shows %r", pressed.text)
