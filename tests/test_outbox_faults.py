"""The outbox under faults: a proactive message survives flood control, server and network errors and a restart,
and arrives exactly once, on the real Telegram channel against the local fake Bot API."""
from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.channels.push import ChannelSender
from bot.channels.telegram.channel import TelegramChannel, TelegramConfig
from bot.commands.runner import Commands
from bot.conversation.engine import Engine, EngineConfig
from memory.store import MemoryStore
from scheduler.delivery import BACKOFF, OutboxSender, late_note, next_start, next_try, verdict
from tests.fakes.llm import ScriptedLLM
from tests.fakes.telegram_api import FakeTelegram

USER = 42
TEXT = "Wie war der Zahnarzttermin?"

pytestmark = [pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning"),
              pytest.mark.both_backends("the outbox's claims and retries")]


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def engine(store: MemoryStore) -> AsyncIterator[Engine]:
    background = ScriptedLLM()
    background.responder = lambda call: json.dumps({"facts": [], "content": [], "profile": []})
    e = Engine(store, ScriptedLLM(), background, EngineConfig(relevance_floor=0.0))
    yield e
    await e.close()


async def channel(tg: FakeTelegram, engine: Engine) -> TelegramChannel:
    """A started Telegram channel for the fake."""
    started = TelegramChannel(engine, Commands(engine), TelegramConfig(
        token=tg.token, base_url=tg.base_url, allowed_users=frozenset({str(USER)}), streaming=False))
    await started.start()
    return started


def test_the_wait_a_channel_names_is_never_cut_short_by_the_backoff() -> None:
    assert next_try(0, 100.0) == 100.0 + BACKOFF[0]
    assert next_try(0, 100.0, wait=900.0) == 1000.0 and next_try(1, 100.0, wait=5.0) == 100.0 + BACKOFF[1]
    assert next_try(len(BACKOFF), 100.0, wait=5.0) is None


BERLIN = ZoneInfo("Europe/Berlin")
DAY = datetime(2026, 11, 24, tzinfo=BERLIN)
HOURS = (9, 21)


def at(hour: int, minute: int = 0, days: int = 0) -> datetime:
    return DAY + timedelta(days=days, hours=hour, minutes=minute)


@pytest.mark.parametrize("kind, written, now, action", [
    ("checkin", at(20, 30), at(20, 45), "send"),
    ("checkin", at(20, 55), at(21, 0), "drop"),  # the active hours ended
    ("checkin", at(10), at(13, 1), "drop"),  # more than 3 h old: the reason may be stale
    ("checkin", at(10), at(13), "send"),
    ("diary", at(23, 45), at(0, 30, days=1), "send"),  # within the hour: the time the person chose
    ("diary", at(23, 45), at(1, 30, days=1), "wait"),  # then only within the active hours
    ("diary", at(23, 45), at(9, 0, days=1), "send"),
    ("diary", at(23, 45), at(23, 50, days=1), "drop"),  # a day later: /diary shows it
    ("reminder", at(20, 50), at(3, 0, days=1), "send"),  # the person asked for it: late, but delivered
])
def test_whether_an_outbox_item_still_fits_its_moment(kind: str, written: datetime, now: datetime, action: str) -> None:
    assert verdict(kind, written, None, now, HOURS).action == action


def test_a_late_reminder_names_its_due_time_in_the_persons_zone_and_a_held_diary_waits_for_the_morning() -> None:
    assert verdict("reminder", at(14), at(14), at(14, 4), HOURS).late_for is None, "a few minutes are on time"
    late = verdict("reminder", at(14, 10), at(14), at(14, 30), HOURS).late_for
    assert late == at(14) and late_note(late, at(14, 30), "de") == "(verspätet – fällig war 14:00)"
    assert late_note(at(20, 50), at(1, 0, days=1), "en") == "(late – it was due at 24 Nov 20:50)"
    tokyo = at(14).astimezone(ZoneInfo("Asia/Tokyo"))
    assert late_note(tokyo, at(14, 30).astimezone(tokyo.tzinfo), "de") == "(verspätet – fällig war 22:00)"
    assert verdict("diary", at(23, 45), None, at(1, 30, days=1), HOURS).until == at(9, days=1)
    assert next_start(at(8), HOURS) == at(9) and next_start(at(9), HOURS) == at(9, days=1)


