"""What mnemo sends to Telegram chats: messages split at Telegram's limit, edits into place, previews, typing, files.

Every Bot API call here waits out flood control (a 429 with retry_after) and makes the same call again, so a
message arrives once; what a reply shows is recorded in its ledger (`Shown`) the moment Telegram accepted it.
"""
from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from telegram import Bot, InlineKeyboardMarkup, ReplyParameters
from telegram.constants import ChatAction
from telegram.error import BadRequest, RetryAfter, TelegramError

from bot.channels import sending
from bot.channels.sending import FLOOD_TRIES, Sleep
from bot.channels.shown import Shown, show_parts
from bot.channels.streaming import LivePreview
from bot.channels.telegram.messages import face, split_message
from bot.channels.telegram.polling import retry_seconds
from bot.exchange import Document, Voice

log = logging.getLogger(__name__)

T = TypeVar("T")


def flood_seconds(outcome: object) -> float | None:
    """The seconds Telegram's flood control asks to wait when `outcome` is its RetryAfter; else None."""
    return retry_seconds(outcome) if isinstance(outcome, RetryAfter) else None


async def patiently(call: Callable[[], Awaitable[T]], sleep: Sleep = asyncio.sleep, tries: int = FLOOD_TRIES) -> T:
    """Run a Bot API call; on flood control (429 with retry_after) wait as told and run the same call again."""
    return await sending.patiently(call, flood_seconds, "Telegram flood control", sleep=sleep, tries=tries)


def not_modified(exc: BadRequest) -> bool:
    """Whether Telegram refused an edit because the message shows exactly that already."""
    return "message is not modified" in str(exc).lower()


def replying(reply_to: int | None) -> ReplyParameters | None:
    """A reply to this message, sent also when the message is gone."""
    return ReplyParameters(reply_to, allow_sending_without_reply=True) if reply_to else None


class Outgoing:
    """Sends and edits in Telegram chats."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    async def send(self, chat_id: int, bubbles: Sequence[str], markup: InlineKeyboardMarkup | None = None, *,
                   shown: Shown[int] | None = None, reply_to: int | None = None) -> list[int]:
        """Send bubbles as plain text split at Telegram's limit, buttons under the last; returns the message ids.

        A chunk already shown (the preview, or a part sent before a crash) is edited into place instead of sent
        again (not at all when it shows this already), and each new chunk is recorded in `shown` as soon as it
        is sent.
        """
        chunks = [chunk for bubble in bubbles for chunk in split_message(bubble)]

        def markup_of(part: int) -> InlineKeyboardMarkup | None:
            return markup if part == len(chunks) - 1 else None

        def looks(part: int) -> str:
            return face(chunks[part], markup_of(part))

        async def edit(part: int, earlier: int) -> bool:
            assert shown is not None  # only a shown part is edited
            if shown.looks(part) == looks(part):
                return True
            if not await self.finalize(chat_id, earlier, chunks[part], markup_of(part)):
                return False
            await shown.put(part, earlier, looks(part))
            return True

        async def send(part: int) -> int:
            sent = await patiently(functools.partial(
                self.bot.send_message, chat_id, chunks[part], reply_markup=markup_of(part),
                reply_parameters=replying(reply_to) if part == 0 else None))
            return int(sent.message_id)

        return await show_parts(len(chunks), shown, edit, send, looks)

    async def finalize(self, chat_id: int, message_id: int, text: str, markup: InlineKeyboardMarkup | None) -> bool:
        """Edit the preview into the final first chunk; False when the preview is gone (then it is sent anew)."""
        try:
            await patiently(functools.partial(self.bot.edit_message_text, text, chat_id=chat_id,
                                              message_id=message_id, reply_markup=markup))
        except BadRequest as exc:
            if not_modified(exc):
                return True
            log.warning("could not finalize the preview in chat %s (%s); sending the reply anew", chat_id, exc)
            return False
        return True

    def preview(self, chat_id: int, reply_to: int | None, group: bool, shown: Shown[int]) -> LivePreview[int]:
        """A preview message in this chat, edited while the model writes.

        After a crash it is the preview shown before, which keeps the words it showed until the new reply is
        longer. What it displays is recorded with each send and edit (before an edit too, as pending, so a
        replay never goes back behind an edit that may have arrived); an edit that changes nothing is not sent.
        """
        async def show(text: str) -> int:
            visible = split_message(text)[0]
            sent = await patiently(functools.partial(self.bot.send_message, chat_id, visible,
                                                     reply_parameters=replying(reply_to)))
            await shown.put(0, sent.message_id, face(visible, None))
            return int(sent.message_id)

        async def edit(message_id: int, text: str) -> None:
            visible = split_message(text)[0]
            if shown.looks(0) == face(visible, None):
                return
            await shown.put(0, message_id, face(visible, None, pending=True))  # a crash may come before the answer
            try:
                await patiently(functools.partial(self.bot.edit_message_text, visible,
                                                  chat_id=chat_id, message_id=message_id))
            except BadRequest as exc:  # after a crash, the edit in flight may have arrived after all
                if not not_modified(exc):
                    raise
            await shown.put(0, message_id, face(visible, None))

        return LivePreview.resumed(shown, show, edit, group)

    async def document(self, chat_id: int, document: Document) -> int:
        """Send a reply's file; its message id."""
        sent = await patiently(functools.partial(self.bot.send_document, chat_id, document.content,
                                                 filename=document.filename))
        return int(sent.message_id)

    async def voice(self, chat_id: int, voice: Voice, reply_to: int | None = None) -> int:
        """Send a spoken reply as a voice note (OGG/Opus); its message id."""
        seconds = round(voice.seconds) if voice.seconds is not None else None
        sent = await patiently(functools.partial(self.bot.send_voice, chat_id, voice.data, duration=seconds,
                                                 filename="voice.ogg", reply_parameters=replying(reply_to)))
        return int(sent.message_id)

    async def indicate(self, chat_id: int, on: bool) -> None:
        """Show "typing…" (Telegram ends it by itself); a failure is only logged."""
        if not on:
            return
        try:
            await self.bot.send_chat_action(chat_id, ChatAction.TYPING)
        except TelegramError as exc:
            log.warning("typing indicator for chat %s failed: %s", chat_id, exc)
