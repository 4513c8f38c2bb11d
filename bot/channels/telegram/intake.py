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
from tornado.web import HTTPError

from bot.channels.telegram.polling import WATCHDOG, Poller
from memory import DatabaseUnavailable, Inbox, MemoryStoreError

log = logging.getLogger(__name__)

ALLOWED_UPDATES = ("message", "edited_message", "callback_query", "message_reaction")
# Several workers: a worker holds the chats it claimed this long (renewed while it answers them; a dead worker's
# are taken over after it), and looks for chats left by others this often.
CLAIM_SECONDS = 120.0
PULL_SECONDS = 2.0


class PerChatOrder(BaseUpdateProcessor):
    """Updates of different chats run concurrently; those of one chat one after another, in order.

    After an update was processed (its reply recorded and sent, or its failure reported), `done` is
    called; an update whose processing was cancelled (shutdown, crash) is not marked. `ours` is asked first, when
    the chat's turn comes: an update it disowns (another worker holds it now) is not processed here.
    """

    def __init__(self, done: Callable[[Update], Awaitable[None]], max_concurrent_updates: int = 32,
                 ours: Callable[[Update], Awaitable[bool]] | None = None) -> None:
        super().__init__(max_concurrent_updates)
        self._done, self._ours = done, ours
        self._locks: weakref.WeakValueDictionary[int, asyncio.Lock] = weakref.WeakValueDictionary()

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        """Wait for this chat's earlier updates, process this one, then mark it handled."""
        chat = update.effective_chat if isinstance(update, Update) else None
        key = chat.id if chat else 0
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        async with lock:
            if isinstance(update, Update) and self._ours is not None and not await self._ours(update):
                close = getattr(coroutine, "close", None)  # PTB hands a coroutine: closed, it is never awaited
                if close is not None:
                    close()
                return
            await coroutine
            if isinstance(update, Update):
                await self._done(update)

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to free."""


class Recording(asyncio.Queue[object]):
    """The queue PTB's webhook server puts what it received into: each update is stored in the inbox (and queued
    for the application) before the server answers Telegram, so an update confirmed is one stored. One that could not
    be stored (the database away) is answered 503 with a log line (PTB itself logs a failure only at debug level):
    Telegram sends it again later, as after any 5xx."""

    def __init__(self, take: Callable[[Sequence[Update]], Awaitable[None]]) -> None:
        super().__init__()
        self._take = take

    async def put(self, item: object) -> None:
        """Store and queue an update; anything else is not ours."""
        if not isinstance(item, Update):
            return
        try:
            await self._take([item])
        except MemoryStoreError as exc:  # the database away (DatabaseUnavailable): no traceback, the cause is known
            log.warning("could not store Telegram update %s (%s); answered 503, Telegram sends it again",
                        item.update_id, exc)
            raise HTTPError(503, reason="update not stored; send it again") from exc
        except Exception as exc:
            log.exception("could not store Telegram update %s; answered 503, Telegram sends it again", item.update_id)
            raise HTTPError(503, reason="update not stored; send it again") from exc


class Intake:
    """Store first, confirm after, mark handled last: the inbox between Telegram and the application.

    `keeps` says whether an update's content may be stored (an unknown user's is recorded without it). With a
    `worker` name (several workers behind one webhook URL), an update is answered by the worker that claimed its
    chat (`Inbox.claim`), whichever worker received it: one chat's updates in order, each once.
    """

    def __init__(self, app: Application[Any, Any, Any, Any, Any, Any], inbox: Inbox, channel: str,
                 clock: Callable[[], float], keeps: Callable[[Update], Awaitable[bool]],
                 worker: str | None = None, hold: float = CLAIM_SECONDS) -> None:
        self.app = app
        self.inbox = inbox
        self.channel = channel
        self.clock = clock
        self.keeps = keeps
        self.poller: Poller | None = None
        self._replayed: set[int] = set()
        self._webhook: Updater | None = None
        self.worker, self.hold = worker, hold
        self._queued: set[str] = set()  # claimed updates this worker queued and has not finished
        self._again: set[int] = set()  # updates whose turn failed for want of the database: taken up again
        self._puller: asyncio.Task[None] | None = None

    def replayed(self, update: Update) -> bool:
        """Whether an earlier run stored this update and did not finish it."""
        return update.update_id in self._replayed

    async def take(self, updates: Sequence[Update]) -> None:
        """Store a batch in the inbox, then queue the updates that are new (a redelivery is dropped here)."""
        rows = [(str(u.update_id), json.dumps(u.to_dict()) if await self.keeps(u) else None) for u in updates]
        sent = {str(u.update_id): u.update_id for u in updates}  # Telegram numbers the updates in the order they came
        if self.worker is not None:
            chats = {str(u.update_id): str(u.effective_chat.id) for u in updates if u.effective_chat is not None}
            await self.inbox.record(self.channel, rows, self.clock(), chats, sent)
            await self.pull()
            return
        new = set(await self.inbox.record(self.channel, rows, self.clock(), sent_order=sent))
        for update in updates:
            if str(update.update_id) in new:
                await self.app.update_queue.put(update)

    async def replay(self) -> None:
        """Queue the updates that were stored but not handled when mnemo stopped (or crashed)."""
        if self.worker is not None:
            await self.pull()
            return
        for entry in await self.inbox.unhandled(self.channel):
            assert entry.payload is not None  # unhandled() lists only rows with content
            update = Update.de_json(json.loads(entry.payload), self.app.bot)
            self._replayed.add(update.update_id)
            await self.app.update_queue.put(update)
        if self._replayed:
            log.warning("answering %d Telegram updates left unhandled by the last run", len(self._replayed))

    def again(self, update: object, error: BaseException | None) -> bool:
        """Whether a failed update is left for the next pull instead of being told a failure and marked handled: with
        several workers, a turn that failed because the database was away (a restart) is taken up again, as a replay,
        once the database answers."""
        if self.worker is None or not isinstance(update, Update) or not isinstance(error, DatabaseUnavailable):
            return False
        self._again.add(update.update_id)
        log.warning("telegram update %s failed (%s); taken up again once the database answers", update.update_id, error)
        return True

    async def handled(self, update: Update) -> None:
        """Mark an update handled (its reply was recorded and sent, or its failure told); one whose turn failed for
        want of the database (`again`) is left unhandled, and the next pull queues it again."""
        if update.update_id in self._again:
            self._again.discard(update.update_id)
            self._queued.discard(str(update.update_id))
            return
        await self.inbox.done(self.channel, str(update.update_id), self.clock())
        self._replayed.discard(update.update_id)
        self._queued.discard(str(update.update_id))
        if self.worker is not None:  # what another worker received for the chats held here comes next
            await self.pull()

    async def ours(self, update: Update) -> bool:
        """Whether this worker still holds the update now that its chat's turn came (always, with one process)."""
        if self.worker is None:
            return True
        event_id = str(update.update_id)
        try:
            if await self.inbox.keep(self.channel, event_id, self.worker, self.clock(), self.hold):
                return True
        except MemoryStoreError as exc:  # the database away: not processed now; the next pull queues it again
            self._queued.discard(event_id)
            log.warning("update %s not taken up (%s); queued again once the database answers", event_id, exc)
            return False
        self._queued.discard(event_id)
        log.info("update %s is held or was answered by another worker; left to it", event_id)
        return False

    async def pull(self) -> None:
        """Renew this worker's claims, claim the chats nobody holds, and queue what it holds and has not queued.

        Each is treated as a replay: another worker may have started on it before it died.
        """
        assert self.worker is not None
        now = self.clock()
        await self.inbox.extend(self.channel, self.worker, now, self.hold)
        for entry in await self.inbox.claim(self.channel, self.worker, now, self.hold):
            if entry.event_id in self._queued or entry.payload is None:
                continue
            self._queued.add(entry.event_id)
            update = Update.de_json(json.loads(entry.payload), self.app.bot)
            self._replayed.add(update.update_id)
            await self.app.update_queue.put(update)

    async def _pull_on(self) -> None:
        """Pull every PULL_SECONDS: chats another worker left (or died holding) are answered here."""
        while True:
            await asyncio.sleep(PULL_SECONDS)
            try:
                await self.pull()
            except MemoryStoreError as exc:  # the database away: its cause in one line, not a traceback every 2 s
                log.warning("claiming Telegram updates failed (%s); trying again in %g s", exc, PULL_SECONDS)
            except Exception:  # the next pull tries again; the claims outlast a few failed ones
                log.exception("claiming Telegram updates failed; trying again in %g s", PULL_SECONDS)

    async def receive(self, webhook_url: str | None, *, listen: str = "127.0.0.1", port: int = 8443,
                      secret: str | None = None, watchdog: float = WATCHDOG) -> None:
        """Start long polling, or the webhook server when a webhook URL is set."""
        if self.worker is not None:
            self._puller = asyncio.create_task(self._pull_on(), name="telegram-claims")
        if not webhook_url:
            self.poller = Poller(self.app.bot, self.take, allowed_updates=ALLOWED_UPDATES, watchdog=watchdog)
            await self.poller.start()
            return
        self._webhook = Updater(bot=self.app.bot, update_queue=Recording(self.take))
        await self._webhook.initialize()
        await self._webhook.start_webhook(
            listen=listen, port=port, url_path=urlparse(webhook_url).path.lstrip("/"), webhook_url=webhook_url,
            secret_token=secret, allowed_updates=ALLOWED_UPDATES,
        )

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
        if self._puller is not None:
            self._puller.cancel()
            await asyncio.gather(self._puller, return_exceptions=True)
            self._puller = None
