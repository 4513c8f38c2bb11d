"""The Telegram channel: python-telegram-bot's Application in front of the engine and the commands."""
from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import weakref
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from telegram import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.constants import ChatAction, ChatType
from telegram.error import BadRequest, Forbidden, InvalidToken, NetworkError, TelegramError
from telegram.ext import (
    Application,
    ApplicationBuilder,
    ApplicationHandlerStop,
    BaseUpdateProcessor,
    CallbackQueryHandler,
    ContextTypes,
    MessageHandler,
    TypeHandler,
    filters,
)

from bot.commands import Commands, Pressed, menu
from bot.engine import Button, Engine, Incoming, Reply
from bot.errors import ConfigError
from bot.texts import t

log = logging.getLogger(__name__)

MESSAGE_LIMIT = 4096  # Telegram's limit for one message, counted here in UTF-16 code units to be safe
TYPING_EVERY = 4.0  # Telegram shows "typing…" for about 5 s
ALLOWED_UPDATES = ("message", "edited_message", "callback_query")

Context = ContextTypes.DEFAULT_TYPE


@dataclass(frozen=True)
class TelegramConfig:
    """The Telegram channel's part of the settings."""

    token: str
    base_url: str = "https://api.telegram.org/bot"
    allowed_users: frozenset[str] = frozenset()
    refuse_unknown: bool = True
    webhook_url: str | None = None
    webhook_listen: str = "127.0.0.1"
    webhook_port: int = 8443
    webhook_secret: str | None = None


def scope_user(telegram_user_id: int) -> str:
    """The engine's user id for a Telegram user."""
    return f"tg:{telegram_user_id}"


def telegram_id(user_id: str) -> int:
    """The Telegram user id in 'tg:<id>' or '<id>'; ValueError for anything else."""
    bare = user_id.removeprefix("tg:")
    if not bare.lstrip("-").isdigit():
        raise ValueError(f"not a Telegram user id: {user_id!r}")
    return int(bare)


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _fitting(text: str, limit: int) -> int:
    """How many characters from the start of text fit into `limit` UTF-16 code units (at least one)."""
    units = 0
    for i, char in enumerate(text):
        units += 2 if ord(char) > 0xFFFF else 1
        if units > limit:
            return max(i, 1)
    return len(text)


def split_message(text: str, limit: int = MESSAGE_LIMIT) -> list[str]:
    """Split text into messages of at most `limit`, preferring paragraph, line and word boundaries."""
    chunks: list[str] = []
    rest = text.strip()
    while _utf16_len(rest) > limit:
        end = _fitting(rest, limit)
        cut, skip = end, 0
        for separator in ("\n\n", "\n", " "):
            found = rest.rfind(separator, 0, end)
            if found >= end // 2:
                cut, skip = found, len(separator)
                break
        chunks.append(rest[:cut].rstrip())
        rest = rest[cut + skip:].lstrip()
    chunks.append(rest)
    return [c for c in chunks if c]


def keyboard(rows: Sequence[Sequence[Button]]) -> InlineKeyboardMarkup | None:
    """Inline buttons for rows of Button; None when there are none."""
    markup = [[InlineKeyboardButton(b.label, callback_data=b.data) for b in row] for row in rows if row]
    return InlineKeyboardMarkup(markup) if markup else None


def file_base_url(base_url: str) -> str:
    """The file URL that goes with a Bot API base URL ending in /bot."""
    return base_url.rstrip("/").removesuffix("/bot") + "/file/bot"


class RecentIds:
    """Remembers the last `size` keys it was shown, to say whether a key is new."""

    def __init__(self, size: int = 10_000) -> None:
        self._order: deque[object] = deque(maxlen=size)
        self._keys: set[object] = set()

    def first_time(self, key: object) -> bool:
        """True the first time a key is shown (while it is among the last `size`)."""
        if key in self._keys:
            return False
        if len(self._order) == self._order.maxlen:
            self._keys.discard(self._order[0])
        self._order.append(key)
        self._keys.add(key)
        return True


