"""How Telegram updates come in: stored before they are confirmed, one chat's in order, marked handled last.

Updates come from our own long polling (polling.py) or PTB's webhook server; either way each one is stored in the
inbox before it is confirmed, handled once, and marked handled after its reply was recorded and sent. What an
earlier run stored and did not finish is queued again at start (a replay).
"""
from __future__ import annotations

import asyncio
import json
import logging
import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import urlparse

from telegram import Update
from telegram.ext import Application, BaseUpdateProcessor, Updater

from bot.channels.telegram.polling import WATCHDOG, Poller
from memory.inbox import Inbox

log = logging.getLogger(__name__)

ALLOWED_UPDATES = ("message", "edited_message", "callback_query", "message_reaction")


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


class Intake:
    """Store first, confirm after, mark handled last: the inbox between Telegram and the application.

    `keeps` says whether an update's content may be stored (an unknown user's is recorded without it).
    """

    def __init__(self, app: Application[Any, Any, Any, Any, Any, Any], inbox: Inbox, channel: str,
                 clock: Callable[[], float], keeps: Callable[[Update], Awaitable[bool]]) -> None:
        self.app = app
        self.inbox = inbox
        self.channel = channel
        self.clock = clock
        self.keeps = keeps
        self.poller: Poller | None = None
        self._replayed: set[int] = set()
        self._webhook: Updater | None = None
        self._pump: asyncio.Task[None] | None = None

    def replayed(self, update: Update) -> bool:
        """Whether an earlier run stored this update and did not finish it."""
        return update.update_id in self._replayed

    async def take(self, updates: Sequence[Update]) -> None:
        """Store a batch in the inbox, then queue the updates that are new (a redelivery is dropped here)."""
        rows = [(str(u.update_id), json.dumps(u.to_dict()) if await self.keeps(u) else None) for u in updates]
        new = set(await self.inbox.record(self.channel, rows, self.clock()))
        for update in updates:
            if str(update.update_id) in new:
                await self.app.update_queue.put(update)

    async def replay(self) -> None:
        """Queue the updates that were stored but not handled when mnemo stopped (or crashed)."""
        for entry in await self.inbox.unhandled(self.channel):
            assert entry.payload is not None  # unhandled() lists only rows with content
            update = Update.de_json(json.loads(entry.payload), self.app.bot)
            self._replayed.add(update.update_id)
            await self.app.update_queue.put(update)
        if self._replayed:
            log.warning("answering %d Telegram updates left unhandled by the last run", len(self._replayed))

    async def handled(self, update: Update) -> None:
        """Mark an update handled (its reply was recorded and sent, or its failure told)."""
        await self.inbox.done(self.channel, str(update.update_id), self.clock())
        self._replayed.discard(update.update_id)

    async def receive(self, webhook_url: str | None, *, listen: str = "127.0.0.1", port: int = 8443,
                      secret: str | None = None, watchdog: float = WATCHDOG) -> None:
        """Start long polling, or the webhook server when a webhook URL is set."""
        if not webhook_url:
            self.poller = Poller(self.app.bot, self.take, allowed_updates=ALLOWED_UPDATES, watchdog=watchdog)
            await self.poller.start()
            return
        arrived: asyncio.Queue[object] = asyncio.Queue()
        self._webhook = Updater(bot=self.app.bot, update_queue=arrived)
        await self._webhook.initialize()
        self._pump = asyncio.create_task(self._pump_webhook(arrived), name="telegram-webhook-intake")
        await self._webhook.start_webhook(
            listen=listen, port=port, url_path=urlparse(webhook_url).path.lstrip("/"), webhook_url=webhook_url,
            secret_token=secret, allowed_updates=ALLOWED_UPDATES,
        )

    async def _pump_webhook(self, arrived: asyncio.Queue[object]) -> None:
        """Move what the webhook server received through the inbox into the application."""
        while True:
            update = await arrived.get()
            if isinstance(update, Update):
                await self.take([update])

    async def stop(self) -> None:
        """Stop receiving (polling, or the webhook server and what moves its updates on)."""
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
