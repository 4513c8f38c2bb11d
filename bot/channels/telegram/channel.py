"""The Telegram channel: python-telegram-bot's Application in front of the engine and the commands.

Updates come from our own long polling (bot/telegram_polling.py) or PTB's webhook server; either way each
one is stored in the inbox before it is confirmed, handled once, and marked handled after its reply was
recorded and sent. Private chats are for allowed users (unknown users get a pairing code); in allowed
groups mnemo answers only when mentioned or replied to, with the group's own memory.
"""
from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import secrets
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

from telegram import (
    CallbackQuery,
    InlineKeyboardMarkup,
    Message,
    ReplyParameters,
    Update,
    User,
)
from telegram.constants import ChatAction, ChatType
from telegram.error import BadRequest, Forbidden, InvalidToken, NetworkError, RetryAfter, TelegramError
from telegram.ext import (
    Application,
    ApplicationBuilder,
    ApplicationHandlerStop,
    BaseUpdateProcessor,
    CallbackQueryHandler,
    ContextTypes,
    MessageHandler,
    TypeHandler,
    Updater,
    filters,
)

from bot.channels.access import Access, AccessConfig, ApprovedUser, RecentIds, UnknownUsers
from bot.channels.streaming import GROUP_PREVIEW_EVERY, PREVIEW_EVERY, LivePreview
from bot.channels.telegram.choices import TelegramChoices, message_ref, refusal
from bot.channels.telegram.messages import (
    GROUPS,
    addressed_to_bot,
    chat_scope,
    face,
    face_text,
    group_text,
    keyboard,
    scope_user,
    split_message,
    telegram_id,
)
from bot.channels.telegram.polling import WATCHDOG, Poller, patiently, retry_seconds
from bot.commands.call import Pressed
from bot.commands.catalog import menu, owner_of
from bot.commands.runner import Commands
from bot.conversation.engine import Button, Engine, Incoming, Reply
from bot.errors import ConfigError
from bot.texts import t
from memory.inbox import Inbox
from memory.pairing import is_group_scope
from scheduler.errors import RetryLater

log = logging.getLogger(__name__)

TYPING_EVERY = 4.0  # Telegram shows "typing…" for about 5 s
ALLOWED_UPDATES = ("message", "edited_message", "callback_query")

Context = ContextTypes.DEFAULT_TYPE


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


def access_config(config: TelegramConfig) -> AccessConfig:
    """The access part of the Telegram settings, ids written as scopes."""
    return AccessConfig(
        allowed=frozenset(scope_user(telegram_id(u)) for u in config.allowed_users),
        admins=frozenset(a for a in config.admins if a.startswith("tg:")),
        unknown_users=config.unknown_users, pairing_minutes=config.pairing_minutes,
    )


def file_base_url(base_url: str) -> str:
    """The file URL that goes with a Bot API base URL ending in /bot."""
    return base_url.rstrip("/").removesuffix("/bot") + "/file/bot"