class PerUserOrder(BaseUpdateProcessor):
    """Updates of different users run concurrently; those of one user run one after another, in order."""

    def __init__(self, max_concurrent_updates: int = 32) -> None:
        super().__init__(max_concurrent_updates)
        self._locks: weakref.WeakValueDictionary[int, asyncio.Lock] = weakref.WeakValueDictionary()

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        """Wait for this user's earlier updates, then process this one."""
        user = update.effective_user if isinstance(update, Update) else None
        key = user.id if user else 0
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        async with lock:
            await coroutine

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to free."""


class TelegramChannel:
    """Answers allowed Telegram users through the engine and the commands; pushes messages on request."""

    name = "telegram"

    def __init__(self, engine: Engine, commands: Commands, config: TelegramConfig) -> None:
        self.engine = engine
        self.commands = commands
        self.config = config
        self.lang = engine.config.language
        self.allowed = frozenset(u.removeprefix("tg:") for u in config.allowed_users)
        self.webhook_secret = config.webhook_secret or secrets.token_urlsafe(32)
        self._seen_updates = RecentIds()
        self._turned_away = RecentIds()
        self.app: Application[Any, Any, Any, Any, Any, Any] = (
            ApplicationBuilder().token(config.token).base_url(config.base_url)
            .base_file_url(file_base_url(config.base_url)).job_queue(None)
            .concurrent_updates(PerUserOrder()).build()
        )
        self._add_handlers()

    def _add_handlers(self) -> None:
        app = self.app
        app.add_handler(TypeHandler(Update, self._gate), group=-1)
        app.add_handler(MessageHandler(filters.UpdateType.EDITED, self._on_edited))
        app.add_handler(CallbackQueryHandler(self._on_press))
        app.add_handler(MessageHandler(filters.UpdateType.MESSAGE & filters.TEXT, self._on_text))
        app.add_handler(MessageHandler(
            filters.UpdateType.MESSAGE & ~filters.TEXT & ~filters.StatusUpdate.ALL, self._on_other))
        app.add_error_handler(self._on_error)

    # --- lifecycle ------------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect, register the command menu and begin polling (or listening for the webhook)."""
        if not self.allowed:
            log.warning("MNEMO_TELEGRAM_ALLOWED_USERS is empty: the bot will answer nobody")
        try:
            await self.app.initialize()
            await self._set_menu()
            await self.app.start()
            await self._receive()
        except BaseException as exc:
            await self.stop()
            if isinstance(exc, InvalidToken):
                raise ConfigError("Telegram did not accept MNEMO_TELEGRAM_TOKEN; copy it again from @BotFather.") from exc
            if isinstance(exc, NetworkError):
                raise ConfigError(f"Telegram is unreachable at {self.config.base_url} "
                                  f"(MNEMO_TELEGRAM_BASE_URL): {exc}.") from exc
            raise
        log.info("telegram channel running as @%s (%s)", self.app.bot.username,
                 "webhook" if self.config.webhook_url else "polling")

    async def _receive(self) -> None:
        """Start long polling, or the webhook server when a webhook URL is set."""
        updater = self.app.updater
        assert updater is not None  # ApplicationBuilder always builds one unless told not to
        if not self.config.webhook_url:
            await updater.start_polling(allowed_updates=ALLOWED_UPDATES)
            return
        await updater.start_webhook(
            listen=self.config.webhook_listen, port=self.config.webhook_port,
            url_path=urlparse(self.config.webhook_url).path.lstrip("/"), webhook_url=self.config.webhook_url,
            secret_token=self.webhook_secret, allowed_updates=ALLOWED_UPDATES,
        )

    async def stop(self) -> None:
        """Stop receiving, finish the updates in hand, and disconnect (in reverse of start)."""
        if self.app.updater is not None and self.app.updater.running:
            await self.app.updater.stop()
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

    # --- the Messenger port ---------------------------------------------------------------------

    async def send(self, user_id: str, text: str, buttons: Sequence[Sequence[Button]] | None = None) -> None:
        """Push a message to an allowed user ('tg:<id>' or '<id>'); raises TelegramError if Telegram refuses."""
        chat_id = telegram_id(user_id)
        if str(chat_id) not in self.allowed:
            log.warning("not pushing to Telegram user %s: not on MNEMO_TELEGRAM_ALLOWED_USERS", chat_id)
            return
        await self._send(chat_id, (text,), keyboard(buttons or ()))

    async def _send(self, chat_id: int, bubbles: Sequence[str], markup: InlineKeyboardMarkup | None) -> None:
        """Send bubbles as plain text, split at Telegram's limit, with the buttons under the last one."""
        chunks = [chunk for bubble in bubbles for chunk in split_message(bubble)]
        for i, chunk in enumerate(chunks):
            last = i == len(chunks) - 1
            await self.app.bot.send_message(chat_id, chunk, reply_markup=markup if last else None)

    async def _deliver(self, chat_id: int, reply: Reply) -> None:
        """Show a reply: its bubbles, its buttons, and its document if it has one."""
        await self._send(chat_id, reply.bubbles, keyboard(reply.buttons))
        if reply.document is not None:
            await self.app.bot.send_document(chat_id, reply.document.content, filename=reply.document.filename)

    # --- handlers ---------------------------------------------------------------------------------

    async def _gate(self, update: Update, context: Context) -> None:
        """Let through each update once, from private chats with allowed users; stop everything else."""
        if not self._seen_updates.first_time(update.update_id):
            log.info("update %s was delivered again; skipped", update.update_id)
            raise ApplicationHandlerStop
        user, chat = update.effective_user, update.effective_chat
        if user is None or chat is None:
            raise ApplicationHandlerStop
        if chat.type != ChatType.PRIVATE:
            log.info("ignoring update %s from a %s chat; mnemo talks in private chats only",
                     update.update_id, chat.type)
            raise ApplicationHandlerStop
        if str(user.id) not in self.allowed:
            await self._turn_away(user.id, chat.id)
            raise ApplicationHandlerStop

    async def _turn_away(self, user_id: int, chat_id: int) -> None:
        """Refuse an unknown user once per process (or stay silent), storing nothing of theirs."""
        if not self._turned_away.first_time(user_id):
            return
        log.warning("Telegram user %s is not on MNEMO_TELEGRAM_ALLOWED_USERS; %s", user_id,
                    "refused" if self.config.refuse_unknown else "ignored")
        if self.config.refuse_unknown:
            await self.app.bot.send_message(chat_id, t(self.lang, "refused"))

    async def _on_text(self, update: Update, context: Context) -> None:
        """A text: a /command goes to the commands, everything else to the engine."""
        message, user = update.message, update.effective_user
        assert message is not None and message.text is not None and user is not None  # ensured by the filter
        user_id = scope_user(user.id)
        async with self._typing(message.chat_id):
            reply = await self.commands.run(user_id, message.text) if message.text.startswith("/") else None
            if reply is None:
                reply = await self.engine.handle(Incoming(
                    user_id, message.text, channel=self.name,
                    channel_message_id=f"{message.chat_id}:{message.message_id}",
                ))
        if reply is None:
            log.info("message %s:%s was answered before; skipped", message.chat_id, message.message_id)
            return
        await self._deliver(message.chat_id, reply)

    async def _on_press(self, update: Update, context: Context) -> None:
        """A button press: let the commands decide, answer the press, and update the message."""
        query = update.callback_query
        assert query is not None  # ensured by CallbackQueryHandler
        pressed = await self.commands.press(scope_user(query.from_user.id), query.data or "")
        await query.answer(pressed.notice or None)
        if pressed.text is not None:
            await self._edit(query, pressed)

    async def _edit(self, query: CallbackQuery, pressed: Pressed) -> None:
        """Show the decision in the pressed message; an edit that changes nothing is fine."""
        try:
            await query.edit_message_text(pressed.text or "", reply_markup=keyboard(pressed.buttons))
        except BadRequest as exc:
            if "message is not modified" not in str(exc).lower():
                raise
            log.debug("message already shows %r", pressed.text)

    async def _on_other(self, update: Update, context: Context) -> None:
        """A photo, sticker, voice message or the like: say that only text is read."""
        assert update.effective_chat is not None
        await self.app.bot.send_message(update.effective_chat.id, t(self.lang, "not_text_kind"))

    async def _on_edited(self, update: Update, context: Context) -> None:
        """An edited message: ignored, since the original was already answered."""
        message = update.edited_message
        log.info("edited message %s ignored", f"{message.chat_id}:{message.message_id}" if message else "?")

    async def _on_error(self, update: object, context: Context) -> None:
        """Log a failed update and tell its allowed user one short sentence."""
        log.error("telegram update %s failed", getattr(update, "update_id", "?"), exc_info=context.error)
        user = update.effective_user if isinstance(update, Update) else None
        chat = update.effective_chat if isinstance(update, Update) else None
        if user is None or chat is None or str(user.id) not in self.allowed or isinstance(context.error, Forbidden):
            return
        try:
            await self.app.bot.send_message(chat.id, t(self.lang, "failed"))
        except TelegramError as exc:
            log.warning("could not tell chat %s about the failure: %s", chat.id, exc)

    @contextlib.asynccontextmanager
    async def _typing(self, chat_id: int) -> AsyncIterator[None]:
        """Show "typing…" now and every few seconds until the block is done."""
        await self._send_typing(chat_id)
        task = asyncio.create_task(self._keep_typing(chat_id), name=f"typing:{chat_id}")
        try:
            yield
        finally:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise

    async def _keep_typing(self, chat_id: int) -> None:
        while True:
            await asyncio.sleep(TYPING_EVERY)
            await self._send_typing(chat_id)

    async def _send_typing(self, chat_id: int) -> None:
        try:
            await self.app.bot.send_chat_action(chat_id, ChatAction.TYPING)
        except TelegramError as exc:
            log.warning("typing indicator for chat %s failed: %s", chat_id, exc)
