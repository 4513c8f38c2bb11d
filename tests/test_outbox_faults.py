"""The outbox under faults: a proactive message survives flood control, server and network errors and a restart,
and arrives exactly once, on the real Telegram channel against the local fake Bot API."""
from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from bot.background import ChannelSender
from bot.commands import Commands
from bot.engine import Engine, EngineConfig
from bot.telegram import TelegramChannel, TelegramConfig
from memory.store import MemoryStore
from scheduler.delivery import BACKOFF, OutboxSender, next_try
from tests.fakes.llm import ScriptedLLM
from tests.fakes.telegram_api import FakeTelegram

USER = 42
TEXT = "Wie war der Zahnarzttermin?"

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")


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
