"""The Telegram channel: python-telegram-bot's Application in front of the engine and the commands.

Updates come in through the inbox (intake.py): stored before they are confirmed, handled once, marked handled after
the reply was recorded and sent. Private chats are for allowed users (unknown users get a pairing code); in allowed
groups mnemo answers only when mentioned or replied to, with the group's own memory. The turn of a text is the shared
one (bot/channels/base.py); this module reads Telegram's updates and answers presses and reactions: 👍 or 👎 on a yes/no
question's buttons answers it like pressing Ja or Nein, any other reaction on one of the companion's messages is kept
as feedback. (Telegram tells a bot of reactions in a group only where it is admin.)
"""
from __future__ import annotations

import functools
import logging
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from telegram import Message, Update, User
from telegram.constants import ChatType
from telegram.error import BadRequest, Forbidden, InvalidToken, NetworkError, RetryAfter, TelegramError
from telegram.ext import (
    Application,
    ApplicationBuilder,
    ApplicationHandlerStop,
    CallbackQueryHandler,
    MessageHandler,
    MessageReactionHandler,
    TypeHandler,
    filters,
)
from telegram.request import HTTPXRequest

from bot import tls
from bot.channels.access import AccessConfig, RecentIds, UnknownUsers
from bot.channels.base import Turn
from bot.channels.shown import Shown, show_once
from bot.channels.streaming import LivePreview
from bot.channels.telegram.choices import TelegramChoices, message_ref
from bot.channels.telegram.intake import CLAIM_SECONDS, Intake, PerChatOrder
from bot.channels.telegram.media import brings_picture, document_of, picture_of, voice_file, voice_of
from bot.channels.telegram.messages import (
    GROUPS,
    addressed_to_bot,
    bot_reaction,
    chat_scope,
    face_text,
    forwarded,
    group_text,
    keyboard,
    quoted_of,
    scope_user,
    telegram_id,
)
from bot.channels.telegram.outgoing import Outgoing, patiently
from bot.channels.telegram.polling import WATCHDOG, Poller, retry_seconds
from bot.channels.telegram.presses import Context, TelegramPresses
from bot.commands.catalog import menu
from bot.commands.runner import Commands
from bot.conversation.engine import Engine
from bot.errors import ConfigError
from bot.exchange import Attachment, Button, Reply
from bot.texts import t
from scheduler.errors import RetryLater

log = logging.getLogger(__name__)

VOICE_NOTES = filters.VOICE | filters.AUDIO | filters.VIDEO_NOTE | filters.Document.AUDIO


@dataclass(frozen=True)
class TelegramConfig:
    """The Telegram channel's part of the settings."""

    token: str
    base_url: str = "https://api.telegram.org/bot"
    allowed_users: frozenset[str] = frozenset()
    admins: frozenset[str] = frozenset()  # 'tg:<id>'; they may approve pairing codes with /pair
    unknown_users: UnknownUsers = "pair"
    pairing_minutes: float = 10.0
    allowed_groups: frozenset[str] = frozenset()  # group chat ids, e.g. '-1001234567890'
    streaming: bool = True
    watchdog: float = WATCHDOG
    webhook_url: str | None = None
    webhook_listen: str = "127.0.0.1"
    webhook_port: int = 8443
    webhook_secret: str | None = None
    # With several workers on one PostgreSQL database: this worker's name; it answers the chats it claims.
    worker: str | None = None
    claim_seconds: float = CLAIM_SECONDS  # how long its claim on a chat outlives a worker that died


def access_config(config: TelegramConfig) -> AccessConfig:
    """The access part of the Telegram settings, ids written as scopes."""
    return AccessConfig(allowed=frozenset(scope_user(telegram_id(u)) for u in config.allowed_users),
                        admins=frozenset(a for a in config.admins if a.startswith("tg:")),
                        unknown_users=config.unknown_users, pairing_minutes=config.pairing_minutes)