class PerChatOrder(BaseUpdateProcessor):
    """Updates of different chats run concurrently; those of one chat one after another, in order.

    After an update was processed (its reply recorded and sent, or its failure reported), `done` is
    called; an update whose processing was cancelled (shutdown, crash) is not marked.
    """

    def __init__(self, done: Callable[[Update], Awaitable[None]], max_concurrent_updates: int = 32) -> None:
        super().__init__(max_concurrent_updates)
        self._done = done
        self._locks: weakref.WeakValueDictionary[int, asyncio.Lock] = weakref.WeakValueDictionary()

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        """Wait for this chat's earlier updates, process this one, then mark it handled."""
        chat = update.effective_chat if isinstance(update, Update) else None
        key = chat.id if chat else 0
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        async with lock:
            await coroutine
            if isinstance(update, Update):
                await self._done(update)

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to free."""


class Shown:
    """The messages one update has shown in its chat so far and what each displays, recorded in the inbox.

    A replay after a crash edits these messages instead of sending them again, so a reply appears once; an
    edit that would change nothing is not sent, and a streamed preview goes on from the words it showed.
    """

    def __init__(self, inbox: Inbox, channel: str, event_id: str, message_ids: Sequence[int] = (),
                 faces: Sequence[str] = ()) -> None:
        self.inbox, self.channel, self.event_id = inbox, channel, event_id
        self.ids = list(message_ids)
        self.faces = list(faces)[:len(self.ids)] + [""] * (len(self.ids) - len(faces))

    def at(self, part: int) -> int | None:
        """The message shown as this part of the reply (0 = the first chunk or the preview), if any."""
        return self.ids[part] if part < len(self.ids) else None

    def face(self, part: int) -> str:
        """What this part displays (see `telegram_messages.face`); empty when unknown."""
        return self.faces[part] if part < len(self.faces) else ""

    def text(self, part: int) -> str:
        """The text this part displays; empty when unknown."""
        return face_text(self.faces[part]) if self.face(part) else ""

    async def put(self, part: int, message_id: int, looks: str = "") -> None:
        """Record that this part of the reply is now shown as this message, displaying `looks`."""
        if part < len(self.ids):
            self.ids[part], self.faces[part] = message_id, looks
        else:
            self.ids.append(message_id)
            self.faces.append(looks)
        await self.inbox.show(self.channel, self.event_id, [str(i) for i in self.ids], self.faces)


class TelegramChannel:
    """Answers allowed Telegram users and groups through the engine and the commands; pushes messages on request."""

    name = "telegram"

    def __init__(self, engine: Engine, commands: Commands, config: TelegramConfig,
                 clock: Callable[[], float] = time.time) -> None:
        self.engine = engine
        self.commands = commands
        self.config = config
        self.clock = clock
        self.lang = engine.config.language
        self.access = Access(engine.store.access, access_config(config), self.lang, clock)
        self.inbox = engine.store.inbox
        self.runs = engine.store.runs
        self.webhook_secret = config.webhook_secret or secrets.token_urlsafe(32)
        self._replayed: set[int] = set()
        self._ignored_groups = RecentIds()
        self.app: Application[Any, Any, Any, Any, Any, Any] = (
            ApplicationBuilder().token(config.token).base_url(config.base_url)
            .base_file_url(file_base_url(config.base_url)).job_queue(None).updater(None)
            .concurrent_updates(PerChatOrder(self._handled)).build()
        )
        self.poller: Poller | None = None
        self._webhook: Updater | None = None
        self._pump: asyncio.Task[None] | None = None
        self.choices = TelegramChoices(self.app.bot, engine)
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
        """Connect, register the command menu, answer what was left unhandled, then receive new updates."""
        if not self.access.config.allowed and self.access.config.unknown_users != "pair":
            log.warning("MNEMO_TELEGRAM_ALLOWED_USERS is empty and pairing is off: the bot will answer nobody")
        try:
            await self.app.initialize()
            await self._set_menu()
            await self.app.start()
            await self.inbox.prune(self.clock())
            await self.runs.prune(self.clock())
            await self.engine.store.choices.prune(self.clock())
            await self._replay()
            await self._receive()
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

    async def _receive(self) -> None:
        """Start long polling, or the webhook server when a webhook URL is set."""
        if not self.config.webhook_url:
            self.poller = Poller(self.app.bot, self._take, allowed_updates=ALLOWED_UPDATES,
                                 watchdog=self.config.watchdog)
            await self.poller.start()
            return
        arrived: asyncio.Queue[object] = asyncio.Queue()
        self._webhook = Updater(bot=self.app.bot, update_queue=arrived)
        await self._webhook.initialize()
        self._pump = asyncio.create_task(self._pump_webhook(arrived), name="telegram-webhook-intake")
        await self._webhook.start_webhook(
            listen=self.config.webhook_listen, port=self.config.webhook_port,
            url_path=urlparse(self.config.webhook_url).path.lstrip("/"), webhook_url=self.config.webhook_url,
            secret_token=self.webhook_secret, allowed_updates=ALLOWED_UPDATES,
        )

    async def stop(self) -> None:
        """Stop receiving, finish the updates in hand, and disconnect (in reverse of start)."""
        await self.access.stop_welcoming()
        if self.poller is not None:
            await self.poller.stop()
            self.poller = None
        if self._webhook is not None:
            if self._webhook.running:
                await self._webhook.stop()
            await self._webhook.shutdown()
            self._webhook = None
        if self._pump is not None:
            self._pump.cancel()
            await asyncio.gather(self._pump, return_exceptions=True)
            self._pump = None
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

    # --- the inbox: store first, confirm after, mark handled last -------------------------------------------

    async def _take(self, updates: Sequence[Update]) -> None:
        """Store a batch in the inbox, then queue the updates that are new (a redelivery is dropped here)."""
        rows = [(str(u.update_id), json.dumps(u.to_dict()) if await self._keeps(u) else None) for u in updates]
        new = set(await self.inbox.record(self.name, rows, self.clock()))
        for update in updates:
            if str(update.update_id) in new:
                await self.app.update_queue.put(update)

    async def _keeps(self, update: Update) -> bool:
        """Whether an update's content may be stored: an allowed user's in private, or meant for mnemo in a group."""
        user, chat = update.effective_user, update.effective_chat
        if user is None or chat is None:
            return False
        if chat.type == ChatType.PRIVATE:
            return await self.access.allows(scope_user(user.id))
        if chat.type not in GROUPS or str(chat.id) not in self.config.allowed_groups:
            return False
        message = update.message
        return update.callback_query is not None or (
            message is not None and message.text is not None and self._addressed(message))

    async def _replay(self) -> None:
        """Queue the updates that were stored but not handled when mnemo stopped (or crashed)."""
        for entry in await self.inbox.unhandled(self.name):
            assert entry.payload is not None  # unhandled() lists only rows with content
            update = Update.de_json(json.loads(entry.payload), self.app.bot)
            self._replayed.add(update.update_id)
            await self.app.update_queue.put(update)
        if self._replayed:
            log.warning("answering %d Telegram updates left unhandled by the last run", len(self._replayed))

    async def _pump_webhook(self, arrived: asyncio.Queue[object]) -> None:
        """Move what the webhook server received through the inbox into the application."""
        while True:
            update = await arrived.get()
            if isinstance(update, Update):
                await self._take([update])

    async def _handled(self, update: Update) -> None:
        """Mark an update handled (its reply was recorded and sent, or its failure told)."""
        await self.inbox.done(self.name, str(update.update_id), self.clock())
        self._replayed.discard(update.update_id)

    # --- sending ----------------------------------------------------------------------------------------

    async def send(self, user_id: str, text: str, buttons: Sequence[Sequence[Button]] | None = None) -> None:
        """Push a message to an allowed user ('tg:<id>' or '<id>'); never to a group; raises TelegramError.

        Flood control asking for a longer wait than mnemo waits inside a call becomes RetryLater, so the
        outbox tries again after the time Telegram named.
        """
        if is_group_scope(user_id):
            raise ValueError(f"not pushing to {user_id}: mnemo speaks first only in private chats")
        chat_id = telegram_id(user_id)
        if not await self.access.allows(scope_user(chat_id)):
            log.warning("not pushing to Telegram user %s: neither on MNEMO_TELEGRAM_ALLOWED_USERS nor paired", chat_id)
            return
        rows = tuple(tuple(row) for row in buttons or ())
        try:
            sent = await self._send(chat_id, (text,), keyboard(rows))
        except RetryAfter as exc:
            raise RetryLater(retry_seconds(exc), f"Telegram flood control: {exc}") from exc
        if sent and keyboard(rows) is not None:
            await self.choices.offer(scope_user(chat_id), chat_id, sent[-1], rows, scope_user(chat_id))

    async def _send(self, chat_id: int, bubbles: Sequence[str], markup: InlineKeyboardMarkup | None, *,
                    shown: Shown | None = None, reply_to: int | None = None) -> list[int]:
        """Send bubbles as plain text split at Telegram's limit, buttons under the last; returns the message ids.

        A chunk already shown (the preview, or a part sent before a crash) is edited into place instead of sent
        again (not at all when it shows this already), and each new chunk is recorded in `shown` as soon as it
        is sent. A 429 (flood control) is waited out and the same chunk sent again, so every chunk arrives once.
        """
        chunks = [chunk for bubble in bubbles for chunk in split_message(bubble)]
        ids = []
        for i, chunk in enumerate(chunks):
            markup_here = markup if i == len(chunks) - 1 else None
            looks = face(chunk, markup_here)
            earlier = shown.at(i) if shown is not None else None
            if shown is not None and earlier is not None and (
                    shown.face(i) == looks or await self._finalize(chat_id, earlier, chunk, markup_here)):
                if shown.face(i) != looks:
                    await shown.put(i, earlier, looks)
                ids.append(earlier)
                continue
            replying = ReplyParameters(reply_to, allow_sending_without_reply=True) if i == 0 and reply_to else None
            sent = await patiently(functools.partial(self.app.bot.send_message, chat_id, chunk,
                                                     reply_markup=markup_here, reply_parameters=replying))
            ids.append(sent.message_id)
            if shown is not None:
                await shown.put(i, sent.message_id, looks)
        return ids

    async def _finalize(self, chat_id: int, message_id: int, text: str, markup: InlineKeyboardMarkup | None) -> bool:
        """Edit the preview into the final first chunk; False when the preview is gone (then it is sent anew)."""
        try:
            await patiently(functools.partial(self.app.bot.edit_message_text, text, chat_id=chat_id,
                                              message_id=message_id, reply_markup=markup))
        except BadRequest as exc:
            if "message is not modified" in str(exc).lower():
                return True
            log.warning("could not finalize the preview in chat %s (%s); sending the reply anew", chat_id, exc)
            return False
        return True

    async def _deliver(self, chat_id: int, reply: Reply, scope: str, owner: str | None, *, shown: Shown | None = None,
                       reply_to: int | None = None) -> None:
        """Show a reply: its bubbles (replacing the preview), its buttons, and its document if it has one.

        The buttons of the questions the reply closes are taken away first; the reply's own are recorded as
        the choice of `owner` (None: anyone let into the chat).
        """
        await self.choices.close(scope, reply.closes)
        ids = await self._send(chat_id, reply.bubbles, keyboard(reply.buttons), shown=shown, reply_to=reply_to)
        if ids and keyboard(reply.buttons) is not None:
            await self.choices.offer(scope, chat_id, ids[-1], reply.buttons, owner)
        parts = len(ids)
        if reply.document is not None and (shown is None or shown.at(parts) is None):
            document = reply.document
            sent = await patiently(functools.partial(self.app.bot.send_document, chat_id, document.content,
                                                     filename=document.filename))
            if shown is not None:
                await shown.put(parts, sent.message_id)

    def _preview(self, chat_id: int, reply_to: int | None, group: bool, shown: Shown) -> LivePreview[int]:
        """A preview message in this chat, edited while the model writes.

        After a crash it is the preview shown before, which keeps the words it showed until the new reply is
        longer. What it displays is recorded with each send and edit (before an edit too, as pending, so a
        replay never goes back behind an edit that may have arrived); an edit that changes nothing is not sent.
        """
        async def show(text: str) -> int:
            replying = ReplyParameters(reply_to, allow_sending_without_reply=True) if reply_to else None
            visible = split_message(text)[0]
            sent = await patiently(functools.partial(self.app.bot.send_message, chat_id, visible,
                                                     reply_parameters=replying))
            await shown.put(0, sent.message_id, face(visible, None))
            return sent.message_id

        async def edit(message_id: int, text: str) -> None:
            visible = split_message(text)[0]
            if shown.face(0) == face(visible, None):
                return
            await shown.put(0, message_id, face(visible, None, pending=True))  # a crash may come before the answer
            try:
                await patiently(functools.partial(self.app.bot.edit_message_text, visible,
                                                  chat_id=chat_id, message_id=message_id))
            except BadRequest as exc:  # after a crash, the edit in flight may have arrived after all
                if "message is not modified" not in str(exc).lower():
                    raise
            await shown.put(0, message_id, face(visible, None))

        preview = LivePreview(show, edit, GROUP_PREVIEW_EVERY if group else PREVIEW_EVERY)
        preview.resume(shown.at(0), shown.text(0))
        return preview

    async def _shown(self, update: Update) -> Shown:
        """What this update showed before the last run stopped (only a replayed update can have shown anything)."""
        event = str(update.update_id)
        if update.update_id not in self._replayed:
            return Shown(self.inbox, self.name, event)
        earlier = await self.inbox.shown(self.name, event)
        faces = await self.inbox.shown_texts(self.name, event)
        return Shown(self.inbox, self.name, event, [int(i) for i in earlier], faces)

    # --- handlers ---------------------------------------------------------------------------------

    def _addressed(self, message: Message) -> bool:
        return addressed_to_bot(message, self.app.bot.id, self.app.bot.username)

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
        message = update.message
        if update.callback_query is None and (message is None or message.text is None or not self._addressed(message)):
            raise ApplicationHandlerStop

    async def _turn_away(self, update: Update, user: User) -> None:
        """Answer an unknown user's message with a pairing code, a refusal or silence; store nothing of theirs."""
        if update.message is None:
            return
        text = await self.access.turn_away(self.name, scope_user(user.id), user.full_name)
        if text is not None:
            await patiently(functools.partial(self.app.bot.send_message, update.message.chat_id, text))

    async def _on_text(self, update: Update, context: Context) -> None:
        """A text: an admin's /pair, a /command, or a message for the engine (streamed when that is on)."""
        message, user, chat = update.message, update.effective_user, update.effective_chat
        assert message is not None and message.text is not None and user is not None and chat is not None
        group, command = chat.type in GROUPS, message.text.startswith("/")
        if not group and await self._admin(chat.id, scope_user(user.id), message.text):
            return
        if group and command and not self.access.is_admin(scope_user(user.id)):
            log.info("command from a group member who is no admin ignored in group %s", chat.id)
            return
        scope, sender = chat_scope(chat, user), scope_user(user.id)
        may_decide = not group or self.access.is_admin(sender)
        text = (group_text(message.text, self.app.bot.username, user.first_name) if group and not command
                else message.text)
        ref = message_ref(chat.id, message.message_id)
        incoming = Incoming(scope, text, channel=self.name, channel_message_id=ref, sender=sender,
                            may_decide=may_decide)
        reply_to = message.message_id if group else None
        shown = await self._shown(update)
        preview = self._preview(chat.id, reply_to, group, shown) if self.config.streaming else None
        try:
            async with self._typing(chat.id, preview):
                reply = await self.commands.run(scope, text, channel=self.name, ref=ref) if command else None
                ran_command = reply is not None
                if reply is None:
                    reply = await self.engine.handle(incoming, on_progress=preview.update if preview else None)
        finally:
            if preview is not None:
                await preview.close()
        if reply is None and update.update_id in self._replayed:
            reply = await self.engine.earlier_reply(incoming)  # recorded before a crash, maybe never sent
        if reply is None:
            log.info("message %s was answered before; skipped", incoming.channel_message_id)
            return
        async with self._once(scope, ref) if ran_command else contextlib.nullcontext():
            await self._deliver(chat.id, reply, scope, owner_of(reply.buttons, sender, may_decide), shown=shown,
                                reply_to=reply_to)

    @contextlib.asynccontextmanager
    async def _once(self, scope: str, ref: str) -> AsyncIterator[None]:
        """Mark the answer of a command or press delivered after the block, or after it failed, so its kept copy goes.

        Not when the block is cancelled (shutdown): the update is not handled then and its replay delivers it.
        """
        try:
            yield
        except Exception:  # the failure is told and the update counts as handled
            await self.commands.delivered(scope, self.name, ref)
            raise
        await self.commands.delivered(scope, self.name, ref)

    async def _admin(self, chat_id: int, user_id: str, text: str) -> bool:
        """Run an admin's /pair command; True when it was one."""
        answer = await self.access.admin_command(user_id, text)
        if answer is None:
            return False
        await self._send(chat_id, (answer.text,), None)
        if answer.approved is not None:
            await self._welcome(answer.approved)
        return True

    async def _welcome(self, user: ApprovedUser) -> None:
        """Tell an approved user (from a chat or the command line) that they can write now."""
        if user.channel != self.name:
            return
        try:
            await self._send(telegram_id(user.user_id), (t(self.lang, "paired_welcome"),), None)
        except TelegramError as exc:
            log.warning("could not welcome %s: %s", user.user_id, exc)

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
        ref = f"press:{query.id}"
        pressed = await self.commands.press(scope, data, admin=admin, channel=self.name, ref=ref)
        async with self._once(scope, ref):
            await self._answer(query, pressed.notice)
            await self.choices.close(scope, pressed.closes, keep=choice.message_ref)
            if pressed.stale:
                await self.choices.drop(scope, choice, lambda row: data in {b.data for b in row})
            elif pressed.text is not None:
                await self._edit(query, pressed)
                await self.choices.replace(scope, choice, pressed.buttons, owner_of(pressed.buttons, presser, admin))

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
            if "message is not modified" not in str(exc).lower():
                raise
            log.debug("message already shows %r", pressed.text)

    async def _on_other(self, update: Update, context: Context) -> None:
        """A photo, sticker, voice message or the like: say that only text is read."""
        assert update.effective_chat is not None
        await patiently(functools.partial(self.app.bot.send_message, update.effective_chat.id,
                                          t(self.lang, "not_text_kind")))

    async def _on_edited(self, update: Update, context: Context) -> None:
        """An edited message: ignored, since the original was already answered."""
        message = update.edited_message
        log.info("edited message %s ignored", f"{message.chat_id}:{message.message_id}" if message else "?")

    async def _on_error(self, update: object, context: Context) -> None:
        """Log a failed update and tell its chat one short sentence."""
        log.error("telegram update %s failed", getattr(update, "update_id", "?"), exc_info=context.error)
        user = update.effective_user if isinstance(update, Update) else None
        chat = update.effective_chat if isinstance(update, Update) else None
        if user is None or chat is None or isinstance(context.error, Forbidden):
            return
        if chat.type == ChatType.PRIVATE and not await self.access.allows(scope_user(user.id)):
            return
        try:
            await patiently(functools.partial(self.app.bot.send_message, chat.id, t(self.lang, "failed")))
        except TelegramError as exc:
            log.warning("could not tell chat %s about the failure: %s", chat.id, exc)

    @contextlib.asynccontextmanager
    async def _typing(self, chat_id: int, preview: LivePreview[int] | None = None) -> AsyncIterator[None]:
        """Show "typing…" now and every few seconds until the block is done or the preview is visible."""
        await self._send_typing(chat_id)
        task = asyncio.create_task(self._keep_typing(chat_id, preview), name=f"typing:{chat_id}")
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

    async def _keep_typing(self, chat_id: int, preview: LivePreview[int] | None) -> None:
        while True:
            await asyncio.sleep(TYPING_EVERY)
            if preview is not None and preview.visible:
                return
            await self._send_typing(chat_id)

    async def _send_typing(self, chat_id: int) -> None:
        try:
            await self.app.bot.send_chat_action(chat_id, ChatAction.TYPING)
        except TelegramError as exc:
            log.warning("typing indicator for chat %s failed: %s", chat_id, exc)
