"""Long polling for Telegram that confirms updates only after they were stored, with a watchdog and flood control.

python-telegram-bot's own Updater confirms an update (the next getUpdates offset) a few milliseconds
after fetching it, before any handler ran; a crash then loses it. Here each batch is handed to `take`
(which stores it in the inbox) before the offset moves on, so Telegram keeps whatever was not stored.
"""
from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta

from telegram import Bot, Update
from telegram.error import Conflict, NetworkError, RetryAfter, TelegramError
from telegram.warnings import PTBDeprecationWarning

log = logging.getLogger(__name__)

WATCHDOG = 120.0  # seconds without a returning getUpdates before polling is restarted
POLL_TIMEOUT = 30.0  # seconds a getUpdates call waits for updates (long polling)
MAX_BACKOFF = 30.0


def retry_seconds(exc: RetryAfter) -> float:
    """The seconds Telegram asked to wait, read without PTB's int/timedelta deprecation warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def poll_timeout(watchdog: float) -> timedelta:
    """How long one getUpdates may wait: 30 s, or a quarter of a short watchdog."""
    return timedelta(seconds=min(POLL_TIMEOUT, watchdog / 4))


def backoff(failures: int) -> float:
    """Seconds to wait after `failures` failed getUpdates calls in a row: 1, 2, 4 … up to 30."""
    return float(min(MAX_BACKOFF, 2 ** max(failures - 1, 0)))


def stalled(last_return: float, now: float, watchdog: float) -> bool:
    """Whether getUpdates has not returned for longer than the watchdog allows."""
    return now - last_return > watchdog


class Poller:
    """Fetches updates, lets `take` store them, and only then confirms them; restarts itself when stuck."""

    def __init__(self, bot: Bot, take: Callable[[Sequence[Update]], Awaitable[None]], *,
                 allowed_updates: Sequence[str], watchdog: float = WATCHDOG) -> None:
        self.bot = bot
        self.take = take
        self.allowed_updates = list(allowed_updates)
        self.watchdog = watchdog
        self.timeout = poll_timeout(watchdog)
        self.offset: int | None = None
        self.restarts = 0
        self._last_return = 0.0
        self._loop_task: asyncio.Task[None] | None = None
        self._watch_task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Drop a webhook (keeping its pending updates) and start polling and the watchdog."""
        await self.bot.delete_webhook(drop_pending_updates=False)
        self._last_return = _now()
        self._loop_task = asyncio.create_task(self._poll(), name="telegram-poll")
        self._watch_task = asyncio.create_task(self._watch(), name="telegram-watchdog")

    async def stop(self) -> None:
        """Stop polling and confirm what was stored, so Telegram does not send it again."""
        for task in (self._watch_task, self._loop_task):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        self._watch_task = self._loop_task = None
        if self.offset is not None:
            try:
                await self.bot.get_updates(offset=self.offset, timeout=0, limit=1,
                                           allowed_updates=self.allowed_updates)
            except TelegramError as exc:  # the inbox recognises the updates when Telegram sends them again
                log.warning("could not confirm the last updates to Telegram on stop: %s", exc)

    async def _poll(self) -> None:
        """getUpdates in a loop; a batch is confirmed by the next call, after `take` stored it."""
        failures = 0
        while True:
            try:
                updates = await self.bot.get_updates(offset=self.offset, timeout=self.timeout,
                                                     allowed_updates=self.allowed_updates)
            except RetryAfter as exc:
                self._last_return = _now()
                await asyncio.sleep(retry_seconds(exc))
                continue
            except (NetworkError, Conflict) as exc:  # TimedOut is a NetworkError
                self._last_return, failures = _now(), failures + 1
                log.warning("getUpdates failed (%s); trying again in %.0f s", exc, backoff(failures))
                await asyncio.sleep(backoff(failures))
                continue
            except TelegramError as exc:  # e.g. the token was revoked: keep trying, loudly
                self._last_return, failures = _now(), failures + 1
                log.error("getUpdates refused (%s); trying again in %.0f s", exc, backoff(failures))
                await asyncio.sleep(backoff(failures))
                continue
            self._last_return = _now()
            if not updates:
                failures = 0
                continue
            try:
                await self.take(updates)
            except Exception:
                failures += 1
                log.exception("could not store %d updates; Telegram keeps them, trying again in %.0f s",
                              len(updates), backoff(failures))
                await asyncio.sleep(backoff(failures))
                continue
            failures, self.offset = 0, updates[-1].update_id + 1

    async def _watch(self) -> None:
        """Restart polling when getUpdates has not returned for longer than the watchdog allows."""
        while True:
            await asyncio.sleep(self.watchdog / 4)
            if not stalled(self._last_return, _now(), self.watchdog):
                continue
            log.warning("getUpdates has not returned for %.0f s; restarting polling", _now() - self._last_return)
            self.restarts += 1
            if self._loop_task is not None:
                self._loop_task.cancel()
                await asyncio.gather(self._loop_task, return_exceptions=True)
            self._last_return = _now()
            self._loop_task = asyncio.create_task(self._poll(), name="telegram-poll")


def _now() -> float:
    return asyncio.get_running_loop().time()
