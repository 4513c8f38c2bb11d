"""Polling resumes from the last stored offset (issue 53): a batch that could not be stored (the database away) is not
confirmed, so the next getUpdates brings it again; once stored, it is confirmed and never comes a third time."""
from __future__ import annotations

from collections.abc import Sequence

from telegram import Bot, Update

from bot.channels.telegram.intake import ALLOWED_UPDATES
from bot.channels.telegram.polling import Poller
from memory import DatabaseUnavailable
from tests.fakes.telegram_api import FakeTelegram


class StoreAwayOnce:
    """The intake's storing (`Intake.take`): the first batch fails as on a database that is restarting."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.stored: list[int] = []

    async def __call__(self, updates: Sequence[Update]) -> None:
        self.batches.append([u.update_id for u in updates])
        if len(self.batches) == 1:
            raise DatabaseUnavailable("cannot connect to PostgreSQL at postgresql://mnemo@db/mnemo")
        self.stored += [u.update_id for u in updates]


async def test_polling_resumes_from_the_last_stored_offset(tg: FakeTelegram) -> None:
    take = StoreAwayOnce()
    bot = Bot("123:ABC", base_url=tg.base_url)
    await bot.initialize()
    poller = Poller(bot, take, allowed_updates=ALLOWED_UPDATES)
    first = tg.send_text(42, "Hallo")
    await poller.start()
    try:
        await tg.wait_until(lambda: bool(take.stored), timeout=10, what="the update stored on the second try")
        assert take.batches == [[first], [first]]  # not confirmed after the failure: Telegram kept it
        assert poller.offset == first + 1
        second = tg.send_text(42, "Noch da?")
        await tg.wait_until(lambda: take.stored == [first, second], timeout=10, what="the next update stored")
        assert take.batches[2:] == [[second]]  # the first was confirmed by the offset: never brought a third time
    finally:
        await poller.stop()
        await bot.shutdown()
    assert tg.pending == []