async def test_flood_control_server_and_network_errors_and_a_restart_deliver_exactly_once(
    engine: Engine, store: MemoryStore,
) -> None:
    async with FakeTelegram(token="123:ABC") as tg:
        clock = Clock(1_000_000.0)
        scope = await store.scope("mnemo", f"tg:{USER}")
        first = await channel(tg, engine)
        outbox = OutboxSender(store, ChannelSender({"telegram": first}), clock)

        tg.fail_next("sendMessage", 429, retry_after=900)  # longer than mnemo waits inside one call
        assert not await outbox.deliver(scope, TEXT)
        clock.now += BACKOFF[0]
        assert await outbox.flush([scope]) == 0, "Telegram asked for 900 s: the backoff's 30 s are not enough"
        clock.now += 900 - BACKOFF[0]
        tg.fail_next("sendMessage", 500)
        assert await outbox.flush([scope]) == 0
        clock.now += BACKOFF[1]
        tg.drops["sendmessage"] = 1  # the connection breaks
        assert await outbox.flush([scope]) == 0
        await first.stop()

        second = await channel(tg, engine)  # a restart: only the database knows the message
        restarted = OutboxSender(store, ChannelSender({"telegram": second}), clock)
        clock.now += BACKOFF[2]
        tg.fail_next("sendMessage", 429, retry_after=1)  # a short wait is waited out inside the call
        assert await restarted.flush([scope]) == 1
        clock.now += BACKOFF[-1]
        assert await restarted.flush([scope]) == 0
        await second.stop()

    assert [m["text"] for m in tg.sent] == [TEXT]  # delivered, and exactly once
    assert tg.calls.count("sendMessage") == 5  # 429 (900 s), 500, broken connection, 429 (1 s), then accepted
    [item] = await store.outbox.items(scope)
    assert (item.status, item.attempts) == ("sent", 4)
    assert [m.text for m in await store.messages.recent(scope) if m.role == "assistant"] == [TEXT]


class CancelledAfterSending:
    """A channel that delivers, and meanwhile the job sending is cancelled (its worker lost the scheduler's lease
    and stops its jobs): right after the message went out, or, with `answer`, while the messenger's answer is still
    on its way."""

    def __init__(self, answer: asyncio.Event | None = None) -> None:
        self.sent: list[str] = []
        self.job: asyncio.Future[bool] | None = None
        self.answer = answer  # set by the test: the messenger's answer arrives

    async def deliver(self, scope: object, text: str, *, buttons: object = ()) -> bool:
        self.sent.append(text)
        assert self.job is not None
        self.job.cancel()
        if self.answer is not None:
            await self.answer.wait()
        return True


async def test_a_message_sent_as_its_job_is_cancelled_is_recorded_and_never_sent_again(store: MemoryStore) -> None:
    """Issue 53's chaos run: reminders due during a 20 s pause of the database went out after it, the leader's jobs
    were cancelled as it lost its lease before the sends were recorded, and the next leader sent them again."""
    clock = Clock(datetime(2026, 12, 1, 10, 0, tzinfo=ZoneInfo("Europe/Berlin")).timestamp())
    scope = await store.scope("mnemo", "tg:1")
    channel = CancelledAfterSending()
    outbox = OutboxSender(store, channel, clock)
    sending = channel.job = asyncio.ensure_future(outbox.deliver(scope, "⏰ Tee trinken", kind="reminder"))
    with pytest.raises(asyncio.CancelledError):
        await sending
    await asyncio.sleep(0.2)  # what was sent is recorded all the same
    [item] = await store.outbox.items(scope)
    assert item.status == "sent"
    clock.now += 3600  # any claim ran out long ago: another worker's flush finds nothing to send
    assert await OutboxSender(store, channel, clock).flush([scope]) == 0
    assert channel.sent == ["⏰ Tee trinken"]
    assert [m.kind for m in await store.messages.recent(scope, 5)] == ["reminder"]


async def test_a_job_cancelled_while_the_messenger_takes_the_message_still_records_it_once(
    store: MemoryStore,
) -> None:
    """A CI chaos round: a reminder due right after a paused database went out at 13.4 s and again at 39.3 s, most
    likely thus: the leader's jobs were cancelled while the channel's call was under way (the message taken, the
    answer not yet read), the cancellation ended the try before it recorded anything, and the next worker sent the
    item again once its claim ran out. A try, once begun, now runs to its end."""
    clock = Clock(datetime(2026, 12, 1, 10, 0, tzinfo=ZoneInfo("Europe/Berlin")).timestamp())
    scope = await store.scope("mnemo", "tg:1")
    channel = CancelledAfterSending(answer=asyncio.Event())
    outbox = OutboxSender(store, channel, clock)
    outbox.worker = "w1"
    sending = channel.job = asyncio.ensure_future(outbox.deliver(scope, "⏰ Tee trinken", kind="reminder"))
    with pytest.raises(asyncio.CancelledError):
        await sending
    [item] = await store.outbox.items(scope)
    assert item.status == "pending" and outbox._in_flight == {item.id}  # taken, not answered: its own flush waits
    assert await outbox.flush([scope]) == 0
    assert channel.answer is not None
    channel.answer.set()  # the messenger's answer comes; the try records it
    for _ in range(100):
        if (await store.outbox.items(scope))[0].status == "sent":
            break
        await asyncio.sleep(0.02)
    assert (await store.outbox.items(scope))[0].status == "sent"
    clock.now += 3600  # the claim ran out long ago: another worker finds nothing to send
    other = OutboxSender(store, channel, clock)
    other.worker = "w2"
    assert await other.flush([scope]) == 0
    assert channel.sent == ["⏰ Tee trinken"]
    assert [m.kind for m in await store.messages.recent(scope, 5)] == ["reminder"]
    assert outbox._in_flight == set()