def file_base_url(base_url: str) -> str:
    """The file URL that goes with a Bot API base URL ending in /bot."""
    return base_url.rstrip("/").removesuffix("/bot") + "/file/bot"


class TelegramChannel(TelegramPresses):
    """Answers allowed Telegram users and groups through the engine and the commands; pushes messages on request."""

    name = "telegram"
    private_chats = "private chats"
    wire_errors = (TelegramError,)

    def __init__(self, engine: Engine, commands: Commands, config: TelegramConfig,
                 clock: Callable[[], float] = time.time) -> None:
        super().__init__(engine, commands, access_config(config), clock)
        self.config = config
        self.runs = engine.store.runs
        self.webhook_secret = config.webhook_secret or secrets.token_urlsafe(32)
        self._ignored_groups = RecentIds()
        self.app: Application[Any, Any, Any, Any, Any, Any] = (
            ApplicationBuilder().token(config.token).base_url(config.base_url)
            .base_file_url(file_base_url(config.base_url)).job_queue(None).updater(None)
            .request(HTTPXRequest(connection_pool_size=256, httpx_kwargs={"verify": tls.context()}))  # PTB's sizes
            .get_updates_request(HTTPXRequest(connection_pool_size=1, httpx_kwargs={"verify": tls.context()}))
            .concurrent_updates(PerChatOrder(lambda u: self.intake.handled(u), ours=lambda u: self.intake.ours(u)))
            .build()
        )
        self.intake = Intake(self.app, self.inbox, self.name, clock, self._keeps, config.worker,
                             config.claim_seconds)
        self.out = Outgoing(self.app.bot)
        self.choices = TelegramChoices(self.app.bot, engine)
        self._add_handlers()

    @property
    def poller(self) -> Poller | None:
        """The long polling, while it runs (None with a webhook)."""
        return self.intake.poller

    def _add_handlers(self) -> None:
        app = self.app
        app.add_handler(TypeHandler(Update, self._gate), group=-1)
        app.add_handler(MessageHandler(filters.UpdateType.EDITED, self._on_edited))
        app.add_handler(CallbackQueryHandler(self._on_press))
        app.add_handler(MessageReactionHandler(self._on_reaction))
        app.add_handler(MessageHandler(filters.UpdateType.MESSAGE & filters.TEXT, self._on_text))
        pictures = filters.PHOTO | filters.Document.IMAGE | filters.Sticker.ALL
        app.add_handler(MessageHandler(filters.UpdateType.MESSAGE & pictures, self._on_image))
        app.add_handler(MessageHandler(filters.UpdateType.MESSAGE & VOICE_NOTES, self._on_voice))
        app.add_handler(MessageHandler(filters.UpdateType.MESSAGE & filters.Document.ALL, self._on_document))
        app.add_handler(MessageHandler(
            filters.UpdateType.MESSAGE & ~filters.TEXT & ~filters.StatusUpdate.ALL, self._on_other))
        app.add_error_handler(self._on_error)

    # --- lifecycle ------------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect, register the command menu, answer what was left unhandled, then receive new updates."""
        self._warn_if_closed()
        try:
            await self.app.initialize()
            await self._set_menu()
            await self.app.start()
            await self.inbox.prune(self.clock())
            await self.runs.prune(self.clock())
            await self.engine.store.choices.prune(self.clock())
            await self.engine.store.reactions.prune(self.clock())
            await self.intake.replay()
            config = self.config
            await self.intake.receive(config.webhook_url, listen=config.webhook_listen, port=config.webhook_port,
                                      secret=self.webhook_secret, watchdog=config.watchdog)
        except BaseException as exc:
            await self.stop()
            if isinstance(exc, InvalidToken):
                raise ConfigError("Telegram did not accept MNEMO_TELEGRAM_TOKEN; "
                                  "copy it again from @BotFather.") from exc
            if isinstance(exc, NetworkError):
                raise ConfigError(f"Telegram is unreachable at {self.config.base_url} "
                                  f"(MNEMO_TELEGRAM_BASE_URL): {exc}.") from exc
            raise
        self.access.start_welcoming(self.name, self._welcome)  # users approved by `mnemo pair approve`
        log.info("telegram channel running as @%s (%s)", self.app.bot.username,
                 "webhook" if self.config.webhook_url else "polling")

    async def stop(self) -> None:
        """Stop receiving, finish the updates in hand, and disconnect (in reverse of start)."""
        await self.access.stop_welcoming()
        await self.intake.stop()
        if self.app.running:
            await self.app.stop()
        await self.app.shutdown()

    async def _set_menu(self) -> None:
        """Register the command menu in German, English, and the configured language as the default."""
        bot = self.app.bot
        try:
            for code in ("de", "en"):
                await bot.set_my_commands(menu(code), language_code=code)
            await bot.set_my_commands(menu(self.lang))
        except TelegramError:
            log.warning("could not register the command menu; commands still work when typed", exc_info=True)

    # --- updates in -------------------------------------------------------------------------------

    async def _keeps(self, update: Update) -> bool:
        """Whether an update's content may be stored: an allowed user's in private, or meant for mnemo in a group."""
        user, chat = update.effective_user, update.effective_chat
        if user is None or chat is None:
            return False
        if chat.type == ChatType.PRIVATE:
            return await self.access.allows(scope_user(user.id))
        if chat.type not in GROUPS or str(chat.id) not in self.config.allowed_groups:
            return False
        return self._group_update_for_mnemo(update)

    # --- texts ------------------------------------------------------------------------------------

    def _addressed(self, message: Message) -> bool:
        return addressed_to_bot(message, self.app.bot.id, self.app.bot.username)

    def _group_update_for_mnemo(self, update: Update) -> bool:
        """Whether an update in an allowed group is mnemo's business: a press, a reaction, or a message for it."""
        message = update.message or update.edited_message  # an edit for mnemo may show a crisis (`_on_edited`)
        return update.callback_query is not None or update.message_reaction is not None or (
            message is not None and self._for_mnemo(message))

    def _for_mnemo(self, message: Message) -> bool:
        """Whether a group message is one mnemo answers: a text, picture, voice note or document addressed to it."""
        return (message.text is not None or message.document is not None or brings_picture(message)
                or voice_file(message) is not None) and self._addressed(message)

    async def _gate(self, update: Update, context: Context) -> None:
        """Let through private chats with allowed users and what is meant for mnemo in allowed groups."""
        user, chat = update.effective_user, update.effective_chat
        if user is None or chat is None or user.is_bot:
            raise ApplicationHandlerStop
        if chat.type == ChatType.PRIVATE:
            if not await self.access.allows(scope_user(user.id)):
                await self._turn_away(update, user)
                raise ApplicationHandlerStop
            return
        if chat.type not in GROUPS:
            log.info("ignoring update %s from a %s chat", update.update_id, chat.type)
            raise ApplicationHandlerStop
        if str(chat.id) not in self.config.allowed_groups:
            if self._ignored_groups.first_time(chat.id):
                log.warning("ignoring group %s (%s): not on MNEMO_TELEGRAM_ALLOWED_GROUPS", chat.id, chat.title)
            raise ApplicationHandlerStop
        if not self._group_update_for_mnemo(update):
            raise ApplicationHandlerStop

    async def _turn_away(self, update: Update, user: User) -> None:
        """Answer an unknown user's message with a pairing code, a refusal or silence; store nothing of theirs."""
        if update.message is None:
            return
        text = await self.access.turn_away(self.name, scope_user(user.id), user.full_name)
        if text is not None:
            await self._tell(update.message.chat_id, text)

    async def _on_text(self, update: Update, context: Context) -> None:
        """A text: read who wrote what where, then take the shared turn (bot/channels/base.py)."""
        assert update.message is not None and update.message.text is not None
        await self.take_text(self._message_turn(update, update.message.text, update.message.text.startswith("/")))

    async def _on_image(self, update: Update, context: Context) -> None:
        """A photo, an image file or a sticker: downloaded (not when too large) and answered with its caption."""
        message = update.message
        assert message is not None
        caption = message.caption or (message.sticker.emoji or "" if message.sticker is not None else "")
        attachment = await picture_of(message, self.engine.config.image_max_bytes)
        await self.take_text(self._message_turn(update, caption, attachment=attachment))

    async def _on_voice(self, update: Update, context: Context) -> None:
        """A voice note (voice, audio, video note): downloaded unless it is too large or cannot be heard, then the
        shared turn with it (its caption as the text; a caption never runs a command)."""
        assert update.message is not None
        attachment = await voice_of(update.message, self.hears)
        assert attachment is not None  # ensured by the handler's filter
        await self.take_text(self._message_turn(update, update.message.caption or "", attachment=attachment))

    async def _on_document(self, update: Update, context: Context) -> None:
        """A document (a PDF, a text file): fetched unless too large or of a kind not read; its caption is the text."""
        assert update.message is not None
        attachment = await document_of(update.message, self.engine.config.document_max_bytes)
        await self.take_text(self._message_turn(update, update.message.caption or "", attachment=attachment))

    def _message_turn(self, update: Update, text: str, command: bool = False,
                      attachment: Attachment | None = None) -> Turn[int, int]:
        """The shared turn of a message: who wrote it where (in a group with the sender's name before the words,
        unless it is a command), the older message it quotes, whether it addressed mnemo, what it brings. An edited
        message is a message of its own (its id names the edit)."""
        message, user, chat = update.message or update.edited_message, update.effective_user, update.effective_chat
        assert message is not None and user is not None and chat is not None
        group = chat.type in GROUPS
        text = group_text(text, self.app.bot.username, user.first_name) if group and not command else text
        ref = message_ref(chat.id, message.message_id)
        if update.edited_message is not None:
            ref = f"{ref}:edit:{int(message.edit_date.timestamp()) if message.edit_date else update.update_id}"
        return Turn(
            chat.id, chat_scope(chat, user), scope_user(user.id), text, ref,
            str(update.update_id), group=group, command=command and not forwarded(message),  # a forward's '/…':
            replayed=self.intake.replayed(update),  # someone else's words, no command
            reply_to=message.message_id if group else None, origin=message.message_id,
            quoted=quoted_of(message, self.app.bot.id), addressed=not group or self._addressed(message),
            attachment=attachment, sent_at=message.date.timestamp() if message.date else None,
            title=chat.title or "" if group else "", forwarded=forwarded(message), language=user.language_code or "")

    async def _on_other(self, update: Update, context: Context) -> None:
        """A kind of message mnemo does not take (a file, a location, …): say so in one sentence."""
        assert update.effective_chat is not None
        await self._tell(update.effective_chat.id, t(self.lang, "not_text_kind"))

    async def _on_edited(self, update: Update, context: Context) -> None:
        """An edited message (or caption): answered as a message of its own when its new words show signs of crisis,
        so the help line comes; any other edit is ignored, since the original was already answered."""
        message = update.edited_message
        if message is None:
            return
        text = message.text or message.caption or ""
        if await self.edit_in_crisis(text, message_ref(message.chat_id, message.message_id)):
            await self.take_text(self._message_turn(update, text))

    async def _on_error(self, update: object, context: Context) -> None:
        """Log a failed update and tell its chat one short sentence (`Intake.again`: taken up again instead)."""
        if self.intake.again(update, context.error):
            return
        log.error("telegram update %s failed", getattr(update, "update_id", "?"), exc_info=context.error)
        user, chat = (update.effective_user, update.effective_chat) if isinstance(update, Update) else (None, None)
        if user is None or chat is None or isinstance(context.error, Forbidden):
            return
        if chat.type == ChatType.PRIVATE and not await self.access.allows(scope_user(user.id)):
            return
        await self._tell_failure(chat.id)

    # --- sending ----------------------------------------------------------------------------------------

    async def send(self, user_id: str, text: str, buttons: Sequence[Sequence[Button]] | None = None) -> None:
        """Push a message to an allowed user ('tg:<id>' or '<id>'); never to a group; raises TelegramError.

        Flood control asking for a longer wait than mnemo waits inside a call becomes RetryLater, so the
        outbox tries again after the time Telegram named."""
        if not await self._may_push(user_id):
            return
        chat_id = telegram_id(user_id)
        rows = tuple(tuple(row) for row in buttons or ())
        try:
            sent = await self.out.send(chat_id, (text,), keyboard(rows))
        except RetryAfter as exc:
            raise RetryLater(retry_seconds(exc), f"Telegram flood control: {exc}") from exc
        if sent and keyboard(rows) is not None:
            await self.choices.offer(scope_user(chat_id), chat_id, sent[-1], rows, scope_user(chat_id))
        await self.engine.delivered(scope_user(chat_id), self.name, [message_ref(chat_id, i) for i in sent], text=text)

    async def _deliver(self, chat_id: int, reply: Reply, scope: str, owner: str | None, *,
                       shown: Shown[int] | None = None, reply_to: int | None = None) -> list[int]:
        """Show a reply: its bubbles (replacing the preview), its buttons, and its document if it has one; the
        messages that show its bubbles.

        The buttons of the questions the reply closes are taken away first; the reply's own are recorded as
        the choice of `owner` (None: anyone let into the chat).
        """
        await self.choices.close(scope, reply.closes)
        ids = await self.out.send(chat_id, reply.bubbles, keyboard(reply.buttons), shown=shown, reply_to=reply_to)
        if ids and keyboard(reply.buttons) is not None:
            await self.choices.offer(scope, chat_id, ids[-1], reply.buttons, owner)
        if reply.document is not None:
            document = reply.document
            await show_once(shown, len(ids), lambda: self.out.document(chat_id, document))
        if reply.voice is not None:  # after the text, which stays searchable (and was maybe streamed)
            voice = reply.voice
            try:
                await show_once(shown, len(ids) + (reply.document is not None),
                                lambda: self.out.voice(chat_id, voice, reply_to))
            except BadRequest as exc:  # e.g. the person does not take voice messages: the text went anyway
                log.warning("the voice note for chat %s was refused; the reply went as text only: %s", chat_id, exc)
        return ids

    # --- the wire of the shared turn --------------------------------------------------------------------

    def _message_id(self, recorded: str) -> int:
        return int(recorded)

    def _message_ref(self, where: int, message: int) -> str:
        return message_ref(where, message)

    def _text_of(self, looks: str) -> str:
        return face_text(looks)

    def _user_scope(self, user_id: str) -> str:
        return scope_user(telegram_id(user_id))

    def _preview(self, turn: Turn[int, int], shown: Shown[int]) -> LivePreview[int] | None:
        return self.out.preview(turn.where, turn.reply_to, turn.group, shown) if self.config.streaming else None

    async def _indicate(self, where: int, on: bool) -> None:
        await self.out.indicate(where, on)

    async def _tell(self, where: int, text: str, answering: str | None = None, why: str = "") -> None:
        await self.out.send(where, (text,))

    async def _send_now(self, turn: Turn[int, int], text: str) -> int:
        return (await self.out.send(turn.where, (text,), reply_to=turn.reply_to))[0]

    async def _greet(self, user_id: str, text: str) -> None:
        await self._tell(telegram_id(user_id), text)

    async def _show_reply(self, turn: Turn[int, int], reply: Reply, shown: Shown[int], owner: str | None) -> list[int]:
        return await self._deliver(turn.where, reply, turn.scope, owner, shown=shown, reply_to=turn.reply_to)

    async def _react(self, where: int, message: int, emoji: str) -> None:
        allowed = bot_reaction(emoji)
        if allowed is None:
            log.info("no reaction %r: Telegram lets bots react only with its own list", emoji)
            return
        await patiently(functools.partial(self.app.bot.set_message_reaction, where, message, reaction=allowed))
